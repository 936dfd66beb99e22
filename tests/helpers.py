"""Small shared helpers for the fluxgui tests (no fixtures: those live in conftest.py).

Everything here reads or drives real stores; nothing imitates a library's writes.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from flux.models.base import Model, ModelRequest, ModelResponse, StreamChunk

REPO = Path(__file__).resolve().parents[1]


class FixedModel(Model):
    """A flux ``Model`` that answers every request with the same text and records requests."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        # Copy: the Runner keeps appending to the same list after the call.
        self.requests.append(
            ModelRequest(messages=list(request.messages), system_prompt=request.system_prompt)
        )
        return ModelResponse(content=self.reply, finish_reason="stop")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        yield StreamChunk(delta_text=self.reply, done=True)


async def all_messages(
    store: Any, session_id: str, batch: int = 500, branch: str | None = None
) -> list[Any]:
    """Every message of a session (of ``branch``) through ``iter_messages`` (stored order)."""
    out: list[Any] = []
    async for page in store.reader.iter_messages(session_id, batch=batch, branch=branch):
        out.extend(page)
    return out


async def all_sessions(store: Any, page_size: int = 50) -> list[Any]:
    """Every session through ``list_sessions`` paging, in listed order."""
    out: list[Any] = []
    cursor = None
    while True:
        page = await store.reader.list_sessions(limit=page_size, cursor=cursor)
        out.extend(page.sessions)
        if page.cursor is None:
            return out
        cursor = page.cursor


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def sidecars(path: Path) -> set[str]:
    """Names of the SQLite side files (``-wal``, ``-shm``, ``-journal``) present next to ``path``."""
    return {
        suffix
        for suffix in ("-wal", "-shm", "-journal")
        if Path(str(path) + suffix).exists()
    }


def snapshot(path: Path) -> dict[str, str]:
    """Hash of the database file and of each side file present (name → sha256)."""
    out = {"": sha256(path)}
    for suffix in sidecars(path):
        out[suffix] = sha256(Path(str(path) + suffix))
    return out


def closed_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``python -m fluxgui ARGS`` in a subprocess and capture its text output."""
    return subprocess.run(
        [sys.executable, "-m", "fluxgui", *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=str(cwd) if cwd else None,
        timeout=timeout,
    )


def sqlite_rows(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Read a SQLite file through a plain ``sqlite3`` connection (tests only)."""
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


# --------------------------------------------------------------------------- real writers


def write_flux(path: Path, data: dict[str, list[dict[str, Any]]]) -> None:
    """Write sessions with ``flux.sessions.SQLiteSession``."""
    import asyncio

    from flux.sessions import SQLiteSession

    async def run() -> None:
        for sid, msgs in data.items():
            await SQLiteSession(str(path), session_id=sid).add_messages(msgs)

    asyncio.run(run())


def flux_read(path: Path, sid: str) -> list[dict[str, Any]]:
    """A session as ``flux.sessions.SQLiteSession.get_messages()`` reads it."""
    import asyncio

    from flux.sessions import SQLiteSession

    return asyncio.run(SQLiteSession(str(path), session_id=sid).get_messages())


def write_agents(path: Path, data: dict[str, list[dict[str, Any]]], **tables: str) -> None:
    """Write sessions with ``agents.SQLiteSession`` (one ``add_items`` each)."""
    import asyncio

    from agents import SQLiteSession

    async def run() -> None:
        for sid, items in data.items():
            s = SQLiteSession(sid, str(path), **tables)
            try:
                await s.add_items(items)  # type: ignore[arg-type]
            finally:
                s.close()

    asyncio.run(run())


def agents_read(path: Path, sid: str, **tables: str) -> list[Any]:
    """A session as ``agents.SQLiteSession.get_items()`` reads it."""
    import asyncio

    from agents import SQLiteSession

    async def run() -> list[Any]:
        s = SQLiteSession(sid, str(path), **tables)
        try:
            return list(await s.get_items())
        finally:
            s.close()

    return asyncio.run(run())


#: the test Redis server (tests/conftest.py's ``redis_prefix`` fixture uses the same one)
REDIS_URL = os.environ.get("FLUXGUI_TEST_REDIS", "redis://127.0.0.1:6379/0")


def ok_lines(result: subprocess.CompletedProcess) -> list[str]:
    """The stdout lines of a command that must have succeeded quietly."""
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert result.stderr == ""
    return result.stdout.splitlines()


def assert_known_error(result: subprocess.CompletedProcess, *needles: str) -> str:
    """The one stderr line of a known error (exit 3, no traceback); each needle in it."""
    assert result.returncode == 3, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), (needle, lines[0])
    assert result.stdout == ""
    return lines[0]


def wait_for(proc: subprocess.Popen, condition: Any, what: str, timeout: float = 120) -> Any:
    """Poll ``condition`` until it holds, waiting on the process in between (it must
    still be running: an export that finished first would prove nothing)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        try:
            code = proc.wait(timeout=0.002)
        except subprocess.TimeoutExpired:
            continue
        raise AssertionError(f"the command ended ({code}) before {what}: {proc.stderr.read() if proc.stderr else ''}")

