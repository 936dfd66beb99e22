"""``fluxgui clear`` and ``fluxgui rm``, run as subprocesses on stores the libraries wrote.

After each command the library itself reads the store back. Refusals (no ``--yes``) and
known errors (exit 3) leave the store as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pty
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import asyncpg
import pytest
from agents.extensions.memory import AdvancedSQLiteSession
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from helpers import agents_read, assert_known_error, cli_env, closed_port, flux_read, run_cli, sidecars, snapshot, write_agents, write_flux

FLUX = {
    "zeta": [{"role": "user", "content": "first"}, {"role": "assistant", "content": "second", "metadata": {"m": 1}}],
    "alpha": [{"role": "user", "content": "keep me ✓"}],
}
AGENTS = {
    "conv": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ],
    "kept": [{"role": "user", "content": "keep me ✓"}],
}










def agent_session_ids(path: Path, table: str = "agent_sessions") -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute(f"SELECT session_id FROM {table} ORDER BY session_id")]
    finally:
        conn.close()


def listed(target: str) -> dict[str, int]:
    result = run_cli("ls", target, "--json", "--limit", "0")
    assert result.returncode == 0, result.stderr
    return {s["id"]: s["messages"] for s in json.loads(result.stdout)["sessions"]}


def ok_line(result) -> str:
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    return lines[0]



@pytest.fixture
def flux_db(tmp_path) -> Path:
    path = tmp_path / "flux.db"
    write_flux(path, FLUX)
    return path


@pytest.fixture
def agents_db(tmp_path) -> Path:
    path = tmp_path / "agents.db"
    write_agents(path, AGENTS)
    return path


# --------------------------------------------------------------------------- clear / rm on SQLite


def test_clear_flux(flux_db):
    line = ok_line(run_cli("clear", str(flux_db), "zeta", "--yes"))
    assert line == 'cleared 2 messages from session "zeta"'
    assert flux_read(flux_db, "zeta") == []
    assert flux_read(flux_db, "alpha") == FLUX["alpha"]
    assert listed(str(flux_db)) == {"alpha": 1}  # flux has no session row: the session is gone


def test_clear_agents_keeps_the_session_row(agents_db):
    line = ok_line(run_cli("clear", str(agents_db), "conv", "--yes"))
    assert line == 'cleared 3 messages from session "conv"'
    assert agents_read(agents_db, "conv") == []
    assert agents_read(agents_db, "kept") == AGENTS["kept"]
    assert agent_session_ids(agents_db) == ["conv", "kept"]
    assert listed(str(agents_db)) == {"conv": 0, "kept": 1}
    # The SDK carries on in the cleared session.
    write_agents(agents_db, {"conv": [{"role": "user", "content": "again"}]})
    assert agents_read(agents_db, "conv") == [{"role": "user", "content": "again"}]


def test_rm_flux(flux_db):
    line = ok_line(run_cli("rm", str(flux_db), "zeta", "--yes"))
    assert line == 'deleted session "zeta" (2 messages)'
    assert flux_read(flux_db, "zeta") == []
    assert flux_read(flux_db, "alpha") == FLUX["alpha"]
    assert listed(str(flux_db)) == {"alpha": 1}


def test_rm_agents(agents_db):
    line = ok_line(run_cli("rm", str(agents_db), "conv", "--yes"))
    assert line == 'deleted session "conv" (3 messages)'
    assert agents_read(agents_db, "conv") == []
    assert agent_session_ids(agents_db) == ["kept"]
    assert agents_read(agents_db, "kept") == AGENTS["kept"]
    assert listed(str(agents_db)) == {"kept": 1}


def test_clear_one_message_and_an_empty_session(tmp_path):
    path = tmp_path / "agents.db"
    write_agents(path, {"one": [{"role": "user", "content": "x"}]})
    assert ok_line(run_cli("clear", str(path), "one", "--yes")) == 'cleared 1 message from session "one"'
    # Cleared, the session is still there with no messages: clearing it again removes 0.
    assert ok_line(run_cli("clear", str(path), "one", "--yes")) == 'cleared 0 messages from session "one"'
    assert ok_line(run_cli("rm", str(path), "one", "--yes")) == 'deleted session "one" (0 messages)'
    assert agent_session_ids(path) == []
    assert_known_error(run_cli("rm", str(path), "one", "--yes"), "unknown session", '"one"')


def test_hostile_session_id_stays_on_one_line(tmp_path):
    path = tmp_path / "agents.db"
    sid = 'line\nbreak "quoted" ✓'
    write_agents(path, {sid: [{"role": "user", "content": "x"}], "kept": AGENTS["kept"]})
    line = ok_line(run_cli("rm", str(path), sid, "--yes"))
    assert line == f"deleted session {json.dumps(sid, ensure_ascii=False)} (1 message)"
    assert agent_session_ids(path) == ["kept"]


def test_renamed_tables_and_format_options(tmp_path):
    path = tmp_path / "renamed.db"
    tables = {"sessions_table": "conv_sessions", "messages_table": "conv_items"}
    write_agents(path, AGENTS, **tables)
    options = ["--sessions-table", "conv_sessions", "--messages-table", "conv_items"]
    assert ok_line(run_cli("clear", str(path), "conv", "--yes", *options)) == 'cleared 3 messages from session "conv"'
    assert agents_read(path, "conv", **tables) == []
    assert agents_read(path, "kept", **tables) == AGENTS["kept"]
    result = run_cli("rm", str(path), "kept", "--yes", "--sessions-table", "nope", "--messages-table", "conv_items")
    assert_known_error(result, "not a session store")
    assert agents_read(path, "kept", **tables) == AGENTS["kept"]
    # A file holding both formats: --format picks flux.
    write_flux(path, {"fx": [{"role": "user", "content": "flux row"}]})
    assert ok_line(run_cli("rm", str(path), "fx", "--yes", "--store-format", "flux")) == 'deleted session "fx" (1 message)'
    assert flux_read(path, "fx") == []
    assert agents_read(path, "kept", **tables) == AGENTS["kept"]


def test_sqlalchemy_sqlite_url(tmp_path):
    path = tmp_path / "agents.db"
    write_agents(path, AGENTS)
    assert ok_line(run_cli("clear", f"sqlite:///{path}", "conv", "--yes")) == 'cleared 3 messages from session "conv"'
    assert agents_read(path, "conv") == []


# --------------------------------------------------------------------------- Postgres


async def sa_write(url: str, data: dict) -> None:
    for sid, items in data.items():
        session = SQLAlchemySession.from_url(sid, url=url, create_tables=True)
        try:
            await session.add_items(items)
        finally:
            await session.engine.dispose()


async def sa_read(url: str, sid: str) -> list[dict]:
    session = SQLAlchemySession.from_url(sid, url=url)
    try:
        return await session.get_items()
    finally:
        await session.engine.dispose()


def test_clear_and_rm_on_postgres(pg_url):
    asyncio.run(sa_write(pg_url, AGENTS))
    assert ok_line(run_cli("clear", pg_url, "conv", "--yes")) == 'cleared 3 messages from session "conv"'
    assert asyncio.run(sa_read(pg_url, "conv")) == []
    assert listed(pg_url) == {"conv": 0, "kept": 1}
    assert ok_line(run_cli("rm", pg_url, "kept", "--yes")) == 'deleted session "kept" (1 message)'
    assert asyncio.run(sa_read(pg_url, "kept")) == []
    assert listed(pg_url) == {"conv": 0}
    assert_known_error(run_cli("rm", pg_url, "kept", "--yes"), "unknown session", '"kept"')


def test_clear_flux_on_postgres(pg_url):
    from fluxgui.adapters import open_store

    async def fill() -> None:
        async with await open_store(pg_url, create="flux") as store:
            for sid, msgs in FLUX.items():
                await store.writer.add_messages(sid, msgs)

    asyncio.run(fill())
    assert ok_line(run_cli("clear", pg_url, "zeta", "--yes")) == 'cleared 2 messages from session "zeta"'
    assert listed(pg_url) == {"alpha": 1}


def test_read_only_postgres_database_is_refused(pg_url):
    asyncio.run(sa_write(pg_url, AGENTS))
    name = pg_url.rsplit("/", 1)[1]

    async def read_only() -> None:
        conn = await asyncpg.connect(pg_url.replace("+asyncpg", ""))
        try:
            await conn.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
        finally:
            await conn.close()

    asyncio.run(read_only())
    for command in ("clear", "rm"):
        assert_known_error(run_cli(command, pg_url, "conv", "--yes"), "read-only")
    assert asyncio.run(sa_read(pg_url, "conv")) == AGENTS["conv"]


# --------------------------------------------------------------------------- confirmation


@pytest.mark.parametrize("command", ["clear", "rm"])
def test_without_yes_and_no_terminal_refuses_with_exit_2(flux_db, command):
    before = snapshot(flux_db)
    files = sorted(os.listdir(flux_db.parent))
    result = subprocess.run(
        [sys.executable, "-m", "fluxgui", command, str(flux_db), "zeta"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=60,
    )
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "--yes" in lines[0] and '"zeta"' in lines[0], result.stderr
    assert result.stdout == ""
    assert snapshot(flux_db) == before
    assert sorted(os.listdir(flux_db.parent)) == files


def run_with_terminal(args: list[str], answer: str) -> tuple[int, str, str]:
    """Run the CLI with a terminal as its stdin, answer its question, return (code, out, err)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fluxgui", *args],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        os.close(slave)
        slave = -1
        os.write(master, answer.encode() + b"\n")
        out, err = proc.communicate(timeout=60)
        return proc.returncode, out, err
    finally:
        if slave != -1:
            os.close(slave)
        os.close(master)


