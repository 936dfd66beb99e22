"""Helpers for the window tests: stores written by the real libraries, a loop runner."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

def pytest_in_child(args: list[str], env: dict[str, str], passed: int) -> None:
    """Run pytest on ``args`` in a fresh process, with ``env`` over this one's (what Qt
    reads once at start: a scale, a screen), and assert that ``passed`` tests passed."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *args],
        capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"{passed} passed" in done.stdout


#: Qt's offscreen plugin says this for every window with a layout; it is not our bug.
OFFSCREEN_NOISE = r"^This plugin does not support propagateSizeHints\(\)$"


def run_async(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to completion on a fresh loop in another thread (the test thread
    may have the qasync loop marked as running)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


# --------------------------------------------------------------------------- real writers


def write_agents_store(path: Path, sessions: dict[str, list[list[dict[str, Any]]]]) -> Path:
    """Write sessions with ``agents.SQLiteSession`` (each inner list is one ``add_items``)."""
    from agents import SQLiteSession

    async def write() -> None:
        for session_id, batches in sessions.items():
            session = SQLiteSession(session_id, path)
            try:
                for items in batches:
                    await session.add_items(items)  # type: ignore[arg-type]
            finally:
                session.close()

    run_async(write())
    return path


def write_flux_store(path: Path, sessions: dict[str, list[dict[str, Any]]]) -> Path:
    """Write sessions with ``flux.sessions.SQLiteSession``."""
    from flux.sessions import SQLiteSession

    async def write() -> None:
        for session_id, messages in sessions.items():
            await SQLiteSession(db_path=str(path), session_id=session_id).add_messages(messages)

    run_async(write())
    return path


AGENTS_SESSIONS: dict[str, list[list[dict[str, Any]]]] = {
    "refund-1001": [
        [{"role": "user", "content": "I was charged twice for order 1001."}],
        [
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "lookup_order",
                "arguments": '{"order": 1001}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": '{"charges": 2}'},
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Two charges: refund one."}],
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Refunded the **second** charge."}],
            },
        ],
    ],
    "bugfix-2002": [
        [{"role": "user", "content": "Why does test_roundtrip flake?"}],
        [
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": "Time zones. Use:\n\n```python\ndt.astimezone(timezone.utc)\n```",
                    }
                ],
            }
        ],
    ],
    "hello-3003": [[{"role": "user", "content": "hello there"}]],
}

FLUX_SESSIONS: dict[str, list[dict[str, Any]]] = {
    "flux-a": [
        {"role": "user", "content": "What is the capital of Peru?"},
        {"role": "assistant", "content": "Lima."},
    ],
    "flux-b": [
        {"role": "user", "content": "Translate 'cat' to German", "metadata": {"lang": "de"}},
        {"role": "assistant", "content": "Katze"},
    ],
}


def run_on(
    qtbot: Any,
    loop: asyncio.AbstractEventLoop,
    coro: Coroutine[Any, Any, Any],
    timeout: int = 10_000,
) -> Any:
    """Run a coroutine on the qasync loop, pumping Qt events until it is done."""
    task = loop.create_task(coro)
    qtbot.waitUntil(task.done, timeout=timeout)
    return task.result()


def when_modal(kind: type, action: Any) -> None:
    """Run ``action(widget)`` once a modal ``kind`` is showing (inside its exec())."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    def attempt() -> None:
        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, kind) and widget.isVisible():
                action(widget)
                return
        QTimer.singleShot(10, attempt)

    QTimer.singleShot(0, attempt)
