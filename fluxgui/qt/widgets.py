"""The small widgets the window's panes share: the error bar, the notice bar, a label
that elides, and colour mixing."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QColor, QMouseEvent, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QMenu,
    QMenuBar,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QToolButton,
    QWidget,
)

from fluxgui.core.display import esc


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved towards ``b`` by ``t`` (0: a, 1: b), opaque."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        1.0,
    )


def close_button_style(name: str, colour: str) -> str:
    """The dismiss button of a light bar in the bar's own text colour: the bar stays
    light in a dark palette, where the palette's button text (light) would vanish."""
    return (
        f"#{name} QToolButton {{ color: {colour}; background: transparent; border: none;"
        " padding: 2px 6px; font-weight: bold; }"
        f"#{name} QToolButton:hover {{ background: rgba(0, 0, 0, 0.08); border-radius: 3px; }}"
    )


class ErrorBar(QFrame):
    """A dismissible red bar above the panes; its text is plain (data never becomes markup)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorBar")
        self.setStyleSheet(
            "#errorBar { background: #fdecea; border: 1px solid #f1aeb5; border-radius: 4px; }"
            "#errorBar QLabel { color: #842029; }"
            + close_button_style("errorBar", "#842029")
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        self._label = QLabel(self)
        self._label.setTextFormat(Qt.TextFormat.PlainText)
        self._label.setWordWrap(True)
        self._label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        #: the bar's one action (hidden unless :meth:`set_action` gave one)
        self.action_button = QPushButton(self)
        self.action_button.setObjectName("errorBarAction")
        self.action_button.setAutoDefault(False)
        self.action_button.clicked.connect(self._act)
        self.action_button.hide()
        self._action: Callable[[], object] | None = None
        close = QToolButton(self)
        close.setText("✕")
        close.setToolTip("Dismiss")
        close.setAutoRaise(True)
        close.clicked.connect(self.clear)
        layout.addWidget(self._label, 1)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        #: how the text is shown now (View › Redact: the window's ``ids.say``); the text
        #: as given is kept, to be shown again when that changes (:meth:`refresh`)
        self.shown: Callable[[str], str] = str
        self._raw = ""
        self.hide()

    def show_error(self, text: str) -> None:
        """Show ``text``; an action of the previous error goes (it was about that one)."""
        self.set_action(None)
        self._raw = text
        self._label.setText(self.shown(text))
        self.show()

    def refresh(self) -> None:
        """Show the error again the way text is shown now (Redact turned on or off)."""
        if self._raw:
            self._label.setText(self.shown(self._raw))

    def set_action(self, text: str | None, act: Callable[[], object] | None = None) -> None:
        """A button on the bar (``text``) that runs ``act``: what the user can do about
        the error shown ("Enter another key…"). ``None``: no button."""
        self._action = act if text else None
        self.action_button.setText(text or "")
        self.action_button.setVisible(bool(text))

    def _act(self) -> None:
        act = self._action
        if act is not None:
            act()

    def clear(self) -> None:
        self.set_action(None)
        self._raw = ""
        self._label.clear()
        self.hide()

    def text(self) -> str:
        return self._label.text()


class ElidedLabel(QLabel):
    """One line of plain text, elided to the width it gets (at the right unless another
    ``mode`` is given); it never widens the window.

    :meth:`set_full_text` puts any text on one line and, with ``tooltip``, shows it whole
    in the tooltip (escaped: the text is data, the tooltip is rich text we write).
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        text: str = "",
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
    ) -> None:
        super().__init__(parent)
        self._mode = mode
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(40)
        if text:
            self.set_full_text(text)

    def elide_mode(self) -> Qt.TextElideMode:
        return self._mode

    def set_elide_mode(self, mode: Qt.TextElideMode) -> None:
        """Where the text is cut when it does not fit (right, middle, left)."""
        self._mode = mode
        self.update()

    def full_text(self) -> str:
        """The whole text (what is painted, before eliding)."""
        return self.text()

    def set_full_text(self, text: str, *, tooltip: bool = True) -> None:
        """Show ``text`` on one line (runs of white space as one space) and, with
        ``tooltip``, whole (line breaks kept) in the tooltip."""
        self.setText(" ".join(text.split()))
        if tooltip:
            self.setToolTip("<p style='white-space:pre-wrap'>" + esc(text) + "</p>" if text else "")

    def shown_text(self) -> str:
        """The text as it is painted now (elided to the label's width)."""
        return self.fontMetrics().elidedText(
            self.text(), self._mode, max(0, self.contentsRect().width())
        )

    def paintEvent(self, _event: object) -> None:  # noqa: N802 - Qt's name
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.drawText(
            self.contentsRect(),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            self.shown_text(),
        )
        painter.end()


