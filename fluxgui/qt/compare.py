"""Compare view: two sessions (or branches) side by side, aligned turn by turn.

:class:`CompareView` loads a :class:`~fluxgui.core.diff.Comparison` through the
:class:`~fluxgui.qt.bridge.AsyncBridge` (under its own key, so a new comparison cancels
the one still loading) and shows one row per aligned turn in a :class:`QListView` over
a thin :class:`CompareModel`. :class:`CompareDelegate` paints each row: the turn's
messages of A on the left and of B on the right, one compact block per message (role
colour bar, role, kind, the first lines of its text). A turn that differs gets a tinted
background, a ``≠`` marker and a "Turn N differs" label, its changed messages a stronger
tint; an identical turn is one line until opened; a turn only one side has is shown
against an empty cell. Everything is painted with ``drawText`` — message text is never
taken for markup — and only visible rows are painted, so a few hundred turns stay fast.

F7 / Shift+F7 (and the buttons) go to the next / previous turn that is not the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QFontMetrics,
    QKeySequence,
    QPainter,
    QPalette,
    QPen,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.diff import Comparison, Side, TurnDiff
from fluxgui.core.model import Message
from fluxgui.services.compare import compare_sessions

from .bridge import AsyncBridge
from .render import esc, kind_label, role_colour

_Index = QModelIndex | QPersistentModelIndex

TURN_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2
MARKER_ROLE = Qt.ItemDataRole.UserRole + 3
USAGE_ROLE = Qt.ItemDataRole.UserRole + 4
HIGHLIGHT_ROLE = Qt.ItemDataRole.UserRole + 5

MARKERS = {"same": "=", "differs": "≠", "only_a": "−", "only_b": "+"}
#: text lines shown per message (its first non-blank lines)
TEXT_LINES = 2
#: messages shown per side of one turn before "… N more"
MAX_SHOWN = 40
#: characters of one line kept before eliding (eliding a megabyte line is slow)
LINE_CHARS = 400

DIFF_TINT = QColor("#f59e0b")  # amber: a turn (or message) that differs
ADDED_TINT = QColor("#16a34a")  # only in B
REMOVED_TINT = QColor("#dc2626")  # only in A

# control characters draw as boxes or nothing; a line separator would break the row
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def text_lines(text: str, n: int = TEXT_LINES) -> list[str]:
    """The first ``n`` non-blank lines of ``text``, one line each, control characters as
    ``\ufffd`` and cut to :data:`LINE_CHARS`; ``[""]`` for blank text."""
    out: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        line = _CONTROLS.sub("\ufffd", line.replace("\t", "    ").rstrip())
        out.append(line[:LINE_CHARS])
        if len(out) == n:
            break
    return out or [""]


def usage_text(t: TurnDiff) -> str:
    """``"tokens A 120 · B 350 (+230)"``; ``""`` when neither side knows the turn's usage."""
    if t.tokens_a is None and t.tokens_b is None:
        return ""
    a = "?" if t.tokens_a is None else f"{t.tokens_a:,}"
    b = "?" if t.tokens_b is None else f"{t.tokens_b:,}"
    delta = t.token_delta
    return f"tokens A {a} · B {b}" + ("" if delta is None else f" ({delta:+,})")


def turn_label(t: TurnDiff) -> str:
    return {
        "same": f"Turn {t.number} — same on both sides",
        "differs": f"Turn {t.number} differs",
        "only_a": f"Turn {t.number} — only in A",
        "only_b": f"Turn {t.number} — only in B",
    }[t.status]


@dataclass
class Block:
    """One message as a row shows it."""

    role: str
    kind: str  # "" for a plain message
    lines: list[str]
    mark: str  # "" same, "changed", "added", "removed"


# =========================================================================== model


