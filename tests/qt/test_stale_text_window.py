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


def _doctor_on(qtbot: Any, window: Any, path: Path, sid: str) -> Any:
    with qtbot.waitSignal(window.doctor.checked, timeout=20_000):
        window.stores.open_target(str(path), session_id=sid, writable=True)
    window.actions_by_name["doctor"].trigger()
    qtbot.waitUntil(lambda: window.doctor.report is not None and window.doctor.report.session_id == sid
                    and not window.bridge.busy, timeout=20_000)
    return window.doctor.problems


def _broken_store(tmp_path: Path) -> Path:
    from doctor_helpers import SHAPES

    sessions = {sid: [items] for sid, (items, _p) in SHAPES.items() if sid in ("healthy", "orphan-call")}
    return write_agents_store(tmp_path / "broken.db", sessions)


def test_doctor_writing_line_and_undo_follow_the_edit(qtbot, window, tmp_path):
    path = _broken_store(tmp_path)
    tab = _doctor_on(qtbot, window, path, "orphan-call")
    doctor = window.doctor
    assert not tab.undo_button.isEnabled()  # nothing to undo yet
    with qtbot.waitSignal(doctor.planned, timeout=20_000):
        tab.preview_button.click()
    with qtbot.waitSignal(doctor.checked, timeout=20_000):
        tab.apply_button.click()
    qtbot.waitUntil(lambda: not window.editor.running and tab.undo_button.isEnabled(), timeout=20_000)
    assert not tab.status.text().startswith("Writing")  # written and checked again
    with qtbot.waitSignal(doctor.checked, timeout=20_000):
        tab.undo_button.click()
    qtbot.waitUntil(lambda: not window.editor.running, timeout=20_000)
    assert not tab.undo_button.isEnabled() and tab.status.text() == ""


def test_doctor_status_goes_with_its_session_and_store(qtbot, window, tmp_path, agents_db):
    path = _broken_store(tmp_path)
    tab = _doctor_on(qtbot, window, path, "orphan-call")
    tab.set_status("Writing: removes 4 messages")
    with qtbot.waitSignal(window.doctor.checked, timeout=20_000):
        window.show_session("healthy")
    assert tab.status.text() == ""
    tab.set_status("Writing: removes 4 messages")
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(agents_db))
    assert tab.status.text() == ""
