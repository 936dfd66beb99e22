"""The message delegate: paints each message as a card and keeps what that costs cached.

Bodies are :mod:`fluxgui.qt.markdown` documents, built and laid out once per message and
width and kept in a small LRU cache; heights are kept for every loaded message, so a
layout of every row costs one look-up each. Reasoning rows are collapsed to one line
until toggled; long bodies show a preview until "show all". The header line is painted
by :class:`~fluxgui.qt.conversation.header.CardHeader`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from PySide6.QtCore import (
    QTimer,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    Qt,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPalette,
)
from PySide6.QtWidgets import (
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
)

from fluxgui.core.bodies import HUGE_CHARS, body_source, is_long, is_markdown, utf8_size
from fluxgui.core.display import role_colour, size_label
from fluxgui.core.model import Message

from ..markdown import DocTheme, SafeDocument, message_document, warm_up_qt
from ..widgets import mix
from .geometry import (
    BAR,
    GAP,
    ICON,
    OUTER_X,
    OUTER_Y,
    PAD_B,
    PAD_L,
    PAD_R,
    PAD_T,
    RADIUS,
    CardRows,
)
from .background import BackgroundLayout
from .chunks import ChunkedBody
from .find_marks import find_selections
from .header import CardHeader, CardHost, HeaderPart
from .interaction import CardInteraction
from .model import MESSAGE_ROLE, MessageListModel

_Index = QModelIndex | QPersistentModelIndex

#: laid-out documents kept (LRU); heights are kept for every loaded message
DOC_CACHE = 600
#: rows beyond the ones seen that a resize still lays out at once
RESIZE_MARGIN = 10


class MessageDelegate(CardInteraction, BackgroundLayout, CardHeader, QStyledItemDelegate):
    """Paints one message as a card; keeps each message's document and height cached.

    Per-message state: reasoning rows are collapsed to one line until toggled
    (:meth:`toggle`); long bodies (over 20 kB) show a preview until "show all".
    """

    def __init__(self, view: QListView, pane: CardHost) -> None:
        super().__init__(view)
        self._view = view
        self._pane = pane
        self._docs: OrderedDict[tuple[Any, ...], SafeDocument] = OrderedDict()
        self._heights: dict[tuple[Any, ...], tuple[int, float]] = {}
        self._sizes: dict[int, tuple[int, QSize]] = {}  # message id -> (view width, size)
        self._header_cache: dict[tuple[Any, ...], list[HeaderPart]] = {}  # see header_parts
        self._metrics: tuple[int, int] | None = None  # header and footer line heights
        self._long: dict[int, int] = {}  # message id -> body size in bytes when long, else 0
        self._hidden: dict[int, list[str]] = {}  # message id -> hidden characters listed
        self._chars: dict[int, int] = {}  # message id -> characters of a long body
        # Resizing lays out the rows seen at once and the rest in the background: while
        # ``_lazy`` holds the ids seen, other rows keep their old heights (``_stale``).
        self._lazy: set[int] | None = None
        self._stale: set[int] = set()
        self._on_settled: Any = None
        self._relaid = 0.0  # when a huge body last re-laid out the list
        self._model: MessageListModel | None = None  # the view's (it never changes)
        self._viewport = view.viewport()
        self._work = QTimer(view)
        self._work.setSingleShot(True)
        self._work.setInterval(0)
        self._work.timeout.connect(self._do_work)
        self.expanded: set[int] = set()  # reasoning rows opened
        self.full: set[int] = set()  # long rows shown whole
        #: Markdown messages whose "show as plain text" differs from :attr:`all_plain`
        self.plain: set[int] = set()
        #: the global "show as plain text" (the window keeps it in the settings)
        self.all_plain = False
        self.theme = DocTheme.from_palette(view.palette(), view.font())
        warm_up_qt(self.theme, self._header_fonts())
        #: documents built so far (for tests and the benchmark)
        self.built = 0
        #: text found in the conversation (Ctrl+F, a search hit): highlighted in the cards;
        #: ``find_current`` is the id of the message of the current hit
        self.find_text = ""
        self.find_current: int | None = None

    # -- state ---------------------------------------------------------------------

    def reset(self) -> None:
        """Forget every cached document, height and expansion (a new session)."""
        self._docs.clear()
        self._heights.clear()
        self._sizes.clear()
        self._header_cache.clear()
        self._long.clear()
        self._hidden.clear()
        self._chars.clear()
        self._stale.clear()
        self._lazy = None
        self.expanded.clear()
        self.full.clear()
        self.plain.clear()

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
            self._hidden.pop(mid, None)
            self._chars.pop(mid, None)

    def refresh_theme(self) -> None:
        self.theme = DocTheme.from_palette(self._view.palette(), self._view.font())
        self.forget_fonts()
        self._docs.clear()
        self._heights.clear()
        self._sizes.clear()
        self._metrics = None

    def shown_plain(self, m: Message) -> bool:
        """Whether ``m``'s Markdown is shown as typed (the global switch, or this
        message's own toggle against it)."""
        return is_markdown(m) and self.all_plain != (m.id in self.plain)

    def set_plain(self, m: Message, on: bool) -> None:
        """Show one Markdown message as typed (``on``) or as Markdown."""
        if not is_markdown(m) or self.shown_plain(m) == on:
            return
        self.plain.symmetric_difference_update({m.id})
        self._sizes.pop(m.id, None)

    def set_all_plain(self, on: bool) -> None:
        """The global switch: every Markdown message as typed (per-message toggles reset)."""
        if on == self.all_plain and not self.plain:
            return
        self.all_plain = on
        self.plain.clear()
        self._sizes.clear()

    def _key(self, m: Message) -> tuple[Any, ...]:
        # The calls a message holds show their outputs: a new output, a new document.
        outputs = tuple(self.call_outputs(m).items()) if m.kind == "message" else ()
        return (m.id, m.id in self.full, self.shown_plain(m), outputs)

    def long_size(self, m: Message) -> int:
        """The body's size in bytes when it is collapsed as long, else 0."""
        size = self._long.get(m.id)
        if size is None:
            source = body_source(m)
            if m.partial is not None:  # only its start was read: the stored size
                size = m.partial
            else:
                size = utf8_size(source) if is_long(source) else 0
            self._long[m.id] = size
            self._chars[m.id] = len(source) if size else 0
        return size

    def is_huge(self, m: Message) -> bool:
        """Shown whole and longer than :data:`~fluxgui.core.bodies.HUGE_CHARS`: laid out
        in chunks as plain text (:class:`~.chunks.ChunkedBody`)."""
        if m.id not in self.full or not self.long_size(m) or m.kind == "compaction":
            return False
        if m.kind == "reasoning" and m.id not in self.expanded:
            return False
        return self._chars.get(m.id, 0) > HUGE_CHARS and self.badge(m) is None

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
        self.sizeHintChanged.emit(plain_index(index))
        return True

    def set_full(self, index: _Index, full: bool) -> None:
        m = index.data(MESSAGE_ROLE)
        if isinstance(m, Message) and self.long_size(m) and (m.id in self.full) != full:
            if m.kind == "reasoning":
                self.expanded.add(m.id)
            self.full.symmetric_difference_update({m.id})
            self._sizes.pop(m.id, None)
            self.sizeHintChanged.emit(plain_index(index))

    # -- documents -----------------------------------------------------------------

    def text_width(self) -> int:
        width = self._view.viewport().width()
        if width <= 0:
            width = 600
        return max(120, width - 2 * OUTER_X - BAR - PAD_L - PAD_R)

    def document(self, m: Message) -> SafeDocument:
        """The laid-out body of ``m`` in its current state (built or taken from cache)."""
        key = self._key(m)
        doc = self._docs.get(key)
        if doc is None and self.is_huge(m):
            # The stored text as typed, in monospace (proportional text shapes five times
            # slower; a 2 MB body is a log or data); its markers are made a piece at a time.
            doc = ChunkedBody(body_source(m), self.theme, size=self.long_size(m),  # type: ignore[assignment]
                              mono=True, partial=m.partial is not None)
            self.built += 1
            self._docs[key] = doc  # type: ignore[assignment]
        elif doc is None:
            doc = message_document(m, self.theme, full=key[1], plain=key[2], outputs=dict(key[3]))
            self.built += 1
            self._docs[key] = doc
            while len(self._docs) > DOC_CACHE:
                self._docs.popitem(last=False)
        else:
            self._docs.move_to_end(key)
        assert doc is not None  # (built above when missing)
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
        if self.is_huge(m):  # measured a chunk at a time in the background
            body = self.document(m)
            if isinstance(body, ChunkedBody) and not body.done:
                self._work.start()
            return body.size().height() if not isinstance(body, ChunkedBody) else body.height()
        key = self._key(m)
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

    def layout_rows(self, rect: QRect, m: Message) -> CardRows:
        card = rect.adjusted(OUTER_X, OUTER_Y, -OUTER_X, -OUTER_Y)
        left = card.left() + BAR + PAD_L
        width = self.text_width()
        header = QRect(left, card.top() + PAD_T, width, self._header_height())
        body_h = int(self._body_height(m) + 0.999)
        body = QRect(left, header.bottom() + 1 + GAP, width, body_h)
        footer = None
        if self.long_size(m) and not (m.kind == "reasoning" and m.id not in self.expanded):
            footer = QRect(left, body.bottom() + 1 + GAP, width, self._footer_height())
        return CardRows(card, header, body, footer)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        # Called for every loaded row on every layout (600 rows: ~25 ms in all, most of
        # it Qt's): one dict look-up when known, nothing else.
        model = self._model
        if model is None:
            found = index.model()
            model = self._model = found if isinstance(found, MessageListModel) else None
            if model is None:
                return QSize(1, 0)
        m = model.message(index.row())
        width = self._viewport.width()
        if m is None:
            return QSize(max(width, 1), 0)
        known = self._sizes.get(m.id)
        if known is not None and known[0] == width:
            return known[1]
        if known is not None and self._lazy is not None and m.id not in self._lazy:
            # A resize: a row not seen keeps its height until the background measures it.
            if not self._stale:
                self._work.start()
            self._stale.add(m.id)
            return QSize(max(width, 1), known[1].height())
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
            background = mix(base, colour, 0.07)
        elif m.kind == "message":
            background = base
        else:
            background = mix(base, text, 0.035)
        if selected:
            background = mix(background, palette.color(QPalette.ColorRole.Highlight), 0.12)
        elif hover:
            background = mix(background, text, 0.02)

        if selected:
            border, width = palette.color(QPalette.ColorRole.Highlight), 1.5
        elif current:
            border, width = mix(palette.color(QPalette.ColorRole.Highlight), base, 0.4), 1.0
        else:
            border, width = mix(text, base, 0.85), 1.0
        painter.save()
        self._paint_card(painter, QRectF(rows.card), background, colour, border, width)
        self._paint_header(painter, rows.header, m, colour, palette)
        self._paint_body(painter, rows.body, m, palette, option.rect)
        if rows.footer is not None:
            painter.setFont(self._view.font())
            painter.setPen(palette.color(QPalette.ColorRole.Link))
            painter.drawText(rows.footer, Qt.AlignmentFlag.AlignLeft, self.footer_text(m))
        painter.restore()

    @staticmethod
    def _paint_card(
        painter: QPainter, rect: QRectF, background: QColor, bar: QColor, border: QColor,
        width: float,
    ) -> None:
        """The card: a rounded frame ``width`` wide (a rounded rect in the border's colour
        with the background's inside it: filling is several times cheaper than stroking
        a path or clipping to one), and the role's bar along its left side."""
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        card = rect.adjusted(0.5, 0.5, -0.5, -0.5)  # the middle of the frame's line
        half = width / 2
        painter.setBrush(border)
        painter.drawRoundedRect(card.adjusted(-half, -half, half, half), RADIUS + half, RADIUS + half)
        inner = card.adjusted(half, half, -half, -half)
        painter.setBrush(background)
        painter.drawRoundedRect(inner, RADIUS - half, RADIUS - half)
        painter.save()
        painter.setClipRect(QRectF(inner.left(), inner.top(), BAR, inner.height()))
        painter.setBrush(bar)
        painter.drawRoundedRect(inner, RADIUS - half, RADIUS - half)
        painter.restore()
        painter.setBrush(Qt.BrushStyle.NoBrush)

    def footer_text(self, m: Message) -> str:
        if m.id in self.full:
            return "▴ Show less"
        if m.partial is not None:
            return f"▾ Show the start ({size_label(m.partial)}: the whole in Open in Viewer)"
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
        # Only what is seen is drawn: a long body is not walked from its start each paint.
        seen = self._view.viewport().rect().translated(-rect.topLeft())
        top, bottom = max(0.0, float(seen.top())), min(clip.bottom(), float(seen.bottom()))
        if isinstance(doc, ChunkedBody):  # (plain text in pieces: no find marks)
            doc.draw(painter, ctx.palette, top, bottom)
            if doc.pending:
                self._work.start()
        else:
            ctx.clip = QRectF(0, top, clip.width(), max(0.0, bottom - top + 1))
            if self.find_text:
                ctx.selections = find_selections(doc, self.find_text, current=m.id == self.find_current)
            doc.documentLayout().draw(painter, ctx)
        painter.restore()


def plain_index(index: QModelIndex | QPersistentModelIndex) -> QModelIndex:
    """A model index of either kind as the plain index Qt's signals carry."""
    if isinstance(index, QPersistentModelIndex):
        return index.sibling(index.row(), index.column())
    return index