class CompareModel(QAbstractListModel):
    """One row per aligned turn of a :class:`Comparison`.

    ``DisplayRole`` is the row's label ("Turn 2 differs"), ``TURN_ROLE`` the
    :class:`~fluxgui.core.diff.TurnDiff`, ``STATUS_ROLE`` its status, ``MARKER_ROLE``
    ``= ≠ − +``, ``HIGHLIGHT_ROLE`` whether the turn differs on both sides,
    ``BackgroundRole`` the tint of a differing turn, ``USAGE_ROLE`` its token usage text.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._comparison: Comparison | None = None
        self._turns: list[TurnDiff] = []
        self._blocks: dict[int, tuple[list[Block], list[Block]]] = {}
        self._tint = QColor(DIFF_TINT)
        self._tint.setAlpha(46)

    @property
    def comparison(self) -> Comparison | None:
        return self._comparison

    def set_comparison(self, comparison: Comparison | None) -> None:
        self.beginResetModel()
        self._comparison = comparison
        self._turns = list(comparison.turns) if comparison is not None else []
        self._blocks.clear()
        self.endResetModel()

    def turn(self, row: int) -> TurnDiff:
        return self._turns[row]

    def row_of(self, number: int) -> int:
        """The row of turn ``number`` (-1 when there is none)."""
        return next((i for i, t in enumerate(self._turns) if t.number == number), -1)

    def blocks(self, row: int) -> tuple[list[Block], list[Block]]:
        """The message blocks of A and of B for one row (built once, on first paint)."""
        found = self._blocks.get(row)
        if found is None:
            t = self._turns[row]
            found = (
                _blocks(t.messages_a, t.changed_in_a(), "removed", t),
                _blocks(t.messages_b, t.changed_in_b(), "added", t),
            )
            self._blocks[row] = found
        return found

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._turns)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._turns):
            return None
        t = self._turns[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return turn_label(t)
        if role == TURN_ROLE:
            return t
        if role == STATUS_ROLE:
            return t.status
        if role == MARKER_ROLE:
            return MARKERS[t.status]
        if role == HIGHLIGHT_ROLE:
            return t.status == "differs"
        if role == USAGE_ROLE:
            return usage_text(t)
        if role == Qt.ItemDataRole.BackgroundRole:
            return QColor(self._tint) if t.status == "differs" else None
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [turn_label(t)]
            first = t.a or t.b
            if first is not None and first.user_text:
                lines.append(text_lines(first.user_text, 1)[0][:200])
            lines.append(f"A: {len(t.messages_a)} messages · B: {len(t.messages_b)} messages")
            if usage_text(t):
                lines.append(usage_text(t))
            # Qt guesses whether a tooltip is rich text: make it HTML we wrote, data escaped.
            return "<p style='white-space:pre-wrap'>" + esc("\n".join(lines)) + "</p>"
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{MARKERS[t.status]} {turn_label(t)}"
        return None


def _blocks(messages: list[Message], changed: set[int], lone: str, t: TurnDiff) -> list[Block]:
    out: list[Block] = []
    pairs = {c.a: c for c in t.changes if c.a is not None} if lone == "removed" else {
        c.b: c for c in t.changes if c.b is not None
    }
    for i, m in enumerate(messages[:MAX_SHOWN]):
        mark = ""
        if i in changed:
            mark = "changed" if pairs[i].op == "changed" else lone
        out.append(
            Block(
                text_lines(m.role, 1)[0][:40] or "?",
                "" if m.kind == "message" else kind_label(m.kind),
                text_lines(m.text),
                mark,
            )
        )
    if len(messages) > MAX_SHOWN:
        more = len(messages) - MAX_SHOWN
        out.append(Block("", "", [f"… {more} more message{'s' if more != 1 else ''}"], ""))
    return out


# =========================================================================== delegate

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
        muted = _mix(base, text_colour, 0.55)
        rect = option.rect
        painter.save()
        painter.setClipRect(rect)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)

        # background: tint for a differing turn, a faint line between rows
        tint = index.data(Qt.ItemDataRole.BackgroundRole)
        if isinstance(tint, QColor):
            painter.fillRect(rect, _mix(base, DIFF_TINT, 0.16 if dark else 0.09))
            painter.fillRect(QRect(rect.left(), rect.top(), 4, rect.height()), DIFF_TINT)
        painter.setPen(QPen(_mix(base, text_colour, 0.12), 1))
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
            words = _gist(t)
            count = len(t.messages_a)
            label += f" · {count} message{'s' if count != 1 else ''}"
            if words:
                label += f" · “{words}”"
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
        muted = _mix(base, text_colour, 0.55)
        fm = self._fm()
        lh = fm.height()
        if missing:
            empty = QRect(cell.left(), cell.top(), cell.width(), self.side_height([]))
            painter.fillRect(empty, _mix(base, text_colour, 0.05))
            painter.setPen(QPen(_mix(base, text_colour, 0.18), 1, Qt.PenStyle.DashLine))
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
                painter.fillRect(box, _mix(base, colour, 0.34 if dark else 0.26))
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


def _gist(t: TurnDiff) -> str:
    """The first line of the turn's user message (or, in turn 0, of its first message)."""
    first = t.a or t.b
    if first is None or not first.messages:
        return ""
    return text_lines(first.user_text or first.messages[0].text, 1)[0]


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        1.0,
    )


