"""The edit dialogs: confirmations of destructive edits and the message editor, checked
against stores written by the real libraries (offscreen, pytest-qt, no sleeps)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QMessageBox
from qt_helpers import (
    AGENTS_SESSIONS,
    FLUX_SESSIONS,
    OFFSCREEN_NOISE,
    run_async,
    when_modal,
    write_agents_store,
    write_flux_store,
)

from fluxgui.adapters.registry import open_store
from fluxgui.core.roles import Store
from fluxgui.core.errors import InvalidItem
from fluxgui.core.model import Message, from_agents_row, from_flux_row, from_item
from fluxgui.core.jsontext import display_id, json_text
from fluxgui.qt.dialogs.confirm import (
    clear_box,
    confirm_button,
    confirm_clear,
    confirm_delete_messages,
    confirm_delete_session,
    delete_messages_box,
    delete_session_box,
)
from fluxgui.qt.dialogs.message_edit import TEMPLATES, MessageEditDialog, edit_message

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

HOSTILE_ID = "<b>b</b>\n\u202eevil\u2066<img src=x onerror=alert(1)> id " + "z" * 80


async def _load(path: Path, session_id: str) -> tuple[Store, list[Message]]:
    # edit_values needs no I/O: the store is closed again before the tests use it.
    store = await open_store(str(path), writable=True)
    try:
        return store, await store.reader.page_messages(session_id, limit=100)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def agents(tmp_path_factory: Any) -> tuple[Store, list[Message]]:
    """An agents.SQLiteSession store and the messages of "refund-1001": user message,
    function_call, function_call_output, reasoning, assistant message."""
    path = write_agents_store(tmp_path_factory.mktemp("agents") / "a.db", AGENTS_SESSIONS)
    return run_async(_load(path, "refund-1001"))


@pytest.fixture(scope="module")
def flux(tmp_path_factory: Any) -> tuple[Store, list[Message]]:
    """A flux SQLiteSession store and the messages of "flux-b" (the first has metadata)."""
    path = write_flux_store(tmp_path_factory.mktemp("flux") / "f.db", FLUX_SESSIONS)
    return run_async(_load(path, "flux-b"))


def validator(store: Store, message: Message | None) -> Callable[[dict[str, Any]], Any]:
    return lambda spec: store.editor.edit_values(spec, original=message)


def make(qtbot: Any, store: Store, message: Message | None, **kw: Any) -> MessageEditDialog:
    dialog = MessageEditDialog(store.traits.columns, validator(store, message), message, **kw)
    qtbot.addWidget(dialog)
    dialog.show()
    # Ctrl+Return is a window shortcut: it needs the dialog to be the active window.
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=3000)
    return dialog


def wait_invalid(qtbot: Any, dialog: MessageEditDialog, *needles: str) -> str:
    """Wait for the typing pause to end with Save disabled and an error naming all of
    ``needles``; the error shown."""

    def shown() -> bool:
        text = dialog.status_label.text()
        return not dialog.ok_button.isEnabled() and all(n in text for n in needles)

    qtbot.waitUntil(shown, timeout=3000)
    text = dialog.status_label.text()
    assert "\n" not in text
    assert dialog.problem() == text
    with pytest.raises(InvalidItem):
        dialog.spec()
    return text


def wait_valid(qtbot: Any, dialog: MessageEditDialog) -> None:
    qtbot.waitUntil(
        lambda: dialog.ok_button.isEnabled() and dialog.status_label.text().startswith("Valid"),
        timeout=3000,
    )
    assert dialog.problem() is None
    assert dialog.status_label.text().startswith("Valid")


# --------------------------------------------------------------------------- confirmations


def _labels(box: QMessageBox) -> dict[str, QLabel]:
    return {label.objectName(): label for label in box.findChildren(QLabel)}


def _check_cancel_default(box: QMessageBox, action: str) -> None:
    assert confirm_button(box).text().replace("&", "") == action
    assert box.buttonRole(confirm_button(box)) == QMessageBox.ButtonRole.DestructiveRole
    cancel = box.button(QMessageBox.StandardButton.Cancel)
    assert cancel is not None
    assert box.defaultButton() is cancel
    assert box.escapeButton() is cancel
    assert len(box.buttons()) == 2


def test_clear_box_names_the_session_and_its_count(qtbot):
    box = clear_box(None, "refund-1001", 12)
    qtbot.addWidget(box)
    assert box.text() == "Clear session “refund-1001”?"
    assert box.informativeText() == (
        "Its 12 messages will be removed.\nYou can undo this with Ctrl+Z."
    )
    _check_cancel_default(box, "Clear")
    assert box.textFormat() == Qt.TextFormat.PlainText

    one = clear_box(None, "s", 1)
    qtbot.addWidget(one)
    assert one.informativeText().startswith("Its 1 message will be removed.")


def test_delete_boxes(qtbot):
    box = delete_session_box(None, "bugfix-2002", 2)
    qtbot.addWidget(box)
    assert box.text() == "Delete session “bugfix-2002”?"
    assert "The session and its 2 messages will be removed." in box.informativeText()
    assert "Ctrl+Z" in box.informativeText()
    _check_cancel_default(box, "Delete")

    many = delete_messages_box(None, 3)
    qtbot.addWidget(many)
    assert many.text() == "Delete the 3 selected messages?"
    _check_cancel_default(many, "Delete")
    one = delete_messages_box(None, 1)
    qtbot.addWidget(one)
    assert one.text() == "Delete the selected message?"


def test_hostile_session_id_is_plain_text_on_one_line(qtbot):
    box = delete_session_box(None, HOSTILE_ID, 5)
    qtbot.addWidget(box)
    text = box.text()
    assert text.startswith("Delete session “<b>b</b>\\n\\u202eevil…")  # not cut in an escape
    assert "\n" not in text and "\u202e" not in text and "\u2066" not in text
    assert "\\u202e" in text  # the override is shown, not obeyed
    assert "…" in text and len(text) < 100  # elided
    assert text.endswith("zzz”?")
    for name in ("qt_msgbox_label", "qt_msgbox_informativelabel"):
        assert _labels(box)[name].textFormat() == Qt.TextFormat.PlainText
    assert _labels(box)["qt_msgbox_label"].text() == text
    assert display_id("a" * 50) == "“" + "a" * 50 + "”"  # short ids whole


def test_confirm_functions_run_the_box(qtbot):
    when_modal(QMessageBox, lambda box: confirm_button(box).click())
    assert confirm_clear(None, "refund-1001", 12) is True

    when_modal(QMessageBox, lambda box: box.button(QMessageBox.StandardButton.Cancel).click())
    assert confirm_delete_session(None, "refund-1001", 12) is False

    # Enter takes the default button, Cancel.
    when_modal(QMessageBox, lambda box: qtbot.keyClick(box, Qt.Key.Key_Return))
    assert confirm_delete_messages(None, 2) is False

    when_modal(QMessageBox, lambda box: qtbot.keyClick(box, Qt.Key.Key_Escape))
    assert confirm_clear(None, "x", 1) is False

    when_modal(QMessageBox, lambda box: confirm_button(box).click())
    assert confirm_delete_messages(None, 2) is True


# --------------------------------------------------------------------------- flux messages


def test_flux_edit_is_prefilled(qtbot, flux):
    store, messages = flux
    first = messages[0]
    d = make(qtbot, store, first)
    assert d.windowTitle() == f"Edit message {first.id}"
    assert d.role_combo.currentText() == "user"
    assert [d.role_combo.itemText(i) for i in range(d.role_combo.count())] == [
        "user", "assistant", "system", "tool",
    ]
    assert d.role_combo.isEditable()
    assert d.text_edit.toPlainText() == "Translate 'cat' to German"
    assert d.metadata_edit.toPlainText() == '{\n  "lang": "de"\n}'
    assert d.json_edit is None and d.template_combo is None
    assert d.ok_button.isEnabled() and d.ok_button.text().replace("&", "") == "Save"
    assert d.spec() == {
        "role": "user", "content": "Translate 'cat' to German", "metadata": {"lang": "de"},
    }

    second = make(qtbot, store, messages[1])
    assert second.metadata_edit.toPlainText() == ""
    assert second.spec() == {"role": "assistant", "content": "Katze", "metadata": None}


def test_flux_edit_spec_after_typing(qtbot, flux):
    store, messages = flux
    d = make(qtbot, store, messages[1], title="Edit message 2")
    assert d.windowTitle() == "Edit message 2"
    d.role_combo.setCurrentText("system")
    d.text_edit.setPlainText("Be brief.\nVery brief.")
    d.metadata_edit.clear()
    # (QTest types ASCII only: it aborts on other characters)
    d.metadata_edit.insertPlainText('{"source": "ünï"')
    qtbot.keyClicks(d.metadata_edit, "}")
    wait_valid(qtbot, d)
    expected = {
        "role": "system", "content": "Be brief.\nVery brief.", "metadata": {"source": "ünï"},
    }
    assert d.spec() == expected
    store.editor.edit_values(d.spec())  # what the window will store

    with qtbot.waitSignal(d.accepted):
        qtbot.keyClick(d.text_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert d.result() == QDialog.DialogCode.Accepted
    assert d.result_spec == expected


def test_flux_metadata_that_is_not_an_object_stays_editable(qtbot, tmp_path):
    # flux reads any JSON value as metadata: a row the library wrote with a list keeps
    # it through an edit of its text; typing a new list (or changing its type) is refused
    from flux.sessions import SQLiteSession

    path = write_flux_store(tmp_path / "listed.db", {"listed": [
        {"role": "user", "content": "before", "metadata": [1, "two"]},
        {"role": "user", "content": "also", "metadata": "a note"}]})
    store, messages = run_async(_load(path, "listed"))
    assert [m.metadata for m in messages] == [[1, "two"], "a note"]
    d = make(qtbot, store, messages[0])
    d.text_edit.setPlainText("after")
    wait_valid(qtbot, d)
    spec = d.spec()
    assert spec["metadata"] == [1, "two"] and store.editor.edit_values(spec, original=messages[0])["metadata"] == '[1, "two"]'
    d.metadata_edit.setPlainText("[1]")  # another list: not flux's kind of metadata
    wait_invalid(qtbot, d, "Metadata must be a JSON object", "not a list")
    d.metadata_edit.setPlainText('{"now": "an object"}')
    wait_valid(qtbot, d)
    e = make(qtbot, store, messages[1])
    wait_valid(qtbot, e)  # the stored text metadata, unchanged
    with pytest.raises(InvalidItem):  # another message's list is not this one's
        store.editor.edit_values({"role": "user", "content": "x", "metadata": [1, "two"]}, original=messages[1])

    async def write_and_read() -> list[dict[str, Any]]:
        writable = await open_store(str(path), writable=True)
        try:
            await writable.editor.update_message("listed", messages[0].id, spec, original=messages[0])
        finally:
            await writable.close()
        return await SQLiteSession(db_path=str(path), session_id="listed").get_messages()

    assert run_async(write_and_read())[0] == {"role": "user", "content": "after", "metadata": [1, "two"]}


def test_flux_metadata_errors_disable_save(qtbot, flux):
    store, messages = flux
    d = make(qtbot, store, messages[0])
    d.metadata_edit.setPlainText('{\n  "lang": "de",\n  "x": \n}')
    error = wait_invalid(qtbot, d, "Metadata", "line 4, column 1")
    assert error.startswith("Metadata: JSON error at line 4, column 1:")
    marks = d.metadata_edit.extraSelections()
    assert len(marks) == 1 and marks[0].cursor.blockNumber() == 3

    d.metadata_edit.setPlainText("[1, 2]")
    wait_invalid(qtbot, d, "Metadata must be a JSON object", "not a list")
    assert d.metadata_edit.extraSelections() == []

    d.metadata_edit.setPlainText('{"a": 1, "a": 2}')
    wait_invalid(qtbot, d, 'the key "a" appears twice')
    d.metadata_edit.setPlainText('{"a": NaN}')
    wait_invalid(qtbot, d, "NaN is not allowed")

    d.metadata_edit.setPlainText("  ")  # empty: no metadata
    wait_valid(qtbot, d)
    assert d.spec()["metadata"] is None

    d.role_combo.setCurrentText("")
    wait_invalid(qtbot, d, "needs a role")
    # Neither the button nor Ctrl+Return gets past an invalid form.
    d.accept()
    qtbot.keyClick(d.text_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert d.isVisible() and d.result_spec is None


def test_flux_row_with_malformed_metadata_shows_it_as_stored(qtbot, flux):
    store, _ = flux
    message = from_flux_row(7, "user", "hi", "{oops", "2024-01-01 00:00:00")
    assert message.kind == "other"
    d = make(qtbot, store, message)
    assert d.metadata_edit.toPlainText() == "{oops"
    wait_invalid(qtbot, d, "Metadata: JSON error at line 1, column 2")
    d.metadata_edit.setPlainText('{"fixed": true}')
    wait_valid(qtbot, d)
    assert d.spec() == {"role": "user", "content": "hi", "metadata": {"fixed": True}}


def test_flux_text_kept_exactly(qtbot, flux):
    store, _ = flux
    text = "a\u00a0b\r\nc\u2028d <b>not bold</b>"
    message = from_flux_row(8, "assistant", text, None, None)
    d = make(qtbot, store, message)
    assert d.spec()["content"] == text  # untouched: exactly as stored
    d.text_edit.moveCursor(d.text_edit.textCursor().MoveOperation.End)
    qtbot.keyClicks(d.text_edit, "!")
    wait_valid(qtbot, d)
    # Edited: the no-break space and the line separator survive the editor.
    assert d.spec()["content"] == "a\u00a0b\nc\u2028d <b>not bold</b>!"


def test_flux_new_message(qtbot, flux):
    store, _ = flux
    d = make(qtbot, store, None, title="Insert message after 12")
    assert d.windowTitle() == "Insert message after 12"
    assert d.ok_button.text().replace("&", "") == "Insert"
    assert d.role_combo.currentText() == "user"
    assert d.text_edit.toPlainText() == "" and d.metadata_edit.toPlainText() == ""
    qtbot.keyClicks(d.text_edit, "Hello")
    wait_valid(qtbot, d)
    assert d.spec() == {"role": "user", "content": "Hello", "metadata": None}


# --------------------------------------------------------------------------- agents items


def test_agents_edit_is_prefilled_with_the_stored_item(qtbot, agents):
    store, messages = agents
    assert [m.kind for m in messages] == [
        "message", "tool_call", "tool_output", "reasoning", "message",
    ]
    for message in messages:
        d = make(qtbot, store, message)
        assert d.json_edit.toPlainText() == json.dumps(message.raw, indent=2, ensure_ascii=False)
        assert d.role_combo is None and d.text_edit is None and d.template_combo is None
        assert d.ok_button.isEnabled()
        assert d.spec() == message.raw
        kind = message.raw.get("type", "message")
        assert d.status_label.text() == f"Valid {kind} item"


def test_agents_invalid_items_disable_save(qtbot, agents):
    store, messages = agents
    call = messages[1]
    d = make(qtbot, store, call)
    broken = dict(call.raw, call_id=3)
    d.json_edit.setPlainText(json.dumps(broken, indent=2))
    wait_invalid(qtbot, d, "A function_call item needs 'call_id' as text")
    assert d.status_label.textFormat() == Qt.TextFormat.PlainText

    d.json_edit.setPlainText('{"type": "function_call", "call_id": "c",}')
    wait_invalid(qtbot, d, "JSON error at line 1, column 42")

    d.json_edit.setPlainText('["a list"]')
    wait_invalid(qtbot, d, "An item must be a JSON object", "not a list")
    d.json_edit.setPlainText("")
    wait_invalid(qtbot, d, "Enter the item as a JSON object")

    d.json_edit.setPlainText('{"type": "made_up_type"}')
    wait_invalid(qtbot, d, "Unknown item type 'made_up_type'")
    d.json_edit.setPlainText('{"role": "<b>boss</b>", "content": "x"}')
    error = wait_invalid(qtbot, d, "<b>boss</b>")  # shown as text, not markup
    assert d.status_label.text() == error

    d.json_edit.setPlainText(json.dumps(dict(call.raw, arguments='{"order": 1002}')))
    wait_valid(qtbot, d)
    assert d.spec() == dict(call.raw, arguments='{"order": 1002}')
    with qtbot.waitSignal(d.accepted):
        d.ok_button.click()
    assert d.result_spec == dict(call.raw, arguments='{"order": 1002}')


def test_agents_escape_cancels(qtbot, agents):
    store, messages = agents
    d = make(qtbot, store, messages[0])
    with qtbot.waitSignal(d.rejected):
        qtbot.keyClick(d.json_edit, Qt.Key.Key_Escape)
    assert d.result_spec is None


def test_agents_malformed_stored_text_is_shown_as_it_is(qtbot, agents):
    store, _ = agents
    message = from_agents_row(9, '{"role": "user", "content": "cut off', None)
    assert message.kind == "other" and isinstance(message.raw, str)
    d = make(qtbot, store, message)
    assert d.json_edit.toPlainText() == '{"role": "user", "content": "cut off'
    wait_invalid(qtbot, d, "JSON error at line 1")
    d.json_edit.moveCursor(d.json_edit.textCursor().MoveOperation.End)
    qtbot.keyClicks(d.json_edit, '"}')
    wait_valid(qtbot, d)
    assert d.spec() == {"role": "user", "content": "cut off"}


def test_agents_hidden_characters_are_escaped_and_round_trip(qtbot, agents):
    store, _ = agents
    item = {
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "output_text", "text": "rtl\u202eevil\u2028next\u00a0nbsp 😀 <b>x</b>"}
        ],
    }
    message = from_item(10, item, None)
    d = make(qtbot, store, message)
    # (not toPlainText(): it turns the no-break space into a space)
    shown = d.json_edit.document().toRawText().replace("\u2029", "\n")
    assert "\u202e" not in shown and "\u2028" not in shown
    assert "\\u202e" in shown and "\\u2028" in shown and "😀" in shown and "<b>x</b>" in shown
    assert shown == json_text(item)
    assert d.spec() == item
    d.json_edit.moveCursor(d.json_edit.textCursor().MoveOperation.End)
    qtbot.keyClicks(d.json_edit, " ")
    wait_valid(qtbot, d)
    assert d.spec() == item  # the no-break space survived the editor


def test_agents_unknown_type_is_kept_when_it_was_the_original(qtbot, agents):
    store, _ = agents
    message = from_item(11, {"type": "future_item", "payload": 1}, None)
    d = make(qtbot, store, message)
    assert d.ok_button.isEnabled()
    assert d.status_label.text() == "Valid future_item item"


# --------------------------------------------------------------------------- templates


def test_new_agents_item_templates(qtbot, agents):
    store, _ = agents
    d = make(qtbot, store, None, title="Insert message after 12")
    assert d.windowTitle() == "Insert message after 12"
    assert d.ok_button.text().replace("&", "") == "Insert"
    combo = d.template_combo
    assert combo is not None
    assert [combo.itemText(i) for i in range(combo.count())] == [t for t, _ in TEMPLATES]
    assert d.spec() == {"role": "user", "content": ""}
    assert d.json_edit.toPlainText() == json.dumps(TEMPLATES[0][1], indent=2)
    assert d.ok_button.isEnabled()

    for index, (_, item) in enumerate(TEMPLATES):
        combo.setCurrentIndex(index)
        combo.activated.emit(index)  # what a pick from the list sends
        assert d.json_edit.toPlainText() == json.dumps(item, indent=2)  # keys in order
        assert d.spec() == item
        assert d.ok_button.isEnabled(), d.status_label.text()
        store.editor.edit_values(item)
    assert TEMPLATES[1][1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": ""}],
    }

    # Typing goes into the first empty string; a template is one undoable edit.
    d.choose_template(0)
    qtbot.keyClicks(d.json_edit, "Hi")
    wait_valid(qtbot, d)
    assert d.spec() == {"role": "user", "content": "Hi"}
    d.choose_template(3)
    assert d.spec()["type"] == "function_call"
    d.json_edit.undo()
    assert d.spec() == {"role": "user", "content": "Hi"}

    with qtbot.waitSignal(d.accepted):
        qtbot.keyClick(d.json_edit, Qt.Key.Key_Enter,
                       Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.KeypadModifier)
    assert d.result_spec == {"role": "user", "content": "Hi"}


def test_templates_only_for_new_items(qtbot, agents):
    store, messages = agents
    d = make(qtbot, store, messages[0])
    assert d.template_combo is None
    with pytest.raises(RuntimeError):
        d.choose_template(1)


def test_edit_message_runs_the_dialog(qtbot, agents):
    store, messages = agents

    def change(d: MessageEditDialog) -> None:
        d.json_edit.setPlainText('{"role": "user", "content": "edited"}')
        d.ok_button.click()

    when_modal(MessageEditDialog, change)
    spec = edit_message(None, False, validator(store, messages[0]), messages[0])
    assert spec == {"role": "user", "content": "edited"}

    when_modal(MessageEditDialog, lambda d: d.reject())
    assert edit_message(None, False, validator(store, None)) is None


def test_positional_construction_as_the_window_does_it(qtbot, flux):
    store, messages = flux
    parent = QDialog()
    qtbot.addWidget(parent)
    d = MessageEditDialog(
        store.traits.columns, validator(store, messages[0]), messages[0], "Edit message 3", parent
    )
    assert d.parent() is parent and d.windowTitle() == "Edit message 3"
    assert d.isModal()
    new = MessageEditDialog(store.traits.columns, validator(store, None), parent=parent)
    assert new.windowTitle() == "New message"
