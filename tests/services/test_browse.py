"""The browse service over real stores (flux written by flux, Agents SDK by the SDK)."""

from __future__ import annotations

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession

from fluxgui.adapters import open_store
from fluxgui.core.errors import SessionNotFound
from fluxgui.services.browse import iter_session_pages, list_sessions, session_messages

N_SESSIONS = 7


async def write(kind: str, path) -> dict[str, list[str]]:
    data = {f"sess-{i}": [f"text {i}.{j}" for j in range(i + 1)] for i in range(N_SESSIONS)}
    for sid, texts in data.items():
        items = [{"role": "user", "content": t} for t in texts]
        if kind == "flux":
            await FluxSQLiteSession(str(path), session_id=sid).add_messages(items)
        else:
            s = AgentsSQLiteSession(sid, str(path))
            try:
                await s.add_items(items)
            finally:
                s.close()
    return data


@pytest.fixture(params=["flux", "agents"])
async def store_and_data(request, tmp_path):
    path = tmp_path / "store.db"
    data = await write(request.param, path)
    store = await open_store(str(path))
    yield store, data
    await store.close()


async def test_list_all_pages_and_one_page(store_and_data):
    store, data = store_and_data
    everything = await list_sessions(store, limit=None)
    assert sorted(s.id for s in everything.sessions) == sorted(data)
    assert everything.to_dict()["format"] == store.format
    assert {s["id"]: s["messages"] for s in everything.to_dict()["sessions"]} == {
        k: len(v) for k, v in data.items()
    }
    first = await list_sessions(store, limit=3)
    assert len(first.sessions) == 3 and first.cursor is not None
    rest = await list_sessions(store, limit=100, cursor=first.cursor)
    assert [s.id for s in first.sessions + rest.sessions] == [s.id for s in everything.sessions]
    paged = [s.id async for page in iter_session_pages(store, page_size=2) for s in page]
    assert paged == [s.id for s in everything.sessions]


async def test_list_with_search(store_and_data):
    store, data = store_and_data
    found = await list_sessions(store, search="TEXT 3.")
    assert [s.id for s in found.sessions] == ["sess-3"]
    found = await list_sessions(store, search="sess-", limit=2)
    assert len(found.sessions) == 2
    assert {s.id for s in (await list_sessions(store, search="sess-", limit=None)).sessions} == set(data)


async def test_session_messages(store_and_data):
    store, data = store_and_data
    info, pages = await session_messages(store, "sess-5")
    assert info.id == "sess-5" and info.messages == len(data["sess-5"])
    assert [m.text async for page in pages for m in page] == data["sess-5"]
    info, pages = await session_messages(store, "sess-6", limit=2)
    assert [m.text async for page in pages for m in page] == data["sess-6"][-2:]
    with pytest.raises(SessionNotFound):
        await session_messages(store, "sess-99")
