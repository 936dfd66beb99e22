"""The button row every form dialog ends with: its accept button and Cancel."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox

StandardButton = QDialogButtonBox.StandardButton


def ok_cancel(
    dialog: QDialog, ok: StandardButton = StandardButton.Ok, text: str | None = None
) -> QDialogButtonBox:
    """``ok`` (Ok, Open, Save…) and Cancel, wired to the dialog's accept and reject;
    ``text`` renames the ``ok`` button ("Export")."""
    box = QDialogButtonBox(ok | StandardButton.Cancel, dialog)
    if text is not None:
        box.button(ok).setText(text)
    box.accepted.connect(dialog.accept)
    box.rejected.connect(dialog.reject)
    return box
