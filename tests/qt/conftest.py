"""Fixtures for the window tests: a qasync loop on pytest-qt's QApplication, stores
written by the real libraries, and a window that closes its store afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from qt_helpers import AGENTS_SESSIONS, FLUX_SESSIONS, run_async, run_on, write_agents_store, write_flux_store
from workspace_helpers import agents_replicas


@pytest.fixture(autouse=True)
def private_settings(tmp_path_factory: Any, monkeypatch: Any) -> Iterator[None]:
    """Keep window tests out of the user's settings and keyring: settings go to a temporary
    folder and the keyring is keyring's "fail" backend (as on a headless box)."""
    import keyring
    import keyring.backends.fail
    from PySide6.QtCore import QSettings

    folder = tmp_path_factory.mktemp("settings")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    # fluxgui's own data (the review database) out of the user's folders too
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(folder / "data"))
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(folder / "cache"))
    monkeypatch.delenv("FLUXGUI_REVIEWS", raising=False)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.fixture(params=["sqlite", "postgres"])
def team_reviews(request: Any, tmp_path: Path) -> str:
    """A review database on SQLite, and one on the local PostgreSQL (a fresh database
    of its own, dropped afterwards)."""
    if request.param == "sqlite":
        return str(tmp_path / "reviews" / "team.db")
    return request.getfixturevalue("pg_database")


@pytest.fixture
def agents_db(tmp_path: Path) -> Path:
    return write_agents_store(tmp_path / "agents.db", AGENTS_SESSIONS)


@pytest.fixture
def flux_db(tmp_path: Path) -> Path:
    return write_flux_store(tmp_path / "flux.db", FLUX_SESSIONS)


# --------------------------------------------------------------------------- loop & window


@pytest.fixture(scope="session", autouse=True)
def main_thread_collector(qapp: Any) -> Iterator[None]:
    """As the app does: cycles (a closed dialog's widgets, a test's model) are freed on the
    UI thread, never by aiosqlite's or a worker's thread that happened to trigger the
    collector, which crashes Qt."""
    from fluxgui.qt.collector import MainThreadCollector

    collector = MainThreadCollector()
    try:
        yield
    finally:
        collector.stop()
        collector.deleteLater()


@pytest.fixture
def qloop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop over pytest-qt's QApplication, marked running: the tasks it runs
    advance whenever Qt processes events (``qtbot.waitUntil`` / ``waitSignal``)."""
    import qasync

    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        # Not loop.stop(): it calls QCoreApplication.exit(), which outside exec() leaves
        # Qt's "quit now" flag set, and every later QEventLoop.exec() (waitSignal)
        # would return at once. Mark the loop stopped by hand instead.
        loop._QEventLoop__is_running = False  # type: ignore[attr-defined]
        asyncio.events._set_running_loop(None)
        loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture
def bridge(qtbot: Any, qloop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    """An async bridge of its own (closed after the test)."""
    from fluxgui.qt.bridge import AsyncBridge

    b = AsyncBridge()
    try:
        yield b
    finally:
        run_on(qtbot, qloop, b.aclose())


@pytest.fixture
def pane(qtbot: Any, bridge: Any) -> Any:
    """A conversation pane on its own, shown at 1000×700."""
    from fluxgui.qt.conversation import ConversationPane

    p = ConversationPane(bridge)
    qtbot.addWidget(p)
    p.resize(1000, 700)
    p.show()
    qtbot.waitExposed(p)
    return p


@pytest.fixture
def window(qtbot: Any, qloop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    from fluxgui.qt.window import MainWindow

    win = MainWindow()
    win.show()
    try:
        yield win
    finally:
        # Close the store before the widget goes (pytest-qt's addWidget would delete the
        # window first and leave the store's thread running).
        run_on(qtbot, qloop, win.aclose())
        win.close()
        win.deleteLater()
        # Destroy it here, on the GUI thread: left to the garbage collector, it may be
        # collected in a worker thread and Qt warns about its timers.
        import gc

        from PySide6.QtCore import QCoreApplication, QEvent

        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        del win
        gc.collect()


@pytest.fixture
def replicas(tmp_path: Path) -> Any:
    """Three replicas written by ``agents.SQLiteSession`` (tests/workspace_helpers.py)."""
    return run_async(agents_replicas(tmp_path / "reps"))


@pytest.fixture
def conversations_api(monkeypatch: Any) -> Iterator[Any]:
    """The loopback OpenAI Conversations API (tests/conversations_server.py), with no
    ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` of the machine's in the way."""
    from conversations_server import ConversationsServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ConversationsServer() as server:
        yield server
