"""Editing from the window: the read-only/editing switch, each edit through its action,
one undo stack (Ctrl+Z / Ctrl+Shift+Z), and failed writes. Every result is read back
with the library that owns the format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel
from qt_helpers import OFFSCREEN_NOISE, run_async, write_agents_store

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _agents_items(path: Path, sid: str) -> list[dict[str, Any]]:
    from agents import SQLiteSession

    async def read() -> list[dict[str, Any]]:
        session = SQLiteSession(sid, path)
        try:
            return list(await session.get_items())  # type: ignore[arg-type]
        finally:
            session.close()

    return run_async(read())


def _flux_messages(path: Path, sid: str) -> list[dict[str, Any]]:
    from flux.sessions import SQLiteSession

    return run_async(SQLiteSession(db_path=str(path), session_id=sid).get_messages())


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.editor.running, timeout=20_000)


def _open(qtbot: Any, window: Any, path: Path, sid: str) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), session_id=sid)
    _settle(qtbot, window)


def _enable_editing(qtbot: Any, window: Any) -> None:
    sid = window.current_session_id
    with qtbot.waitSignal(window.messagesShown, timeout=20_000) as shown:
        window.actions_by_name["editing"].trigger()
    assert shown.args == [sid]  # still on the same session
    _settle(qtbot, window)
    assert window.stores.store.can_write


def _texts(window: Any) -> list[str]:
    return [m.text for m in window.conversation.model.messages]


def _edit(qtbot: Any, window: Any, run: Any) -> None:
    """Run an edit (or undo/redo) and wait until the conversation shows its result."""
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        run()
    _settle(qtbot, window)


@pytest.fixture
def confirm_yes(monkeypatch: Any) -> list[tuple[Any, ...]]:
    """Answer the confirmation boxes with yes, recording what they were asked."""
    import fluxgui.qt.dialogs.confirm as dialogs

    asked: list[tuple[Any, ...]] = []

    def yes(name: str):
        def answer(_parent: Any, *args: Any) -> bool:
            asked.append((name, *args))
            return True

        return answer

    for name in ("confirm_clear", "confirm_delete_session", "confirm_delete_messages"):
        monkeypatch.setattr(dialogs, name, yes(name))
    return asked


def test_stores_open_read_only_and_the_switch_shows_the_mode(qtbot, window, agents_db):
    _open(qtbot, window, agents_db, "refund-1001")
    actions = window.actions_by_name
    assert window.mode_label.text() == "read-only"
    assert not window.stores.store.can_write
    for name in ("clear_session", "delete_session", "delete_messages", "edit_message", "undo"):
        assert not actions[name].isEnabled(), name
    _enable_editing(qtbot, window)
    assert "editing" in window.mode_label.text()
    assert actions["editing"].isChecked() and window.mode_label.isChecked()
    assert actions["clear_session"].isEnabled() and actions["delete_messages"].isEnabled()
    # Back to read-only: the switch reopens the store without writing.
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.mode_label.click()
    _settle(qtbot, window)
    assert window.mode_label.text() == "read-only" and not window.stores.store.can_write


def test_an_edit_on_a_read_only_store_says_how_to_enable_editing(qtbot, window, agents_db):
    _open(qtbot, window, agents_db, "refund-1001")
    before = agents_db.read_bytes()
    window.edits.pop_message()
    assert not window.error_bar.isHidden()
    assert "read-only" in window.error_bar.text() and "Ctrl+Shift+E" in window.error_bar.text()
    assert agents_db.read_bytes() == before


def test_clear_undo_redo_through_the_edit_menu(qtbot, window, agents_db, confirm_yes):
    _open(qtbot, window, agents_db, "refund-1001")
    _enable_editing(qtbot, window)
    original = _agents_items(agents_db, "refund-1001")
    assert len(original) == 5
    shown = _texts(window)

    _edit(qtbot, window, window.actions_by_name["clear_session"].trigger)
    assert confirm_yes == [("confirm_clear", "refund-1001", 5)]
    assert _agents_items(agents_db, "refund-1001") == []
    assert window.conversation.model.rowCount() == 0
    undo = window.actions_by_name["undo"]
    assert undo.isEnabled() and undo.text() == '&Undo Clear session "refund-1001"'

    _edit(qtbot, window, undo.trigger)
    assert _agents_items(agents_db, "refund-1001") == original
    assert _texts(window) == shown
    redo = window.actions_by_name["redo"]
    assert redo.isEnabled() and "Clear session" in redo.text()

    _edit(qtbot, window, redo.trigger)
    assert _agents_items(agents_db, "refund-1001") == []
    _edit(qtbot, window, undo.trigger)
    assert _agents_items(agents_db, "refund-1001") == original


def test_delete_selected_messages_and_pop_then_undo_both(qtbot, window, agents_db, confirm_yes):
    _open(qtbot, window, agents_db, "refund-1001")
    _enable_editing(qtbot, window)
    original = _agents_items(agents_db, "refund-1001")
    view = window.conversation.view
    model = window.conversation.model
    selection = view.selectionModel()
    selection.select(model.index(1, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect)
    selection.select(model.index(2, 0), QItemSelectionModel.SelectionFlag.Select)
    view.setFocus()
    _edit(qtbot, window, window.actions_by_name["delete_messages"].trigger)
    assert confirm_yes == [("confirm_delete_messages", 2)]
    assert _agents_items(agents_db, "refund-1001") == [original[0], *original[3:]]

    _edit(qtbot, window, window.actions_by_name["pop_message"].trigger)
    assert _agents_items(agents_db, "refund-1001") == [original[0], original[3]]
    assert window.actions_by_name["undo"].text() == "&Undo Remove the last message"

    _edit(qtbot, window, window.edits.undo)
    _edit(qtbot, window, window.edits.undo)
    assert _agents_items(agents_db, "refund-1001") == original
    assert not window.actions_by_name["undo"].isEnabled()


def test_delete_session_from_the_list_and_undo(qtbot, window, agents_db, confirm_yes):
    _open(qtbot, window, agents_db, "refund-1001")
    _enable_editing(qtbot, window)
    original = _agents_items(agents_db, "bugfix-2002")
    menu = window.session_list.build_menu("bugfix-2002")
    delete = next(a for a in menu.actions() if a.text() == "Delete Session…")
    assert delete.isEnabled()
    _edit(qtbot, window, delete.trigger)
    assert confirm_yes == [("confirm_delete_session", "bugfix-2002", len(original))]
    assert _agents_items(agents_db, "bugfix-2002") == []
    qtbot.waitUntil(lambda: window.sessions.row_of("bugfix-2002") is None, timeout=10_000)
    _edit(qtbot, window, window.edits.undo)
    assert _agents_items(agents_db, "bugfix-2002") == original
    qtbot.waitUntil(lambda: window.sessions.row_of("bugfix-2002") is not None, timeout=10_000)


def test_an_undo_that_no_longer_fits_writes_nothing_and_shows_the_store(
    qtbot, window, agents_db, confirm_yes
):
    _open(qtbot, window, agents_db, "hello-3003")
    _enable_editing(qtbot, window)
    _edit(qtbot, window, window.edits.pop_message)
    # Another program writes the same session meanwhile (the library itself).
    write_agents_store(agents_db, {"hello-3003": [[{"role": "user", "content": "from elsewhere"}]]})
    popped_and_added = _agents_items(agents_db, "hello-3003")
    # Undo still fits (the popped id is free): it restores the popped item before the new one.
    _edit(qtbot, window, window.edits.undo)
    items = _agents_items(agents_db, "hello-3003")
    assert len(items) == len(popped_and_added) + 1 and items[-1]["content"] == "from elsewhere"
    # Redo wants to remove the item again, but now clear the session elsewhere first.
    from agents import SQLiteSession

    async def clear() -> None:
        session = SQLiteSession("hello-3003", agents_db)
        await session.clear_session()
        session.close()

    run_async(clear())
    with qtbot.waitSignal(window.editor.failed, timeout=20_000):
        window.edits.redo()
    _settle(qtbot, window)
    assert "changed" in window.error_bar.text()
    assert _agents_items(agents_db, "hello-3003") == []  # nothing written
    assert window.actions_by_name["redo"].isEnabled()  # the stack did not move


def test_flux_store_edits_read_back_in_flux(qtbot, window, flux_db, confirm_yes):
    from qt_helpers import FLUX_SESSIONS

    sid = next(iter(FLUX_SESSIONS))
    _open(qtbot, window, flux_db, sid)
    _enable_editing(qtbot, window)
    original = _flux_messages(flux_db, sid)
    window.conversation.select_message(window.conversation.model.messages[0].id)
    _edit(qtbot, window, window.actions_by_name["delete_messages"].trigger)
    assert _flux_messages(flux_db, sid) == original[1:]
    _edit(qtbot, window, window.edits.undo)
    assert _flux_messages(flux_db, sid) == original


def test_the_delete_key_in_the_session_list_deletes_the_session(
    qtbot, window, flux_db, confirm_yes
):
    from PySide6.QtCore import Qt

    from qt_helpers import FLUX_SESSIONS

    sid = next(iter(FLUX_SESSIONS))
    _open(qtbot, window, flux_db, sid)
    _enable_editing(qtbot, window)
    window.session_list.focus()
    window.activateWindow()
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        qtbot.keyClick(window.session_view, Qt.Key.Key_Delete)
    assert confirm_yes and confirm_yes[0][0] == "confirm_delete_session"
    assert _flux_messages(flux_db, confirm_yes[0][1]) == []


def _answer_dialog(qtbot: Any, fill: Any) -> list[str]:
    """Fill the next modal dialog with ``fill(dialog)`` and press its OK button, once it
    shows (waited on as a condition, not a delay); returns the problems it reported."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from fluxgui.qt.dialogs.message_edit import MessageEditDialog

    seen: list[str] = []

    def poll() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, MessageEditDialog):
            QTimer.singleShot(10, poll)
            return
        fill(dialog)
        dialog.check()
        seen.append(dialog.problem() or "")
        if dialog.is_valid():
            dialog.ok_button.click()
        else:
            dialog.reject()

    QTimer.singleShot(0, poll)
    return seen


