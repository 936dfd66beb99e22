"""Forks on the four stores (flux and Agents SDK, SQLite and Postgres): the fork holds the
conversation up to and including the chosen message, reads back in the owning library,
records its origin in fluxgui's sidecar, and the origin's rows stay byte-for-byte."""

from __future__ import annotations

import pytest
from test_editing import INITIAL, OTHER, SID, kind  # noqa: F401 - the four-store fixture

from fluxgui.adapters import open_store
from fluxgui.adapters.sql.forks import FORKS_TABLE
from fluxgui.core.errors import Conflict, ReadOnlyError, SessionNotFound
from helpers import all_messages


def _origin_rows(raw: dict, kind_fmt: str, sid: str) -> dict:
    """The rows of session ``sid`` in every table, exactly as stored."""
    if kind_fmt == "flux":
        return {"messages": [r for r in raw["messages"] if r[1] == sid]}
    return {
        "agent_sessions": [r for r in raw["agent_sessions"] if r[0] == sid],
        "agent_messages": [r for r in raw["agent_messages"] if r[1] == sid],
    }


@pytest.mark.parametrize("at", [0, 2, 4])
async def test_fork_holds_the_prefix_and_leaves_the_origin(kind, at):  # noqa: F811
    async with await open_store(kind.target, writable=True) as store:
        ids = [m.id for m in await all_messages(store, SID)]
        change = await store.forks.fork_session(SID, ids[at], "what-if")
        assert change.session_id == "what-if" and len(change.added) == at + 1
        forked = await all_messages(store, "what-if")
        origin = await all_messages(store, SID)
        assert [(m.role, m.text, m.raw, m.created_at) for m in forked] == [
            (m.role, m.text, m.raw, m.created_at) for m in origin[: at + 1]
        ]
        origin_of = await store.forks.fork_origin("what-if")
        assert origin_of is not None and origin_of["created_at"]
        assert (origin_of["session_id"], origin_of["message_id"]) == (SID, ids[at])
        assert await store.forks.fork_origin(SID) is None
    # The library reads the fork; the origin and the other session are untouched.
    assert await kind.read("what-if") == INITIAL[kind.fmt][: at + 1]
    assert await kind.read(SID) == kind.initial
    raw = await kind.raw()
    assert _origin_rows(raw, kind.fmt, SID) == _origin_rows(kind.raw_initial, kind.fmt, SID)
    assert _origin_rows(raw, kind.fmt, OTHER) == _origin_rows(kind.raw_initial, kind.fmt, OTHER)


async def test_fork_names_undo_and_errors(kind):  # noqa: F811
    async with await open_store(kind.target, writable=True) as store:
        ids = [m.id for m in await all_messages(store, SID)]
        first = await store.forks.fork_session(SID, ids[1])
        second = await store.forks.fork_session(SID, ids[1])
        assert (first.session_id, second.session_id) == (f"{SID}-fork", f"{SID}-fork-2")
        with pytest.raises(Conflict, match="already exists"):
            await store.forks.fork_session(SID, ids[1], OTHER)
        with pytest.raises(SessionNotFound, match="not in session"):
            await store.forks.fork_session(OTHER, ids[1])  # a message of another session
        # Undo deletes the fork; the name is free again and a new fork may take it.
        await store.writer.apply_change(first.inverse())
        assert await store.reader.session_info(f"{SID}-fork") is None
        again = await store.forks.fork_session(SID, ids[3], f"{SID}-fork")
        assert (await store.forks.fork_origin(again.session_id))["message_id"] == ids[3]
        tables = await store.backend.tables()
        assert FORKS_TABLE in tables
    assert await kind.read(SID) == kind.initial
    assert await kind.read(f"{SID}-fork") == INITIAL[kind.fmt][:4]


async def test_fork_needs_a_writable_store(kind):  # noqa: F811
    async with await open_store(kind.target) as store:
        ids = [m.id for m in await all_messages(store, SID)]
        with pytest.raises(ReadOnlyError):
            await store.forks.fork_session(SID, ids[0])
    assert await kind.raw() == kind.raw_initial