def test_terminal_question_yes(agents_db):
    code, out, err = run_with_terminal(["rm", str(agents_db), "conv"], "y")
    assert code == 0, err
    assert 'Delete session "conv" (3 messages)' in err and "[y/N]" in err
    assert out == 'deleted session "conv" (3 messages)\n'
    assert agent_session_ids(agents_db) == ["kept"]


@pytest.mark.parametrize("answer", ["", "n", "no", "yess"])
def test_terminal_question_anything_but_yes_changes_nothing(agents_db, answer):
    code, out, err = run_with_terminal(["clear", str(agents_db), "conv"], answer)
    assert code == 1, err
    assert "Remove every message of session" in err and "nothing changed" in err
    assert out == ""
    assert agents_read(agents_db, "conv") == AGENTS["conv"]


def test_terminal_question_not_asked_for_an_unknown_session(agents_db):
    code, out, err = run_with_terminal(["clear", str(agents_db), "nope"], "y")
    assert code == 3
    assert "[y/N]" not in err and "unknown session" in err
    assert agents_read(agents_db, "conv") == AGENTS["conv"]


# --------------------------------------------------------------------------- known errors


@pytest.mark.parametrize("command", ["clear", "rm"])
def test_unknown_session_id(flux_db, agents_db, command):
    for path, reader, data in ((flux_db, flux_read, FLUX), (agents_db, agents_read, AGENTS)):
        assert_known_error(run_cli(command, str(path), "no-such-id", "--yes"), "unknown session", "no-such-id")
        for sid, expected in data.items():
            assert reader(path, sid) == expected


