"""The side panels (Review, Doctor, Chat) share one tabbed dock on the window's right, and
each is small enough that any combination fits a small screen (issue 37).

The conversation is the one view that stretches. A side panel's contents scroll inside a
minimum of :data:`SIDE_MIN` (they never set the window's minimum size: at 2× on a
1600×1000 screen a wide panel made the window 2,182 px wide, beyond the screen); the
panels are tabs of one dock, so opening the Doctor beside Review does not take the
conversation's width twice; a panel opened takes :func:`side_width` of the window, the
conversation keeping the most of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSize, Qt
from PySide6.QtWidgets import QDockWidget, QFrame, QScrollArea

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

#: the smallest a side panel gets (logical pixels); its contents scroll within it
SIDE_MIN = QSize(220, 140)
#: the width a side panel is opened at: this share of the window, at most WIDEST
SHARE = 30
WIDEST = 400


def side_width(window: QMainWindow) -> int:
    """The width a side panel opens at in ``window``: 30% of it, between the panel's
    minimum and :data:`WIDEST` — the conversation keeps the rest."""
    return max(SIDE_MIN.width(), min(WIDEST, window.width() * SHARE // 100))


def scrolling(dock: QDockWidget) -> QScrollArea:
    """Put ``dock``'s widget in a scroll area of minimum :data:`SIDE_MIN`: the widget
    keeps its own minimum size and scrolls when the dock is smaller."""
    inner = dock.widget()
    scroll = QScrollArea(dock)
    scroll.setObjectName(f"{dock.objectName()}Scroll")
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setWidgetResizable(True)
    scroll.setWidget(inner)
    scroll.setMinimumSize(SIDE_MIN)
    dock.setWidget(scroll)
    return scroll


class SideDocks(QObject):
    """``docks`` made one tab group on ``window``'s right; those in ``wrap`` get a
    scroll area (the others scroll themselves). Showing a panel brings its tab to the
    front at :func:`side_width`."""

    def __init__(self, window: QMainWindow, docks: Sequence[QDockWidget],
                 wrap: Sequence[QDockWidget] = ()) -> None:
        super().__init__(window)
        self._window = window
        self.docks = list(docks)
        for dock in wrap:
            scrolling(dock)
        for dock in self.docks:
            dock.setMinimumSize(SIDE_MIN)
            dock.toggleViewAction().toggled.connect(lambda on, d=dock: self._on_toggled(d, on))
        # Tabbed even when some were opened already (as left at the last quit): hidden
        # while grouped, shown again after — else they stay side by side and the window
        # grows by the second panel's width on the next launch.
        shown = [d for d in self.docks if not d.isHidden()]
        for dock in shown:
            dock.hide()
        first = self.docks[0]
        for dock in self.docks[1:]:
            window.tabifyDockWidget(first, dock)
        for dock in shown:
            dock.show()
        if shown:
            shown[0].raise_()

    def _on_toggled(self, dock: QDockWidget, on: bool) -> None:
        if on:
            self.bring_forward(dock)

    def bring_forward(self, dock: QDockWidget) -> None:
        """``dock`` just shown: its tab in front, the panels at :func:`side_width` unless
        another panel was already open (the user's width is kept)."""
        others = [d for d in self.docks if d is not dock and not d.isHidden()]
        dock.raise_()
        if not others:
            self._window.resizeDocks([dock], [side_width(self._window)], Qt.Orientation.Horizontal)