class NoticeBar(QFrame):
    """A yellow bar above the panes: one plain-text notice (elided to one line when
    ``one_line``), an optional action button and a dismiss button."""

    def __init__(
        self,
        name: str,
        parent: QWidget | None = None,
        *,
        button: str | None = None,
        one_line: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setStyleSheet(
            f"#{name} {{ background: #fff3cd; border: 1px solid #ffe69c; border-radius: 4px; }}"
            f"#{name} QLabel {{ color: #664d03; }}"
            + close_button_style(name, "#664d03")
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 4, 6, 4)
        if one_line:
            self.label: QLabel = ElidedLabel(self)
        else:
            self.label = QLabel(self)
            self.label.setTextFormat(Qt.TextFormat.PlainText)
            self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.button: QPushButton | None = None
        if button is not None:
            self.button = QPushButton(button, self)
            self.button.setAutoDefault(False)
            layout.addWidget(self.button, 0)
        close = QToolButton(self)
        close.setText("✕")
        close.setToolTip("Dismiss")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide)
        self.close_button = close
        layout.addWidget(close, 0)
        self.hide()

    def show_notice(self, text: str, tooltip: str = "") -> None:
        self.label.setText(text)
        self.label.setToolTip(tooltip)
        self.show()

    def text(self) -> str:
        return self.label.text()


class _CheckLabel(QLabel):
    """The text of a :func:`wrapped_check`: a click on it clicks the check box."""

    def __init__(self, text: str, check: QCheckBox) -> None:
        super().__init__(text, check.parentWidget())
        self._check = check
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setBuddy(check)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt's name
        if event.button() == Qt.MouseButton.LeftButton and self._check.isEnabled() \
                and self.rect().contains(event.position().toPoint()):
            self._check.click()
        super().mouseReleaseEvent(event)


def wrapped_check(check: QCheckBox, text: str) -> QWidget:
    """``check`` (given no text of its own) with ``text`` beside it as a label that wraps:
    a check box's own text never wraps, so a sentence would widen a narrow panel. A click
    on the text clicks the box; the box's accessible name is the text."""
    row = QWidget(check.parentWidget())
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    check.setText("")
    check.setAccessibleName(text)
    label = _CheckLabel(text, check)
    label.setParent(row)
    layout.addWidget(check, 0, Qt.AlignmentFlag.AlignTop)
    layout.addWidget(label, 1)
    return row


def insert_beside(anchor: QWidget, widget: QWidget, offset: int = 0) -> None:
    """Put ``widget`` in ``anchor``'s layout just before it (``offset`` 1: just after)."""
    parent = anchor.parentWidget()
    layout = parent.layout() if parent is not None else None
    if not isinstance(layout, QBoxLayout):
        raise TypeError("the anchor is not in a box layout")
    layout.insertWidget(layout.indexOf(anchor) + offset, widget)


def put_after(bar: QMenuBar, anchor: QAction | None, action: QAction) -> None:
    """Put ``action`` right after ``anchor`` in the menu of ``bar`` that holds it."""
    for top in bar.actions():
        menu = top.menu()
        if isinstance(menu, QMenu) and anchor is not None and anchor in menu.actions():
            following = menu.actions()[menu.actions().index(anchor) + 1:]
            if following:
                menu.insertAction(following[0], action)
            else:
                menu.addAction(action)
            return


def session_table(view: QTableView, selection: QAbstractItemView.SelectionMode) -> None:
    """A table of sessions as the window's lists show them: whole rows selected, read
    only, no grid, one line a row; ids differ at their end (a counter, a timestamp), so
    a long one loses its start (the whole id is in the tooltip)."""
    view.setShowGrid(False)
    view.setWordWrap(False)
    view.setAlternatingRowColors(True)
    view.setSelectionMode(selection)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setTextElideMode(Qt.TextElideMode.ElideLeft)
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)


def stack(
    parent: QWidget, margins: tuple[int, int, int, int], spacing: int,
    *parts: QWidget | QLayout | tuple[QWidget, int],
) -> QVBoxLayout:
    """``parent``'s layout: ``parts`` one under the other (a ``(widget, stretch)`` pair
    takes a share of the height), with these margins and spacing."""
    layout = QVBoxLayout(parent)
    layout.setContentsMargins(*margins)
    layout.setSpacing(spacing)
    for part in parts:
        if isinstance(part, tuple):
            layout.addWidget(*part)
        elif isinstance(part, QLayout):
            layout.addLayout(part)
        else:
            layout.addWidget(part)
    return layout
