"""Where the main window goes: a size that fits the screen, and the last one restored.

The first window is 1200×800 logical pixels, or less when the screen's available area
(the screen without its panels and docks) is smaller — at 2× scale a 1600×1000 screen
offers 800×500, and the window (status bar included) must fit in it. The geometry is
saved when the window closes and restored the next time, clamped to the available area
of the screen it lands on: a window saved on a big monitor and restored on a laptop is
made to fit and moved on screen, never left partly off it.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QEvent, QObject, QRect, QSize
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QMainWindow, QSplitter

#: settings key: the window's geometry when it was last closed (Qt's saveGeometry bytes)
GEOMETRY = "ui/geometry"
#: the size of a first window when the screen has room for it
DEFAULT = QSize(1200, 800)
#: the share of the available area a first window takes at most
SHARE = 0.92


def available_area(window: QMainWindow) -> QRect:
    """The available geometry of the window's screen (or the primary one)."""
    screen: QScreen | None = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1200, 800)


def first_size(area: QRect) -> QSize:
    """:data:`DEFAULT`, or less so that it fits in ``area``."""
    return QSize(
        min(DEFAULT.width(), int(area.width() * SHARE)),
        min(DEFAULT.height(), int(area.height() * SHARE)),
    )


def clamp(frame: QRect, area: QRect) -> QRect:
    """``frame`` made no larger than ``area`` and moved inside it."""
    width, height = min(frame.width(), area.width()), min(frame.height(), area.height())
    left = min(max(frame.left(), area.left()), area.left() + area.width() - width)
    top = min(max(frame.top(), area.top()), area.top() + area.height() - height)
    return QRect(left, top, width, height)


class WindowPlacement(QObject):
    """Sizes ``window`` to fit its screen now, restores the saved geometry (clamped) and
    saves it again when the window closes. ``settings`` is a ``QSettings``."""

    def __init__(self, window: QMainWindow, settings: object) -> None:
        super().__init__(window)
        self._window = window
        self._settings = settings
        self._split: QSplitter | None = None
        self.restore()
        window.installEventFilter(self)

    def restore(self) -> None:
        window = self._window
        area = available_area(window)
        saved = self._settings.value(GEOMETRY)  # type: ignore[attr-defined]
        if isinstance(saved, QByteArray) and not saved.isEmpty() and window.restoreGeometry(saved):
            area = available_area(window)  # the screen it was restored on
            restored = window.geometry()
            geometry = clamp(restored, area)
            if geometry == restored:
                return  # Qt put it back where it was: touch nothing (see below)
            window.resize(geometry.size())
            # move() places the *frame* (title bar included) while geometry() is the
            # client area: moving the frame to the client's corner pushed the window
            # down by its title bar on every launch (issue 37). Shift the frame by
            # what the client area must move instead.
            window.move(window.pos() + (geometry.topLeft() - restored.topLeft()))
            return
        size = first_size(area)
        window.resize(size)
        window.move(area.left() + (area.width() - size.width()) // 2,
                    area.top() + (area.height() - size.height()) // 2)

    def fit(self) -> None:
        """Make the window fit its screen's available area (after a screen change)."""
        geometry = clamp(self._window.frameGeometry(), available_area(self._window))
        if geometry.size() != self._window.frameGeometry().size():
            self._window.resize(self._window.size().boundedTo(geometry.size()))

    def split_on_show(self, splitter: QSplitter) -> None:
        """When the window is first shown, give the first pane of ``splitter`` (the session
        list) 32% of the width, at most 380 px and at least 220 (or a third): the
        conversation keeps the most of a small window (2× scale); a narrow list hides
        its columns before its ids (``session_list.NarrowColumns``)."""
        self._split = splitter

    def _first_show(self) -> None:
        splitter, self._split = self._split, None
        if splitter is None:
            return
        width = max(splitter.width(), self._window.width() - 20, 400)
        first = min(380, max(width * 32 // 100, min(220, width // 3)))
        splitter.setSizes([first, width - first])

    def save(self) -> None:
        self._settings.setValue(GEOMETRY, self._window.saveGeometry())  # type: ignore[attr-defined]

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self._window and event.type() == QEvent.Type.Close:
            self.save()
        elif watched is self._window and event.type() == QEvent.Type.Show and self._split:
            self._first_show()
        return False
