"""``fluxgui branch`` (fork a session at a message) and ``fluxgui diff`` (compare two
sessions turn by turn), on stores written by the real libraries."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from flux.sessions import SQLiteSession as FluxSession
from helpers import run_cli

ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "Where is order 1001?"},
    {"type": "function_call", "call_id": "c1", "name": "track", "arguments": '{"order": 1001}'},
    {"type": "function_call_output", "call_id": "c1", "output": "in transit"},
    {"role": "assistant", "content": "It is on its way."},
    {"role": "user", "content": "When will it arrive?"},
    {"role": "assistant", "content": "Tomorrow."},
]


def _write(path: Path, sessions: dict[str, list[dict[str, Any]]]) -> None:
    async def go() -> None:
        for sid, items in sessions.items():
            s = SQLiteSession(sid, path)
            try:
                await s.add_items(items)  # type: ignore[arg-type]
            finally:
                s.close()

    asyncio.run(go())


def _items(path: Path, sid: str) -> list[Any]:
    async def go() -> list[Any]:
        s = SQLiteSession(sid, path)
        try:
            return list(await s.get_items())
        finally:
            s.close()

    return asyncio.run(go())


def _ids(path: Path, sid: str) -> list[int]:
    proc = run_cli("show", str(path), sid, "--json")
    assert proc.returncode == 0, proc.stderr
    return [m["id"] for m in json.loads(proc.stdout)["messages"]]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "agents.db"
    _write(path, {"order": ITEMS})
    return path


def test_branch_forks_at_a_message_and_the_library_reads_it(store: Path) -> None:
    ids = _ids(store, "order")
    before = store.read_bytes()
    proc = run_cli("branch", str(store), "order", "--at", str(ids[3]), "--name", "what-if")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == 'forked session "order" at message %d into "what-if" (4 messages)\n' % ids[3]
    assert _items(store, "what-if") == ITEMS[:4]
    assert _items(store, "order") == ITEMS
    assert before != store.read_bytes()  # written, but the origin's items are the same
    # Without --name: <id>-fork; the name taken: exit 3, one line.
    proc = run_cli("branch", str(store), "order", "--at", str(ids[0]))
    assert proc.returncode == 0 and '"order-fork"' in proc.stdout
    proc = run_cli("branch", str(store), "order", "--at", str(ids[0]), "--name", "what-if")
    assert proc.returncode == 3 and proc.stderr.count("\n") == 1
    assert "already exists" in proc.stderr


def test_branch_errors_are_one_line(store: Path, tmp_path: Path) -> None:
    proc = run_cli("branch", str(store), "order", "--at", "999999")
    assert proc.returncode == 3 and "not in session" in proc.stderr
    assert proc.stderr.count("\n") == 1
    proc = run_cli("branch", str(store), "order")
    assert proc.returncode == 2  # --at is required
    proc = run_cli("branch", str(tmp_path / "missing.db"), "order", "--at", "1")
    assert proc.returncode == 3 and "no such file" in proc.stderr


def test_diff_same_and_different(store: Path) -> None:
    ids = _ids(store, "order")
    assert run_cli("branch", str(store), "order", "--at", str(ids[-1]), "--name", "copy").returncode == 0
    same = run_cli("diff", str(store), "order", "copy")
    assert same.returncode == 0, same.stderr
    changed = [*ITEMS[:5], {"role": "assistant", "content": "Next week, sorry."}]
    _write(store, {"other": changed})
    proc = run_cli("diff", str(store), "order", "other")
    assert proc.returncode == 1, proc.stderr
    assert "Tomorrow." in proc.stdout and "Next week, sorry." in proc.stdout
    proc = run_cli("diff", str(store), "order", "other", "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["first_difference"] == 2
    assert [t["same"] for t in doc["turns"]] == [True, False]
    proc = run_cli("diff", str(store), "order", "nope")
    assert proc.returncode == 3 and '"nope"' in proc.stderr


def test_diff_on_flux_forks(tmp_path: Path) -> None:
    path = tmp_path / "flux.db"

    async def go() -> None:
        await FluxSession(db_path=str(path), session_id="a").add_messages(
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
        )
        await FluxSession(db_path=str(path), session_id="b").add_messages(
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hey"}]
        )

    asyncio.run(go())
    proc = run_cli("diff", str(path), "a", "b", "--json")
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["first_difference"] == 1


def test_diff_two_branches_of_one_advanced_session(tmp_path: Path, store: Path) -> None:
    from advanced_helpers import SID, write_library_store

    path = tmp_path / "advanced.db"
    asyncio.run(write_library_store(path))
    proc = run_cli("diff", str(path), SID, SID, "--branch-b", "alt", "--json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["first_difference"] == 2  # "alt" was branched from turn 2
    assert doc["turns"][0]["turn"] == 1 and doc["turns"][0]["same"] is True
    same = run_cli("diff", str(path), SID, SID, "--branch-a", "alt", "--branch-b", "alt")
    assert same.returncode == 0, same.stderr
    plain = run_cli("diff", str(store), "order", "order", "--branch-b", "alt")
    assert plain.returncode == 3 and "has no branches" in plain.stderr
