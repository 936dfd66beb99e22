"""Issue 37: text the window shows belongs to what produced it — the "No session
matches" placeholder after a later search with hits; the Doctor's "Writing: …" after
undo, another session, another store; the Doctor's Undo with nothing to undo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from qt_helpers import AGENTS_SESSIONS, OFFSCREEN_NOISE, write_agents_store

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _open(qtbot: Any, window: Any, target: str) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        window.stores.open_target(target)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=10_000)


def test_a_search_with_hits_clears_no_session_matches(qtbot, window, agents_db):
    _open(qtbot, window, str(agents_db))
    with qtbot.waitSignal(window.sessions.searchFinished, timeout=10_000):
        window.search("zebra")
    qtbot.waitUntil(lambda: "zebra" in window.conversation.view.placeholder, timeout=5_000)
    with qtbot.waitSignal(window.sessions.searchFinished, timeout=10_000):
        window.search("charged")
    qtbot.waitUntil(lambda: window.sessions.rowCount() == 1, timeout=5_000)
    qtbot.waitUntil(lambda: window.conversation.session_id == "refund-1001", timeout=5_000)
    assert "No session matches" not in window.conversation.view.placeholder
