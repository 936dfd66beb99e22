"""Browsing changes nothing: SQLite files stay byte-identical, Postgres sees no write.

The stores are written by the real libraries (both switch SQLite files to WAL mode).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import asyncpg
import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages, all_sessions, cli_env, sidecars, snapshot

from fluxgui.adapters import open_store
from fluxgui.core.errors import FluxguiError, ReadOnlyError, StoreUnavailable, TargetError


async def browse(target: str, **options) -> dict:
    """Everything a person does while browsing: list, page both ways, search, count, close."""
    seen: dict = {}
    store = await open_store(target, **options)
    try:
        sessions = await all_sessions(store, page_size=2)
        for info in sessions:
            msgs = await all_messages(store, info.id, batch=3)
            seen[info.id] = [m.text for m in msgs]
            await store.reader.page_messages(info.id, limit=2)
            await store.reader.count_messages(info.id)
            await store.session(info.id).get_messages(limit=1)
        await store.reader.search_sessions("hello")
        await store.reader.search_sessions("%_ÄÖ")
        assert store.can_write is False
    finally:
        await store.close()
    return seen


def wal_mode(path: Path) -> bool:
    header = path.read_bytes()[:20]
    return header[18] == 2 and header[19] == 2


async def write_flux_store(path: Path) -> dict[str, list[str]]:
    data = {
        "a": ["hello there", "general hello"],
        "b": ["ÄÖÜ and 100% _sure_"],
    }
    for sid, texts in data.items():
        await FluxSQLiteSession(str(path), session_id=sid).add_messages(
            [{"role": "user", "content": t} for t in texts]
        )
    return data


async def write_agents_store(path: Path) -> dict[str, list[str]]:
    data = {"x": ["hello from the SDK"], "y": ["second", "third ✓"]}
    for sid, texts in data.items():
        session = AgentsSQLiteSession(sid, str(path))
        try:
            await session.add_items([{"role": "user", "content": t} for t in texts])
        finally:
            session.close()
    return data


@pytest.mark.parametrize("writer", [write_flux_store, write_agents_store], ids=["flux", "agents"])
async def test_browsing_leaves_sqlite_file_byte_identical(tmp_path, writer):
    path = tmp_path / "store.db"
    data = await writer(path)
    assert wal_mode(path), "the library should have left the file in WAL mode"
    before_files = sorted(os.listdir(tmp_path))
    before = snapshot(path)
    seen = await browse(str(path))
    assert seen == data
    assert sorted(os.listdir(tmp_path)) == before_files
    assert snapshot(path) == before
    # Twice, and through the sqlite:/// URL spelling too.
    await browse(f"sqlite:///{path}")
    assert snapshot(path) == before
    assert sorted(os.listdir(tmp_path)) == before_files


async def test_browsing_sqlalchemy_sqlite_store_is_byte_identical(tmp_path):
    path = tmp_path / "sa.db"
    url = f"sqlite+aiosqlite:///{path}"
    session = SQLAlchemySession.from_url("sa", url=url, create_tables=True)
    try:
        await session.add_items([{"role": "user", "content": "hello sqlalchemy"}])
    finally:
        await session.engine.dispose()
    before_files = sorted(os.listdir(tmp_path))
    before = snapshot(path)
    assert await browse(url) == {"sa": ["hello sqlalchemy"]}
    assert snapshot(path) == before
    assert sorted(os.listdir(tmp_path)) == before_files


KILLED_WRITER = {
    "agents": """
        import asyncio, os, signal, sys
        from agents import SQLiteSession
        async def main():
            session = SQLiteSession("killed", sys.argv[1])
            await session.add_items([{"role": "user", "content": f"row {i}"} for i in range(5)])
            print("written", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        asyncio.run(main())
    """,
    "flux": """
        import asyncio, os, signal, sqlite3, sys
        from flux.sessions import SQLiteSession
        async def main():
            session = SQLiteSession(sys.argv[1], session_id="killed")
            # Another connection of the same process stays open (an app that keeps one),
            # so flux's own close is not the last one and nothing is checkpointed.
            keep = sqlite3.connect(sys.argv[1])
            keep.execute("SELECT count(*) FROM messages").fetchall()
            await session.add_messages([{"role": "user", "content": f"row {i}"} for i in range(5)])
            print("written", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        asyncio.run(main())
    """,
}


def rows_without_wal(path: Path, tmp: Path) -> int:
    """How many rows of session 'killed' a reader of the .db file alone would see."""
    copy = tmp / "copy-without-wal.db"
    shutil.copyfile(path, copy)
    conn = sqlite3.connect(f"file:{copy}?immutable=1", uri=True)
    try:
        table = "agent_messages" if "agent_messages" in {
            r[0] for r in conn.execute("SELECT name FROM sqlite_master")
        } else "messages"
        return conn.execute(f"SELECT count(*) FROM {table} WHERE session_id = 'killed'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


@pytest.mark.parametrize("writer", ["agents", "flux"])
async def test_killed_wal_writer_rows_are_shown_and_files_untouched(tmp_path, writer):
    path = tmp_path / "killed.db"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED_WRITER[writer]), str(path)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert proc.returncode == -9, proc.stderr
    assert "written" in proc.stdout
    assert "-wal" in sidecars(path)
    assert Path(str(path) + "-wal").stat().st_size > 0
    other = tmp_path / "other"
    other.mkdir()
    assert rows_without_wal(path, other) < 5, "the rows should live in -wal only"
    db_hash_before = snapshot(path)
    files_before = sorted(os.listdir(tmp_path))
    seen = await browse(str(path))
    assert seen == {"killed": [f"row {i}" for i in range(5)]}
    after = snapshot(path)
    assert after[""] == db_hash_before[""]
    assert after["-wal"] == db_hash_before["-wal"]
    assert sorted(os.listdir(tmp_path)) == files_before


async def test_zero_byte_file_stays_zero_bytes(tmp_path):
    path = tmp_path / "empty.db"
    path.touch()
    for options in ({}, {"sessions_table": "s", "messages_table": "m"}):
        with pytest.raises(TargetError) as err:
            await open_store(str(path), **options)
        assert "empty" in str(err.value)
    with pytest.raises(TargetError):
        await open_store(f"sqlite:///{path}")
    assert path.stat().st_size == 0
    assert sorted(os.listdir(tmp_path)) == ["empty.db"]


async def test_missing_file_is_not_created(tmp_path):
    path = tmp_path / "missing.db"
    with pytest.raises(TargetError):
        await open_store(str(path))
    assert not path.exists()
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------- Postgres


async def pg_state(url: str) -> dict:
    """Every row of every table (with its xmin: a rewrite changes it) and the schema."""
    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        tables = [
            r["table_name"]
            for r in await conn.fetch(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' ORDER BY table_name"
            )
        ]
        state = {
            "tables": tables,
            "columns": [
                tuple(r)
                for r in await conn.fetch(
                    "SELECT table_name, column_name, data_type FROM information_schema.columns "
                    "WHERE table_schema = 'public' ORDER BY 1, 2"
                )
            ],
        }
        for t in tables:
            state[t] = [tuple(r) for r in await conn.fetch(f'SELECT xmin::text, * FROM "{t}" ORDER BY 2, 3')]
        return state
    finally:
        await conn.close()


@pytest.mark.parametrize("fmt", ["flux", "agents"])
async def test_postgres_browse_writes_nothing(pg_url, fmt):
    if fmt == "agents":
        for sid, texts in {"x": ["hello one"], "y": ["two", "hello three"]}.items():
            session = SQLAlchemySession.from_url(sid, url=pg_url, create_tables=True)
            try:
                await session.add_items([{"role": "user", "content": t} for t in texts])
            finally:
                await session.engine.dispose()
    else:
        async with await open_store(pg_url, create="flux") as store:
            await store.writer.add_messages("x", [{"role": "user", "content": "hello one"}])
            await store.writer.add_messages("y", [{"role": "user", "content": "two"}, {"role": "user", "content": "hello three"}])
    before = await pg_state(pg_url)
    seen = await browse(pg_url)
    assert seen == {"x": ["hello one"], "y": ["two", "hello three"]}
    assert await pg_state(pg_url) == before
    # Each read runs in a READ ONLY transaction: even a write smuggled through the
    # store's read path is refused by the server.
    store = await open_store(pg_url)
    try:
        (flag,) = await store.backend.fetchone("SHOW transaction_read_only")
        assert flag == "on"
        table = "messages" if fmt == "flux" else "agent_messages"
        with pytest.raises(StoreUnavailable) as err:
            await store.backend.fetchall(f"DELETE FROM {table}")
        assert "read-only" in str(err.value)
        with pytest.raises(ReadOnlyError):
            await store.backend.write([(f"DELETE FROM {table}", {})])
    finally:
        await store.close()
    assert await pg_state(pg_url) == before


async def test_postgres_without_store_is_not_created(pg_url):
    """Opening an empty database read-only reports it and creates no tables."""
    with pytest.raises(FluxguiError) as err:
        await open_store(pg_url)
    assert "not a session store" in str(err.value)
    assert (await pg_state(pg_url))["tables"] == []


async def test_wal_store_copied_without_shm_gets_no_new_side_file(tmp_path):
    """A store handed over as .db + -wal (the rows of a writer that died live in -wal)."""
    source = tmp_path / "source"
    source.mkdir()
    path = source / "killed.db"
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED_WRITER["agents"]), str(path)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert proc.returncode == -9, proc.stderr
    handed = tmp_path / "handed"
    handed.mkdir()
    shutil.copyfile(path, handed / "killed.db")
    shutil.copyfile(str(path) + "-wal", handed / "killed.db-wal")
    copy = handed / "killed.db"
    before = snapshot(copy)
    seen = await browse(str(copy))
    assert seen == {"killed": [f"row {i}" for i in range(5)]}
    assert snapshot(copy)[""] == before[""]
    assert sorted(os.listdir(handed)) == ["killed.db", "killed.db-wal"]
