"""The Compare view's list: which identical turns are opened, keys to open them."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QListView, QWidget

from .model import CompareModel


class CompareList(QListView):
    """The rows; knows which identical turns are opened."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.opened: set[int] = set()  # rows of identical turns shown in full
        self.show_same = False
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setUniformItemSizes(False)
        self.setMouseTracking(False)
        self.doubleClicked.connect(lambda index: self.toggle(index.row()))

    def model_(self) -> CompareModel:
        model = self.model()
        assert isinstance(model, CompareModel)
        return model

    def is_collapsed(self, row: int) -> bool:
        model = self.model_()
        if not 0 <= row < model.rowCount():
            return False
        return model.turn(row).same and not self.show_same and row not in self.opened

    def toggle(self, row: int) -> None:
        """Open or close an identical turn."""
        model = self.model_()
        if not 0 <= row < model.rowCount() or not model.turn(row).same:
            return
        self.opened.symmetric_difference_update({row})
        self._relayout()

    def set_show_same(self, show: bool) -> None:
        self.show_same = show
        self._relayout()

    def _relayout(self) -> None:
        # Heights changed. QListView asks every row's sizeHint on its next layout pass
        # anyway: one pass, not a sizeHintChanged per row (each of those relays out).
        self.scheduleDelayedItemsLayout()

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            current = self.currentIndex()
            if current.isValid():
                self.toggle(current.row())
                return
        super().keyPressEvent(event)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.scheduleDelayedItemsLayout()
