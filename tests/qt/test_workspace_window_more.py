"""More of the window's workspace (issue 36): a consolidation is undoable from Edit › Undo
— Undo removes from the destination exactly the sessions it wrote (a session skipped as
already consolidated stays), Redo writes them again, the replicas never change — and the
doctor panel reports a split session of the merged view as ``split_session``."""

from __future__ import annotations

from pathlib import Path

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_async
from test_workspace_window import open_workspace
from workspace_helpers import PO, agents_items, digests, user_texts

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _texts(path: Path, sid: str) -> list[str]:
    return user_texts(run_async(agents_items(path, sid)))


def test_undo_removes_exactly_the_sessions_a_consolidation_wrote_and_redo_writes_them_again(
        qtbot, window, replicas, tmp_path):
    from fluxgui.services.workspace.into import consolidate_into

    ws = open_workspace(qtbot, window, replicas.paths)
    before = digests(replicas.paths)
    merged = tmp_path / "merged.db"
    # sticky_7 is consolidated already (outside the window): the dialog skips it
    run_async(consolidate_into(ws.members.service(), str(merged), ["sticky_7"]))
    sticky = _texts(merged, "sticky_7")
    assert sticky == replicas.texts("sticky_7")
    assert "user_123" in replicas.split()
    dialog = ws.files.consolidate(["user_123", "sticky_7"])
    dialog.dest.setText(str(merged))
    with qtbot.waitSignal(dialog.planned, timeout=30_000) as planned:
        dialog.preview_button.click()
    assert {s.session_id: s.action for s in planned.args[0].sessions} == {"user_123": "write", "sticky_7": "same"}
    editor = window.editor
    with qtbot.waitSignal(editor.applied, timeout=60_000) as kept:
        dialog.write_button.click()
    assert kept.args[0].session_ids == ["user_123"]
    assert "Undo" in editor.stack.undoText() or editor.stack.canUndo()
    assert "Edit › Undo" in dialog.status.text()
    assert _texts(merged, "user_123") == replicas.texts("user_123")
    undo, redo = window.actions_by_name["undo"], window.actions_by_name["redo"]
    qtbot.waitUntil(undo.isEnabled, timeout=10_000)
    assert "Consolidate 1 session" in undo.text()
    # Undo: the session written is gone from the file, the one already there stays
    with qtbot.waitSignal(editor.applied, timeout=30_000):
        undo.trigger()
    assert _texts(merged, "user_123") == []
    assert _texts(merged, "sticky_7") == sticky
    assert "Undone: Consolidate" in window.statusBar().currentMessage()
    # Redo: written again, in the true order (the purchase order first)
    qtbot.waitUntil(redo.isEnabled, timeout=10_000)
    with qtbot.waitSignal(editor.applied, timeout=30_000):
        redo.trigger()
    again = _texts(merged, "user_123")
    assert again == replicas.texts("user_123") and PO in again[0]
    assert _texts(merged, "sticky_7") == sticky
    # and once more back and forth
    with qtbot.waitSignal(editor.applied, timeout=30_000):
        undo.trigger()
    assert _texts(merged, "user_123") == []
    assert digests(replicas.paths) == before
    dialog.close()


def test_the_doctor_reports_a_split_session_shown_merged_without_a_repair_and_offers_consolidate(
        qtbot, window, replicas):
    from PySide6.QtCore import Qt

    ws = open_workspace(qtbot, window, replicas.paths)
    problems = window.doctor.problems
    ws.select("user_123")
    qtbot.waitUntil(lambda: problems.merged == "user_123" and problems.list.count() == 1, timeout=30_000)
    # opening the Doctor afterwards (View › Doctor checks the shown session) keeps it
    window.actions_by_name["doctor"].trigger()
    assert window.doctor.dock.isVisible()
    assert problems.merged == "user_123" and problems.list.count() == 1
    item = problems.list.item(0)
    text = item.text()
    assert text.startswith("split session  a/conversations.db:")
    assert "b/conversations.db:" in text and "c/conversations.db:" in text
    # the workspace service's sentence: turns 1 and 3 on a, turn 2 on b, turn 4 on c
    assert "turns 1 and 3 are in a/conversations.db (its turns 1 and 2)" in text
    assert "turn 2 is in b/conversations.db" in text and "turn 4 is in c/conversations.db" in text
    assert "each store's agent saw only its own turns" in text
    assert "split across stores" in problems.summary.text()
    # no repair: nothing to tick, Preview / Apply / Remove Last Turn hidden; Consolidate… offered
    assert not item.flags() & Qt.ItemFlag.ItemIsUserCheckable
    assert problems.chosen() == []
    assert not problems.preview_button.isVisible() and not problems.apply_button.isVisible()
    assert not problems.rewind_button.isVisible() and problems.undo_button.isVisible()
    assert problems.consolidate_button.isVisible()
    problems.consolidate_button.click()
    dialog = ws.files.dialog
    assert dialog is not None and dialog.session_ids == ["user_123"] and dialog.isVisible()
    dialog.close()
    # a copy (c holds copied_9 whole) is merged but not split: nothing reported, no Consolidate…
    ws.select("copied_9")
    qtbot.waitUntil(lambda: problems.merged == "copied_9", timeout=30_000)
    assert problems.list.count() == 0 and "not split" in problems.summary.text()
    assert not problems.consolidate_button.isVisible()
    # a session of one store: the doctor's own checks again, with their repairs
    ws.select("sticky_7")
    qtbot.waitUntil(lambda: window.conversation.session_id == "sticky_7" and problems.merged is None
                    and problems.summary.text().startswith("No problems"), timeout=30_000)
    assert problems.preview_button.isVisible() and problems.preview_button.isEnabled()
    assert problems.rewind_button.isVisible() and not problems.consolidate_button.isVisible()
