"""When the window narrows (a side panel opens, a small screen, 2×) the conversation keeps
the width: the session list is held to a third of the panes and the inspector folds away
below :data:`FOLD_BELOW` — and comes back when there is room again (issue 37)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QSplitter

#: the conversation pane narrower than this folds its inspector away
FOLD_BELOW = 560
#: the inspector's share of a pane it comes back to (at most INSPECTOR px)
INSPECTOR = 280


def list_cap(width: int) -> int:
    """The widest the session list stays in panes ``width`` wide (the first-show rule of
    ``placement``: 32%, at most 380, at least 220 or a third)."""
    return min(380, max(width * 32 // 100, min(220, width // 3)))


class KeepConversationWide(QObject):
    """Watches the window's two splitters: ``panes`` (session list | conversation) and
    ``inner`` (messages | inspector)."""

    def __init__(self, panes: QSplitter, inner: QSplitter) -> None:
        super().__init__(panes)
        self._panes, self._inner = panes, inner
        self.folded = False  # the inspector folded by a narrow pane (not by the user)
        self._pending = [False, False]  # a look at (panes, inner) is queued
        panes.installEventFilter(self)
        inner.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize:
            # (the filter sees the event before the splitter lays out its panes: look
            # once it has, with the sizes it gave them)
            if watched is self._panes and not self._pending[0]:
                self._pending[0] = True
                QTimer.singleShot(0, self, self._cap_list)
            elif watched is self._inner and not self._pending[1]:
                self._pending[1] = True
                QTimer.singleShot(0, self, self._fold)
        return False

    def _cap_list(self) -> None:
        self._pending[0] = False
        sizes = self._panes.sizes()
        width = sum(sizes)
        if len(sizes) == 2 and width > 0 and sizes[0] > list_cap(width):
            pane = self._panes.widget(0)
            least = pane.minimumSizeHint().width() if pane is not None else 0
            first = max(list_cap(width), least)
            if first < sizes[0]:
                self._panes.setSizes([first, width - first])

    def _fold(self) -> None:
        self._pending[1] = False
        sizes = self._inner.sizes()
        width = sum(sizes)
        if len(sizes) != 2 or width <= 0:
            return
        inspector = self._inner.widget(1)
        if inspector is None:
            return
        if width < FOLD_BELOW and sizes[1] > 0:
            self.folded = True
            # folded, its minimum no longer counts in the window's (a splitter counts a
            # collapsed pane's minimum size hint)
            inspector.setMinimumWidth(1)
            self._inner.setSizes([width, 0])
        elif width >= FOLD_BELOW and self.folded:
            self.folded = False
            inspector.setMinimumWidth(0)  # its own minimum again
            side = min(INSPECTOR, width * 35 // 100)
            self._inner.setSizes([width - side, side])
