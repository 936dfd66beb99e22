"""The whole window: a Postgres store, an unreachable server, search and the shortcuts."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_async

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _write_pg_agents(url: str, sessions: dict[str, list[dict[str, Any]]]) -> None:
    """Write sessions with the Agents SDK's own SQLAlchemySession on Postgres."""
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    async def write() -> None:
        for sid, items in sessions.items():
            session = SQLAlchemySession.from_url(sid, url=url, create_tables=True)
            await session.add_items(items)  # type: ignore[arg-type]
            await session.engine.dispose()

    run_async(write())


def _open(qtbot: Any, window: Any, target: str) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(target)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)


def test_postgres_store_opens_lists_and_shows(qtbot, window, qtmodeltester, pg_url):
    _write_pg_agents(
        pg_url,
        {
            "pg-older": [{"role": "user", "content": "first on postgres"}],
            "pg-newer": [
                {"role": "user", "content": "Où est la gare ?"},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "À **droite**."}]},
            ],
        },
    )
    _open(qtbot, window, pg_url)
    qtmodeltester.check(window.sessions)
    ids = [window.sessions.session_at(r).id for r in range(window.sessions.rowCount())]
    assert ids == ["pg-newer", "pg-older"]  # most recently active first
    assert window.format_label.text() == "agents format"
    assert window.mode_label.text() == "read-only"
    text = window.conversation.toPlainText()
    assert "Où est la gare ?" in text and "À droite." in text
    assert window.error_bar.isHidden()


def test_unreachable_postgres_shows_the_error_bar(qtbot, window):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    window.stores.open_target(f"postgresql+asyncpg://root:s3cret@127.0.0.1:{port}/test")
    qtbot.waitUntil(lambda: not window.error_bar.isHidden(), timeout=20_000)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    text = window.error_bar.text()
    assert "cannot connect" in text and str(port) in text
    assert "s3cret" not in text and "s3cret" not in window.windowTitle()
    assert window.stores.store is None
    assert window.isVisible()  # nothing crashed


def test_search_box_filters_and_clearing_restores(qtbot, window, agents_db):
    _open(qtbot, window, str(agents_db))
    everything = window.sessions.rowCount()
    with qtbot.waitSignal(window.sessions.searchFinished, timeout=10_000) as done:
        window.search("ROUNDTRIP")  # message text, any case
    assert done.args == [1]
    assert window.sessions.session_at(0).id == "bugfix-2002"
    assert "1 session matching" in window.count_label.text()
    with qtbot.waitSignal(window.sessions.pageLoaded, timeout=10_000):
        window.search("")
    qtbot.waitUntil(lambda: window.sessions.rowCount() == everything, timeout=10_000)


def test_shortcuts_reach_their_targets(qtbot, window, agents_db):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication

    _open(qtbot, window, str(agents_db))
    window.activateWindow()
    actions = window.actions_by_name
    shortcuts = {name: actions[name].shortcut().toString() for name in actions}
    assert shortcuts["open"] == "Ctrl+O"
    assert shortcuts["open_url"] == "Ctrl+Shift+O"
    assert shortcuts["find"] == "Ctrl+F"
    assert shortcuts["sessions"] == "Ctrl+L"
    assert shortcuts["reload"] == "F5"
    assert shortcuts["copy"] == "Ctrl+C"

    actions["find"].trigger()
    qtbot.waitUntil(lambda: window.search_box.hasFocus())
    actions["sessions"].trigger()
    qtbot.waitUntil(lambda: window.session_view.hasFocus())

    # Arrow keys move through the sessions; the conversation follows.
    first = window.current_session_id
    with qtbot.waitSignal(window.messagesShown, timeout=10_000) as shown:
        qtbot.keyClick(window.session_view, Qt.Key.Key_Down)
    assert shown.args[0] != first

    # Copy the selected message's text.
    pane = window.conversation
    pane.select_message(pane.model.message(0).id)
    actions["copy"].trigger()
    assert QGuiApplication.clipboard().text() == pane.model.message(0).text

    # F5 re-reads the list and the open conversation.
    current = window.current_session_id
    with qtbot.waitSignal(window.messagesShown, timeout=10_000) as again:
        actions["reload"].trigger()
    assert again.args == [current]
    actions["inspector"].trigger()
    assert not pane.inspector.isVisible()
