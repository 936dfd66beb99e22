"""View › Redact beyond the conversation pane (issue 39: nothing leaves by accident, a
screen shared included): the Compare window opened while it is on shows both sides
redacted (one numbering: the same value has the same placeholder on both sides), and a
workspace's merged timeline is shown redacted (and refuses edits while it is)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_async, write_agents_store
from redaction_corpus import PII, SECRETS
from test_workspace_window import open_workspace
from workspace_helpers import agents_add, agents_replicas, minute

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

KEY = next(v for k, v, _s in SECRETS if k == "OPENAI_KEY")
EMAIL = next(v for k, v, _s in PII if k == "EMAIL")


def _texts(messages: Any) -> str:
    return "\n".join(m.text for m in messages)


def _sides(comparison: Any) -> tuple[str, str]:
    a = [m for t in comparison.turns if t.a is not None for m in t.a.messages]
    b = [m for t in comparison.turns if t.b is not None for m in t.b.messages]
    return _texts(a), _texts(b)


@pytest.fixture
def two_sessions(tmp_path: Path) -> Path:
    said = {"role": "user", "content": f"my key is {KEY}, mail {EMAIL}"}
    return write_agents_store(tmp_path / "two.db", {
        "one": [[said, {"role": "user", "content": "and then?"}]],
        "two": [[said, {"role": "user", "content": f"again {EMAIL}"}]],
    })


def _compare(qtbot: Any, window: Any) -> tuple[Any, Any]:
    for sid in ("one", "two"):
        window.session_view.selectionModel().select(
            window.sessions.index(window.sessions.row_of(sid), 0),
            window.session_view.selectionModel().SelectionFlag.Select
            | window.session_view.selectionModel().SelectionFlag.Rows,
        )
    dialog = window.comparing.compare_sessions()
    assert dialog is not None
    with qtbot.waitSignal(dialog.view.compared, timeout=20_000) as got:
        pass
    return dialog, got.args[0]


def test_compare_opened_while_redacted_shows_both_sides_redacted(qtbot, window, two_sessions):
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(two_sessions), session_id="one")
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    # as stored, without View › Redact
    dialog, comparison = _compare(qtbot, window)
    a, b = _sides(comparison)
    assert KEY in a and KEY in b and not dialog.redacted
    dialog.close()
    with qtbot.waitSignal(window.conversation.loaded, timeout=20_000):
        window.actions_by_name["redact"].setChecked(True)
    dialog, comparison = _compare(qtbot, window)
    a, b = _sides(comparison)
    assert KEY not in a + b and EMAIL not in a + b
    # one redaction for the comparison: the same value, the same placeholder on both sides
    assert "[OPENAI_KEY_1]" in a and "[OPENAI_KEY_1]" in b
    assert "mail [EMAIL_1]" in a and "mail [EMAIL_1]" in b and "again [EMAIL_1]" in a + b
    assert dialog.windowTitle().endswith("(redacted)")
    # the two first turns are the same after redaction as before: no difference made up
    assert comparison.turns[0].changes == [] or all(c.op == "same" for c in comparison.turns[0].changes)
    dialog.close()


def test_the_merged_timeline_is_shown_redacted_and_refuses_edits(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    replicas = run_async(agents_replicas(tmp_path / "reps"))
    run_async(agents_add(replicas.paths[1], "user_123", [
        {"role": "user", "content": f"here is {KEY} and {EMAIL}"}], minute(990)))
    ws = open_workspace(qtbot, window, replicas.paths)
    assert ws.select("user_123")
    qtbot.waitUntil(lambda: ws.timeline.line is not None and ws.timeline.session_id == "user_123", timeout=20_000)

    def texts() -> str:
        return _texts(p.message for p in ws.timeline.model.placed)

    assert KEY in texts()
    window.actions_by_name["redact"].setChecked(True)
    qtbot.waitUntil(lambda: ws.timeline.line is not None and "[OPENAI_KEY_1]" in texts(), timeout=20_000)
    assert KEY not in texts() and EMAIL not in texts() and "[EMAIL_1]" in texts()
    assert "Shown redacted" in ws.timeline.header.text() and not ws.timeline.edit_button.isEnabled()
    told: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", staticmethod(lambda _p, _t, text: told.append(text)))
    ws.edit(ws.timeline.model.placed[-1])
    assert told and "shown redacted" in told[0]
    window.actions_by_name["redact"].setChecked(False)
    qtbot.waitUntil(lambda: ws.timeline.line is not None and KEY in texts(), timeout=20_000)
    assert "Shown redacted" not in ws.timeline.header.text() and ws.timeline.edit_button.isEnabled()


def test_an_open_compare_window_follows_redact_turned_on_and_off(qtbot, window, two_sessions):
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(two_sessions), session_id="one")
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    dialog, comparison = _compare(qtbot, window)
    assert KEY in _sides(comparison)[0] and not dialog.redacted
    # turned on with the window open (for a screenshot): compared again, shown redacted
    with qtbot.waitSignal(dialog.view.compared, timeout=20_000) as got:
        window.actions_by_name["redact"].setChecked(True)
    a, b = _sides(got.args[0])
    assert KEY not in a + b and EMAIL not in a + b and "[OPENAI_KEY_1]" in a and "[OPENAI_KEY_1]" in b
    assert dialog.redacted and dialog.windowTitle().endswith("(redacted)")
    # and off again: as stored
    with qtbot.waitSignal(dialog.view.compared, timeout=20_000) as got:
        window.actions_by_name["redact"].setChecked(False)
    assert KEY in _sides(got.args[0])[0] and not dialog.redacted
    assert not dialog.windowTitle().endswith("(redacted)")
    dialog.close()