def test_edit_a_flux_message_in_the_dialog_then_undo(qtbot, window, flux_db):
    sid = "flux-b"
    _open(qtbot, window, flux_db, sid)
    _enable_editing(qtbot, window)
    original = _flux_messages(flux_db, sid)
    first = window.conversation.model.messages[0]
    window.conversation.select_message(first.id)

    def fill(dialog: Any) -> None:
        assert dialog.text_edit.toPlainText() == "Translate 'cat' to German"
        dialog.text_edit.setPlainText("Translate 'dog' to German")
        dialog.metadata_edit.setPlainText('{"lang": "de", "edited": true}')

    seen = _answer_dialog(qtbot, fill)
    _edit(qtbot, window, window.actions_by_name["edit_message"].trigger)
    assert seen == [""]
    assert _flux_messages(flux_db, sid)[0] == {
        "role": "user",
        "content": "Translate 'dog' to German",
        "metadata": {"lang": "de", "edited": True},
    }
    assert window.conversation.current_message().id == first.id  # same row, same id
    assert window.conversation.current_message().text == "Translate 'dog' to German"
    _edit(qtbot, window, window.edits.undo)
    assert _flux_messages(flux_db, sid) == original


def test_insert_an_agents_item_after_a_message_and_refuse_an_invalid_one(
    qtbot, window, agents_db
):
    _open(qtbot, window, agents_db, "refund-1001")
    _enable_editing(qtbot, window)
    original = _agents_items(agents_db, "refund-1001")
    window.conversation.select_message(window.conversation.model.messages[0].id)

    seen = _answer_dialog(
        qtbot, lambda d: d.json_edit.setPlainText('{"type": "function_call", "name": "x"}')
    )
    window.actions_by_name["insert_after"].trigger()
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    assert "call_id" in seen[0]  # refused in the dialog: nothing written
    assert _agents_items(agents_db, "refund-1001") == original

    note = {"role": "user", "content": "Also, please email me the receipt."}
    seen = _answer_dialog(qtbot, lambda d: d.json_edit.setPlainText(json.dumps(note)))
    _edit(qtbot, window, window.actions_by_name["insert_after"].trigger)
    assert _agents_items(agents_db, "refund-1001") == [original[0], note, *original[1:]]
    assert window.conversation.current_message().text == note["content"]
    _edit(qtbot, window, window.edits.undo)
    assert _agents_items(agents_db, "refund-1001") == original
    _edit(qtbot, window, window.edits.redo)
    assert _agents_items(agents_db, "refund-1001") == [original[0], note, *original[1:]]