# =========================================================================== list


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

    def keyPressEvent(self, event: Any) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            current = self.currentIndex()
            if current.isValid():
                self.toggle(current.row())
                return
        super().keyPressEvent(event)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.scheduleDelayedItemsLayout()


class ElidedLabel(QLabel):
    """A one-line plain-text label that elides its text to its width (full text in the
    tooltip, escaped)."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._full = ""
        self.set_full_text(text)

    def full_text(self) -> str:
        return self._full

    def set_full_text(self, text: str) -> None:
        self._full = " ".join(text.split())
        self.setToolTip("<p style='white-space:pre-wrap'>" + esc(text) + "</p>" if text else "")
        self._elide()

    def _elide(self) -> None:
        width = max(20, self.width())
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle, width))

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._elide()


# =========================================================================== view


class CompareView(QWidget):
    """Two sessions side by side, turn by turn. See the module docstring."""

    compared = Signal(object)  # the Comparison, once shown
    failed = Signal(object)  # the exception that stopped the comparison

    def __init__(self, bridge: AsyncBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._key = f"compare:{id(self)}"
        self.comparison: Comparison | None = None

        self.summary = QLabel("Nothing compared yet.")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)

        self.prev_action = QAction("◀ Previous difference", self)
        self.prev_action.setShortcut(QKeySequence("Shift+F7"))
        self.next_action = QAction("Next difference ▶", self)
        self.next_action.setShortcut(QKeySequence("F7"))
        for action, tip in ((self.prev_action, "Shift+F7"), (self.next_action, "F7")):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.setToolTip(f"{action.text().strip('◀▶ ')} ({tip})")
            action.setEnabled(False)
            self.addAction(action)
        self.prev_action.triggered.connect(self.previous_difference)
        self.next_action.triggered.connect(self.next_difference)
        self.prev_button = QToolButton()
        self.prev_button.setDefaultAction(self.prev_action)
        self.next_button = QToolButton()
        self.next_button.setDefaultAction(self.next_action)
        self.same_check = QCheckBox("Show identical turns")
        self.same_check.toggled.connect(lambda on: self.list.set_show_same(on))

        bar = QHBoxLayout()
        bar.addWidget(self.summary, 1)
        bar.addWidget(self.same_check)
        bar.addWidget(self.prev_button)
        bar.addWidget(self.next_button)

        self.header_a = ElidedLabel("A")
        self.header_b = ElidedLabel("B")
        heads = QHBoxLayout()
        heads.setContentsMargins(MARK_W, 0, PAD + 16, 0)
        heads.setSpacing(GAP)
        for label in (self.header_a, self.header_b):
            font = QFont(label.font())
            font.setBold(True)
            label.setFont(font)
            heads.addWidget(label, 1)

        self.model = CompareModel(self)
        self.list = CompareList(self)
        self.list.setModel(self.model)
        self.delegate = CompareDelegate(self.list)
        self.list.setItemDelegate(self.delegate)
        self.list.selectionModel().currentChanged.connect(lambda *_: self._update_actions())

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addLayout(heads)
        layout.addWidget(self.list, 1)


    # -- loading -------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._bridge.running(self._key)

    def compare(
        self,
        store_a: Any,
        session_a: str,
        store_b: Any = None,
        session_b: str | None = None,
        *,
        branch_a: str | None = None,
        branch_b: str | None = None,
    ) -> None:
        """Compare two sessions (``store_b`` defaults to ``store_a``) off the UI thread;
        ``compared`` or ``failed`` follows. A comparison still loading is cancelled."""
        self.summary.setText("Comparing…")
        self.header_a.set_full_text(f"A: {session_a}" + (f" @ {branch_a}" if branch_a else ""))
        b_id = session_a if session_b is None else session_b
        self.header_b.set_full_text(f"B: {b_id}" + (f" @ {branch_b}" if branch_b else ""))
        self._bridge.start(
            self._key,
            compare_sessions(store_a, session_a, store_b, session_b, branch_a=branch_a, branch_b=branch_b),
            self._on_compared,
            self._on_compare_failed,
        )

    def cancel(self) -> None:
        self._bridge.cancel(self._key)

    def _on_compared(self, result: Comparison) -> None:
        self.show_comparison(result)
        self.compared.emit(result)

    def _on_compare_failed(self, error: Exception) -> None:
        self.summary.setText(f"Could not compare: {error}")
        self.failed.emit(error)

    # -- showing -------------------------------------------------------------------

    def show_comparison(self, comparison: Comparison) -> None:
        """Show a comparison made elsewhere (no loading)."""
        self.comparison = comparison
        self.list.opened.clear()
        self.model.set_comparison(comparison)
        self.header_a.set_full_text(_side_text("A", comparison.a))
        self.header_b.set_full_text(_side_text("B", comparison.b))
        self.summary.setText(summary_text(comparison))
        self.list.scrollToTop()
        self._update_actions()

    def highlighted_turns(self) -> list[int]:
        """Numbers of the turns shown highlighted as differing."""
        return [
            self.model.turn(r).number
            for r in range(self.model.rowCount())
            if self.model.index(r, 0).data(HIGHLIGHT_ROLE)
        ]

    def current_turn(self) -> int | None:
        index = self.list.currentIndex()
        return self.model.turn(index.row()).number if index.isValid() else None

    # -- navigation ----------------------------------------------------------------

    def _difference_rows(self) -> list[int]:
        return [r for r in range(self.model.rowCount()) if not self.model.turn(r).same]

    def next_difference(self) -> int | None:
        """Select the next turn that is not the same (after the current row); its number,
        or ``None`` when there is none."""
        current = self.list.currentIndex().row() if self.list.currentIndex().isValid() else -1
        return self._go(next((r for r in self._difference_rows() if r > current), None))

    def previous_difference(self) -> int | None:
        """Select the previous turn that is not the same."""
        index = self.list.currentIndex()
        current = index.row() if index.isValid() else self.model.rowCount()
        return self._go(next((r for r in reversed(self._difference_rows()) if r < current), None))

    def _go(self, row: int | None) -> int | None:
        if row is None:
            return None
        index = self.model.index(row, 0)
        self.list.setCurrentIndex(index)
        self.list.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtTop)
        self._update_actions()
        return self.model.turn(row).number

    def _update_actions(self) -> None:
        rows = self._difference_rows()
        index = self.list.currentIndex()
        current = index.row() if index.isValid() else -1
        self.next_action.setEnabled(any(r > current for r in rows))
        self.prev_action.setEnabled(index.isValid() and any(r < current for r in rows))


def _side_text(label: str, side: Side) -> str:
    where = f"  ({side.target})" if side.target else ""
    return f"{label}: {side.label}{where} — {side.messages} messages, {side.turns} turns"


def summary_text(c: Comparison) -> str:
    """One line: how many turns differ, where the first difference is, tokens."""
    counts = c.counts
    if not c.turns:
        return "Both sides are empty."
    parts = []
    if counts["differs"]:
        parts.append(f"{counts['differs']} turn{'s' if counts['differs'] != 1 else ''} differ{'s' if counts['differs'] == 1 else ''}")
    if counts["only_a"]:
        parts.append(f"{counts['only_a']} only in A")
    if counts["only_b"]:
        parts.append(f"{counts['only_b']} only in B")
    parts.append(f"{counts['same']} same")
    text = ", ".join(parts)
    first = c.first_difference
    text = "Identical: every turn is the same." if first is None else f"{text} — first difference: turn {first}."
    usage = c.usage_dict()
    if usage is not None:
        a, b = usage["a_total_tokens"], usage["b_total_tokens"]
        text += f"  Tokens A {'?' if a is None else f'{a:,}'} · B {'?' if b is None else f'{b:,}'}"
        if usage["delta_total_tokens"] is not None:
            text += f" ({usage['delta_total_tokens']:+,})"
    return text


# =========================================================================== dialog


class CompareDialog(QDialog):
    """A non-modal window around a :class:`CompareView`, with a Close button."""

    def __init__(self, bridge: AsyncBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare sessions")
        self.view = CompareView(bridge, self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.close_button = buttons.button(QDialogButtonBox.StandardButton.Close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
        self.view.compared.connect(self._retitle)
        self.resize(1100, 720)

    def _retitle(self, comparison: Comparison) -> None:
        a = " ".join(comparison.a.label.split())[:60]
        b = " ".join(comparison.b.label.split())[:60]
        self.setWindowTitle(f"Compare {a} ↔ {b}")

    def done(self, result: int) -> None:
        self.view.cancel()
        super().done(result)


def open_compare(
    parent: QWidget | None,
    bridge: AsyncBridge,
    store: Any,
    session_a: str,
    session_b: str,
    *,
    store_b: Any = None,
    branch_a: str | None = None,
    branch_b: str | None = None,
) -> CompareDialog:
    """Open a (non-modal) Compare window for two sessions of ``store`` (or of ``store``
    and ``store_b``), start the comparison and return the window. It deletes itself when
    closed."""
    dialog = CompareDialog(bridge, parent)
    dialog.setModal(False)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    dialog.view.compare(store, session_a, store_b, session_b, branch_a=branch_a, branch_b=branch_b)
    return dialog
