"""Queue mode without traps (issue 37): the tag field empty after a tag is added (one
Enter on the next session tags nothing), a visible queue-mode sign with the position,
the chosen score in the highlight colour, a note on the selected message by keyboard,
and Review › Export Results from the window — over a store written by flux and a real
review database."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from qt_helpers import OFFSCREEN_NOISE, run_on, write_flux_store

from fluxgui.services.reviews import ReviewDB

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE, r"^This plugin does not support (raise\(\)|grabbing the keyboard)$")
N = 6


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    sessions = {f"s{i:02d}": [{"role": "user", "content": f"question {i}"},
                              {"role": "assistant", "content": f"answer {i}"}] for i in range(N)}
    return write_flux_store(tmp_path / "flux.db", sessions)


def _queue(qtbot: Any, window: Any, path: Path, tmp_path: Path) -> Any:
    c = window.reviews
    with qtbot.waitSignal(c.ready, timeout=10_000):
        c.use(str(tmp_path / "reviews.db"), None)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        window.stores.open_target(str(path))
    qtbot.waitUntil(lambda: c.key is not None and not window.bridge.busy, timeout=10_000)
    c.queue_action.trigger()
    qtbot.waitUntil(lambda: c.panel.review is not None and c.panel.rubric is not None, timeout=10_000)
    return c


def _db_review(qtbot: Any, qloop: Any, tmp_path: Path, key: str, sid: str) -> Any:
    db = run_on(qtbot, qloop, ReviewDB.open(str(tmp_path / "reviews.db")))
    try:
        return run_on(qtbot, qloop, db.get(key, sid))
    finally:
        run_on(qtbot, qloop, db.close())


def test_the_tag_field_is_empty_after_adding_even_from_the_completer(qtbot, window, qloop, store_path, tmp_path):
    c = _queue(qtbot, window, store_path, tmp_path)
    c.panel.set_tags(["billing"])
    view = window.session_view
    qtbot.keyClick(view, Qt.Key.Key_T)
    edit = c.panel.tag_edit
    qtbot.keyClicks(edit, "bil")
    popup = edit.completer().popup()
    qtbot.waitUntil(popup.isVisible, timeout=5_000)
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    with qtbot.waitSignal(c.reviewChanged, timeout=10_000):
        qtbot.keyClick(popup, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: c.panel.review is not None and "billing" in c.panel.review.tags, timeout=10_000)
    assert edit.text() == ""
    first = window.current_session_id
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        c.move(1)  # (J in the list)
    qtbot.waitUntil(lambda: c.panel.review is not None and c.panel.review.session_id != first, timeout=10_000)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_T)
    qtbot.keyClick(edit, Qt.Key.Key_Return)  # one Enter on the next session: nothing tagged
    second = window.current_session_id
    assert second != first
    assert _db_review(qtbot, qloop, tmp_path, c.key, second).tags == []


def test_queue_mode_shows_itself_and_its_position(qtbot, window, store_path, tmp_path):
    c = _queue(qtbot, window, store_path, tmp_path)
    mark = c.queue.mark
    qtbot.waitUntil(lambda: mark.isVisible() and mark.text() == f"Queue 1 of {N}", timeout=5_000)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        qtbot.keyClick(window.session_view, Qt.Key.Key_J)
    qtbot.waitUntil(lambda: mark.text() == f"Queue 2 of {N}", timeout=5_000)
    c.queue_action.trigger()
    assert not c.queue.on and not mark.isVisible()


def test_the_chosen_score_is_drawn_in_the_highlight_colour(qtbot, window, store_path, tmp_path):
    c = _queue(qtbot, window, store_path, tmp_path)
    qtbot.keyClick(window.session_view, Qt.Key.Key_1)
    group = c.panel._score_groups[c.panel.rubric.criteria[0].name]
    qtbot.waitUntil(lambda: any(b.isChecked() for b in group.buttons()), timeout=10_000)
    chosen = next(b for b in group.buttons() if b.isChecked())
    other = next(b for b in group.buttons() if not b.isChecked())
    highlight = chosen.palette().color(QPalette.ColorRole.Highlight)
    image = chosen.grab().toImage()
    centre = image.pixelColor(image.width() // 2, 2)
    assert abs(centre.red() - highlight.red()) + abs(centre.green() - highlight.green()) + abs(centre.blue() - highlight.blue()) < 40
    plain = other.grab().toImage().pixelColor(image.width() // 2, 2)
    assert plain != centre


def test_a_note_on_the_selected_message_by_keyboard(qtbot, window, qloop, store_path, tmp_path):
    c = _queue(qtbot, window, store_path, tmp_path)
    pane = window.conversation
    pane.select_message(pane.model.message(0).id)
    qtbot.waitUntil(lambda: c.panel.message_id is not None, timeout=5_000)
    window.session_view.setFocus()
    qtbot.keyClick(window.session_view, Qt.Key.Key_M)
    assert c.panel.message_note_edit.hasFocus()
    qtbot.keyClicks(c.panel.message_note_edit, "wrong refund amount")
    with qtbot.waitSignal(c.reviewChanged, timeout=10_000):
        qtbot.keyClick(c.panel.message_note_edit, Qt.Key.Key_Return)
    got = _db_review(qtbot, qloop, tmp_path, c.key, window.current_session_id)
    assert [(n.message_id, n.text) for n in got.notes] == [(str(c.panel.message_id), "wrong refund amount")]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_export_results_from_the_window(qtbot, window, store_path, tmp_path, fmt):
    from fluxgui.qt.reviews.export import export_to

    c = _queue(qtbot, window, store_path, tmp_path)
    qtbot.keyClick(window.session_view, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: c.panel.review.state == "flagged", timeout=10_000)
    target = tmp_path / f"results.{fmt}"
    export_to(c, str(target), fmt)
    qtbot.waitUntil(target.exists, timeout=10_000)
    if fmt == "csv":
        rows = list(csv.DictReader(target.open(encoding="utf-8")))
        assert [(r["session_id"], r["state"]) for r in rows] == [(window.current_session_id, "flagged")]
    else:
        data = json.loads(target.read_text(encoding="utf-8"))
        assert data["store_key"] == c.key
        assert [(r["session_id"], r["state"]) for r in data["reviews"]] == [(window.current_session_id, "flagged")]
    assert "Wrote 1 review" in window.statusBar().currentMessage()
