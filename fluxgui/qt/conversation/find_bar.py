"""The conversation's find bar (Ctrl+F in the conversation): a text, "n of m", previous and
next, Esc closes."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

PLACEHOLDER = "Find in this conversation"


class FindBar(QWidget):
    """A bar above the messages. Enter (or ▼) asks for the next hit, Shift+Enter (or ▲)
    for the previous one: :attr:`findRequested` ``(text, backward)``; Esc or ✕ hides it
    and emits :attr:`closed`. What was found is the pane's to say (:meth:`set_result`)."""

    findRequested = Signal(str, bool)
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 2, 10, 2)
        layout.setSpacing(4)
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText(PLACEHOLDER)
        self.edit.setClearButtonEnabled(True)
        self.edit.installEventFilter(self)
        self.edit.returnPressed.connect(lambda: self._ask(False))
        self.previous_button = QToolButton(self)
        self.previous_button.setText("▲")
        self.previous_button.setToolTip("Previous match (Shift+Enter, Shift+F3)")
        self.previous_button.clicked.connect(lambda _c=False: self._ask(True))
        self.next_button = QToolButton(self)
        self.next_button.setText("▼")
        self.next_button.setToolTip("Next match (Enter, F3)")
        self.next_button.clicked.connect(lambda _c=False: self._ask(False))
        self.result = QLabel(self)
        self.result.setTextFormat(Qt.TextFormat.PlainText)
        self.result.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.result.setMinimumWidth(self.fontMetrics().horizontalAdvance("999 of 9999") + 8)
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setToolTip("Close (Esc)")
        self.close_button.clicked.connect(lambda _c=False: self.dismiss())
        layout.addWidget(QLabel("Find:", self))
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.previous_button)
        layout.addWidget(self.next_button)
        layout.addWidget(self.result)
        layout.addWidget(self.close_button)
        self.hide()

    @property
    def text(self) -> str:
        return self.edit.text()

    def open(self, text: str | None = None) -> None:
        """Show the bar with the focus in its field (``text`` put in it when given)."""
        if text is not None:
            self.edit.setText(text)
        self.show()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()

    def dismiss(self) -> None:
        if self.isVisible():
            self.hide()
            self.closed.emit()

    def set_result(self, text: str) -> None:
        self.result.setText(text)

    def _ask(self, backward: bool) -> None:
        if self.edit.text():
            self.findRequested.emit(self.edit.text(), backward)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        if watched is self.edit and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            key = event.key()
            if key == Qt.Key.Key_Escape:
                self.dismiss()
                return True
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and shift:
                self._ask(True)
                return True
            if key == Qt.Key.Key_F3:
                self._ask(shift)
                return True
        return False
