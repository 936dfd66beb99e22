"""Ctrl+Return in the chat's message box sends the message."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent


class SendKeys(QObject):
    """Ctrl+Return (or Ctrl+Enter) in the watched box calls ``send`` — and is not taken
    by the window's action on the same keys (Insert Message)."""

    def __init__(self, parent: QObject, send: Callable[[], object]) -> None:
        super().__init__(parent)
        self._send = send

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and isinstance(
            event, QKeyEvent
        ):
            mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and (
                mods == Qt.KeyboardModifier.ControlModifier
            ):
                if kind == QEvent.Type.ShortcutOverride:
                    event.accept()  # ours, not a shortcut's
                else:
                    self._send()
                return True
        return False
