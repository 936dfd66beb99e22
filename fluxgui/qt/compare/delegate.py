"""How a Compare row is painted: a header line (marker, label, usage) and, unless the
turn is closed, each side's messages in two columns — one compact block per message
(role colour bar, role, kind, its first lines). Everything goes through ``drawText``:
message text is never taken for markup, and only visible rows are painted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPalette,
    QPen,
    QTextOption,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from fluxgui.core.compare_rows import (
    MARKERS,
    Block,
    collapsed_label,
    turn_label,
    usage_text,
)
from fluxgui.core.diff import TurnDiff
from fluxgui.core.display import role_colour

from ..widgets import mix
from .model import ADDED_TINT, DIFF_TINT, REMOVED_TINT, TURN_ROLE

if TYPE_CHECKING:
    from .list_view import CompareList

_Index = QModelIndex | QPersistentModelIndex

MARK_W = 30  # the marker gutter at the left of every row
PAD = 6
GAP = 8  # between the two columns
BAR = 3


class CompareDelegate(QStyledItemDelegate):
    """Paints a row: a header line (marker, label, usage) and, unless collapsed, the two
    sides' message blocks in two columns. All text goes through ``drawText``."""

    def __init__(self, view: CompareList) -> None:
        super().__init__(view)
        self._view = view

    # -- metrics -------------------------------------------------------------------

    def _fm(self) -> QFontMetrics:
        return QFontMetrics(self._view.font())

    def line_height(self) -> int:
        return self._fm().height()

    def role_width(self) -> int:
        bold = QFont(self._view.font())
        bold.setBold(True)
        return QFontMetrics(bold).horizontalAdvance("assistant") + 10

    def block_height(self, block: Block) -> int:
        return len(block.lines) * self.line_height() + 6

    def side_height(self, blocks: list[Block]) -> int:
        if not blocks:
            return self.line_height() + 6
        return sum(self.block_height(b) for b in blocks) + 2 * (len(blocks) - 1)

    def header_height(self) -> int:
        return self.line_height() + 2 * PAD

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        width = max(200, self._view.viewport().width())
        if self._view.is_collapsed(index.row()):
            return QSize(width, self.header_height())
        a, b = self._view.model_().blocks(index.row())
        body = max(self.side_height(a), self.side_height(b))
        return QSize(width, self.header_height() + body + PAD)

    def columns(self, rect: QRect) -> tuple[QRect, QRect]:
        """The A and B cells of a row (their x range; the caller sets the height)."""
        left = rect.left() + MARK_W
        width = max(40, rect.right() - left - PAD - GAP)
        half = width // 2
        a = QRect(left, rect.top(), half, rect.height())
        b = QRect(left + half + GAP, rect.top(), width - half, rect.height())
        return a, b

    # -- painting ------------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        model = self._view.model_()
        t: TurnDiff = index.data(TURN_ROLE)
        if t is None:
            return
        pal = option.palette
        base = pal.color(QPalette.ColorRole.Base)
        dark = base.lightness() < 128
        text_colour = pal.color(QPalette.ColorRole.Text)
        muted = mix(base, text_colour, 0.55)
        rect = option.rect
        painter.save()
        painter.setClipRect(rect)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)

        # background: tint for a differing turn, a faint line between rows
        tint = index.data(Qt.ItemDataRole.BackgroundRole)
        if isinstance(tint, QColor):
            painter.fillRect(rect, mix(base, DIFF_TINT, 0.16 if dark else 0.09))
            painter.fillRect(QRect(rect.left(), rect.top(), 4, rect.height()), DIFF_TINT)
        painter.setPen(QPen(mix(base, text_colour, 0.12), 1))
        painter.drawLine(rect.bottomLeft(), rect.bottomRight())

        fm = self._fm()
        lh = fm.height()
        head = QRect(rect.left(), rect.top() + PAD, rect.width(), lh)

        # marker
        marker = MARKERS[t.status]
        big = QFont(option.font)
        big.setBold(True)
        painter.setFont(big)
        painter.setPen(
            DIFF_TINT.darker(130 if not dark else 90)
            if t.status == "differs"
            else (ADDED_TINT if t.status == "only_b" else REMOVED_TINT)
            if t.status != "same"
            else muted
        )
        painter.drawText(
            QRect(rect.left() + 4, head.top(), MARK_W - 6, lh), Qt.AlignmentFlag.AlignCenter, marker
        )

        # label (and, when collapsed, the user's words), usage on the right
        usage = usage_text(t)
        usage_w = fm.horizontalAdvance(usage) + PAD if usage else 0
        label_rect = QRect(rect.left() + MARK_W, head.top(), rect.width() - MARK_W - PAD - usage_w, lh)
        label = turn_label(t)
        bold = QFont(option.font)
        bold.setBold(t.status != "same")
        painter.setFont(bold)
        painter.setPen(text_colour if t.status != "same" else muted)
        collapsed = self._view.is_collapsed(index.row())
        if collapsed:
            label = collapsed_label(t)
        painter.drawText(
            label_rect,
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            QFontMetrics(bold).elidedText(label, Qt.TextElideMode.ElideRight, label_rect.width()),
        )
        if usage:
            painter.setFont(option.font)
            delta = t.token_delta
            painter.setPen(muted if not delta else text_colour)
            painter.drawText(
                QRect(rect.right() - usage_w - PAD, head.top(), usage_w, lh),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                usage,
            )

        if not collapsed:
            body = QRect(rect.left(), head.bottom() + PAD, rect.width(), rect.bottom() - head.bottom() - PAD)
            a_cell, b_cell = self.columns(body)
            a_blocks, b_blocks = model.blocks(index.row())
            self._paint_side(painter, option, a_cell, a_blocks, t.a is None, "A", t.number, dark)
            self._paint_side(painter, option, b_cell, b_blocks, t.b is None, "B", t.number, dark)

        if selected:
            pen = QPen(pal.color(QPalette.ColorRole.Highlight), 2)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(rect.adjusted(1, 1, -1, -1))
        painter.restore()

    def _paint_side(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        cell: QRect,
        blocks: list[Block],
        missing: bool,
        side: str,
        number: int,
        dark: bool,
    ) -> None:
        pal = option.palette
        base = pal.color(QPalette.ColorRole.Base)
        text_colour = pal.color(QPalette.ColorRole.Text)
        muted = mix(base, text_colour, 0.55)
        fm = self._fm()
        lh = fm.height()
        if missing:
            empty = QRect(cell.left(), cell.top(), cell.width(), self.side_height([]))
            painter.fillRect(empty, mix(base, text_colour, 0.05))
            painter.setPen(QPen(mix(base, text_colour, 0.18), 1, Qt.PenStyle.DashLine))
            painter.drawRect(empty.adjusted(0, 0, -1, -1))
            painter.setFont(option.font)
            painter.setPen(muted)
            painter.drawText(
                empty, Qt.AlignmentFlag.AlignCenter, f"no turn {number} in {side}"
            )
            return
        bold = QFont(option.font)
        bold.setBold(True)
        bold_fm = QFontMetrics(bold)
        role_w = self.role_width()
        y = cell.top()
        for block in blocks:
            h = self.block_height(block)
            box = QRect(cell.left(), y, cell.width(), h)
            if block.mark:
                colour = {"changed": DIFF_TINT, "added": ADDED_TINT, "removed": REMOVED_TINT}[block.mark]
                painter.fillRect(box, mix(base, colour, 0.34 if dark else 0.26))
            if block.role:
                painter.fillRect(QRect(box.left(), box.top(), BAR, h), QColor(role_colour(block.role, dark=dark)))
                painter.setFont(bold)
                painter.setPen(QColor(role_colour(block.role, dark=dark)))
                painter.drawText(
                    QRect(box.left() + BAR + 5, box.top() + 3, role_w - 6, lh),
                    Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                    bold_fm.elidedText(block.role, Qt.TextElideMode.ElideRight, role_w - 6),
                )
            x = box.left() + BAR + 5 + role_w
            width = max(10, box.right() - x - 4)
            painter.setFont(option.font)
            for k, line in enumerate(block.lines):
                line_rect = QRect(x, box.top() + 3 + k * lh, width, lh)
                if k == 0 and block.kind:
                    painter.setPen(muted)
                    prefix = f"{block.kind} · "
                    pw = min(fm.horizontalAdvance(prefix), width // 2)
                    painter.drawText(
                        QRect(line_rect.left(), line_rect.top(), pw, lh),
                        Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                        fm.elidedText(prefix, Qt.TextElideMode.ElideRight, pw),
                    )
                    line_rect.setLeft(line_rect.left() + pw)
                painter.setPen(text_colour if block.role else muted)
                _draw_line(painter, line_rect, fm.elidedText(line or " ", Qt.TextElideMode.ElideRight, line_rect.width()))
            y += h + 2


_LINE_OPTION = QTextOption(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
_LINE_OPTION.setWrapMode(QTextOption.WrapMode.NoWrap)
# Left to right whatever the data says: a line that opens with an override or with
# Hebrew must not flip the layout of the row. Right-to-left words still read right to
# left inside it, and one drawText per line ends any override with its line.
_LINE_OPTION.setTextDirection(Qt.LayoutDirection.LeftToRight)


def _draw_line(painter: QPainter, rect: QRect, text: str) -> None:
    painter.drawText(QRectF(rect), text, _LINE_OPTION)
