"""The bundled demo store is read, copied, replayed from a copy — never written: a
command that would write to it says how to get a copy (exit 3), and the file is byte for
byte what shipped."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from fluxgui.core.demo import demo_store_path
from tests.helpers import run_cli

pytestmark = pytest.mark.skipif(demo_store_path() is None, reason="no demo store in this checkout")


def _demo() -> Path:
    path = demo_store_path()
    assert path is not None
    return path


def _a_session() -> str:
    with sqlite3.connect(f"file:{_demo()}?mode=ro", uri=True) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        table, column = ("agent_sessions", "session_id") if "agent_sessions" in tables else ("messages", "session_id")
        return str(db.execute(f"SELECT {column} FROM {table} LIMIT 1").fetchone()[0])


@pytest.mark.parametrize(
    "command",
    [
        ["replay", "demo", "{sid}", "--from-turn", "1"],
        ["chat", "demo", "{sid}", "-m", "hello", "--copy"],
        ["clear", "demo", "{sid}", "--yes"],
        ["rewind", "demo", "{sid}", "--last", "--yes"],
    ],
)
def test_a_command_that_writes_refuses_the_demo_store(command: list[str]) -> None:
    before = _demo().read_bytes()
    sid = _a_session()
    done = run_cli(*[part.format(sid=sid) for part in command])
    assert done.returncode == 3, done.stderr
    assert "demo store ships with fluxgui and is never changed" in done.stderr
    assert "fluxgui copy demo" in done.stderr
    assert _demo().read_bytes() == before


def test_the_demo_store_is_copied_and_the_copy_is_writable(tmp_path: Path) -> None:
    before = _demo().read_bytes()
    copy = tmp_path / "my.db"
    done = run_cli("copy", "demo", str(copy))
    assert done.returncode == 0, done.stderr
    sid = _a_session()
    cleared = run_cli("clear", str(copy), sid, "--yes")
    assert cleared.returncode == 0, cleared.stderr
    assert _demo().read_bytes() == before
