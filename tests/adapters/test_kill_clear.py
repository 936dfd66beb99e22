"""``fluxgui clear`` killed (SIGKILL) in the middle of its transaction changes nothing.

A big session is written by the real library; ``python -m fluxgui clear`` starts on it and
is killed once its transaction is visibly under way (its changes are reaching the disk:
the ``-wal`` grows, or the ``-journal`` grows and the database file itself is being
written). Then the store holds exactly what it held before: fluxgui's read-only open
reads it without changing a file (a hot journal is rolled back in a private copy), and
the library reads every item back.

If the command finishes before it can be killed, the attempt proves nothing: it is made
again with a bigger store, and the test fails when no attempt could be killed in time.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import cli_env, sidecars, snapshot

from fluxgui.adapters import open_store

SID = "big"
SIZES = (200_000, 400_000, 800_000)
BATCH = 50_000
#: how far the transaction must have got on disk before the kill
UNDER_WAY = 2 * 1024 * 1024
TIMEOUT = 120.0
TABLE = {"agents": "agent_messages", "flux": "messages"}


def item(i: int) -> dict:
    return {"role": "user" if i % 2 == 0 else "assistant", "content": f"item {i}"}


async def build(path: Path, fmt: str, n: int) -> None:
    """``n`` small items in session SID and two in another session, by the library."""
    if fmt == "agents":
        for sid, count in ((SID, n), ("other", 2)):
            session = AgentsSQLiteSession(sid, str(path))
            try:
                for start in range(0, count, BATCH):
                    await session.add_items([item(i) for i in range(start, min(count, start + BATCH))])
            finally:
                session.close()
    else:
        for sid, count in ((SID, n), ("other", 2)):
            session = FluxSQLiteSession(str(path), session_id=sid)
            for start in range(0, count, BATCH):
                await session.add_messages([item(i) for i in range(start, min(count, start + BATCH))])


async def library_read(path: Path, fmt: str) -> list[dict]:
    if fmt == "agents":
        session = AgentsSQLiteSession(SID, str(path))
        try:
            return await session.get_items()
        finally:
            session.close()
    return await FluxSQLiteSession(str(path), session_id=SID).get_messages()


def table_names(conn) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]


def rows_digest(rows_by_table: dict[str, list[tuple]]) -> str:
    h = hashlib.sha256()
    for table in sorted(rows_by_table):
        h.update(table.encode())
        for row in rows_by_table[table]:
            h.update(repr(tuple(row)).encode())
    return h.hexdigest()


def raw_digest(path: Path) -> tuple[int, str]:
    """(rows of session SID, digest of every row of every table), by plain sqlite3."""
    conn = sqlite3.connect(path)
    try:
        tables = {t: conn.execute(f'SELECT * FROM "{t}" ORDER BY 1').fetchall() for t in table_names(conn)}
        table = TABLE["agents"] if TABLE["agents"] in tables else TABLE["flux"]
        count = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE session_id = ?", (SID,)).fetchone()[0]
    finally:
        conn.close()
    return count, rows_digest(tables)


async def fluxgui_digest(path: Path) -> tuple[int, str, list]:
    """The same through fluxgui's read-only open, plus the session's last 3 messages."""
    async with await open_store(str(path)) as store:
        assert store.can_write is False
        names = [r[0] for r in await store.backend.fetchall(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        )]
        tables = {t: await store.backend.fetchall(f'SELECT * FROM "{t}" ORDER BY 1') for t in names}
        count = await store.reader.count_messages(SID)
        info = await store.reader.session_info(SID)
        assert (info.messages if info else 0) == count
        last = [(m.role, m.text) for m in await store.reader.page_messages(SID, limit=3)]
    return count, rows_digest(tables), last


def without_shm(files: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in files.items() if k != "-shm"}


def to_rollback_journal(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    finally:
        conn.close()


def under_way(path: Path, journal: str, db_mtime: int) -> bool:
    """The clear's changes are reaching the disk, before its commit."""
    try:
        if journal == "wal":
            return os.stat(str(path) + "-wal").st_size >= UNDER_WAY
        return (
            os.stat(str(path) + "-journal").st_size >= UNDER_WAY
            and os.stat(path).st_mtime_ns != db_mtime
        )
    except FileNotFoundError:
        return False


