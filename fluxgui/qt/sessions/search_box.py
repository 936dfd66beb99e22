"""The session search box: a line edit that asks for a search once typing pauses."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLineEdit, QWidget

PLACEHOLDER = "Search sessions and messages (Ctrl+F)"
#: how long typing must pause before a search is requested
DEBOUNCE_MS = 250


class SearchBox(QLineEdit):
    """A search field with a clear button that emits :attr:`searchRequested` once the
    user stops typing for ``delay_ms`` (a single-shot timer restarted on every edit).

    Return searches at once and, as ↓ does, asks for the focus to move into the results
    (:attr:`leaveRequested`); clearing the field (Escape, the clear button, or deleting
    everything) asks at once for "" (back to the full list). The same text is never
    requested twice in a row. The box knows nothing about models: connect
    ``searchRequested`` to ``SessionListModel.set_search``.
    """

    #: the text to search for ("" means: no search)
    searchRequested = Signal(str)
    #: ↓ or Enter: the focus should move into the results
    leaveRequested = Signal()

    def __init__(self, parent: QWidget | None = None, *, delay_ms: int = DEBOUNCE_MS) -> None:
        super().__init__(parent)
        self.setPlaceholderText(PLACEHOLDER)
        self.setClearButtonEnabled(True)
        self._requested = ""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.flush)
        self.textChanged.connect(self._on_text_changed)
        self.returnPressed.connect(self._on_return)

    @property
    def pending(self) -> bool:
        """An edit is waiting for the pause that will request its search."""
        return self._timer.isActive()

    @property
    def requested_text(self) -> str:
        """The text last requested ("" at first)."""
        return self._requested

    def flush(self) -> None:
        """Request the search for the current text now (if it is not the last one)."""
        self._timer.stop()
        text = self.text()
        if text != self._requested:
            self._requested = text
            self.searchRequested.emit(text)

    def _on_return(self) -> None:
        self.flush()
        self.leaveRequested.emit()

    def _on_text_changed(self, text: str) -> None:
        if not text:
            self.flush()  # cleared: show everything again without waiting
        else:
            self._timer.start()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        if event.key() == Qt.Key.Key_Escape and self.text():
            self.clear()
            event.accept()
            return
        if event.key() == Qt.Key.Key_Down and not event.modifiers():
            self.flush()
            self.leaveRequested.emit()
            event.accept()
            return
        super().keyPressEvent(event)
