"""A rollback-journal writer that died mid-transaction leaves a hot ``-journal``.

The database file may then already hold some of the dead transaction's changes; only the
journal says how it looked before. SQLite refuses a read-only connection on such a file
(the journal must be rolled back first, which is a write). Browsing must still show the
committed state and change no file: fluxgui reads a private copy of the database and the
journal, rolled back in the copy.

Both libraries leave their files in WAL mode; a store in rollback-journal mode is one
that was switched back (``PRAGMA journal_mode=DELETE``, as a backup or copy tool may
leave it). The dying writer here is plain ``sqlite3`` (tests/adapters/test_kill_clear.py
kills fluxgui's own ``clear`` the same way).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages, cli_env, sidecars, snapshot

from fluxgui.adapters import open_store
from fluxgui.adapters.sql.sqlite import private_copy

N_ITEMS = 3000

#: Deletes every row of the table in one transaction with a tiny page cache (so that the
#: changed pages spill into the database file before the commit), then dies.
DYING_WRITER = """
    import os, signal, sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("PRAGMA cache_size=5")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM " + sys.argv[2])
    print("deleted", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
"""

#: Holds a write transaction open (small: nothing spills) until told to stop.
LIVE_WRITER = """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM " + sys.argv[2] + " WHERE id <= 3")
    print("holding", flush=True)
    sys.stdin.readline()
    conn.execute("ROLLBACK")
"""


async def write_agents(path: Path) -> list[dict]:
    session = AgentsSQLiteSession("big", str(path))
    try:
        await session.add_items([{"role": "user", "content": f"item {i} " + "x" * 40} for i in range(N_ITEMS)])
        await session.add_items([{"role": "assistant", "content": "the last word"}])
        return await session.get_items()
    finally:
        session.close()


async def agents_read(path: Path) -> list[dict]:
    session = AgentsSQLiteSession("big", str(path))
    try:
        return await session.get_items()
    finally:
        session.close()


async def write_flux(path: Path) -> list[dict]:
    session = FluxSQLiteSession(str(path), session_id="big")
    await session.add_messages([{"role": "user", "content": f"item {i} " + "x" * 40} for i in range(N_ITEMS)])
    await session.add_messages([{"role": "assistant", "content": "the last word", "metadata": {"k": 1}}])
    return await session.get_messages()


async def flux_read(path: Path) -> list[dict]:
    return await FluxSQLiteSession(str(path), session_id="big").get_messages()


WRITERS = {
    "agents": (write_agents, agents_read, "agent_messages"),
    "flux": (write_flux, flux_read, "messages"),
}


def to_rollback_journal(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    finally:
        conn.close()
    assert sidecars(path) == set()


def kill_writer_mid_transaction(path: Path, table: str) -> None:
    db_before = snapshot(path)[""]
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(DYING_WRITER), str(path), table],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert proc.returncode == -9, proc.stderr
    assert "deleted" in proc.stdout
    assert sidecars(path) == {"-journal"}, "the dead writer should have left a -journal"
    assert Path(str(path) + "-journal").stat().st_size > 0
    # The database file itself already holds some of the dead transaction's changes:
    # without the journal the rows would be (partly) gone.
    assert snapshot(path)[""] != db_before, "the writer's changes should have reached the file"


def fluxgui_temp_folders() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("fluxgui-")}


@pytest.mark.parametrize("fmt", list(WRITERS))
async def test_hot_journal_store_reads_committed_state_and_stays_untouched(tmp_path, fmt):
    write, read, table = WRITERS[fmt]
    path = tmp_path / "store.db"
    ref = await write(path)
    assert len(ref) == N_ITEMS + 1
    to_rollback_journal(path)
    kill_writer_mid_transaction(path, table)
    before = snapshot(path)
    files = sorted(os.listdir(tmp_path))
    temps = fluxgui_temp_folders()

    store = await open_store(str(path))
    try:
        assert store.can_write is False
        info = await store.reader.require_session("big")
        assert info.messages == N_ITEMS + 1
        shown = await all_messages(store, "big", batch=700)
        assert [m.text for m in shown] == [r["content"] for r in ref]
        assert len({m.id for m in shown}) == len(shown)
        assert [s.id for s in (await store.reader.list_sessions()).sessions] == ["big"]
        assert [s.id for s in await store.reader.search_sessions("the last word")] == ["big"]
        # Read from a private copy, while nothing beside the store changed.
        assert snapshot(path) == before
    finally:
        await store.close()
    assert snapshot(path) == before
    assert sorted(os.listdir(tmp_path)) == files
    assert fluxgui_temp_folders() == temps, "the private copy should be removed on close"
    # Twice (the copy is made again), then the library: it rolls the journal back in place.
    async with await open_store(f"sqlite:///{path}") as store:
        assert await store.reader.count_messages("big") == N_ITEMS + 1
    assert snapshot(path) == before
    assert await read(path) == ref
    assert "-journal" not in sidecars(path)


async def test_hot_journal_store_opened_writable_is_rolled_back_in_place(tmp_path):
    path = tmp_path / "store.db"
    ref = await write_agents(path)
    to_rollback_journal(path)
    kill_writer_mid_transaction(path, "agent_messages")
    async with await open_store(str(path), writable=True) as store:
        assert store.backend._copy is None
        assert await store.reader.count_messages("big") == len(ref)
        change = await store.editor.pop_message("big")
        assert change.removed[0]["message_data"] == '{"role": "assistant", "content": "the last word"}'
    assert "-journal" not in sidecars(path)
    assert await agents_read(path) == ref[:-1]


async def test_live_writer_journal_is_read_in_place(tmp_path):
    """A journal whose writer is alive is not hot: the committed rows are read in place
    (SQLite tells the two apart by the writer's lock; no copy is made)."""
    path = tmp_path / "store.db"
    ref = await write_agents(path)
    to_rollback_journal(path)
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(LIVE_WRITER), str(path), "agent_messages"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    try:
        assert proc.stdout.readline().strip() == "holding"
        assert "-journal" in sidecars(path)
        async with await open_store(str(path)) as store:
            assert store.backend._copy is None
            shown = await all_messages(store, "big", batch=1000)
            assert [m.raw for m in shown] == ref
    finally:
        proc.stdin.write("\n")
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    assert await agents_read(path) == ref


def test_private_copy_of_a_vanished_journal_is_none(tmp_path):
    """When the journal goes away before it is copied (another process recovered the
    store), there is nothing to roll back: ``None`` tells the caller to read in place."""
    path = tmp_path / "store.db"
    asyncio.run(write_agents(path))
    temps = fluxgui_temp_folders()
    assert private_copy(path, journal=True) is None
    assert fluxgui_temp_folders() == temps
