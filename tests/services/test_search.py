"""Batched search over real stores: the ids a store's search finds become batches of
session rows, sent on when full or after a short wait, handed out a few times a second;
closing or cancelling releases the store's search; its error comes after what it found.

The stores are written by the real libraries. To control timing (a slow search) or to
see the store's search generator close, a thin wrapper delegates to the real store and
only paces or watches ``search_session_ids``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession

from fluxgui.adapters import open_store
from fluxgui.services.search import SearchBatch, search_batches

N = 40  # sessions; every third holds the needle


async def write(kind: str, path: Path) -> None:
    for i in range(N):
        sid = f"sess-{i:02d}"
        text = f"hay {i}" + (" NEEDLE" if i % 3 == 0 else "")
        items = [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]
        if kind == "flux":
            await FluxSQLiteSession(str(path), session_id=sid).add_messages(items)
        else:
            session = AgentsSQLiteSession(sid, str(path))
            try:
                await session.add_items(items)  # type: ignore[arg-type]
            finally:
                session.close()


@pytest.fixture(scope="module")
def written(tmp_path_factory: Any) -> dict[str, Path]:
    """Each kind of store written once (writing costs a commit per session); tests copy."""
    folder = tmp_path_factory.mktemp("search")
    out = {}
    for kind in ("flux", "agents"):
        out[kind] = folder / f"{kind}.db"
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, write(kind, out[kind])).result()
    return out


@pytest.fixture(params=["flux", "agents"])
async def store(request: Any, written: dict[str, Path], tmp_path: Path) -> AsyncIterator[Any]:
    path = tmp_path / "store.db"
    shutil.copyfile(written[request.param], path)
    opened = await open_store(str(path))
    try:
        yield opened
    finally:
        await opened.close()


class Paced:
    """The real store, its search slowed to one id every ``pause`` seconds (and watched:
    ``closed`` once the store's search generator is closed); ``fail_after`` ids, the
    search raises."""

    def __init__(self, store: Any, pause: float = 0.0, fail_after: int | None = None) -> None:
        self._store = store
        self.pause = pause
        self.fail_after = fail_after
        self.closed = False
        self.yielded = 0

    @property
    def reader(self) -> Paced:  # the role it stands in for
        return self

    def __getattr__(self, name: str) -> Any:
        # the reader's reads, else what the store is (the two are parts of one store)
        reader = self._store.reader
        return getattr(reader if hasattr(reader, name) else self._store, name)

    async def search_session_ids(self, text: str) -> AsyncIterator[str]:
        try:
            async with contextlib.aclosing(self._store.reader.search_session_ids(text)) as ids:
                async for sid in ids:
                    if self.fail_after is not None and self.yielded >= self.fail_after:
                        raise RuntimeError("the search broke")
                    if self.pause:
                        await asyncio.sleep(self.pause)
                    self.yielded += 1
                    yield sid
        finally:
            self.closed = True


async def collect(batches: AsyncIterator[SearchBatch]) -> list[SearchBatch]:
    return [b async for b in batches]


async def expected(store: Any, text: str) -> list[str]:
    return [sid async for sid in store.reader.search_session_ids(text)]


async def test_every_match_arrives_in_the_order_found(store: Any) -> None:
    want = await expected(store, "needle")
    assert sorted(want) == [f"sess-{i:02d}" for i in range(0, N, 3)]
    batches = await collect(search_batches(store, "needle", batch=4))
    ids = [sid for b in batches for sid in b.ids]
    assert ids == want
    for b in batches:
        assert sorted(info.id for info in b.sessions) == sorted(b.ids)
        assert all(info.messages == 2 for info in b.sessions)
    assert await collect(search_batches(store, "no such text")) == []


async def test_batches_are_handed_out_first_at_once_then_when_enough_wait(store: Any) -> None:
    want = await expected(store, "hay")
    assert len(want) == N
    # Rows are fetched 3 ids at a time; after the first batch (at once), batches are
    # only handed out when 7 ids are waiting (the time limit is out of reach) or at the end.
    sizes = [
        len(b.ids)
        async for b in search_batches(store, "hay", batch=3, show_every=60, show_max=7)
    ]
    assert sum(sizes) == N
    assert sizes[0] <= 3
    assert all(7 <= size <= 9 for size in sizes[1:-1])
    assert sizes[-1] <= 9


async def test_a_slow_search_is_fetched_after_a_short_wait_not_a_full_batch(store: Any) -> None:
    paced = Paced(store, pause=0.05)
    started = time.monotonic()
    arrived: list[tuple[float, list[str]]] = []
    async for b in search_batches(paced, "needle", batch=50, flush_after=0.02, show_every=0):
        arrived.append((time.monotonic() - started, b.ids))
    total = time.monotonic() - started
    ids = [sid for _t, batch in arrived for sid in batch]
    assert ids == await expected(store, "needle")
    # The first rows came long before the search ended, in small batches.
    assert arrived[0][0] < total / 2
    assert len(arrived) >= len(ids) // 2


async def test_closing_early_closes_the_store_search(store: Any) -> None:
    paced = Paced(store, pause=0.01)
    batches = search_batches(paced, "hay", batch=2, show_every=0)
    async with contextlib.aclosing(batches):
        async for _b in batches:
            break
    assert paced.closed and paced.yielded < N


async def test_cancelling_the_consumer_closes_the_store_search(store: Any) -> None:
    paced = Paced(store, pause=0.01)
    first = asyncio.Event()

    async def consume() -> None:
        batches = search_batches(paced, "hay", batch=2, show_every=0)
        async with contextlib.aclosing(batches):
            async for _b in batches:
                first.set()

    task = asyncio.ensure_future(consume())
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert paced.closed and paced.yielded < N


async def test_the_search_error_comes_after_what_it_found(store: Any) -> None:
    paced = Paced(store, fail_after=5)
    found: list[str] = []
    with pytest.raises(RuntimeError, match="the search broke"):
        async for b in search_batches(paced, "hay", batch=2, show_every=0):
            found.extend(b.ids)
    assert found == (await expected(store, "hay"))[:5]
    assert paced.closed
