"""A message card's header line: role icon and name, turn and its tokens, kind, the tool
call/output pairing note, the encryption badge, the hidden-characters warning, time and id.

:meth:`CardHeader.header_parts` lays the line out (and tests read it): at any width the
parts never overlap; what does not fit goes in order — the id is elided then left out,
then the middle is elided, then badges are left out — the role and the time stay, at 2×
scale or in a narrow pane.

:class:`CardHeader` is the part of :class:`~fluxgui.qt.conversation.delegate.
MessageDelegate` that paints and tells that line; :class:`CardHost` is what it asks of
the pane it paints for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QPen

from fluxgui.core.bodies import body_source
from fluxgui.core.display import LOCK, badge_colours, encryption_badge, kind_label, short_time
from fluxgui.core.model import Message
from fluxgui.core.pairing import ToolPairs, call_key, message_calls, output_key, tool_name
from fluxgui.core.text import plural
from fluxgui.core.visible import hidden_characters, visible
from fluxgui.services.branches import short_tokens
from fluxgui.core.roles import Store

from .geometry import BADGE_GAP, BADGE_PAD, ICON
from .icons import role_icon

if TYPE_CHECKING:
    from PySide6.QtWidgets import QListView

    from fluxgui.qt.markdown import DocTheme


#: the badge of a card whose text holds bidi controls or zero-width characters
HIDDEN_BADGE = "⚠ hidden characters"
#: the header's badges by part name, in the order shown (see ``CardHeader.badges``)
BADGE_PARTS = ("badge", "doctor", "note", "hidden")
#: the least room between the middle of a header and its time/id
RIGHT_GAP = 12


_TIME = re.compile(r"^(\d{4})-(\d\d-\d\d) (\d\d:\d\d)(:\d\d(?:\.\d+)?)?( UTC)?$")


def _shorter_times(text: str) -> list[str]:
    """``text`` (a card's time) and shorter forms of it, longest first:
    ``2025-03-13 10:31:23 UTC`` → ``2025-03-13 10:31`` → ``03-13 10:31`` → ``10:31``."""
    match = _TIME.match(text)
    if not match:
        return [text]
    year, day, minute = match.group(1), match.group(2), match.group(3)
    return [text, f"{year}-{day} {minute}", f"{day} {minute}", minute]


@dataclass(frozen=True)
class HeaderPart:
    """One painted part of a card's header line: what (``icon``, ``role``, ``middle``,
    ``badge``, ``hidden``, ``right``), where (within the row) and its text."""

    name: str
    rect: QRect
    text: str


class CardHost(Protocol):
    """What a message delegate asks of the pane it paints for (the conversation pane, or
    the chat panel's live turn)."""

    #: the store the messages come from (``None``: not stored ones, no encryption badges)
    @property
    def store(self) -> Store | None: ...
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
    _hidden: dict[int, list[str]]  # message id → the hidden characters its text holds
    _header_cache: dict[tuple[Any, ...], list[HeaderPart]]  # header_parts' layouts
    _fonts: tuple[QFont, QFont, QFont] | None = None  # see _header_fonts
    _font_keys: tuple[str, str] = ("", "")

    if TYPE_CHECKING:

        def is_collapsible(self, m: Message) -> bool: ...  # the delegate's

    def header_parts(self, rect: QRect, m: Message) -> list[HeaderPart]:
        """Where each part of ``m``'s header line goes within ``rect`` (the header row),
        and what it says: ``icon``, ``role``, ``middle`` (turn, kind, pairing), the
        badges (:data:`BADGE_PARTS`: encryption, the doctor's, a note, hidden characters)
        and ``right`` (time and id). No two parts overlap, and none leaves ``rect``:
        when the line is too narrow, the id is elided then left out, then the middle is
        elided, then badges are left out; the role and the time keep their room longest.

        Laid out once per message, size and content of the line (every paint asks, and
        measuring text costs more than the painting): kept by what it depends on."""
        fonts = self._header_fonts()
        badges = self.badges(m)
        words = self.middle_words(m)
        key = (
            m.id, m.role, m.created_at, m.short_label, rect.width(), rect.height(),
            tuple((name, b[0] if b else None) for name, b in badges), tuple(words),
            self._font_keys,
        )
        cache = self._header_cache
        parts = cache.get(key)
        if parts is None:
            if len(cache) >= 4096:
                cache.clear()
            parts = cache[key] = self._lay_out_header(
                QRect(0, 0, rect.width(), rect.height()), m, fonts, badges, words
            )
        dx, dy = rect.left(), rect.top()
        return [HeaderPart(p.name, p.rect.translated(dx, dy), p.text) for p in parts]

    def _lay_out_header(
        self, rect: QRect, m: Message, fonts: tuple[QFont, QFont, QFont],
        found: tuple[tuple[str, tuple[str, str, str] | None], ...], words: list[str],
    ) -> list[HeaderPart]:
        bold_fm, fm, small_fm = (QFontMetrics(f) for f in fonts)
        top, height = rect.top(), rect.height()
        right_edge = rect.left() + rect.width()
        parts = [HeaderPart("icon", QRect(rect.left(), top + (height - ICON) // 2, ICON, ICON), "")]
        x = rect.left() + ICON + 6
        if x >= right_edge:
            return parts

        role = visible(m.role, keep_layout=False, pictures=False)
        role_full = min(160, bold_fm.horizontalAdvance(role))
        role_least = min(role_full, bold_fm.horizontalAdvance("M" * 5))
        label = visible(m.short_label, keep_layout=False, pictures=False)
        room = right_edge - x
        # the time, shorter when the line is narrow (no seconds, no year, the hour only)
        time_text = visible(short_time(m.created_at), keep_layout=False, pictures=False)
        for form in _shorter_times(time_text):
            time_text = form
            if role_least + small_fm.horizontalAdvance(form) + RIGHT_GAP <= room:
                break
        time_w = small_fm.horizontalAdvance(time_text) if time_text else 0
        # The role and the time keep their room before the badges, the middle and the id
        # (issue 37: tool cards lost their time as soon as a side panel narrowed the pane).
        keep_time = bool(time_text) and role_least + time_w + RIGHT_GAP <= room
        if keep_time:
            room -= time_w + RIGHT_GAP

        badges: list[tuple[str, str, int]] = []  # (name, text, width with its gap)
        for name, badge in found:
            if badge is None:
                continue
            w = self._badge_width(badge[0], fonts[2]) + BADGE_GAP
            if w <= room - role_least:
                badges.append((name, badge[0], w))
                room -= w
        fits = bold_fm.horizontalAdvance(role) <= min(160, room)  # (elidedText at the exact width may cut)
        role_text = role if fits else bold_fm.elidedText(role, Qt.TextElideMode.ElideRight, max(0, min(role_full, room)))
        role_w = bold_fm.horizontalAdvance(role_text)
        if role_text:
            parts.append(HeaderPart("role", QRect(x, top, role_w, height), role_text))
            x += role_w
            room -= role_w

        middle = ("  ·  " + "  ·  ".join(words)) if words else ""
        middle_w = fm.horizontalAdvance(middle)
        # the id: whole, else elided in its middle, else left out — before the middle is
        gap = small_fm.horizontalAdvance("  ")
        id_room = room - middle_w - (gap if keep_time else RIGHT_GAP)
        shown_id = ""
        if label and id_room > 0:
            shown_id = small_fm.elidedText(label, Qt.TextElideMode.ElideMiddle, id_room)
            if shown_id != label and small_fm.horizontalAdvance(shown_id) < small_fm.horizontalAdvance("M" * 6):
                shown_id = ""  # a few letters and an ellipsis tell nothing
        right = "  ".join(t for t in ((time_text if keep_time else ""), shown_id) if t)
        right_w = small_fm.horizontalAdvance(right) if right else 0
        if middle:
            # what the id takes beside the time (the time's own room is taken already)
            id_w = (right_w - time_w if keep_time else right_w + RIGHT_GAP) if shown_id else 0
            middle_room = room - id_w
            shown = fm.elidedText(middle, Qt.TextElideMode.ElideRight, max(0, middle_room))
            if shown.strip(" ·…"):
                w = fm.horizontalAdvance(shown)
                parts.append(HeaderPart("middle", QRect(x, top, w, height), shown))
                x += w
        for name, text, w in badges:
            parts.append(HeaderPart(name, QRect(x + BADGE_GAP, top, w - BADGE_GAP, height), text))
            x += w
        if right:
            parts.append(HeaderPart("right", QRect(right_edge - right_w, top, right_w, height), right))
        return parts

    def _header_fonts(self) -> tuple[QFont, QFont, QFont]:
        """(bold: the role, the view's font: the middle, small: time, id and badges);
        made once per font of the view (see :meth:`forget_fonts`)."""
        if self._fonts is None:
            font = QFont(self._view.font())
            bold = QFont(font)
            bold.setBold(True)
            small = QFont(font)
            if small.pointSizeF() > 0:
                small.setPointSizeF(small.pointSizeF() * 0.92)
            self._fonts = (bold, font, small)
            self._font_keys = (bold.key(), small.key())
        return self._fonts

    def forget_fonts(self) -> None:
        """The view's font changed: the header's fonts are made again."""
        self._fonts = None
        self._header_cache.clear()

    def middle_words(self, m: Message) -> list[str]:
        """The header's middle: turn (and its tokens), kind, the tool pairing note."""
        words = []
        turn = self._pane.turn_of(m)
        if turn is not None:
            words.append(f"turn {turn}")
            tokens = self._pane.turn_tokens.get(turn)
            if tokens is not None:  # an Advanced store's turn usage (the branch bar's)
                words.append(short_tokens(tokens))
        if m.kind != "message":
            mark = ""
            if self.is_collapsible(m) and m.kind == "reasoning":
                mark = " ▾" if m.id in self.expanded else " ▸"
            words.append(kind_label(m.kind) + mark)
        pair = self.pair_text(m)
        if pair:
            words.append(pair)
        return words

    def _paint_header(
        self, painter: QPainter, rect: QRect, m: Message, colour: QColor, palette: QPalette
    ) -> None:
        bold, font, small = self._header_fonts()
        muted = self.theme.muted
        for part in self.header_parts(rect, m):
            box = part.rect
            if part.name == "icon":
                dpr = painter.device().devicePixelRatioF() if painter.device() else 1.0
                painter.drawPixmap(box.topLeft(), role_icon(m.role, colour, ICON, dpr))
            elif part.name in BADGE_PARTS:
                badge = self.badge_named(m, part.name)
                if badge is not None:
                    self._paint_badge(painter, QPoint(box.left(), box.center().y()), badge, small)
            else:
                painter.setFont({"role": bold, "middle": font}.get(part.name, small))
                painter.setPen(colour if part.name == "role" else muted)
                align = Qt.AlignmentFlag.AlignRight if part.name == "right" else Qt.AlignmentFlag.AlignLeft
                # One pixel wider than measured: the last glyph's antialiasing is kept.
                painter.drawText(box.adjusted(0, 0, 1, 0), align | Qt.AlignmentFlag.AlignVCenter,
                                 part.text)

    def hidden_badge(self, m: Message) -> tuple[str, str, str] | None:
        """The warning badge of a message whose text holds bidi controls or zero-width
        (or tag) characters: ``(text, tooltip listing them, state)``; ``None``: none."""
        found = self._hidden.get(m.id)
        if found is None:
            found = hidden_characters(m.text)
            source = body_source(m)
            if source is not m.text:
                found += [c for c in hidden_characters(source) if c not in found]
            found += [c for c in hidden_characters(m.role) if c not in found]
            self._hidden[m.id] = found
        if not found:
            return None
        listed = "\n".join(found[:12]) + ("\n…" if len(found) > 12 else "")
        tip = (
            "This message holds characters that hide text or change how it displays "
            "(shown as ⟨U+…⟩ markers):\n" + listed
        )
        return HIDDEN_BADGE, tip, "expired"

    def badges(self, m: Message) -> tuple[tuple[str, tuple[str, str, str] | None], ...]:
        """Every badge of ``m``'s header, by part name, in the order they are shown:
        encryption (``badge``), the doctor's marker, a reviewer's note, hidden characters
        — a card shows them all (a note is not hidden by a doctor marker)."""
        return tuple((name, self.badge_named(m, name)) for name in BADGE_PARTS)

    def badge_named(self, m: Message, name: str) -> tuple[str, str, str] | None:
        """The header badge ``name`` of :data:`BADGE_PARTS` of ``m`` (``None``: none)."""
        pane = self._pane
        if name == "badge":
            store = pane.store if pane is not None else None
            return None if store is not None and not store.needs_key else encryption_badge(m)
        if name == "doctor":
            marker = pane.markers.get(m.id) if pane is not None else None
            # the session doctor's marker: what is wrong with this item (painted red)
            return (marker[0], marker[1], "unreadable") if marker is not None else None
        if name == "note":
            note = pane.note_marks.get(m.id) if pane is not None else None
            return (note[0], note[1], "note") if note is not None else None
        return self.hidden_badge(m) if name == "hidden" else None

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
        for _name, badge in self.badges(m):
            if badge:
                head.append(badge[0])
        head += [t for t in (short_time(m.created_at), m.short_label) if t]
        return " · ".join(head)

    def pair_text(self, m: Message) -> str:
        """The header's note on a tool call's output, or on an output's call (also for
        the calls a flux assistant message holds, and a flux ``tool`` row)."""
        pairs = self._pane.pairs
        if m.kind == "tool_call" and call_key(m):
            out = pairs.output_for(m)
            return f"→ output {out.short_label}" if out else "no output"
        key = output_key(m) if m.kind == "tool_output" else None
        if key:
            call = pairs.call_for(m)
            # a flux ``tool`` row names its tool (an SDK output item names only its type)
            name = (tool_name(m) if m.raw is None else "") or pairs.call_name(key)
            if call is None:
                # the whole session loaded: no such call at all (not one not loaded yet)
                whole = bool(getattr(self._pane, "at_start", False))
                why = "no call with this call_id in the session" if whole else "call not loaded"
                return f"{name} ← {key} ({why})" if name else f"← {key} ({why})"
            return f"← {name or tool_name(call) or 'call'} {call.short_label}"
        calls = message_calls(m)
        if calls:
            outs = [o.short_label for o in (pairs.output_for_id(c.call_id) for c in calls if c.call_id) if o]
            note = plural(len(calls), "tool call")
            return f"{note} → output {', '.join(outs)}" if outs else note
        return ""

    def call_outputs(self, m: Message) -> dict[str, str]:
        """call id → "→ output #id" for each call ``m`` holds whose output is loaded."""
        pairs = self._pane.pairs
        out: dict[str, str] = {}
        for call in message_calls(m):
            found = pairs.output_for_id(call.call_id) if call.call_id else None
            out[call.call_id] = f"→ output {found.short_label}" if found else "no output"
        return out
