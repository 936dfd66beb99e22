"""Redaction in the window (issue 39): View › Redact shows placeholders (and copies
them), the review before a redacted export lists the kinds and counts, an unticked kind
stays in the file, and an item a detector fails on is left out and said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, write_agents_store
from redaction_corpus import PII, SECRETS, agents_items


pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE, r"^This plugin does not support raise\(\)$")  # (the tooltip)

SID = "planted-1"
KEY = next(v for k, v, _s in SECRETS if k == "OPENAI_KEY")
EMAILS = [v for k, v, _s in PII if k == "EMAIL"]


@pytest.fixture
def planted_db(tmp_path: Path) -> Path:
    items = [*agents_items("user"), *agents_items("output"),
             {"role": "user", "content": "BOOM and write to boom.victim@example.com"}]
    return write_agents_store(tmp_path / "planted.db", {SID: [items]})


def _open(qtbot: Any, window: Any, path: Path) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), session_id=SID)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)


def _failing() -> Any:
    from fluxgui.services.redaction import Detectors

    class Failing(Detectors):
        def find(self, text: str, *, disjoint: bool = True) -> Any:
            if "BOOM" in text:
                raise RuntimeError("detector broke")
            return super().find(text, disjoint=disjoint)

    return Failing(("secrets", "pii"))


def test_view_redact_shows_placeholders_and_copies_them(qtbot, window, planted_db):
    from PySide6.QtGui import QGuiApplication

    _open(qtbot, window, planted_db)
    pane = window.conversation
    assert KEY in pane.toPlainText()
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        window.actions_by_name["redact"].setChecked(True)
    shown = pane.toPlainText()
    assert KEY not in shown and "[OPENAI_KEY_1]" in shown
    assert window.redaction.view.notice.isVisibleTo(pane)
    assert not any(e in shown for e in EMAILS) and "[EMAIL_1]" in shown
    # the card's tooltip names the kind and the masked value, never the value
    row = next(r for r, m in enumerate(pane.model.messages) if "[OPENAI_KEY_1]" in m.text)
    m = pane.model.message(row)
    tip = window.redaction.view.tip(m, "[OPENAI_KEY_1]")
    assert tip.startswith("[OPENAI_KEY_1]: OpenAI key (sk-…") and KEY not in tip
    # hovering the card's placeholder tells its kind (the tooltip the viewport shows)
    from PySide6.QtCore import QEvent, QPoint
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    pane.select_message(m.id)
    rect = pane.view.visualRect(pane.model.index(row, 0))
    body = pane.delegate.layout_rows(rect, m).body
    at = QPoint(body.left() + pane.fontMetrics().horizontalAdvance("use the key [OPE"), body.center().y())
    viewport = pane.view.viewport()
    QApplication.sendEvent(viewport, QHelpEvent(QEvent.Type.ToolTip, at, viewport.mapToGlobal(at)))
    assert QToolTip.text().startswith("<p style='white-space:pre'>[OPENAI_KEY_1]: OpenAI key (sk-…")
    assert KEY not in QToolTip.text()
    QToolTip.hideText()
    # the Copy actions copy what is shown
    pane.select_message(m.id)
    pane.menus.copy_text()
    assert "[OPENAI_KEY_1]" in QGuiApplication.clipboard().text()
    pane.menus.copy_raw()
    assert KEY not in QGuiApplication.clipboard().text()
    # the item a detector fails on is not shown as stored
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        window.actions_by_name["redact"].setChecked(False)
    assert KEY in pane.toPlainText()
    assert not window.redaction.view.notice.isVisibleTo(pane)
    window.redaction.detectors = _failing
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        window.actions_by_name["redact"].setChecked(True)
    shown = pane.toPlainText()
    assert "boom.victim" not in shown and "a redaction detector failed on this item" in shown


def _review(qtbot: Any, window: Any) -> Any:
    review = window.redaction.make_review()
    assert review is not None
    qtbot.addWidget(review)
    qtbot.waitUntil(lambda: review.review is not None, timeout=30_000)
    return review


def _export(qtbot: Any, window: Any, path: Path, keep: list[str]) -> str:
    with qtbot.waitSignal(window.transferFinished, timeout=30_000):
        window.redaction.run_export(path, "jsonl", [SID], keep)
    return path.read_text(encoding="utf-8")


def test_the_review_lists_kinds_and_counts(qtbot, window, planted_db):
    _open(qtbot, window, planted_db)
    review = _review(qtbot, window)
    rows = review.rows()
    # every planted value in user text and in a tool output: two of each
    assert rows["OPENAI_KEY"].text(1) == "4" and rows["OPENAI_KEY"].text(2) == "4"
    assert rows["EMAIL"].text(1) == "7"  # three planted twice, and the one in the BOOM item
    assert rows["EMAIL"].text(0) == "Email"
    examples = rows["EMAIL"].text(3)
    assert "…" in examples and not any(e in examples for e in EMAILS)
    assert "Found" in review.summary.text() and not review.note.isVisible()
    assert review.ok.isEnabled()


def test_an_unticked_kind_stays_in_the_file_and_the_others_are_redacted(qtbot, window, planted_db, tmp_path):
    _open(qtbot, window, planted_db)
    review = _review(qtbot, window)
    review.set_ticked("EMAIL", False)
    assert review.unticked() == ["EMAIL"]
    text = _export(qtbot, window, tmp_path / "out.jsonl", review.unticked())
    assert all(e in text for e in EMAILS)
    assert KEY not in text and "[OPENAI_KEY_1]" in text
    for line in text.splitlines():
        json.loads(line)
    assert "redacted" in window.statusBar().currentMessage()


def test_a_detector_failure_leaves_the_item_out_and_says_so(qtbot, window, planted_db, tmp_path):
    _open(qtbot, window, planted_db)
    window.redaction.detectors = _failing
    review = _review(qtbot, window)
    assert review.note.isVisibleTo(review) and "failed on 1 item" in review.note.text()
    text = _export(qtbot, window, tmp_path / "out.jsonl", review.unticked())
    assert "BOOM" not in text and "boom.victim" not in text
    assert KEY not in text and "[OPENAI_KEY_1]" in text
    status = window.statusBar().currentMessage()
    assert "redaction left out 1 item a detector failed on" in status


def test_export_redacted_goes_from_the_review_through_the_export_dialog(qtbot, window, planted_db, tmp_path):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from fluxgui.qt.dialogs.transfer import ExportDialog

    _open(qtbot, window, planted_db)
    window.actions_by_name["export_redacted"].trigger()
    review = window.redaction.review
    assert review is not None and review.isVisible()
    qtbot.waitUntil(lambda: review.review is not None, timeout=30_000)
    review.set_ticked("PHONE", False)
    out = tmp_path / "chosen.json"
    seen: list[str] = []

    def fill() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, ExportDialog):
            QTimer.singleShot(10, fill)
            return
        seen.append(dialog.windowTitle())
        dialog.path_edit.setText(str(out))
        dialog.accept()

    QTimer.singleShot(0, fill)
    with qtbot.waitSignal(window.transferFinished, timeout=30_000):
        review.ok.click()
    assert seen == ["Export Redacted"]
    text = out.read_text(encoding="utf-8")
    assert KEY not in text and "[OPENAI_KEY_1]" in text and "(415) 555-2671" in text


def test_a_huge_item_is_copied_whole_and_redacted(qtbot, window, tmp_path):
    from PySide6.QtGui import QGuiApplication

    from fluxgui.core.bodies import PARTIAL_BYTES

    output = "log line\n" * (PARTIAL_BYTES // 9 + 1000) + f"at the end: {KEY}\n"
    path = write_agents_store(tmp_path / "huge.db", {SID: [[
        {"role": "user", "content": "dump the logs"},
        {"type": "function_call", "call_id": "c1", "name": "dump_logs", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": output},
    ]]})
    _open(qtbot, window, path)
    pane = window.conversation
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        window.actions_by_name["redact"].setChecked(True)
    m = next(m for m in pane.model.messages if m.partial)
    assert KEY not in m.text  # (its start holds no key)
    pane.select_message(m.id)
    QGuiApplication.clipboard().setText("")
    assert pane.menus.copy_text()
    qtbot.waitUntil(lambda: "at the end:" in QGuiApplication.clipboard().text(), timeout=30_000)
    copied = QGuiApplication.clipboard().text()
    assert KEY not in copied and "at the end: [OPENAI_KEY_1]" in copied


def test_the_edit_menus_copy_actions_give_the_redacted_text_and_json(qtbot, window, tmp_path):
    """Edit › Copy Text and Copy Raw JSON, on every message of a session holding each
    planted value in assistant text, tool arguments and metadata: with View › Redact on
    neither copy holds a value, and the message's placeholders are there instead."""
    from PySide6.QtGui import QGuiApplication

    from redaction_corpus import PEM_BODY, PLANTED

    items = [*agents_items("assistant"), *agents_items("args"), *agents_items("metadata")]
    path = write_agents_store(tmp_path / "copies.db", {SID: [items]})
    _open(qtbot, window, path)
    pane = window.conversation
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        window.actions_by_name["redact"].setChecked(True)
    values = [v for k, v, _s in PLANTED if k not in ("TICKET", "TERM", "PRIVATE_KEY")] + PEM_BODY
    clipboard = QGuiApplication.clipboard()
    copied_any = 0
    for m in list(pane.model.messages):
        pane.select_message(m.id)
        for action in ("copy", "copy_raw"):
            clipboard.setText("")
            window.actions_by_name[action].trigger()
            qtbot.waitUntil(lambda: clipboard.text() != "", timeout=10_000)
            copied = clipboard.text()
            assert not [v for v in values if v in copied], (action, m.label)
            copied_any += "_1]" in copied or "_2]" in copied
    assert copied_any > len(values)  # (the placeholders were copied, not nothing)


def test_export_redacted_writes_the_session_ids_redacted(qtbot, window, tmp_path):
    """A store keyed by user: the review counts the address in the id, and the export
    writes the id with the placeholder the address gets in the text."""
    alice = "alice@example.com"
    path = write_agents_store(tmp_path / "keyed.db", {
        alice: [[{"role": "user", "content": f"write to {alice}"}]],
        "conv-clean": [[{"role": "user", "content": "hi"}]],
    })
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), session_id=alice)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    review = _review(qtbot, window)
    assert review.rows()["EMAIL"].text(1) == "2"  # the id and the message
    for fmt in ("jsonl", "html"):
        out = tmp_path / f"out.{fmt}"
        with qtbot.waitSignal(window.transferFinished, timeout=30_000):
            window.redaction.run_export(out, fmt, None, [])
        text = out.read_text(encoding="utf-8")
        assert "alice@" not in text and "conv-clean" in text and "[EMAIL_1]" in text
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["session_id"]: r["text"] for r in records} == {"[EMAIL_1]": "write to [EMAIL_1]", "conv-clean": "hi"}
