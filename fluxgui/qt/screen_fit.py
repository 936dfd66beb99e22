"""Dialogs that fit the screen they open on (issue 37): at 2× on a small laptop a dialog
laid out for a big monitor was cut off, its buttons below the screen's edge.

:func:`fit_to_screen` is called once by every dialog of the window (a test checks each):
whenever the dialog is shown, it is made no larger than the available geometry of its
screen (the screen without its panels and docks; the window frame counted when known)
and moved inside it. Its contents may be squeezed below their preferred size — the
scrolling parts scroll — but OK and Cancel stay on screen.
"""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

W = TypeVar("W", bound=QWidget)

#: what a window manager's frame takes when it is not known yet (before the first show)
FRAME = QSize(16, 48)


def available(widget: QWidget) -> QRect:
    """The available geometry of ``widget``'s screen (its parent's, or the primary one)."""
    parent = widget.parentWidget()
    screen = widget.screen() or (parent.screen() if parent is not None else None) or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1024, 768)


def room(widget: QWidget, area: QRect | None = None) -> QSize:
    """The largest size ``widget``'s client area may take on its screen."""
    area = area if area is not None else available(widget)
    frame = widget.frameGeometry().size() - widget.geometry().size()
    if (frame.width() <= 0 or frame.height() <= 0) and QGuiApplication.platformName() not in ("offscreen", "minimal"):
        frame = FRAME  # not known before the first show: a typical border and title bar
    return (area.size() - frame).expandedTo(QSize(1, 1))


def bound(widget: QWidget) -> None:
    """Make ``widget`` (a top-level dialog) fit its screen now: its minimum and size no
    larger than :func:`room`, its frame inside the available geometry."""
    area = available(widget)
    limit = room(widget, area)
    hint = widget.minimumSizeHint()
    least = widget.minimumSize().expandedTo(hint if hint.isValid() else QSize(0, 0))
    if least.width() > limit.width() or least.height() > limit.height():
        # an explicit minimum within the screen (the layout's own may be larger)
        widget.setMinimumSize(least.boundedTo(limit))
    widget.setMaximumSize(widget.maximumSize().boundedTo(limit))
    if widget.width() > limit.width() or widget.height() > limit.height():
        widget.resize(widget.size().boundedTo(limit))
    frame = widget.frameGeometry()
    extra = frame.size() - widget.geometry().size()
    outer = QRect(frame.topLeft(), widget.size() + extra)
    if not area.contains(outer):
        x = min(max(outer.left(), area.left()), area.right() + 1 - outer.width())
        y = min(max(outer.top(), area.top()), area.bottom() + 1 - outer.height())
        widget.move(QPoint(max(x, area.left()), max(y, area.top())))


class _Fit(QObject):
    """Bounds its dialog each time the dialog is shown, and when it is made larger than
    its screen while shown (a message box fixes its own size in its ``showEvent``, after
    this filter saw the show)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if not isinstance(watched, QWidget) or not watched.isWindow():
            return False
        kind = event.type()
        if kind == QEvent.Type.Show or kind == QEvent.Type.Resize and watched.isVisible() and not fits(watched):
            bound(watched)
        return False


def fit_to_screen(dialog: W) -> W:
    """Keep ``dialog`` within the available geometry of its screen each time it shows
    (call once, in its constructor); returns it."""
    if dialog.findChild(_Fit, "screenFit") is None:
        fit = _Fit(dialog)
        fit.setObjectName("screenFit")
        dialog.installEventFilter(fit)
    return dialog


def fits(widget: QWidget) -> bool:
    """Whether ``widget``'s frame lies inside the available geometry of its screen."""
    frame = widget.frameGeometry()
    return available(widget).contains(QRect(frame.topLeft(), frame.size()))
