"""Forks of AdvancedSQLiteSession sessions: the fork is a session the library reads as
if it had written it (items, turns, branches), the origin is unchanged, undo removes it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from advanced_helpers import SID, Library, write_library_store

from fluxgui.adapters import open_store
from fluxgui.core.errors import ReadOnlyError, SessionNotFound


def _rows(path: Path, sid: str) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(path)
    try:
        return {
            t: conn.execute(f"SELECT * FROM {t} WHERE session_id = ? ORDER BY 1", (sid,)).fetchall()
            for t in ("agent_sessions", "agent_messages", "message_structure", "turn_usage")
        }
    finally:
        conn.close()


@pytest.fixture
async def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "advanced.db"
    await write_library_store(path)
    return path


@pytest.mark.parametrize("branch", ["main", "alt"])
async def test_fork_of_a_branch_reads_back_in_the_library(store_path: Path, branch: str):
    lib = Library(store_path)
    origin_before = _rows(store_path, SID)
    source = await lib.view(SID, current=branch)
    items = source["per_branch"][branch]["items"]
    async with await open_store(str(store_path), writable=True) as store:
        messages = [m async for page in store.reader.iter_messages(SID, branch=branch) for m in page]
        at = messages[-2]  # the fork stops before the branch's last item
        change = await store.forks.fork_session(SID, at.id, f"fork-{branch}", branch=branch)
        assert change.session_id == f"fork-{branch}"
        assert (await store.forks.fork_origin(f"fork-{branch}"))["message_id"] == at.id
    fork = await lib.view(f"fork-{branch}")
    assert [b["branch_id"] for b in fork["branches"]] == ["main"]
    assert fork["current_items"] == items[:-1]
    expected_turns = [t for t in source["per_branch"][branch]["turns"]]
    assert len(fork["per_branch"]["main"]["turns"]) == len(expected_turns)
    assert [t["content"] for t in fork["per_branch"]["main"]["turns"]] == [
        t["content"] for t in expected_turns
    ]
    # The library can go on with the fork: a new turn, and a branch from turn 1's end.
    s = lib.session(f"fork-{branch}")
    try:
        await s.add_items([{"role": "user", "content": "more"}])
        assert (await s.get_items())[-1] == {"role": "user", "content": "more"}
    finally:
        s.close()
    assert _rows(store_path, SID) == origin_before  # the origin, byte for byte


async def test_fork_undo_redo_and_refusals(store_path: Path):
    lib = Library(store_path)
    async with await open_store(str(store_path), writable=True) as store:
        messages = [m async for page in store.reader.iter_messages(SID) for m in page]
        change = await store.forks.fork_session(SID, messages[3].id)
        fork_id = change.session_id
        assert fork_id == f"{SID}-fork"
        forked = await lib.view(fork_id)
        await store.writer.apply_change(change.inverse())
        assert await store.reader.session_info(fork_id) is None
        assert _rows(store_path, fork_id) == {
            "agent_sessions": [], "agent_messages": [], "message_structure": [], "turn_usage": []
        }
        await store.writer.apply_change(change)
        assert await lib.view(fork_id) == forked
        with pytest.raises(SessionNotFound, match="not in session"):
            await store.forks.fork_session(SID, 10**9)
    async with await open_store(str(store_path)) as store:
        with pytest.raises(ReadOnlyError):
            await store.forks.fork_session(SID, messages[0].id)
