"""Adding messages to an AdvancedSQLiteSession store writes exactly what the library's
own ``add_items`` writes (compared table by table on two copies of one file)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from advanced_helpers import SID, Library, write_library_store

from fluxgui.adapters import open_store
from fluxgui.core.errors import InvalidItem

NEW = [{"role": "user", "content": "one more question"}, {"role": "assistant", "content": "one more answer"}]


def _tables(path: Path) -> dict[str, list[tuple]]:
    """Every row, without the times the two writers stamp at different moments."""
    conn = sqlite3.connect(path)
    try:
        return {
            "agent_sessions": conn.execute("SELECT session_id FROM agent_sessions ORDER BY 1").fetchall(),
            "agent_messages": conn.execute(
                "SELECT id, session_id, message_data FROM agent_messages ORDER BY id").fetchall(),
            "message_structure": conn.execute(
                "SELECT id, session_id, message_id, branch_id, message_type, sequence_number, "
                "user_turn_number, branch_turn_number, tool_name FROM message_structure ORDER BY id"
            ).fetchall(),
        }
    finally:
        conn.close()


@pytest.mark.parametrize("branch", ["main", "alt"])
async def test_add_messages_writes_what_the_library_writes(tmp_path: Path, branch: str):
    ours, theirs = tmp_path / "ours.db", tmp_path / "theirs.db"
    await write_library_store(ours)
    shutil.copyfile(ours, theirs)
    async with await open_store(str(ours), writable=True) as store:
        assert await store.writer.add_messages(SID, NEW, branch=branch) == 2
    s = Library(theirs).session()
    try:
        await s.switch_to_branch(branch)
        await s.add_items(NEW)
    finally:
        s.close()
    assert _tables(ours) == _tables(theirs)
    view = await Library(ours).view(SID, current=branch)
    assert view["current_items"][-2:] == NEW


async def test_tool_items_are_refused_and_nothing_is_written(tmp_path: Path):
    path = tmp_path / "a.db"
    await write_library_store(path)
    before = _tables(path)
    async with await open_store(str(path), writable=True) as store:
        assert await store.writer.add_messages(SID, []) == 0
        with pytest.raises(InvalidItem, match="only messages"):
            await store.writer.add_messages(SID, [{"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}"}])
    assert _tables(path) == before
