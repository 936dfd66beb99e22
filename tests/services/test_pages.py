"""The window's reads of one store (services/pages.py) over stores written by the real
libraries (flux-agents, openai-agents): the pages join up, an unknown session is told
apart from an empty one, and the change token moves with a write."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fluxgui.adapters import open_store
from fluxgui.core.errors import SessionNotFound
from fluxgui.services import edits, pages
from helpers import write_agents, write_flux

N = 23


@pytest.fixture(scope="module")
def written(tmp_path_factory: Any) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pages")
    data = {
        "long": [{"role": "user", "content": f"line {i}"} for i in range(N)],
        "short": [{"role": "user", "content": "a needle here"}],
    }
    flux, agents = folder / "flux.db", folder / "agents.db"
    write_flux(flux, data)
    write_agents(agents, data)
    return {"flux": flux, "agents": agents}


@pytest.fixture(params=["flux", "agents"])
async def store(request: Any, written: dict[str, Path], tmp_path: Path) -> AsyncIterator[Any]:
    path = tmp_path / "store.db"
    shutil.copy(written[request.param], path)
    s = await open_store(str(path), writable=True)
    try:
        yield s
    finally:
        await s.close()


async def test_the_pages_of_a_session_join_up_oldest_first(store: Any) -> None:
    latest = await pages.latest_messages(store, "long", limit=10)
    assert [m.text for m in latest] == [f"line {i}" for i in range(N - 10, N)]
    earlier = await pages.messages_next_to(store, "long", latest[0].sort_key, "backward", limit=10)
    assert [m.text for m in earlier] == [f"line {i}" for i in range(N - 20, N - 10)]
    later = await pages.messages_next_to(store, "long", earlier[-1].sort_key, "forward", limit=4)
    assert later == latest[:4]


async def test_an_unknown_session_is_none_or_refused(store: Any) -> None:
    assert await pages.session_row(store, "nope") is None
    with pytest.raises(SessionNotFound):
        await pages.known_session(store, "nope")
    info = await pages.known_session(store, "long")
    assert info.id == "long" and info.messages == N


async def test_the_list_by_pages_by_ids_and_by_text(store: Any) -> None:
    first = await pages.session_page(store, limit=1)
    assert len(first.sessions) == 1 and first.cursor is not None
    rest = await pages.session_page(store, limit=10, cursor=first.cursor)
    assert {s.id for s in first.sessions + rest.sessions} == {"long", "short"}
    assert [s.id for s in await pages.sessions_by_ids(store, ["short", "nope"])] == ["short"]
    assert await pages.matching_session_ids(store, "NEEDLE") == ["short"]


async def test_turns_before_count_the_user_messages_before(store: Any) -> None:
    latest = await pages.latest_messages(store, "long", limit=3)
    assert await pages.turns_before(store, "long", latest[0].sort_key) == N - 3


@pytest.mark.parametrize("kind", ["flux", "agents"])
async def test_the_change_token_moves_with_another_writer(
    kind: str, written: dict[str, Path], tmp_path: Path
) -> None:
    path = tmp_path / "store.db"
    shutil.copy(written[kind], path)
    watched = await open_store(str(path))
    writer = await open_store(str(path), writable=True)
    try:
        before = await pages.change_token(watched)
        assert await pages.change_token(watched) == before
        await edits.clear_session(writer, "short")
        assert await pages.change_token(watched) != before
    finally:
        await writer.close()
        await watched.close()


async def test_nothing_to_advise_and_no_server_index_on_sqlite(store: Any) -> None:
    assert await pages.index_advice(store) == []
    assert await pages.server_searches(store) is False
