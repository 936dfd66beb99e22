"""The conversation pane: a session's messages, newest page first, earlier pages on scroll.

:class:`ConversationPane` loads a session's latest page through the
:class:`~fluxgui.qt.bridge.AsyncBridge` (one key per pane, so a new session cancels the
stale load) and shows it scrolled to the bottom. Scrolling near the top loads the page
before the first loaded message (keyset ``anchor``, ``direction="backward"``) and
prepends it without moving what the user is looking at. A session is never loaded
whole.

Rows are painted by :class:`MessageDelegate` over a thin :class:`MessageListModel` of
:class:`~fluxgui.core.model.Message` objects. Bodies are :mod:`fluxgui.qt.markdown`
documents (Qt's Markdown without HTML, pygments colours, nothing loaded), built and laid
out once per message and width and kept in a small cache; a page's documents are built
in time slices on the event loop *before* its rows are inserted, so neither the insert
nor scrolling waits for layout.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QItemSelectionModel,
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QPointF,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.ports import SessionStore as Store
from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.pairing import ToolPairs, call_key, output_key, tool_name
from fluxgui.core.turns import starts_turn, turn_numbers

from .branches import short_tokens
from .bridge import AsyncBridge
from .inspector import MessageInspector
from .markdown import (
    DocTheme,
    SafeDocument,
    body_source,
    is_long,
    message_document,
    highlight_jobs,
    pretokenize,
    utf8_size,
    warm_up_qt,
)
from .render import (
    LOCK,
    badge_colours,
    encryption_badge,
    esc,
    kind_label,
    raw_document,
    raw_json,
    role_colour,
    short_time,
    size_label,
)

_Index = QModelIndex | QPersistentModelIndex

log = logging.getLogger(__name__)

#: messages per page (the first page and each earlier one)
PAGE_SIZE = 100
#: a catch-up that finds more new messages than this reloads the latest ones instead
CATCH_UP_MAX = 2000
#: a reload that keeps the reader's place loads at most this many messages
RELOAD_MAX = 2000
#: shown when the open session was deleted by another process
GONE_TEXT = "This session no longer exists in the store."
#: laid-out documents kept (LRU); heights are kept for every loaded message
DOC_CACHE = 600
#: build documents for at most this long before letting the event loop run (seconds)
SLICE = 0.006

MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 1


# =========================================================================== model


class MessageListModel(QAbstractListModel):
    """The loaded messages of one session, oldest first: a thin list of Message objects.

    ``DisplayRole`` is the message text, ``MESSAGE_ROLE`` the :class:`Message` itself.
    """

    MessageRole = MESSAGE_ROLE

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._messages: list[Message] = []
        self._rows: dict[int, int] | None = None  # message id -> row, built on demand

    # -- Qt API --------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt's default
        return 0 if parent.isValid() else len(self._messages)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.parent().isValid() or index.column() != 0:
            return None
        row = index.row()
        if not 0 <= row < len(self._messages):
            return None
        m = self._messages[row]
        if role == Qt.ItemDataRole.DisplayRole:
            return m.text
        if role == MESSAGE_ROLE:
            return m
        if role == Qt.ItemDataRole.AccessibleTextRole:
            badge = encryption_badge(m)
            state = f" ({badge[0].replace(LOCK, '').strip()})" if badge else ""
            return f"{m.role}, {kind_label(m.kind)}{state}: {m.text[:500]}"
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )

    def roleNames(self) -> dict[int, bytes]:
        names = dict(super().roleNames())
        names[MESSAGE_ROLE] = b"message"
        return names

    # -- our API -------------------------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(self._messages)

    def message(self, row: int) -> Message | None:
        return self._messages[row] if 0 <= row < len(self._messages) else None

    def row_of(self, message_id: int) -> int | None:
        if self._rows is None:
            self._rows = {m.id: r for r, m in enumerate(self._messages)}
        return self._rows.get(message_id)

    def set_messages(self, messages: list[Message]) -> None:
        self.beginResetModel()
        self._messages = list(messages)
        self._rows = None
        self.endResetModel()

    def prepend(self, messages: list[Message]) -> None:
        if not messages:
            return
        self.beginInsertRows(QModelIndex(), 0, len(messages) - 1)
        self._messages[:0] = messages
        self._rows = None
        self.endInsertRows()

    def append(self, messages: list[Message]) -> None:
        if not messages:
            return
        start = len(self._messages)
        self.beginInsertRows(QModelIndex(), start, start + len(messages) - 1)
        self._messages.extend(messages)
        self._rows = None
        self.endInsertRows()

    def clear(self) -> None:
        self.set_messages([])


# =========================================================================== icons

_ICONS: dict[tuple[str, int, int, float], QPixmap] = {}


def _icon_kind(role: str) -> str:
    if role in ("user", "assistant", "tool"):
        return role
    if role in ("system", "developer"):
        return "system"
    return "other"


def role_icon(role: str, colour: QColor, size: int, dpr: float) -> QPixmap:
    """A small painted glyph for a role on a disc of its colour (cached)."""
    kind = _icon_kind(role)
    key = (kind, colour.rgba(), size, dpr)
    cached = _ICONS.get(key)
    if cached is not None:
        return cached
    pm = QPixmap(round(size * dpr), round(size * dpr))
    pm.setDevicePixelRatio(dpr)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(colour)
    s = float(size)
    p.drawEllipse(QRectF(0, 0, s, s))
    fg = QColor("#ffffff") if colour.lightnessF() < 0.6 else QColor("#111111")
    p.setBrush(fg)
    if kind == "user":  # head and shoulders
        p.drawEllipse(QRectF(s * 0.35, s * 0.18, s * 0.30, s * 0.30))
        path = QPainterPath()
        path.moveTo(s * 0.20, s * 0.82)
        path.cubicTo(s * 0.22, s * 0.52, s * 0.78, s * 0.52, s * 0.80, s * 0.82)
        path.closeSubpath()
        p.drawPath(path)
    elif kind == "assistant":  # a four-point sparkle
        c = s / 2
        path = QPainterPath()
        path.moveTo(c, s * 0.16)
        path.quadTo(c, c, s * 0.84, c)
        path.quadTo(c, c, c, s * 0.84)
        path.quadTo(c, c, s * 0.16, c)
        path.quadTo(c, c, c, s * 0.16)
        p.drawPath(path)
    elif kind == "system":  # a gear
        c = s / 2
        p.save()
        p.translate(c, c)
        for _ in range(8):
            p.drawRect(QRectF(-s * 0.06, -s * 0.36, s * 0.12, s * 0.16))
            p.rotate(45)
        p.restore()
        p.drawEllipse(QPointF(c, c), s * 0.25, s * 0.25)
        p.setBrush(colour)
        p.drawEllipse(QPointF(c, c), s * 0.10, s * 0.10)
    elif kind == "tool":  # a terminal prompt ">_"
        pen = QPen(fg, max(1.4, s * 0.10))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPolyline(
            [QPointF(s * 0.26, s * 0.32), QPointF(s * 0.46, s * 0.50), QPointF(s * 0.26, s * 0.68)]
        )
        p.drawLine(QPointF(s * 0.52, s * 0.70), QPointF(s * 0.74, s * 0.70))
    else:  # a question mark
        p.setPen(fg)
        font = QFont()
        font.setBold(True)
        font.setPixelSize(max(6, int(s * 0.7)))
        p.setFont(font)
        p.drawText(QRectF(0, 0, s, s), Qt.AlignmentFlag.AlignCenter, "?")
    p.end()
    _ICONS[key] = pm
    return pm


# =========================================================================== delegate

# Geometry of a row (pixels): the card sits inside the row with an outer margin; a colour
# bar on its left; a header line (icon, role, kind, pairing, time, id); the body
# document; for a long message a footer link.
OUTER_X, OUTER_Y = 8, 3
BAR, PAD_L, PAD_R, PAD_T, PAD_B = 4, 10, 12, 7, 9
ICON = 18
GAP = 5
RADIUS = 6.0
BADGE_PAD, BADGE_GAP = 7, 8  # an encryption badge's inner padding and its gap before it


@dataclass
class _Rows:
    card: QRect
    header: QRect
    body: QRect
    footer: QRect | None


class MessageDelegate(QStyledItemDelegate):
    """Paints one message as a card; keeps each message's document and height cached.

    Per-message state: reasoning rows are collapsed to one line until toggled
    (:meth:`toggle`); long bodies (over 20 kB) show a preview until "show all".
    """

    def __init__(self, view: QListView, pane: ConversationPane) -> None:
        super().__init__(view)
        self._view = view
        self._pane = pane
        self._docs: OrderedDict[tuple[int, bool], SafeDocument] = OrderedDict()
        self._heights: dict[tuple[int, bool], tuple[int, float]] = {}
        self._sizes: dict[int, tuple[int, QSize]] = {}  # message id -> (view width, size)
        self._metrics: tuple[int, int] | None = None  # header and footer line heights
        self._long: dict[int, int] = {}  # message id -> body size in bytes when long, else 0
        self.expanded: set[int] = set()  # reasoning rows opened
        self.full: set[int] = set()  # long rows shown whole
        self.theme = DocTheme.from_palette(view.palette(), view.font())
        warm_up_qt(self.theme)
        #: documents built so far (for tests and the benchmark)
        self.built = 0

    # -- state ---------------------------------------------------------------------

    def reset(self) -> None:
        """Forget every cached document, height and expansion (a new session)."""
        self._docs.clear()
        self._heights.clear()
        self._sizes.clear()
        self._long.clear()
        self.expanded.clear()
        self.full.clear()

    def forget(self, message_ids: set[int]) -> None:
        """Drop the cached documents and sizes of these messages (their content changed);
        expansions are kept."""
        if not message_ids:
            return
        for key in [k for k in self._docs if k[0] in message_ids]:
            del self._docs[key]
        for key in [k for k in self._heights if k[0] in message_ids]:
            del self._heights[key]
        for mid in message_ids:
            self._sizes.pop(mid, None)
            self._long.pop(mid, None)

    def refresh_theme(self) -> None:
        self.theme = DocTheme.from_palette(self._view.palette(), self._view.font())
        self._docs.clear()
        self._heights.clear()
        self._sizes.clear()
        self._metrics = None

    def long_size(self, m: Message) -> int:
        """The body's size in bytes when it is collapsed as long, else 0."""
        size = self._long.get(m.id)
        if size is None:
            source = body_source(m)
            size = utf8_size(source) if is_long(source) else 0
            self._long[m.id] = size
        return size

    def is_collapsible(self, m: Message) -> bool:
        return m.kind == "reasoning" or self.long_size(m) > 0

    def is_collapsed(self, m: Message) -> bool:
        """Reasoning not opened, or a long body not shown whole."""
        if m.kind == "reasoning" and m.id not in self.expanded:
            return True
        return self.long_size(m) > 0 and m.id not in self.full

    def toggle(self, index: _Index) -> bool:
        """Open/close a reasoning row, or show all/less of a long one; ``False`` when the
        row has nothing to toggle."""
        m = index.data(MESSAGE_ROLE)
        if not isinstance(m, Message):
            return False
        if m.kind == "reasoning":
            self.expanded.symmetric_difference_update({m.id})
            if m.id not in self.expanded:
                self.full.discard(m.id)
        elif self.long_size(m):
            self.full.symmetric_difference_update({m.id})
        else:
            return False
        self._sizes.pop(m.id, None)
        self.sizeHintChanged.emit(QModelIndex(index))
        return True

    def set_full(self, index: _Index, full: bool) -> None:
        m = index.data(MESSAGE_ROLE)
        if isinstance(m, Message) and self.long_size(m) and (m.id in self.full) != full:
            if m.kind == "reasoning":
                self.expanded.add(m.id)
            self.full.symmetric_difference_update({m.id})
            self._sizes.pop(m.id, None)
            self.sizeHintChanged.emit(QModelIndex(index))

    # -- documents -----------------------------------------------------------------

    def text_width(self) -> int:
        width = self._view.viewport().width()
        if width <= 0:
            width = 600
        return max(120, width - 2 * OUTER_X - BAR - PAD_L - PAD_R)

    def document(self, m: Message) -> SafeDocument:
        """The laid-out body of ``m`` in its current state (built or taken from cache)."""
        key = (m.id, m.id in self.full)
        doc = self._docs.get(key)
        if doc is None:
            doc = message_document(m, self.theme, full=key[1])
            self.built += 1
            self._docs[key] = doc
            while len(self._docs) > DOC_CACHE:
                self._docs.popitem(last=False)
        else:
            self._docs.move_to_end(key)
        width = self.text_width()
        if doc.textWidth() != width:
            doc.setTextWidth(width)
        return doc

    def prepare(self, m: Message) -> None:
        """Build and lay out ``m``'s body now (so that painting it later costs nothing)."""
        self._body_height(m)

    def _body_height(self, m: Message) -> float:
        if m.kind == "reasoning" and m.id not in self.expanded:
            return float(QFontMetrics(self.theme.font).height())
        key = (m.id, m.id in self.full)
        width = self.text_width()
        known = self._heights.get(key)
        if known is not None and known[0] == width:
            return known[1]
        height = self.document(m).size().height()
        self._heights[key] = (width, height)
        return height

    # -- geometry --------------------------------------------------------------------

    def _line_heights(self) -> tuple[int, int]:
        if self._metrics is None:
            line = QFontMetrics(self._view.font()).height()
            self._metrics = (max(ICON, line), line)
        return self._metrics

    def _header_height(self) -> int:
        return self._line_heights()[0]

    def _footer_height(self) -> int:
        return self._line_heights()[1]

    def layout_rows(self, rect: QRect, m: Message) -> _Rows:
        card = rect.adjusted(OUTER_X, OUTER_Y, -OUTER_X, -OUTER_Y)
        left = card.left() + BAR + PAD_L
        width = self.text_width()
        header = QRect(left, card.top() + PAD_T, width, self._header_height())
        body_h = int(self._body_height(m) + 0.999)
        body = QRect(left, header.bottom() + 1 + GAP, width, body_h)
        footer = None
        if self.long_size(m) and not (m.kind == "reasoning" and m.id not in self.expanded):
            footer = QRect(left, body.bottom() + 1 + GAP, width, self._footer_height())
        return _Rows(card, header, body, footer)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        # Called for every loaded row on every layout: one dict look-up when known.
        model = index.model()
        m = model.message(index.row()) if isinstance(model, MessageListModel) else None
        width = self._view.viewport().width()
        if m is None:
            return QSize(max(width, 1), 0)
        known = self._sizes.get(m.id)
        if known is not None and known[0] == width:
            return known[1]
        size = self._size(m, width)
        self._sizes[m.id] = (width, size)
        return size

    def _size(self, m: Message, width: int) -> QSize:
        height = 2 * OUTER_Y + PAD_T + self._header_height() + GAP
        height += int(self._body_height(m) + 0.999)
        if self.long_size(m) and not (m.kind == "reasoning" and m.id not in self.expanded):
            height += GAP + self._footer_height()
        height += PAD_B
        return QSize(max(width, 1), height)

    # -- painting --------------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        m = index.data(MESSAGE_ROLE)
        if not isinstance(m, Message):
            return
        rows = self.layout_rows(option.rect, m)
        palette = option.palette
        dark = self.theme.dark
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        colour = QColor(role_colour(m.role, dark=dark))
        state = option.state
        selected = bool(state & QStyle.StateFlag.State_Selected)
        current = bool(state & QStyle.StateFlag.State_HasFocus)
        hover = bool(state & QStyle.StateFlag.State_MouseOver)

        if m.kind == "message" and m.role == "user":
            background = _mix(base, colour, 0.07)
        elif m.kind == "message":
            background = base
        else:
            background = _mix(base, text, 0.035)
        if selected:
            background = _mix(background, palette.color(QPalette.ColorRole.Highlight), 0.12)
        elif hover:
            background = _mix(background, text, 0.02)

        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        card = QRectF(rows.card).adjusted(0.5, 0.5, -0.5, -0.5)
        path = QPainterPath()
        path.addRoundedRect(card, RADIUS, RADIUS)
        painter.fillPath(path, background)
        painter.save()
        painter.setClipPath(path)
        painter.fillRect(QRectF(card.left(), card.top(), BAR, card.height()), colour)
        painter.restore()
        if selected:
            border = QPen(palette.color(QPalette.ColorRole.Highlight), 1.5)
        elif current:
            border = QPen(_mix(palette.color(QPalette.ColorRole.Highlight), base, 0.4), 1.0)
        else:
            border = QPen(_mix(text, base, 0.85), 1.0)
        painter.setPen(border)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(path)

        self._paint_header(painter, rows.header, m, colour, palette)
        self._paint_body(painter, rows.body, m, palette, option.rect)
        if rows.footer is not None:
            painter.setFont(self._view.font())
            painter.setPen(palette.color(QPalette.ColorRole.Link))
            painter.drawText(rows.footer, Qt.AlignmentFlag.AlignLeft, self.footer_text(m))
        painter.restore()

    def _paint_header(
        self, painter: QPainter, rect: QRect, m: Message, colour: QColor, palette: QPalette
    ) -> None:
        font = QFont(self._view.font())
        muted = self.theme.muted
        dpr = painter.device().devicePixelRatioF() if painter.device() else 1.0
        icon = role_icon(m.role, colour, ICON, dpr)
        painter.drawPixmap(QPoint(rect.left(), rect.top() + (rect.height() - ICON) // 2), icon)
        x = rect.left() + ICON + 6

        # Right side first (time and id) so the middle can be elided to what is left.
        small = QFont(font)
        if small.pointSizeF() > 0:
            small.setPointSizeF(small.pointSizeF() * 0.92)
        right = "  ".join(t for t in (short_time(m.created_at), f"#{m.id}") if t)
        small_fm = QFontMetrics(small)
        right_w = small_fm.horizontalAdvance(right)
        painter.setFont(small)
        painter.setPen(muted)
        painter.drawText(
            QRect(rect.right() - right_w, rect.top(), right_w + 1, rect.height()),
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
            right,
        )
        limit = rect.right() - right_w - 12

        bold = QFont(font)
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(colour)
        role_text = QFontMetrics(bold).elidedText(m.role, Qt.TextElideMode.ElideRight, 160)
        role_w = QFontMetrics(bold).horizontalAdvance(role_text)
        painter.drawText(
            QRect(x, rect.top(), role_w + 1, rect.height()),
            Qt.AlignmentFlag.AlignVCenter,
            role_text,
        )
        x += role_w
        parts = []
        turn = self._pane.turn_of(m)
        if turn is not None:
            parts.append(f"turn {turn}")
            tokens = self._pane.turn_tokens.get(turn)
            if tokens is not None:  # an Advanced store's turn usage (the branch bar's)
                parts.append(short_tokens(tokens))
        if m.kind != "message":
            mark = ""
            if self.is_collapsible(m) and m.kind == "reasoning":
                mark = " ▾" if m.id in self.expanded else " ▸"
            parts.append(kind_label(m.kind) + mark)
        pair = self.pair_text(m)
        if pair:
            parts.append(pair)
        badge = self.badge(m)
        # The badge is never elided away: the middle text gets what is left beside it.
        badge_w = self._badge_width(badge[0], small) + BADGE_GAP if badge else 0
        if parts:
            painter.setFont(font)
            painter.setPen(muted)
            fm = QFontMetrics(font)
            room = max(0, limit - x - badge_w)
            middle = fm.elidedText("  ·  " + "  ·  ".join(parts), Qt.TextElideMode.ElideRight,
                                   room)
            painter.drawText(
                QRect(x, rect.top(), room, rect.height()),
                Qt.AlignmentFlag.AlignVCenter,
                middle,
            )
            x += fm.horizontalAdvance(middle)
        if badge and x + badge_w <= limit:
            self._paint_badge(painter, QPoint(x + BADGE_GAP, rect.center().y()), badge, small)

    def badge(self, m: Message) -> tuple[str, str, str] | None:
        """The header badge of an encrypted item, ``(text, tooltip, state)``: "expired",
        "🔒 locked" or "unreadable"; ``None`` for other items (and in stores that hold no
        encrypted items, whatever a message's metadata says)."""
        store = self._pane.store if self._pane is not None else None
        if store is not None and not store.needs_key:
            return None
        return encryption_badge(m)

    @staticmethod
    def _lock_glyph(font: QFont) -> bool:
        """Whether the font (or a fallback) can draw the lock emoji; else one is painted."""
        return QFontMetrics(font).inFontUcs4(ord(LOCK))

    def _badge_label(self, text: str, font: QFont) -> tuple[str, bool]:
        """The badge's text as painted, and whether a padlock is painted before it."""
        if text.startswith(LOCK) and not self._lock_glyph(font):
            return text[len(LOCK):].strip(), True
        return text, False

    def _badge_width(self, text: str, font: QFont) -> int:
        label, lock = self._badge_label(text, font)
        fm = QFontMetrics(font)
        return fm.horizontalAdvance(label) + 2 * BADGE_PAD + (fm.ascent() if lock else 0)

    def _paint_badge(
        self, painter: QPainter, left_mid: QPoint, badge: tuple[str, str, str], font: QFont
    ) -> None:
        text, _tip, state = badge
        label, lock = self._badge_label(text, font)
        fm = QFontMetrics(font)
        fg, bg = (QColor(c) for c in badge_colours(state, dark=self.theme.dark))
        h = fm.height() + 2
        w = self._badge_width(text, font)
        box = QRectF(left_mid.x(), left_mid.y() - h / 2, w, h)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(bg)
        painter.drawRoundedRect(box, h / 2, h / 2)
        x = box.left() + BADGE_PAD
        if lock:  # a small padlock where the font has no 🔒
            size = fm.ascent() * 0.62
            body = QRectF(x, box.center().y() - size * 0.15, size, size * 0.62)
            pen = QPen(fg, max(1.0, size * 0.14))
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            shackle = QRectF(x + size * 0.2, body.top() - size * 0.45, size * 0.6, size * 0.8)
            painter.drawArc(shackle, 0, 180 * 16)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(fg)
            painter.drawRoundedRect(body, 1.5, 1.5)
            x += fm.ascent()
        painter.setFont(font)
        painter.setPen(fg)
        painter.drawText(
            QRectF(x, box.top(), box.right() - x, box.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            label,
        )
        painter.restore()

    def header_text(self, m: Message) -> str:
        """The header line as text: role, turn, kind, pairing, badge, time and id."""
        head = [m.role]
        if m.kind != "message":
            head.append(kind_label(m.kind))
        pair = self.pair_text(m)
        if pair:
            head.append(pair)
        badge = self.badge(m)
        if badge:
            head.append(badge[0])
        head += [t for t in (short_time(m.created_at), f"#{m.id}") if t]
        return " · ".join(head)

    def pair_text(self, m: Message) -> str:
        """The header's note on a tool call's output, or on an output's call."""
        pairs = self._pane.pairs
        if m.kind == "tool_call" and call_key(m):
            out = pairs.output_for(m)
            return f"→ output #{out.id}" if out else "no output"
        if m.kind == "tool_output" and output_key(m):
            call = pairs.call_for(m)
            if call is None:
                return f"← {output_key(m)} (call not loaded)"
            return f"← {tool_name(call) or 'call'} #{call.id}"
        return ""

    def footer_text(self, m: Message) -> str:
        if m.id in self.full:
            return "▴ Show less"
        return f"▾ Show all ({size_label(self.long_size(m))})"

    def _paint_body(
        self, painter: QPainter, rect: QRect, m: Message, palette: QPalette, row: QRect
    ) -> None:
        if m.kind == "reasoning" and m.id not in self.expanded:
            font = QFont(self.theme.font)
            font.setItalic(True)
            painter.setFont(font)
            painter.setPen(self.theme.muted)
            line = " ".join(m.text.split()) or "(no summary)"
            text = QFontMetrics(font).elidedText(line, Qt.TextElideMode.ElideRight, rect.width())
            painter.drawText(rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, text)
            return
        doc = self.document(m)
        painter.save()
        painter.translate(rect.topLeft())
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.palette = QPalette(palette)
        ctx.palette.setColor(QPalette.ColorRole.Text, palette.color(QPalette.ColorRole.Text))
        clip = QRectF(0, 0, rect.width() + 1, rect.height() + 1)
        painter.setClipRect(clip)
        ctx.clip = clip
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    # -- interaction -----------------------------------------------------------------

    def editorEvent(
        self, event: QEvent, model: Any, option: QStyleOptionViewItem, index: _Index
    ) -> bool:
        if event.type() != QEvent.Type.MouseButtonRelease:
            return False
        if event.button() != Qt.MouseButton.LeftButton:  # type: ignore[attr-defined]
            return False
        m = index.data(MESSAGE_ROLE)
        if not isinstance(m, Message):
            return False
        pos = event.position().toPoint()  # type: ignore[attr-defined]
        rows = self.layout_rows(option.rect, m)
        if rows.footer is not None:
            fm = QFontMetrics(self._view.font())
            link = QRect(rows.footer.topLeft(), fm.size(0, self.footer_text(m)))
            if link.adjusted(-4, -3, 4, 3).contains(pos):
                self.set_full(index, m.id not in self.full)
                return True
        if m.kind == "reasoning":
            collapsed = m.id not in self.expanded
            if rows.header.contains(pos) or (collapsed and rows.card.contains(pos)):
                self.toggle(index)
                return True
        return False

    def helpEvent(self, event: Any, view: Any, option: QStyleOptionViewItem, index: _Index) -> bool:
        # A link's target as a tooltip, escaped (Qt would take it for rich text).
        m = index.data(MESSAGE_ROLE)
        if event.type() == QEvent.Type.ToolTip and isinstance(m, Message):
            rows = self.layout_rows(option.rect, m)
            badge = self.badge(m)
            if badge and rows.header.contains(event.pos()):
                QToolTip.showText(event.globalPos(), f"<p>{esc(badge[1])}</p>", view)
                return True
            if rows.body.contains(event.pos()) and not (
                m.kind == "reasoning" and m.id not in self.expanded
            ):
                doc = self.document(m)
                href = doc.documentLayout().anchorAt(QPointF(event.pos() - rows.body.topLeft()))
                if href:
                    QToolTip.showText(
                        event.globalPos(), f"<p style='white-space:pre'>{esc(href)}</p>", view
                    )
                    return True
            QToolTip.hideText()
            return True
        return super().helpEvent(event, view, option, index)


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        1.0,
    )


# =========================================================================== view


@dataclass
class _Restore:
    """Where the reader was when a reload that keeps the place started."""

    top_id: int | None  # the message at the top of the viewport
    top_px: int  # and where its top was
    at_bottom: bool
    current_id: int | None
    selected: list[int]
    limit: int  # messages asked for


@dataclass
class _Anchor:
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

    def anchor(self) -> _Anchor:
        """The row at the top of the viewport and where it is (to restore after a change)."""
        bar = self.verticalScrollBar()
        index = self.indexAt(QPoint(self.viewport().width() // 2, 1))
        if not index.isValid() and self.model() is not None and self.model().rowCount():
            index = self.model().index(0, 0)
        top = self.visualRect(index).top() if index.isValid() else 0
        at_bottom = bar.value() >= bar.maximum() > 0 or bar.maximum() == 0
        return _Anchor(QPersistentModelIndex(index), top, at_bottom)

    def restore(self, anchor: _Anchor) -> None:
        if anchor.at_bottom:
            self.scrollToBottom()
            return
        if anchor.index.isValid():
            index = QModelIndex(anchor.index)
            delta = self.visualRect(index).top() - anchor.top
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + delta)

    def relayout(self, *, keep: _Anchor | None = None) -> None:
        """Lay out every row now (heights are cached) and keep the anchor in place."""
        anchor = keep or self.anchor()
        self.doItemsLayout()
        self.restore(anchor)

    def resizeEvent(self, event: Any) -> None:
        anchor = self.anchor()
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.relayout(keep=anchor)
        elif anchor.at_bottom:
            self.scrollToBottom()

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
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space) and not (
            event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        ):
            index = self.currentIndex()
            if index.isValid():
                self.toggleRequested.emit(index)
                event.accept()
                return
        super().keyPressEvent(event)


# =========================================================================== pane


class ConversationPane(QWidget):
    """A session's conversation: lazily paged message cards plus a message inspector.

    **Live refresh.** :meth:`catch_up` loads the messages after the last loaded one and
    appends them (the view stays at the bottom if it was there, else where it was). When
    the session changed in another way (a message edited or deleted, the count not adding
    up) it reloads, keeping the reader's place; when the session was deleted it says so.

    Signals: ``loaded(session_id)`` when a session's first page is shown (also after a
    reload that keeps the place); ``earlierLoaded(count)`` when an earlier page was
    prepended; ``failed(exc)`` when a load failed; ``currentMessageChanged(message_or_None)``;
    ``busyChanged(busy)``; ``caughtUp(appended)`` after each :meth:`catch_up` that found the
    session (0: nothing new); ``sessionGone(session_id)`` when the open session vanished.
    """

    loaded = Signal(str)
    earlierLoaded = Signal(int)
    failed = Signal(object)
    currentMessageChanged = Signal(object)
    busyChanged = Signal(bool)
    caughtUp = Signal(int)
    sessionGone = Signal(str)

    def __init__(self, bridge: AsyncBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._key = f"conversation:{id(self):x}"
        self._store: Store | None = None
        self._session_id: str | None = None
        self._info: SessionInfo | None = None
        self._generation = 0
        self._loading: str | None = None  # "latest" / "earlier" while a load runs
        self._at_start = True
        self._earlier_failed = False
        self._task: asyncio.Task[Any] | None = None
        self._settling = False  # our own model/scroll changes: they do not page
        # live refresh
        self._live_key = f"{self._key}:live"
        self._catching = False  # a catch-up query is running
        self._catch_queued = False  # catch up (again) once the running load/catch-up ends
        self._before: int | None = 0  # messages before the first loaded one (None: unknown)
        self._window = 0  # bumped whenever the loaded messages change
        self._gone = False  # the session was deleted by another process
        self._broken = False  # its load failed: no catching up until it is loaded again
        self._restore: _Restore | None = None  # where to put the view after a reload
        #: called as ``menu_hook(menu, message_or_None)`` at the end of the context menu
        self.menu_hook: Callable[[QMenu, Message | None], None] | None = None
        # Turn numbers: user messages before the first loaded one (None: being counted)
        # and each loaded user message's number (None: to be worked out again).
        self._turn_base: int | None = None
        self._turns: dict[int, int] | None = None
        self._turns_key = f"{self._key}:turns"
        #: turn number → total tokens of that turn, shown in user messages' headers
        #: (filled by the window's branch bar for Advanced stores; empty otherwise)
        self.turn_tokens: dict[int, int] = {}
        #: the branch shown (stores with branches; ``None``: main)
        self.branch: str | None = None
        self._current: Message | None = None
        #: messages per page
        self.page_size = PAGE_SIZE
        #: call id ↔ output for the loaded messages
        self.pairs = ToolPairs()

        self.model = MessageListModel(self)
        self.model.modelReset.connect(self._on_turns_reset)
        self.model.rowsInserted.connect(self._on_rows_inserted)
        self.model.rowsRemoved.connect(lambda *_args: setattr(self, "_turns", None))
        self.view = MessageListView(self)
        self.view.setModel(self.model)
        self.delegate = MessageDelegate(self.view, self)
        self.view.setItemDelegate(self.delegate)

        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.status = QLabel(self)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        #: where the session was forked from (fluxgui's forks), hidden otherwise
        self.origin = QLabel(self)
        self.origin.setTextFormat(Qt.TextFormat.PlainText)
        self.origin.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.origin.hide()
        head = QHBoxLayout()
        head.setContentsMargins(10, 4, 10, 4)
        head.addWidget(self.title, 0)
        head.addWidget(self.origin, 1)
        head.addWidget(self.status, 0)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(0)
        left_layout.addLayout(head)
        #: widgets the window shows between the title line and the messages (branches)
        self.header_area = QVBoxLayout()
        self.header_area.setContentsMargins(0, 0, 0, 0)
        self.header_area.setSpacing(0)
        left_layout.addLayout(self.header_area)
        left_layout.addWidget(self.view, 1)

        #: the selected message's fields, metadata and raw item (the window may move it)
        self.inspector = MessageInspector(self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.inspector)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        self.splitter.setSizes([620, 280])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self.view.selectionModel().currentChanged.connect(self._on_current)
        self.view.verticalScrollBar().valueChanged.connect(self._maybe_load_earlier)
        self.view.verticalScrollBar().rangeChanged.connect(self._maybe_load_earlier)
        self.view.toggleRequested.connect(self.toggle)
        self.view.copyRequested.connect(lambda raw: self.copy_raw() if raw else self.copy_text())
        self.view.customContextMenuRequested.connect(self._context_menu)
        self.clear("Select a session.")

    # -- properties ----------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The session shown or loading (``None`` after :meth:`clear`)."""
        return self._session_id

    @property
    def store(self) -> Store | None:
        return self._store

    @property
    def loaded_count(self) -> int:
        return self.model.rowCount()

    @property
    def at_start(self) -> bool:
        """No earlier messages: the first loaded message is the session's first."""
        return self._at_start

    @property
    def busy(self) -> bool:
        return self._loading is not None

    @property
    def gone(self) -> bool:
        """The open session was deleted by another process (:data:`GONE_TEXT` is shown)."""
        return self._gone

    @property
    def task(self) -> asyncio.Task[Any] | None:
        """The load task started last (for tests: a stale one ends cancelled)."""
        return self._task

    def current_message(self) -> Message | None:
        m = self.view.currentIndex().data(MESSAGE_ROLE)
        return m if isinstance(m, Message) else None

    # -- public API ----------------------------------------------------------------

    def show_session(self, store: Store, session_id: str, branch: str | None = None) -> None:
        """Load and show ``session_id``'s latest page (of ``branch``, for stores with
        branches; default ``main``), cancelling any load still running."""
        self.branch = branch
        self._generation += 1
        self._stop_live()
        self._store, self._session_id, self._info = store, session_id, None
        self.turn_tokens = {}
        self._at_start = False
        self._earlier_failed = False
        self.pairs.clear()
        self.delegate.reset()
        self.model.clear()
        self._set_current(None)
        self.title.setText(session_id)
        self._show_placeholder("Loading messages…")
        self._start("latest", self._load_latest(self._generation, store, session_id))

    def reload(self, *, keep_position: bool = True) -> None:
        """Read the current session again from its store.

        With ``keep_position`` the messages shown stay until the new ones arrive, as many
        are loaded again as were loaded (up to :data:`RELOAD_MAX`), and the view keeps its
        place: at the bottom if it was there, else the same message at the same height,
        the same current and selected messages, where they are still there. Otherwise it
        starts over as :meth:`show_session` does.
        """
        store, sid = self._store, self._session_id
        if store is None or sid is None:
            return
        if not keep_position or not (self.model.rowCount() or self._gone):
            self.show_session(store, sid, self.branch)  # nothing to keep: start over
            return
        self._generation += 1
        self._stop_live()
        self._earlier_failed = False
        anchor = self.view.anchor()
        top = anchor.index.data(MESSAGE_ROLE) if anchor.index.isValid() else None
        current = self.current_message()
        selected = [
            m.id
            for m in (i.data(MESSAGE_ROLE) for i in self.view.selectionModel().selectedIndexes())
            if isinstance(m, Message)
        ]
        limit = min(max(self.page_size, self.model.rowCount()), max(RELOAD_MAX, self.page_size))
        self._restore = _Restore(
            top.id if isinstance(top, Message) else None,
            anchor.top,
            anchor.at_bottom,
            current.id if current is not None else None,
            selected,
            limit,
        )
        self._start(
            "latest", self._load_latest(self._generation, store, sid, limit=limit, quiet=True)
        )

    def catch_up(self) -> None:
        """Show what was added to the open session since it was loaded, without reloading.

        Loads the messages after the last loaded one (``page_messages(anchor=…,
        direction="forward")``, a page at a time) and appends them; checks on the way that
        the last loaded message is still there unchanged and that the session's count adds
        up (messages before the loaded ones + loaded + new), else reloads keeping the
        place (:meth:`reload`). A deleted session shows :data:`GONE_TEXT`; if it comes back
        it is loaded again. Never disturbs a running load: a catch-up asked for meanwhile
        runs after it. Errors are logged, not shown (the next change tries again).
        """
        store, sid = self._store, self._session_id
        if store is None or sid is None or self._broken:
            return
        if self._loading is not None or self._catching:
            self._catch_queued = True
            return
        self._catch_queued = False
        self._catching = True
        self._bridge.start(
            self._live_key,
            self._catch_up(
                self._generation,
                self._window,
                store,
                sid,
                self.model.messages,
                self._before,
                self._at_start,
                self._gone,
            ),
            self._on_caught_up,
            self._on_catch_up_failed,
        )

    def clear(self, text: str = "") -> None:
        """Show ``text`` instead of a conversation (and stop any load)."""
        self._generation += 1
        self._bridge.cancel(self._key)
        self._stop_live()
        self._set_loading(None)
        self._store, self._session_id, self._info = None, None, None
        self.turn_tokens = {}
        self._at_start = True
        self.pairs.clear()
        self.delegate.reset()
        self.model.clear()
        self._set_current(None)
        self.title.setText("")
        self.status.setText("")
        self.set_origin(None)
        self._show_placeholder(text)

    def load_earlier(self) -> bool:
        """Load the page before the first loaded message; ``False`` when there is none to
        load (at the start, nothing shown, or a load is running)."""
        store, sid = self._store, self._session_id
        if store is None or sid is None or self._at_start or self._loading is not None:
            return False
        first = self.model.message(0)
        if first is None:
            return False
        self._start(
            "earlier", self._load_earlier(self._generation, store, sid, first.sort_key)
        )
        self._update_status()
        return True

    def toggle(self, index: QModelIndex | None = None) -> bool:
        """Expand/collapse the reasoning or long message at ``index`` (default: current)."""
        index = index if index is not None else self.view.currentIndex()
        if not index.isValid():
            return False
        anchor = self.view.anchor()
        anchor.at_bottom = False  # an opened row grows downwards; keep the top in place
        if not self.delegate.toggle(index):
            return False
        self.view.relayout(keep=anchor)
        return True

    def set_full(self, index: QModelIndex, full: bool) -> None:
        """Show all of a long message (``full``) or only its start again."""
        anchor = self.view.anchor()
        anchor.at_bottom = False
        self.delegate.set_full(index, full)
        self.view.relayout(keep=anchor)

    def select_message(self, message_id: int) -> bool:
        """Make a loaded message current and selected, and scroll to it."""
        row = self.model.row_of(message_id)
        if row is None:
            return False
        index = self.model.index(row, 0)
        self.view.setCurrentIndex(index)
        self.view.scrollTo(index)
        return True

    def copy_text(self) -> bool:
        """Put the current message's text on the clipboard."""
        m = self.current_message()
        if m is None:
            return False
        QGuiApplication.clipboard().setText(m.text)
        return True

    def copy_raw(self) -> bool:
        """Put the current message's stored item (pretty JSON) on the clipboard."""
        m = self.current_message()
        if m is None:
            return False
        QGuiApplication.clipboard().setText(raw_json(m, self._format()))
        return True

    def toPlainText(self) -> str:  # noqa: N802 - the name QTextEdit uses
        """The loaded conversation as a person reads it: per message a header line (role,
        kind, pairing, encryption badge, time, id) and its body as rendered (collapsed rows as shown)."""
        out: list[str] = []
        for m in self.model.messages:
            out.append(self.delegate.header_text(m))
            if m.kind == "reasoning" and m.id not in self.delegate.expanded:
                out.append(" ".join(m.text.split()))
            else:
                out.append(self.delegate.document(m).toPlainText())
                if self.delegate.long_size(m):
                    out.append(self.delegate.footer_text(m))
        return "\n".join(out)

    def raw_of(self, message: Message) -> Any:
        """What the store holds for ``message`` (the item, or a flux row's dict)."""
        return raw_document(message, self._format())

    # -- loading ---------------------------------------------------------------------

    def _format(self) -> str | None:
        return self._store.format if self._store is not None else None

    def _start(self, what: str, coro: Any) -> None:
        self._set_loading(what)
        self._task = self._bridge.start(self._key, coro, self._on_loaded, self._on_load_failed)

    def _set_loading(self, what: str | None) -> None:
        was = self._loading is not None
        self._loading = what
        if was != (what is not None):
            self.busyChanged.emit(what is not None)

    async def _prepare(self, generation: int, messages: list[Message]) -> None:
        """Build the documents of a page in slices, letting the event loop run between."""
        # pygments is pure Python: lex the page's code blocks in a worker thread, so that
        # building a document on the UI thread only applies colours.
        full = set(self.delegate.full)
        await asyncio.to_thread(lambda: pretokenize(highlight_jobs(messages, full=full)))
        started = time.perf_counter()
        for m in messages:
            if generation != self._generation:
                return
            self.delegate.prepare(m)
            if time.perf_counter() - started > SLICE:
                await asyncio.sleep(0)
                started = time.perf_counter()

    async def _load_latest(
        self,
        generation: int,
        store: Store,
        session_id: str,
        *,
        limit: int | None = None,
        quiet: bool = False,
    ) -> tuple[str, int, SessionInfo | None, list[Message]]:
        limit = limit or self.page_size
        if quiet:  # a reload for live refresh: a session gone meanwhile is no error
            info = await store.session_info(session_id, branch=self.branch)
            if info is None:
                return "gone", generation, None, []
        else:
            info = await store.session_info(session_id, branch=self.branch)
            if info is None:
                info = await store.require_session(session_id)
        messages = await store.page_messages(session_id, branch=self.branch, limit=limit)
        await self._prepare(generation, messages)
        return ("reloaded" if quiet else "latest"), generation, info, messages

    async def _load_earlier(
        self, generation: int, store: Store, session_id: str, anchor: tuple[Any, ...]
    ) -> tuple[str, int, None, list[Message]]:
        messages = await store.page_messages(
            session_id, branch=self.branch, limit=self.page_size, anchor=anchor, direction="backward"
        )
        await self._prepare(generation, messages)
        return "earlier", generation, None, messages

    def _on_turns_counted(self, result: tuple[int, int]) -> None:
        generation, base = result
        if generation == self._generation:
            self._turn_base, self._turns = int(base), None
            self.view.viewport().update()

    def _on_loaded(self, result: tuple[str, int, SessionInfo | None, list[Message]]) -> None:
        what, generation, info, messages = result
        if generation != self._generation:
            return
        if what == "gone":
            self._set_loading(None)
            self._restore = None
            self._show_gone()
            return
        self._settling = True
        try:
            self._show_page(what, info, messages)
        finally:
            self._settling = False
        self._set_loading(None)
        self._update_status()
        if what in ("latest", "reloaded"):
            assert self._session_id is not None
            self.loaded.emit(self._session_id)
        else:
            self.earlierLoaded.emit(len(messages))
        self._maybe_load_earlier()
        if self._catch_queued:
            self.catch_up()

    def _show_page(self, what: str, info: SessionInfo | None, messages: list[Message]) -> None:
        self._window += 1
        if what in ("latest", "reloaded"):
            restore, self._restore = self._restore, None
            limit = restore.limit if restore is not None else self.page_size
            self._info = info
            self._at_start = len(messages) < limit
            if what == "reloaded":
                old = {m.id: m for m in self.model.messages}
                self._gone = False
                # Documents are cached by message id: drop those whose message changed.
                self.delegate.forget({m.id for m in messages if m.id in old and old[m.id] != m})
                self.pairs.clear()
            total = info.messages if info is not None else len(messages)
            # (A write between the count and the page makes this wrong; catch_up finds out.)
            self._before = 0 if self._at_start else max(total - len(messages), 0)
            self.pairs.add(messages)
            self.model.set_messages(messages)
            if messages:
                self.view.set_placeholder("")
                self.view.doItemsLayout()
                if restore is None:
                    self.view.scrollToBottom()
                    last = self.model.index(len(messages) - 1, 0)
                    self.view.selectionModel().setCurrentIndex(
                        last, self.view.selectionModel().SelectionFlag.NoUpdate
                    )
                else:
                    self._restore_place(restore)
            else:
                self._set_current(None)
                self._show_placeholder("This session has no messages.")
        else:
            self._at_start = len(messages) < self.page_size
            if self._before is not None:
                self._before = 0 if self._at_start else max(self._before - len(messages), 0)
            self.pairs.add(messages)
            anchor = self.view.anchor()
            self.model.prepend(messages)
            self.view.relayout(keep=anchor)
            self.view.viewport().update()  # pairing notes of rows already shown may change

    def _restore_place(self, restore: _Restore) -> None:
        """Scroll and select as before a reload: the same message at the same height (at
        the bottom if the view was there or that message is gone), the same selection and
        current message (else the top one, or the last)."""
        selection = self.view.selectionModel()
        flag = QItemSelectionModel.SelectionFlag
        for mid in restore.selected:
            row = self.model.row_of(mid)
            if row is not None:
                selection.select(self.model.index(row, 0), flag.Select)
        top_row = self.model.row_of(restore.top_id) if restore.top_id is not None else None
        keep_top = not restore.at_bottom and top_row is not None
        # The current row first: making a row current scrolls it into view.
        current = self.model.row_of(restore.current_id) if restore.current_id is not None else None
        if current is None:
            current = top_row if keep_top else self.model.rowCount() - 1
        selection.setCurrentIndex(self.model.index(current, 0), flag.NoUpdate)
        if keep_top:
            assert top_row is not None
            bar = self.view.verticalScrollBar()
            top = self.view.visualRect(self.model.index(top_row, 0)).top()
            bar.setValue(bar.value() + top - restore.top_px)
        else:
            self.view.scrollToBottom()

    # -- live refresh ------------------------------------------------------------------

    def _stop_live(self) -> None:
        """Forget a running or queued catch-up (a new session, a reload, clear())."""
        self._bridge.cancel(self._live_key)
        self._catching = False
        self._catch_queued = False
        self._gone = False
        self._broken = False
        self._before = 0
        self._window += 1

    async def _catch_up(
        self,
        generation: int,
        window: int,
        store: Store,
        session_id: str,
        loaded: tuple[Message, ...],
        before: int | None,
        at_start: bool,
        gone: bool,
    ) -> tuple[str, int, int, SessionInfo | None, list[Message], int | None]:
        """What changed in the session since ``loaded`` (the loaded messages) was read:
        ``("gone", …)``, ``("reload", …)`` or ``("append", …, info, new messages, before)``
        where ``before`` is the number of messages before the loaded ones."""
        info = await store.session_info(session_id, branch=self.branch)
        if info is None:
            return "gone", generation, window, None, [], None
        if gone:
            return "reload", generation, window, info, [], None
        size = self.page_size
        last = loaded[-1] if loaded else None
        # Read from the message before the last loaded one: the first row must be that
        # last message, unchanged (else it was edited or deleted, or ids were moved).
        if last is None:
            anchor, expect = None, None
        elif len(loaded) >= 2:
            anchor, expect = loaded[-2].sort_key, last
        elif at_start:
            anchor, expect = None, last
        else:
            return "reload", generation, window, info, [], None
        page = await store.page_messages(
            session_id, branch=self.branch, limit=size + (expect is not None), anchor=anchor, direction="forward"
        )
        full = len(page) == size + (expect is not None)
        if expect is not None:
            if not page or page[0] != expect:
                return "reload", generation, window, info, [], None
            page = page[1:]
        new = list(page)
        while full and new:
            if len(new) >= CATCH_UP_MAX:
                return "reload", generation, window, info, [], None
            page = await store.page_messages(
                session_id, branch=self.branch, limit=size, anchor=new[-1].sort_key, direction="forward"
            )
            new.extend(page)
            full = len(page) == size
        n_loaded = len(loaded)
        if before is None or info.messages != before + n_loaded + len(new):
            # The count does not add up: messages changed before or among the loaded ones,
            # or the writer added more between our queries. Count again: if the count
            # moved, the writer is busy and we cannot tell; append what is surely new (the
            # last loaded message is still in place) and check at a quieter catch-up.
            again = await store.session_info(session_id, branch=self.branch)
            if again is None:
                return "gone", generation, window, None, [], None
            if again.messages == info.messages:
                # A real difference: check the loaded messages against the store; if they
                # are intact, only the count before them was off.
                if n_loaded > max(RELOAD_MAX, size):
                    return "reload", generation, window, info, [], None
                if n_loaded:
                    if new:
                        check = await store.page_messages(
                            session_id, branch=self.branch, limit=n_loaded, anchor=new[0].sort_key,
                            direction="backward",
                        )
                    else:
                        check = await store.page_messages(session_id, branch=self.branch, limit=n_loaded)
                    if check != list(loaded):
                        return "reload", generation, window, info, [], None
                before = info.messages - n_loaded - len(new)
                if before < 0:
                    return "reload", generation, window, info, [], None
            info = again
        await self._prepare(generation, new)
        return "append", generation, window, info, new, before

    def _on_caught_up(self, result: tuple[Any, ...]) -> None:
        what, generation, window, info, new, before = result
        self._catching = False
        if generation != self._generation or self._session_id is None:
            return
        if window != self._window:  # the loaded messages changed meanwhile: again
            self.catch_up()
            return
        if what == "gone":
            if not self._gone:
                self._show_gone()
        elif what == "reload":
            self.reload(keep_position=True)
            return
        else:
            self._append(info, new, before)
        if self._catch_queued:
            self.catch_up()

    def _append(self, info: SessionInfo, new: list[Message], before: int | None) -> None:
        self._info = info
        self._before = before
        if before is not None and before > 0 and self._at_start:
            self._at_start = False  # messages appeared before the first loaded one
        if new:
            self._window += 1
            anchor = self.view.anchor()
            self._settling = True
            try:
                self.pairs.add(new)
                was_empty = not self.model.rowCount()
                self.model.append(new)
                self.view.set_placeholder("")
                if was_empty:
                    self.view.doItemsLayout()
                    self.view.scrollToBottom()
                else:
                    self.view.relayout(keep=anchor)
                self.view.viewport().update()  # pairing notes of rows already shown
            finally:
                self._settling = False
        self._update_status()
        self.caughtUp.emit(len(new))

    def _show_gone(self) -> None:
        sid = self._session_id
        self._gone = True
        self._window += 1
        self._info = None
        self._at_start = True
        self._before = 0
        self.pairs.clear()
        self.delegate.reset()
        self.model.clear()
        self._set_current(None)
        self.status.setText("")
        self._show_placeholder(GONE_TEXT)
        if sid is not None:
            self.sessionGone.emit(sid)

    def _on_catch_up_failed(self, error: Exception) -> None:
        log.info("catching up with the open session failed: %s", error)
        self._catching = False
        self._catch_queued = False

    def _on_load_failed(self, error: Exception) -> None:
        what = self._loading
        self._set_loading(None)
        if what == "earlier":
            self._earlier_failed = True  # no retry loop on every scroll; reload() retries
            self._update_status()
        else:
            self._broken = True
            self._catch_queued = False
            self._restore = None
            self.model.clear()
            self._set_current(None)
            self._show_placeholder("This session could not be loaded.")
            self.status.setText("")
        self.failed.emit(error)

    def _maybe_load_earlier(self, *_args: Any) -> None:
        if (
            self._loading is not None
            or self._settling
            or self._at_start
            or self._earlier_failed
            or self._session_id is None
            or not self.model.rowCount()
        ):
            return
        if self.view.verticalScrollBar().value() <= max(self.view.viewport().height(), 300):
            self.load_earlier()

    # -- display ---------------------------------------------------------------------

    def _show_placeholder(self, text: str) -> None:
        self.view.set_placeholder(text)

    def _update_status(self) -> None:
        loaded = self.model.rowCount()
        total = self._info.messages if self._info is not None else None
        if total is not None and (self._at_start or loaded >= total):
            text = f"all {loaded:,} message" + ("" if loaded == 1 else "s")
        elif total is not None:
            text = f"latest {loaded:,} of {total:,} messages"
        else:
            text = f"{loaded:,} messages loaded"
        if self._loading == "earlier":
            text += " · loading earlier…"
        elif self._earlier_failed:
            text += " · loading earlier messages failed"
        self.status.setText(text)

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        m = current.data(MESSAGE_ROLE) if current.isValid() else None
        self._set_current(m if isinstance(m, Message) else None)

    def _set_current(self, m: Message | None) -> None:
        if m is self._current:
            return
        self._current = m
        if m is not None:
            self.inspector.show_message(m, self.raw_of(m))
        else:
            self.inspector.clear()
        self.currentMessageChanged.emit(m)

    def _context_menu(self, pos: QPoint) -> None:
        index = self.view.indexAt(pos)
        if index.isValid():
            selection = self.view.selectionModel()
            if selection.isSelected(index):  # keep a multiple selection for its menu
                selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
            else:
                self.view.setCurrentIndex(index)
        menu = self.build_context_menu(index)
        menu.exec(self.view.viewport().mapToGlobal(pos))
        menu.deleteLater()

    # -- turns -------------------------------------------------------------------------

    def turn_of(self, m: Message) -> int | None:
        """The turn number a user message opens (``None`` for other messages, or while
        the turns before the loaded ones are being counted)."""
        if self._turn_base is None or not starts_turn(m):
            return None
        if self._turns is None:
            messages = self.model.messages
            numbers = turn_numbers(messages, self._turn_base)
            self._turns = {
                msg.id: n for msg, n in zip(messages, numbers, strict=True) if starts_turn(msg)
            }
        return self._turns.get(m.id)

    def _on_turns_reset(self) -> None:
        self._turns = None
        self._turn_base = None
        self._bridge.cancel(self._turns_key)
        messages = self.model.messages
        if not messages or self._at_start:
            self._turn_base = 0
        elif self._store is not None and self._session_id is not None:
            self._bridge.start(
                self._turns_key,
                self._count_turns(self._generation, self._store, self._session_id, messages[0]),
                self._on_turns_counted,
            )

    async def _count_turns(
        self, generation: int, store: Store, session_id: str, first: Message
    ) -> tuple[int, int]:
        return generation, await store.count_turns_before(session_id, first.sort_key, branch=self.branch)

    def _on_rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        if first == 0 and self._turn_base is not None and self.model.rowCount() > last + 1:
            added = self.model.messages[first : last + 1]  # earlier messages, prepended
            self._turn_base = max(0, self._turn_base - sum(starts_turn(m) for m in added))
        self._turns = None

    def set_origin(self, text: str | None) -> None:
        """Show where the session was forked from (``None``: hide)."""
        metrics = self.origin.fontMetrics()
        self.origin.setText(
            metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, 360) if text else ""
        )
        self.origin.setToolTip(esc(text) if text else "")
        self.origin.setVisible(bool(text))

    def selected_messages(self) -> list[Message]:
        """The selected messages in stored order (the current one when none is selected)."""
        rows = sorted({i.row() for i in self.view.selectionModel().selectedIndexes()})
        picked = [m for m in (self.model.message(r) for r in rows) if m is not None]
        current = self.current_message()
        if not picked and current is not None:
            picked = [current]
        return picked

    def build_context_menu(self, index: QModelIndex) -> QMenu:
        """The context menu for the message at ``index`` (not shown); ``menu_hook``, when
        set, adds its own entries (the window's edit actions)."""
        menu = QMenu(self.view)
        m = index.data(MESSAGE_ROLE) if index.isValid() else None
        has = isinstance(m, Message)
        copy_text = menu.addAction("Copy text", self.copy_text)
        copy_text.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        copy_text.setEnabled(has)
        copy_raw = menu.addAction("Copy raw JSON", self.copy_raw)
        copy_raw.setShortcut(QKeySequence("Ctrl+Shift+C"))
        copy_raw.setEnabled(has)
        if has and isinstance(m, Message):
            delegate = self.delegate
            keep = QPersistentModelIndex(index)
            if delegate.is_collapsible(m):
                menu.addSeparator()
            if m.kind == "reasoning":
                opened = m.id in delegate.expanded
                menu.addAction(
                    "Collapse reasoning" if opened else "Expand reasoning",
                    lambda: self.toggle(QModelIndex(keep)),
                )
            if delegate.long_size(m) and (m.kind != "reasoning" or m.id in delegate.expanded):
                full = m.id in delegate.full
                menu.addAction(
                    "Show less" if full else "Show all",
                    lambda: self.set_full(QModelIndex(keep), not full),
                )
            partner = self.pairs.partner(m)
            if partner is not None:
                menu.addSeparator()
                label = "Go to tool output" if m.kind == "tool_call" else "Go to tool call"
                menu.addAction(label, lambda pid=partner.id: self.select_message(pid))
        if self.menu_hook is not None:
            self.menu_hook(menu, m if has else None)
        return menu