def test_opening_writable_starts_in_editing_mode(qtbot, window, agents_db):
    from fluxgui.cli import build_window_parser

    args = build_window_parser().parse_args([str(agents_db), "--writable"])
    assert args.writable
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(agents_db), session_id="hello-3003", writable=args.writable)
    _settle(qtbot, window)
    assert window.stores.store.can_write and "editing" in window.mode_label.text()
    assert window.actions_by_name["pop_message"].isEnabled()


def test_fork_from_here_opens_the_fork_and_leaves_the_origin(qtbot, window, agents_db, monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    asked: list[str] = []

    def name(_parent: Any, title: str, *_args: Any) -> tuple[str, bool]:
        asked.append(title)
        return "refund-what-if", True

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(name))
    _open(qtbot, window, agents_db, "refund-1001")
    _enable_editing(qtbot, window)
    original = _agents_items(agents_db, "refund-1001")
    third = window.conversation.model.messages[2]
    window.conversation.select_message(third.id)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000) as shown:
        window.actions_by_name["fork"].trigger()
    assert asked == ["Fork from here"] and shown.args == ["refund-what-if"]
    _settle(qtbot, window)
    assert _agents_items(agents_db, "refund-what-if") == original[:3]
    assert _agents_items(agents_db, "refund-1001") == original
    qtbot.waitUntil(lambda: window.conversation.origin.isVisible(), timeout=10_000)
    assert window.conversation.origin.text() == f"forked from refund-1001 at message {third.id}"
    qtbot.waitUntil(lambda: window.sessions.row_of("refund-what-if") is not None, timeout=10_000)
    # Undo deletes the fork again.
    _edit(qtbot, window, window.edits.undo)
    assert _agents_items(agents_db, "refund-what-if") == []
    assert _agents_items(agents_db, "refund-1001") == original


