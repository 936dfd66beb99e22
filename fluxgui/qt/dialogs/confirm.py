"""Confirmations before destructive edits: clear a session, delete a session, delete
messages, and a fork, copy or import that leaves out encrypted items no key opens. Cancel
is the default button; each says how to undo or what stays.

Session ids are data: the boxes are plain text, and hidden characters in an id are
shown as escapes (:func:`fluxgui.core.jsontext.display_id`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractButton, QLabel, QMessageBox, QWidget

from fluxgui.core.errors import UnreadableItems
from fluxgui.core.jsontext import display_id
from fluxgui.core.text import plural

from ..screen_fit import fit_to_screen, room


def undo_keys() -> str:
    """The Undo shortcut as this platform writes it (``Ctrl+Z``, ``⌘Z``)."""
    return QKeySequence(QKeySequence.StandardKey.Undo).toString(
        QKeySequence.SequenceFormat.NativeText
    )


def _confirm_box(
    parent: QWidget | None, title: str, text: str, informative: str, action: str
) -> QMessageBox:
    box = QMessageBox(parent)
    box.setWindowTitle(title)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setTextFormat(Qt.TextFormat.PlainText)  # ids are data, never markup
    box.setText(text)
    box.setInformativeText(informative)
    destructive = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole)
    destructive.setObjectName("confirm")
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    # Wide enough that the sentences do not wrap after every few words — within the
    # screen (a small one at 2×: the box never gets wider than the screen).
    wide = min(box.fontMetrics().averageCharWidth() * 58, room(box).width() * 2 // 3)
    for name in ("qt_msgbox_label", "qt_msgbox_informativelabel"):
        label = box.findChild(QLabel, name)
        if label is not None:
            label.setMinimumWidth(wide)
    return fit_to_screen(box)


def confirm_button(box: QMessageBox) -> QAbstractButton:
    """The destructive ("Clear", "Delete") button of a confirmation box."""
    for button in box.buttons():
        if box.buttonRole(button) == QMessageBox.ButtonRole.DestructiveRole:
            return button
    raise LookupError("not a confirmation box")


def _removed(count: int) -> str:
    if count <= 0:
        return "It has no messages."
    return f"Its {plural(count, 'message')} will be removed."


def clear_box(parent: QWidget | None, session_id: str, count: int) -> QMessageBox:
    """The (not yet shown) box :func:`confirm_clear` runs."""
    return _confirm_box(
        parent,
        "Clear session",
        f"Clear session {display_id(session_id)}?",
        f"{_removed(count)}\nYou can undo this with {undo_keys()}.",
        "&Clear",
    )


def delete_session_box(parent: QWidget | None, session_id: str, count: int) -> QMessageBox:
    """The (not yet shown) box :func:`confirm_delete_session` runs."""
    if count <= 0:
        what = "The session will be removed."
    else:
        what = f"The session and its {plural(count, 'message')} will be removed."
    return _confirm_box(
        parent,
        "Delete session",
        f"Delete session {display_id(session_id)}?",
        f"{what}\nYou can undo this with {undo_keys()}.",
        "&Delete",
    )


def delete_conversation_box(
    parent: QWidget | None, conversation_id: str, count: int, where: str
) -> QMessageBox:
    """The (not yet shown) box :func:`confirm_delete_conversation` runs: clearing an
    OpenAI conversation deletes it on the server, as the SDK's ``clear_session`` does."""
    items = plural(count, "item") if count > 0 else "no items"
    return _confirm_box(
        parent,
        "Delete conversation",
        f"Delete conversation {display_id(conversation_id)}?",
        f"It is deleted from {where}, with its {items}; the Conversations API keeps no "
        f"cleared conversation.\nUndo ({undo_keys()}) writes its items again as a new "
        "conversation, under a new id.",
        "&Delete",
    )


def confirm_delete_conversation(
    parent: QWidget | None, conversation_id: str, count: int, where: str
) -> bool:
    """Ask before deleting an OpenAI conversation (Cancel is the default)."""
    return run_confirm(delete_conversation_box(parent, conversation_id, count, where))


def delete_messages_box(parent: QWidget | None, count: int) -> QMessageBox:
    """The (not yet shown) box :func:`confirm_delete_messages` runs."""
    text = "Delete the selected message?" if count == 1 else (
        f"Delete the {plural(count, 'selected message')}?"
    )
    return _confirm_box(
        parent,
        "Delete messages" if count != 1 else "Delete message",
        text,
        f"You can undo this with {undo_keys()}.",
        "&Delete",
    )


def run_confirm(box: QMessageBox) -> bool:
    """Run a confirmation box; whether its destructive button was clicked."""
    try:
        box.exec()
        return box.clickedButton() is confirm_button(box)
    finally:
        box.deleteLater()


def confirm_clear(parent: QWidget | None, session_id: str, count: int) -> bool:
    """Ask before removing every message of a session (Cancel is the default)."""
    return run_confirm(clear_box(parent, session_id, count))


def confirm_delete_session(parent: QWidget | None, session_id: str, count: int) -> bool:
    """Ask before deleting a session and its messages (Cancel is the default)."""
    return run_confirm(delete_session_box(parent, session_id, count))


def confirm_delete_messages(parent: QWidget | None, count: int) -> bool:
    """Ask before deleting ``count`` selected messages (Cancel is the default)."""
    return run_confirm(delete_messages_box(parent, count))


def drop_unreadable_box(parent: QWidget | None, error: UnreadableItems, verb: str) -> QMessageBox:
    """The (not yet shown) box :func:`confirm_drop_unreadable` runs: ``verb`` ("fork",
    "copy", "import") refused because ``error.lost`` encrypted items of a session do not
    open, and would not open under its new id either."""
    total = error.lost + error.opened
    return _confirm_box(
        parent,
        "Encrypted items that do not open",
        f"{error.lost} of the {total} encrypted items of session "
        f"{display_id(error.session_id)} could not be opened.",
        f"Under a new id no key would ever open {'it' if error.lost == 1 else 'them'}: "
        f"{verb} the session without {'it' if error.lost == 1 else 'these'} "
        f"({plural(error.lost, 'item')} left out)? The original is not changed.",
        f"&{verb.capitalize()} Without {'It' if error.lost == 1 else 'Them'}",
    )


def confirm_drop_unreadable(parent: QWidget | None, error: UnreadableItems, verb: str) -> bool:
    """Ask before a fork, copy or import that leaves out the encrypted items no key opens
    (Cancel is the default)."""
    return run_confirm(drop_unreadable_box(parent, error, verb))
