"""A message card's header line: role icon and name, turn and its tokens, kind, the tool
call/output pairing note, the encryption badge, time and id.

:class:`CardHeader` is the part of :class:`~fluxgui.qt.conversation.delegate.
MessageDelegate` that paints and tells that line; :class:`CardHost` is what it asks of
the pane it paints for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QPen

from fluxgui.core.display import LOCK, badge_colours, encryption_badge, kind_label, short_time
from fluxgui.core.model import Message
from fluxgui.core.pairing import ToolPairs, call_key, output_key, tool_name
from fluxgui.core.ports import SessionStore
from fluxgui.services.branches import short_tokens

from .geometry import BADGE_GAP, BADGE_PAD, ICON
from .icons import role_icon

if TYPE_CHECKING:
    from PySide6.QtWidgets import QListView

    from fluxgui.qt.markdown import DocTheme


class CardHost(Protocol):
    """What a message delegate asks of the pane it paints for (the conversation pane, or
    the chat panel's live turn)."""

    #: the store the messages come from (``None``: not stored ones, no encryption badges)
    @property
    def store(self) -> SessionStore | None: ...
    #: call id ↔ output for the messages shown
    pairs: ToolPairs
    #: turn number → total tokens of that turn (empty: none shown)
    turn_tokens: dict[int, int]
    #: message id → the session doctor's marker ``(text, sentence)`` (empty: none)
    markers: dict[int, tuple[str, str]]
    #: message id → a review note's mark ``(text, notes)`` (empty: none)
    note_marks: dict[int, tuple[str, str]]

    def turn_of(self, m: Message) -> int | None:
        """The turn number a user message opens (``None``: none shown)."""


class CardHeader:
    """Paints a card's header line and its encryption badge, and tells them as text (a
    part of :class:`~fluxgui.qt.conversation.delegate.MessageDelegate`, whose state it
    reads: the view, the pane, the theme, the reasoning rows opened)."""

    _view: QListView
    _pane: CardHost
    theme: DocTheme
    expanded: set[int]

    if TYPE_CHECKING:

        def is_collapsible(self, m: Message) -> bool: ...  # the delegate's

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
        right = "  ".join(t for t in (short_time(m.created_at), m.short_label) if t)
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
        found = None if store is not None and not store.needs_key else encryption_badge(m)
        marker = self._pane.markers.get(m.id) if self._pane is not None and found is None else None
        # The session doctor's marker: what is wrong with this item (painted red).
        if marker is not None:
            return (marker[0], marker[1], "unreadable")
        note = self._pane.note_marks.get(m.id) if self._pane is not None and found is None else None
        return (note[0], note[1], "note") if note is not None else found

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
        head += [t for t in (short_time(m.created_at), m.short_label) if t]
        return " · ".join(head)

    def pair_text(self, m: Message) -> str:
        """The header's note on a tool call's output, or on an output's call."""
        pairs = self._pane.pairs
        if m.kind == "tool_call" and call_key(m):
            out = pairs.output_for(m)
            return f"→ output {out.short_label}" if out else "no output"
        if m.kind == "tool_output" and output_key(m):
            call = pairs.call_for(m)
            if call is None:
                return f"← {output_key(m)} (call not loaded)"
            return f"← {tool_name(call) or 'call'} {call.short_label}"
        return ""