def test_compare_a_fork_with_its_origin(qtbot, window, agents_db, monkeypatch):
    from PySide6.QtWidgets import QInputDialog

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *_a: ("alt", True)))
    _open(qtbot, window, agents_db, "refund-1001")
    _enable_editing(qtbot, window)
    first = window.conversation.model.messages[0]
    window.conversation.select_message(first.id)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.edits.fork_here()
    _settle(qtbot, window)
    qtbot.waitUntil(lambda: window.conversation.origin.isVisible(), timeout=10_000)
    dialog = window.comparing.compare_sessions()
    assert dialog is not None
    with qtbot.waitSignal(dialog.view.compared, timeout=20_000) as got:
        pass
    comparison = got.args[0]
    assert (comparison.a.session_id, comparison.b.session_id) == ("refund-1001", "alt")
    assert dialog.view.highlighted_turns() == [1]  # the fork stops inside turn 1
    dialog.close()

    # The origin itself has no origin: with one session selected there is nothing to
    # compare, and the window says how to choose two.
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.show_session("refund-1001")
    _settle(qtbot, window)
    window.session_list.select_row(window.sessions.row_of("refund-1001"))
    _settle(qtbot, window)
    assert window.comparing.compare_sessions() is None
    assert "select two sessions" in window.error_bar.text()


def test_fork_an_advanced_session_from_the_window(qtbot, window, tmp_path, monkeypatch):
    from advanced_helpers import SID, Library, write_library_store
    from PySide6.QtWidgets import QInputDialog

    path = tmp_path / "advanced.db"
    run_async(write_library_store(path))
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *_a: ("", True)))
    _open(qtbot, window, path, SID)
    _enable_editing(qtbot, window)
    messages = window.conversation.model.messages
    window.conversation.select_message(messages[1].id)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000) as shown:
        window.edits.fork_here()
    assert shown.args == [f"{SID}-fork"]
    _settle(qtbot, window)
    lib = Library(path)
    view = run_async(lib.view(f"{SID}-fork"))
    main = run_async(lib.view(SID))["per_branch"]["main"]["items"]
    assert view["current_items"] == main[:2]
