"""A search without an index on a big SQLite table reads its lower half on a second
connection at the same time (adapters/sql/scansplit.py): the very hits of reading every
message, NUL characters included, limited or not; the store's own connection reads that
half where no second reader can be had; a stopped or cancelled search leaves no thread
running and no connection open.

The stores here are small: ``SPLIT_IDS`` is lowered so that they are split as a million
rows are (the corpus and its check are test_scan_narrowed's).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_scan_narrowed import assert_scan_equals_full_scan, write_sqlite

from fluxgui.adapters import open_store
from fluxgui.adapters.sql import scansplit
from fluxgui.adapters.sql.sqlite import SqliteBackend
from fluxgui.services.index import full_scan, scan


@pytest.fixture
def halves(monkeypatch: pytest.MonkeyPatch) -> list[scansplit.LowerHalf]:
    """Each table of two rows or more split; the lower halves started, in a list."""
    started: list[scansplit.LowerHalf] = []

    class Recorded(scansplit.LowerHalf):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            started.append(self)

    monkeypatch.setattr(scansplit, "SPLIT_IDS", 1)
    monkeypatch.setattr(scansplit, "LowerHalf", Recorded)
    return started


def all_ended(started: list[scansplit.LowerHalf]) -> bool:
    return all(h._task.done() and h._conn is None for h in started)


async def until_connected(half: scansplit.LowerHalf) -> None:
    """Wait (a few seconds at most) until the lower half's thread has its connection."""
    loop = asyncio.get_running_loop()
    end = loop.time() + 10
    while not half.connections:
        assert loop.time() < end, "the lower half never connected"
        await asyncio.sleep(0.005)


@pytest.mark.parametrize("kind", ["flux", "agents"])
async def test_split_scan_equals_reading_every_message(
    kind: str, tmp_path: Path, halves: list[scansplit.LowerHalf]
) -> None:
    path = tmp_path / "store.db"
    await write_sqlite(kind, path)
    store = await open_store(str(path))
    try:
        await assert_scan_equals_full_scan(store)  # unlimited, and limited to 1 and 3 hits
    finally:
        await store.close()
    assert halves and all_ended(halves)
    assert sum(h.connections for h in halves) > len(halves) // 2  # (limited ones may stop first)


async def test_lower_ids_beyond_the_cap_are_read_after(
    tmp_path: Path, halves: list[scansplit.LowerHalf], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scansplit, "MAX_IDS", 2)  # the lower half keeps 2 ids, the rest read after
    path = tmp_path / "store.db"
    await write_sqlite("flux", path)
    store = await open_store(str(path))
    try:
        for needle in ("\x00 byte", "e", "then more", "straße", "nothing-here"):
            every = await full_scan(store, needle)
            found = await scan(store, needle)
            assert [(h.session_id, h.message_id, h.snippet) for h in found.hits] == [
                (h.session_id, h.message_id, h.snippet) for h in every.hits
            ], repr(needle)
    finally:
        await store.close()
    assert any(h.connections for h in halves) and all_ended(halves)


async def test_without_a_second_reader_this_connection_reads_the_lower_half(
    tmp_path: Path, halves: list[scansplit.LowerHalf], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a reader that cannot open (no such file): the thread gives up, the store reads it all
    monkeypatch.setattr(SqliteBackend, "second_reader", lambda self: f"file:{tmp_path}/gone/x.db?mode=ro")
    path = tmp_path / "store.db"
    await write_sqlite("flux", path)
    store = await open_store(str(path))
    try:
        for needle in ("\x00 byte", "straße", "e", "then more"):
            every = await full_scan(store, needle)
            found = await scan(store, needle)
            assert [(h.session_id, h.message_id) for h in found.hits] == [
                (h.session_id, h.message_id) for h in every.hits
            ], repr(needle)
            assert every.hits, repr(needle)
    finally:
        await store.close()
    assert halves and all_ended(halves) and not any(h.connections for h in halves)


#: a condition slow on the rows of the lower half only (ids up to 50 of 100): a count to
#: a million for each row (about 0.1 s a row: the lower half would take seconds)
SLOW = (
    "(id > 50 OR (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000 + id * 0)"
    " SELECT MAX(x) FROM c) < 0)"
)


async def numbered(tmp_path: Path) -> Any:
    path = tmp_path / "n.db"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, session_id TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, 's')", [(i,) for i in range(1, 101)])
        conn.commit()
    return await SqliteBackend.open(path)


async def as_batch(rows: list[tuple[Any, ...]]) -> list[Any]:
    return [(r[1], r[0]) for r in rows]


async def test_a_search_cancelled_while_the_lower_half_runs_leaves_nothing_behind(
    tmp_path: Path, halves: list[scansplit.LowerHalf]
) -> None:
    backend = await numbered(tmp_path)
    got: list[Any] = []
    upper_read = asyncio.Event()

    async def search() -> None:
        rows = scansplit.newest_first(backend, "t", "id, session_id", SLOW, {}, as_batch, None)
        async with contextlib.aclosing(rows) as batches:
            async for batch in batches:
                got.extend(batch)
                upper_read.set()

    try:
        task = asyncio.create_task(search())
        await asyncio.wait_for(upper_read.wait(), 10)
        assert [i for _s, i in got] == list(range(100, 50, -1))  # the upper half, newest first
        # the lower half's query runs on its own connection while the search waits for it
        await until_connected(halves[0])
        assert halves[0]._conn is not None and not task.done()
        loop = asyncio.get_running_loop()
        began = loop.time()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert loop.time() - began < 2  # interrupted, not run to its end
        assert all_ended(halves) and halves[0].connections == 1
    finally:
        await backend.close()


async def test_a_limited_search_that_has_its_hits_stops_the_lower_half(
    tmp_path: Path, halves: list[scansplit.LowerHalf], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scansplit, "DELAY", 0.0)  # the lower half starts at once, as for a long walk
    backend = await numbered(tmp_path)
    try:
        loop = asyncio.get_running_loop()
        rows = scansplit.newest_first(backend, "t", "id, session_id", SLOW, {}, as_batch, 5)
        async with contextlib.aclosing(rows) as batches:
            first = await anext(batches)
            await until_connected(halves[0])  # (its query under way)
            began = loop.time()
        assert loop.time() - began < 2  # interrupted, not run to its end
        assert [i for _s, i in first] == [100, 99, 98, 97, 96, 95]  # limit + 1
        assert all_ended(halves) and halves[0].connections == 1
    finally:
        await backend.close()


async def test_a_limited_search_stopped_before_the_lower_half_began_opens_no_connection(
    tmp_path: Path, halves: list[scansplit.LowerHalf]
) -> None:
    backend = await numbered(tmp_path)
    try:
        rows = scansplit.newest_first(backend, "t", "id, session_id", SLOW, {}, as_batch, 5)
        async with contextlib.aclosing(rows) as batches:
            assert len(await anext(batches)) == 6
        assert all_ended(halves) and halves[0].connections == 0  # it waited DELAY first
    finally:
        await backend.close()


async def test_a_split_search_leaves_the_store_files_as_they_were(
    tmp_path: Path, halves: list[scansplit.LowerHalf]
) -> None:
    # flux writes WAL; with no -wal beside it the store opens read-write, so that SQLite
    # removes the -wal and -shm it makes: the second reader opens it so too
    folder = tmp_path / "store"
    folder.mkdir()
    path = folder / "store.db"
    await write_sqlite("flux", path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert set(before) == {"store.db"}
    store = await open_store(str(path))
    try:
        found = await scan(store, "then more")
        assert found.hits and halves and halves[-1].connections == 1
    finally:
        await store.close()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
