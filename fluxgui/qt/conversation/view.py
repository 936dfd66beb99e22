"""The conversation's list view: message cards scrolled by the pixel, a placeholder while
there are none, and the means to keep the reader's place when rows change above them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QPainter, QPalette
from PySide6.QtWidgets import QAbstractItemView, QListView, QWidget

from .delegate import RESIZE_MARGIN, MessageDelegate, plain_index
from .model import MESSAGE_ROLE


@dataclass
class Anchor:
    """The row at the top of the viewport and where its top was (or: at the bottom)."""

    index: QPersistentModelIndex
    top: int
    at_bottom: bool


class MessageListView(QListView):
    """The list of message cards: per-pixel scrolling, extended selection (Shift/Ctrl+click),
    keys for the pane."""

    #: Enter/Space on the current row
    toggleRequested = Signal(QModelIndex)
    #: Ctrl+C (False) or Ctrl+Shift+C (True)
    copyRequested = Signal(bool)
    #: Ctrl+End: the session's newest message (loading it when it is not loaded)
    endRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Always on: a scroll bar that comes and goes changes the width, so every height.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setUniformItemSizes(False)
        # Heights depend on the width: the pane re-lays out on resize, keeping its place.
        self.setResizeMode(QListView.ResizeMode.Fixed)
        self.setLayoutMode(QListView.LayoutMode.SinglePass)
        self.setMouseTracking(True)
        self.setFrameShape(QListView.Shape.NoFrame)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.viewport().setBackgroundRole(QPalette.ColorRole.Window)
        self.verticalScrollBar().setSingleStep(24)
        self._placeholder = ""

    # -- placeholder -------------------------------------------------------------------

    @property
    def placeholder(self) -> str:
        """The note shown while there are no rows ("Loading messages…", …)."""
        return self._placeholder

    def set_placeholder(self, text: str) -> None:
        self._placeholder = text
        self.viewport().update()

    def paintEvent(self, event: Any) -> None:
        super().paintEvent(event)
        model = self.model()
        if self._placeholder and (model is None or model.rowCount() == 0):
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
            rect = self.viewport().rect().adjusted(20, 20, -20, -20)
            painter.drawText(
                rect, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._placeholder
            )
            painter.end()

    # -- keeping one's place -----------------------------------------------------------

    def anchor(self) -> Anchor:
        """The row at the top of the viewport and where it is (to restore after a change)."""
        bar = self.verticalScrollBar()
        index = self.indexAt(QPoint(self.viewport().width() // 2, 1))
        if not index.isValid() and self.model() is not None and self.model().rowCount():
            index = self.model().index(0, 0)
        top = self.visualRect(index).top() if index.isValid() else 0
        at_bottom = bar.value() >= bar.maximum() > 0 or bar.maximum() == 0
        return Anchor(QPersistentModelIndex(index), top, at_bottom)

    def restore(self, anchor: Anchor) -> None:
        if anchor.at_bottom:
            self.scrollToBottom()
            return
        if anchor.index.isValid():
            index = plain_index(anchor.index)
            delta = self.visualRect(index).top() - anchor.top
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + delta)

    def relayout(self, *, keep: Anchor | None = None) -> None:
        """Lay out every row now (heights are cached) and keep the anchor in place."""
        anchor = keep or self.anchor()
        self.doItemsLayout()
        self.restore(anchor)

    def seen_ids(self, margin: int = 10) -> set[int]:
        """The ids of the messages in view (and ``margin`` rows after them)."""
        model = self.model()
        top = self.indexAt(QPoint(self.viewport().width() // 2, 1))
        bottom = self.indexAt(QPoint(self.viewport().width() // 2, self.viewport().height() - 2))
        if model is None or not top.isValid():
            return set()
        last = bottom.row() if bottom.isValid() else model.rowCount() - 1
        rows = range(max(0, top.row() - 1), min(model.rowCount(), last + 1 + margin))
        found = (model.index(r, 0).data(MESSAGE_ROLE) for r in rows)
        return {m.id for m in found if m is not None}

    def resizeEvent(self, event: Any) -> None:
        anchor = self.anchor()
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            # Only the cards in view are laid out now; the rest in the background, then
            # the place is kept once more.
            delegate = self.itemDelegate()
            if isinstance(delegate, MessageDelegate) and self.model() is not None:
                seen = self.seen_ids(RESIZE_MARGIN)
                if anchor.index.isValid():
                    seen.add(plain_index(anchor.index).data(MESSAGE_ROLE).id)
                delegate.begin_resize(seen, lambda: self._settle(anchor))
            self.relayout(keep=anchor)
        elif anchor.at_bottom:
            self.scrollToBottom()

    def _settle(self, anchor: Anchor) -> None:
        # Every row has its height at the new width: lay out once more, keeping the
        # place as the user had it when the resize began (unless they moved since).
        self.relayout(keep=self.anchor() if not anchor.index.isValid() else anchor)

    def changeEvent(self, event: QEvent) -> None:
        # The palette (light/dark) or font changed: documents are rebuilt in the new colours.
        super().changeEvent(event)
        if event.type() in (
            QEvent.Type.PaletteChange,
            QEvent.Type.FontChange,
            QEvent.Type.StyleChange,
        ):
            delegate = self.itemDelegate()
            if isinstance(delegate, MessageDelegate):
                delegate.refresh_theme()
                self.relayout()

    # -- keys ------------------------------------------------------------------------

    @staticmethod
    def _copy_kind(event: QKeyEvent) -> bool | None:
        """``False`` for Ctrl+C, ``True`` for Ctrl+Shift+C, ``None`` for any other key."""
        if event.matches(QKeySequence.StandardKey.Copy):
            return False
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if event.key() == Qt.Key.Key_C and mods == (
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        ):
            return True
        return None

    def event(self, event: QEvent) -> bool:
        # Take Ctrl+C / Ctrl+Shift+C before any window-wide shortcut does (as text
        # widgets do), so copying here copies the selected message.
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            if self._copy_kind(event) is not None:
                event.accept()
                return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        kind = self._copy_kind(event)
        if kind is not None:
            self.copyRequested.emit(kind)
            event.accept()
            return
        if event.key() == Qt.Key.Key_End and (
            event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        ) == Qt.KeyboardModifier.ControlModifier:
            self.endRequested.emit()
            event.accept()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) and not (
            event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        ):
            index = self.currentIndex()
            if index.isValid():
                self.toggleRequested.emit(index)
                event.accept()
                return
        super().keyPressEvent(event)
