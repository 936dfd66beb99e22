"""The session list's cell painter: what Qt's own item delegate paints for a plain text
cell, pixel for pixel, for less when a row is painted again.

Every repaint of the list paints every visible cell again (a selection, a badge that
arrived, a scroll step). Qt's delegate asks the model for about ten roles per cell (each
a call into Python) and lays out and shapes the cell's text each time; the id column's
badges were a Python delegate on top of that. :class:`SessionCells` asks the table for
the text (:meth:`~fluxgui.qt.sessions.table.SessionTable.cell`), draws a text
the first time as it is, keeps it elided and then shaped (a prepared
:class:`QStaticText`) for the next paints, and draws the background and selection with
the style's own primitive. ``benchmarks/bench_ui.py`` prints the repaint of 30 rows next
to Qt's delegate alone (about 0.75x of it with texts kept, 1.2x with every text new). A
cell it does not draw the same way (an icon, the focused cell) goes to Qt's delegate.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QPointF, Qt
from PySide6.QtGui import QFontMetrics, QFontMetricsF, QPainter, QPalette, QStaticText
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from .table import SessionTable

_COUNT = SessionTable.COUNT
#: prepared texts kept (a few screens of cells); the cache starts again when full
CACHE_SIZE = 2048

_PANEL = QStyle.PrimitiveElement.PE_PanelItemViewItem
_FOCUS_MARGIN = QStyle.PixelMetric.PM_FocusFrameHMargin
# state bits as ints: an operation on Qt's flag enums costs more than painting a glyph
_SELECTED = QStyle.StateFlag.State_Selected.value
_ENABLED = QStyle.StateFlag.State_Enabled.value
_ACTIVE = QStyle.StateFlag.State_Active.value
_FOCUS = QStyle.StateFlag.State_HasFocus.value
_PLAIN = Qt.TextFormat.PlainText
_TEXT, _HIGHLIGHTED = QPalette.ColorRole.Text, QPalette.ColorRole.HighlightedText
_NORMAL, _INACTIVE, _DISABLED = (
    QPalette.ColorGroup.Normal, QPalette.ColorGroup.Inactive, QPalette.ColorGroup.Disabled,
)
#: the view's changes after which what was worked out from it is worked out again
_CHANGES = frozenset((QEvent.Type.FontChange, QEvent.Type.PaletteChange, QEvent.Type.StyleChange))


class SessionCells(QStyledItemDelegate):
    """Paints the cells of a :class:`SessionTable` view, ``parent`` (the id column's
    badge painter builds on it). The texts come from the table, not from ``index.data``;
    the font, palette and style are the view's, as in the options Qt gives a delegate
    (the table answers no font or colour role)."""

    def __init__(self, table: SessionTable, parent: QWidget) -> None:
        super().__init__(parent)
        self._table = table
        self._view = parent
        #: (text, width, elide mode) → (what is shown, its width) after one paint, its
        #: prepared QStaticText from the second on
        self._texts: dict[tuple[str, int, int], tuple[str, float] | QStaticText] = {}
        #: cells painted by the fast path (for tests)
        self.fast = 0
        self._look: tuple[Any, ...] | None = None
        parent.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if watched is self._view and event.type() in _CHANGES:
            self._look = None
            self._texts.clear()
        return False

    def _looks(self) -> tuple[Any, ...]:
        """(style, text margin, font, its height, its exact ascent, its metrics, exact and
        rounded, colours by group and selection) of the view, worked out once until it
        changes."""
        view = self._view
        style = view.style()
        font = view.font()
        metrics = QFontMetrics(font)
        palette = view.palette()
        colours = {
            (group, selected): palette.color(group, _HIGHLIGHTED if selected else _TEXT)
            for group in (_NORMAL, _INACTIVE, _DISABLED) for selected in (False, True)
        }
        # The text rectangle of Qt's item layout: the focus frame's margin and one pixel.
        margin = style.pixelMetric(_FOCUS_MARGIN, None, view) + 1
        exact = QFontMetricsF(font)
        self._look = (style, margin, font, metrics.height(), exact.ascent(), metrics, exact,
                      colours)
        return self._look

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        col = index.column()
        text, icon = self._table.cell(index.row(), col)
        state = option.state.value
        if text is None or icon or state & _FOCUS:  # (the focus frame: one cell per paint)
            super().paint(painter, option, index)
            return
        style, margin, font, height, ascent, metrics, exact, colours = self._look or self._looks()
        widget = option.widget
        style.drawPrimitive(_PANEL, option, painter, widget)
        rect = option.rect
        width = rect.width() - 2 * margin
        if width <= 0 or not text:
            return
        elide = option.textElideMode
        key = (text, width, elide.value)
        kept = self._texts.get(key)
        if kept is None:
            # A text painted for the first time (a page of rows just listed) is drawn as it
            # is: preparing a QStaticText costs twice as much, and pays only from the
            # second paint on. What it shows (elided or not) is kept for that.
            if len(self._texts) >= CACHE_SIZE:
                self._texts.clear()
            advance = exact.horizontalAdvance(text)
            if advance > width:
                text = metrics.elidedText(text, elide, width)
                advance = exact.horizontalAdvance(text)
            kept = self._texts[key] = (text, advance)
        elif isinstance(kept, tuple):  # painted again: prepared from now on
            static = QStaticText(kept[0])
            static.setTextFormat(_PLAIN)
            static.prepare(font=font)
            kept = self._texts[key] = static
        group = _NORMAL if state & _ENABLED else _DISABLED
        if group == _NORMAL and not state & _ACTIVE:
            group = _INACTIVE
        painter.save()
        painter.setFont(font)
        painter.setPen(colours[group, bool(state & _SELECTED)])
        top = rect.top() + (rect.height() - height) // 2
        if isinstance(kept, tuple):
            shown, advance = kept
            # at a fractional x, as Qt's own layout puts a right-aligned line
            x = rect.right() + 1 - margin - advance if col == _COUNT else rect.left() + margin
            painter.drawText(QPointF(x, top + ascent), shown)
        else:
            if col == _COUNT:  # right-aligned, as the table's alignment says
                x = rect.right() + 1 - margin - kept.size().width()
            else:
                x = rect.left() + margin
            painter.drawStaticText(QPointF(x, top), kept)
        painter.restore()
        self.fast += 1
