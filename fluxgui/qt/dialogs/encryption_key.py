"""The encryption key of an Agents SDK ``EncryptedSession`` store, asked for in a dialog.

The key typed here goes to :meth:`fluxgui.qt.window.store_controller.StoreController.open_target` and lives in
the window's memory while the store is open: never in the settings, the recent stores or
the keyring. The TTL decides which items count as expired: the library stops returning
items older than it; fluxgui shows them, marked "expired".
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from fluxgui.adapters.registry import DEFAULT_TTL

from ..screen_fit import fit_to_screen
from .buttons import ok_cancel

#: the longest TTL the spin box takes (a QSpinBox holds a C int)
MAX_TTL = 2**31 - 1


class KeyDialog(QDialog):
    """A password-echo field for the master key and a TTL spin box (seconds); OK stays
    disabled while the key is empty."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        where: str = "",
        ttl: int = DEFAULT_TTL,
        keys_in_use: int = 0,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Encryption key" if not keys_in_use else "Add an encryption key")
        more = (
            f"\nThis key is added to the {keys_in_use} already given"
            if keys_in_use > 1
            else "\nThis key is added to the one already given"
            if keys_in_use
            else ""
        )
        intro = QLabel(
            "The encryption_key the sessions were written with "
            "(Agents SDK EncryptedSession)."
            + (more + ": each session is read with whichever key opens it." if more else "")
            + (f"\nStore: {where}" if where else ""),
            self,
        )
        intro.setTextFormat(Qt.TextFormat.PlainText)  # the store's name is data
        intro.setWordWrap(True)
        self.intro = intro

        self.key_edit = QLineEdit(self)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("master key")
        # Not in any input-method history or autofill either.
        self.key_edit.setInputMethodHints(
            Qt.InputMethodHint.ImhHiddenText | Qt.InputMethodHint.ImhSensitiveData
            | Qt.InputMethodHint.ImhNoPredictiveText
        )
        self.show_check = QCheckBox("Show", self)
        self.show_check.toggled.connect(self._on_show)

        self.ttl_spin = QSpinBox(self)
        self.ttl_spin.setRange(1, MAX_TTL)
        self.ttl_spin.setSuffix(" s")
        self.ttl_spin.setValue(max(1, int(ttl)))
        self.ttl_spin.setToolTip(
            "Items older than this show as expired: the Agents SDK no longer returns them"
        )
        ttl_note = QLabel("items older than this show as expired", self)
        ttl_note.setTextFormat(Qt.TextFormat.PlainText)
        ttl_note.setForegroundRole(self.palette().ColorRole.PlaceholderText)

        note = QLabel("The key is kept in memory while the store is open; it is never saved.", self)
        note.setTextFormat(Qt.TextFormat.PlainText)
        note.setWordWrap(True)
        note.setForegroundRole(self.palette().ColorRole.PlaceholderText)

        form = QFormLayout()
        key_row = QWidget(self)
        key_layout = QHBoxLayout(key_row)
        key_layout.setContentsMargins(0, 0, 0, 0)
        key_layout.addWidget(self.key_edit, 1)
        key_layout.addWidget(self.show_check)
        form.addRow("&Key:", key_row)
        label = form.labelForField(key_row)
        if isinstance(label, QLabel):
            label.setBuddy(self.key_edit)
        form.addRow("&TTL:", self.ttl_spin)
        form.addRow("", ttl_note)

        self.buttons = ok_cancel(self)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(note)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(440)

        self.key_edit.textChanged.connect(self._update)
        self._update()
        self.key_edit.setFocus(Qt.FocusReason.OtherFocusReason)
        fit_to_screen(self)  # never larger than its screen (issue 37)

    @property
    def ok_button(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Ok)

    def key(self) -> str:
        return self.key_edit.text()

    def ttl(self) -> int:
        return int(self.ttl_spin.value())

    def _on_show(self, on: bool) -> None:
        self.key_edit.setEchoMode(
            QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password
        )

    def _update(self, *_: object) -> None:
        self.ok_button.setEnabled(bool(self.key_edit.text()))

    def accept(self) -> None:
        if self.key_edit.text():  # Enter in an empty field must not get through
            super().accept()

    def forget(self) -> None:
        """Clear the typed key (once the caller has taken it)."""
        self.key_edit.clear()
