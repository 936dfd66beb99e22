"""File › Export Eval Dataset… (issue 38): the open session or the selected ones, a
format, a file; the dialog's result line says how many items were written and which
turns were left out, and why. The file is read back and checked against the format's
rules (tests/eval_shapes.py where it has them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from eval_shapes import check_file
from helpers import write_agents
from PySide6.QtCore import QItemSelectionModel
from qt_helpers import OFFSCREEN_NOISE
from replay_helpers import SID, agents_items
from test_replay_window import in_thread

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

#: a second session: turn 1 answered, turn 2 a call and its output but no answer
OTHER = "conv-2"
OTHER_ITEMS = [
    {"role": "user", "content": "Hello?"},
    {"type": "message", "role": "assistant", "id": "msg_o1", "status": "completed",
     "content": [{"type": "output_text", "text": "Hi there.", "annotations": []}]},
    {"role": "user", "content": "Look up order 7."},
    {"type": "function_call", "call_id": "call_o", "name": "lookup_order", "arguments": '{"order_id": 7}',
     "id": "fc_o", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_o", "output": '{"status": "lost"}'},
]


@pytest.fixture
def two_sessions(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    in_thread(write_agents, path, {SID: agents_items(), OTHER: OTHER_ITEMS})
    return path


def _open(qtbot: Any, window: Any, path: Path, sid: str) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), session_id=sid)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)


def _export(qtbot: Any, dialog: Any, fmt: str, path: Path) -> Any:
    dialog.format.setCurrentIndex(dialog.format.findData(fmt))
    dialog.path.setText(str(path))
    with qtbot.waitSignal(dialog.exported, timeout=20_000) as got:
        dialog.export_button.click()
    return got.args[0]


def test_export_the_open_session_as_openai_chat_jsonl(qtbot, window, two_sessions, tmp_path):
    _open(qtbot, window, two_sessions, SID)
    assert window.actions_by_name["export_eval"] in window.menuBar().actions()[0].menu().actions()
    window.actions_by_name["export_eval"].trigger()
    dialog = window.replay.eval_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.scope_shown.isChecked() and not dialog.scope_review.isEnabled()
    assert [dialog.format.itemData(i) for i in range(dialog.format.count())] == [
        "jsonl", "promptfoo", "openai", "langfuse", "langsmith"]
    out = tmp_path / "out" / "chat.jsonl"
    out.parent.mkdir()
    result = _export(qtbot, dialog, "openai", out)
    assert result.items == 3
    assert dialog.result_label.text() == (
        f"Wrote 3 eval items (openai) from 1 session to {out}. No turn left out (3 assistant turns).")
    lines = check_file(out, "openai")
    assert len(lines) == 3
    for line in lines:
        roles = [m["role"] for m in line["messages"]]
        assert roles[-1] == "assistant" and "user" in roles
        asked = {c["id"] for m in line["messages"] for c in m.get("tool_calls") or []}
        answered = {m["tool_call_id"] for m in line["messages"] if m["role"] == "tool"}
        assert asked == answered
    dialog.close()


def test_export_the_selected_sessions_says_which_turns_were_left_out(qtbot, window, two_sessions, tmp_path):
    _open(qtbot, window, two_sessions, SID)
    rows = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    selection = window.session_view.selectionModel()
    for sid in (SID, OTHER):
        selection.select(window.sessions.index(window.sessions.row_of(sid), 0), rows)
    qtbot.waitUntil(lambda: sorted(window.selected_session_ids()) == sorted([SID, OTHER]), timeout=10_000)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    window.actions_by_name["export_eval"].trigger()
    dialog = window.replay.eval_dialog
    assert dialog.scope_selected.isChecked() and dialog.scope_selected.text() == "The selected sessions (2)"
    out = tmp_path / "cases.yaml"
    result = _export(qtbot, dialog, "promptfoo", out)
    assert (result.items, result.assistant_turns) == (4, 5)
    text = dialog.result_label.text()
    assert text.startswith(f"Wrote 4 eval items (promptfoo) from 2 sessions to {out}.")
    assert text.endswith("Left out 1 turn of 5 (no recorded answer: 1).")
    cases = check_file(out, "promptfoo")
    assert len(cases) == 4 and all("messages" in c["vars"] and c["assert"] for c in cases)
    # a file that is not there to write into: the dialog says so and writes nothing
    with qtbot.waitSignal(dialog.exportFailed, timeout=20_000):
        dialog.path.setText(str(tmp_path / "no-such-folder" / "x.jsonl"))
        dialog.export_button.click()
    assert dialog.result_label.text().startswith("Not exported: ")
    dialog.close()


def test_export_the_sessions_under_a_review_filter_with_their_reviews(qtbot, window, two_sessions, tmp_path):
    from fluxgui.services.reviews import Edit

    with qtbot.waitSignal(window.reviews.ready, timeout=10_000):
        window.reviews.use(str(tmp_path / "reviews" / "team.db"), None)
    _open(qtbot, window, two_sessions, SID)
    qtbot.waitUntil(lambda: window.reviews.key is not None and not window.bridge.busy, timeout=10_000)
    with qtbot.waitSignal(window.reviews.reviewChanged, timeout=10_000):
        window.reviews.change(Edit(state="reviewed", add_tags=["gold"]))
    window.actions_by_name["export_eval"].trigger()
    dialog = window.replay.eval_dialog
    assert dialog.scope_review.isEnabled()
    dialog.scope_review.setChecked(True)
    dialog.state.setText("reviewed")
    dialog.tag.setText("gold")
    # a minimum score that is not NAME=NUMBER is refused before anything runs
    dialog.min_scores.setText("accuracy")
    with qtbot.waitSignal(dialog.exportFailed, timeout=10_000):
        dialog.export_button.click()
    assert dialog.result_label.text() == "Not exported: minimum score 'accuracy': write NAME=NUMBER"
    dialog.min_scores.clear()
    out = tmp_path / "gold.jsonl"
    result = _export(qtbot, dialog, "jsonl", out)
    assert (result.items, result.sessions) == (3, 1)  # conv-2 has no review: not under the filter
    docs = check_file(out, "jsonl")
    assert {d["metadata"]["session_id"] for d in docs} == {SID}
    assert all(d["metadata"]["review_state"] == "reviewed" and d["metadata"]["review_tags"] == ["gold"]
               for d in docs)
    dialog.close()