def start_and_kill(path: Path, journal: str) -> tuple[bool, str]:
    """Start ``fluxgui clear`` and SIGKILL it once under way; (killed in time, its output)."""
    db_mtime = os.stat(path).st_mtime_ns
    proc = subprocess.Popen(
        [sys.executable, "-m", "fluxgui", "clear", str(path), SID, "--yes"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    deadline = time.monotonic() + TIMEOUT
    killed = False
    try:
        while time.monotonic() < deadline:
            if under_way(path, journal, db_mtime):
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                break
            if proc.poll() is not None:
                break
            time.sleep(0.0005)  # poll interval: the condition above is what is waited for
        else:
            pytest.fail(f"fluxgui clear neither got under way nor ended within {TIMEOUT} s")
    finally:
        if proc.poll() is None and not killed:
            proc.kill()
        out, err = proc.communicate(timeout=TIMEOUT)
    return killed and proc.returncode == -signal.SIGKILL, out + err


@pytest.mark.parametrize("journal", ["wal", "rollback"])
@pytest.mark.parametrize("fmt", ["agents", "flux"])
async def test_killed_clear_leaves_the_store_unchanged(tmp_path, fmt, journal):
    attempts = []
    for n in SIZES:
        folder = tmp_path / f"n{n}"
        folder.mkdir()
        path = folder / "store.db"
        await build(path, fmt, n)
        if journal == "rollback":
            # Both libraries leave WAL mode; a store may be switched back (a copy, a tool).
            to_rollback_journal(path)
        assert sidecars(path) == set()
        expected = [item(i) for i in range(n)]
        count0, digest0 = raw_digest(path)
        assert count0 == n
        db0 = snapshot(path)[""]

        killed, output = await asyncio.to_thread(start_and_kill, path, journal)
        # What fluxgui reads, read-only; no file may change while it reads (but -shm, the
        # WAL's shared memory, where every reader takes its read mark).
        before = without_shm(snapshot(path))
        files = sorted(os.listdir(folder))
        count, digest, last = await fluxgui_digest(path)
        assert without_shm(snapshot(path)) == before, "a read-only open changed a file"
        assert sorted(os.listdir(folder)) == files

        if not killed or count == 0:
            # Too late: the clear ended (committed) before the kill. Not a failure of
            # fluxgui, but no proof either: once more, bigger.
            assert count == 0 and (await library_read(path, fmt)) == [], (
                f"a clear that was not killed in time must have cleared everything "
                f"({count} left; its output: {output!r})"
            )
            attempts.append(n)
            continue

        assert "cleared" not in output, output
        if journal == "wal":
            assert "-wal" in sidecars(path) and os.stat(str(path) + "-wal").st_size > 0
        else:
            # A hot journal, and the database file itself already half changed.
            assert "-journal" in sidecars(path)
            assert before[""] != db0, "the clear should have been killed after writing to the file"
        assert count == n, f"the killed clear left {count} of {n} messages"
        assert digest == digest0, "the rows read after the kill differ from those before"
        assert last == [(m["role"], m["content"]) for m in expected[-3:]]
        # The library reads it all (and, opening it read-write, recovers the file).
        got = await library_read(path, fmt)
        assert len(got) == n
        assert got == expected
        assert raw_digest(path) == (count0, digest0)
        # And fluxgui can still clear it for real.
        async with await open_store(str(path), writable=True) as store:
            change = await store.writer.clear_messages(SID)
            assert len(change.removed) == n
        assert await library_read(path, fmt) == []
        return
    pytest.fail(f"fluxgui clear finished before it could be killed on stores of {attempts} items")
