"""The password prompt: the password of a URL, asked for when the keyring has none."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from ..screen_fit import fit_to_screen
from .buttons import ok_cancel
from .keyring_state import ask_keyring_available
from .url_view import UrlView


class PasswordDialog(QDialog):
    """Asks for the password of a URL (shown with ``***``, as plain text).

    ``offer_remember``: whether to offer "Remember password in the system keyring";
    ``None`` offers it once the keyring says it can take one (asked off the UI thread
    when the answer could wait). ``secret`` names what is asked ("API key" for a
    server's key): the title, the label and the offer say it."""

    def __init__(
        self,
        parent: QWidget | None,
        display_url: str,
        *,
        offer_remember: bool | None = False,
        secret: str = "password",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{secret[:1].upper()}{secret[1:]} needed")
        self.setModal(True)
        label = QLabel(f"&{secret[:1].upper()}{secret[1:]} for", self)
        self.url_field = UrlView(self)  # a URL is data: plain text, never markup
        self.url_field.setText(display_url)
        self.password_edit = QLineEdit(self)
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        label.setBuddy(self.password_edit)
        self.remember_check = QCheckBox(f"Remember {secret} in the system keyring", self)
        self._offer_remember = False
        self._set_offer(False)
        buttons = ok_cancel(self)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.url_field)
        layout.addWidget(self.password_edit)
        layout.addWidget(self.remember_check)
        layout.addWidget(buttons)
        self.setMinimumWidth(420)
        if offer_remember is None:
            ask_keyring_available(self, self._set_offer)
        else:
            self._set_offer(offer_remember)
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def _set_offer(self, offer: bool) -> None:
        self._offer_remember = offer
        self.remember_check.setVisible(offer)

    def password(self) -> str:
        return self.password_edit.text()

    def remember_password(self) -> bool:
        return self._offer_remember and self.remember_check.isChecked()


def password_prompt(parent: QWidget | None, display_url: str) -> str | None:
    """Ask for the password of ``display_url``; ``None`` when cancelled. Used when the
    keyring has none (or there is no keyring): the user is asked each time."""
    dialog = PasswordDialog(parent, display_url)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.password()
    finally:
        dialog.deleteLater()