@contextlib.contextmanager
def not_writable(path: Path):
    """Make ``path`` (a file or a folder) impossible to write, also for root."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    try:
        subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"running as root and cannot make {path} immutable: {exc}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.parametrize("what", ["file", "folder"])
@pytest.mark.parametrize("command", ["clear", "rm"])
def test_read_only_target(agents_db, command, what):
    before = snapshot(agents_db)
    with not_writable(agents_db if what == "file" else agents_db.parent):
        result = run_cli(command, str(agents_db), "conv", "--yes")
    assert_known_error(result, "read-only", str(agents_db))
    assert snapshot(agents_db) == before
    assert sidecars(agents_db) == set()
    assert agents_read(agents_db, "conv") == AGENTS["conv"]


@pytest.mark.parametrize("command", ["clear", "rm"])
def test_unreachable_server(command):
    port = closed_port()
    result = run_cli(command, f"postgresql+asyncpg://root@127.0.0.1:{port}/test", "s", "--yes")
    assert_known_error(result, "unreachable", str(port))


@pytest.mark.parametrize("command", ["clear", "rm"])
def test_not_a_store(tmp_path, command):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.commit()
    conn.close()
    before = snapshot(path)
    assert_known_error(run_cli(command, str(path), "s", "--yes"), "not a session store", "invoices")
    assert snapshot(path) == before
    text = tmp_path / "notes.txt"
    text.write_text("notes\n")
    assert_known_error(run_cli(command, str(text), "s", "--yes"), "notes.txt")
    assert text.read_text() == "notes\n"
    missing = tmp_path / "missing.db"
    assert_known_error(run_cli(command, str(missing), "s", "--yes"), "missing.db")
    assert not missing.exists()
    assert_known_error(run_cli(command, str(tmp_path), "s", "--yes"), "folder")


def test_postgres_database_that_does_not_exist(pg_available):
    name = f"fluxgui_missing_{uuid.uuid4().hex[:8]}"
    result = run_cli("rm", f"postgresql+asyncpg://root@127.0.0.1:5432/{name}", "s", "--yes")
    assert_known_error(result, name, "does not exist")


@pytest.mark.parametrize("command", ["clear", "rm"])
def test_advanced_sqlite_session_store_is_refused(tmp_path, command):
    path = tmp_path / "advanced.db"

    async def write() -> None:
        session = AdvancedSQLiteSession(session_id="adv", db_path=str(path), create_tables=True)
        try:
            await session.add_items(AGENTS["conv"])
        finally:
            session.close()

    asyncio.run(write())
    assert_known_error(run_cli(command, str(path), "adv", "--yes"), "AdvancedSQLiteSession")
    assert agents_read(path, "adv") == AGENTS["conv"]


@pytest.mark.parametrize(
    "args",
    [["clear"], ["rm"], ["clear", "x.db"], ["rm", "x.db", "s", "--no-such-option"], ["clear", "x.db", "s", "--store-format", "nope"]],
)
def test_usage_errors_exit_2(args, tmp_path):
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "usage:" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x.db").exists()
