"""The chat panel (issue 7) in a dock on the window's right: hidden until View › Chat,
and opened again at start when the user left it open."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMainWindow

    from ..chat import ChatPanel

#: settings key: whether the chat dock was open when the user last showed or hid it
CHAT_VISIBLE = "ui/chat_visible"


class ChatDock:
    """The chat panel and its dock, put into ``window``; whether it was left open is
    remembered in ``settings``."""

    def __init__(self, window: QMainWindow, panel: ChatPanel, settings: QSettings) -> None:
        self._settings = settings
        self.panel = panel
        self.dock = QDockWidget("Chat", window)
        self.dock.setObjectName("chatDock")
        self.dock.setWidget(self.panel)
        self.dock.setAllowedAreas(
            Qt.DockWidgetArea.RightDockWidgetArea | Qt.DockWidgetArea.LeftDockWidgetArea
            | Qt.DockWidgetArea.BottomDockWidgetArea
        )
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.dock.hide()
        if self._was_visible():  # open as it was left
            self.dock.show()

    def _was_visible(self) -> bool:
        value = self._settings.value(CHAT_VISIBLE, False)
        return value is True or str(value).lower() == "true"

    def remember_visible(self, on: bool) -> None:
        """The user showed or hid the chat: the next window opens the same way."""
        settings = self._settings
        settings.setValue(CHAT_VISIBLE, bool(on))
        settings.sync()

    def show(self, on: bool = True) -> None:
        self.dock.setVisible(on)
        if on:
            self.panel.message.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def store_changed(self) -> None:
        """The window opened or reopened a store: the panel follows."""
        self.panel.store_changed()
