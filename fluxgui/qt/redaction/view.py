"""View › Redact: the conversation shown redacted.

While it is on, every page the conversation pane loads goes through a
:class:`~fluxgui.services.redaction.review.ShownRedaction` (in a worker thread, see
``pane.shown``) before its cards are built: placeholders stand where the findings were,
the inspector and the Copy actions see the redacted message. Hovering a card tells the
placeholders in it, their kinds and masked values (the placeholder under the pointer
first). Turning it off reloads the session as stored.

While it is on the window has one :class:`~fluxgui.services.redaction.Redactor`: every
session shown, every comparison and merged timeline opened, and the session ids the
window shows (``pane.ids``, :mod:`fluxgui.qt.shown_ids`) go through it, so one value has
one placeholder wherever the window shows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QToolTip

from fluxgui.core.model import Message
from fluxgui.core.roles import PageTransform
from fluxgui.services.redaction import Detectors, Redactor
from fluxgui.services.redaction.review import ShownRedaction, kind_label

from ..conversation.model import MESSAGE_ROLE

if TYPE_CHECKING:
    from ..conversation.pane import ConversationPane

_PLACEHOLDER = re.compile(r"\[[A-Z0-9_]+_\d+\]")


class ViewRedaction(QObject):
    """The pane's redacted view (``on``), a redaction per session shown."""

    def __init__(self, pane: ConversationPane, detectors: Callable[[], Detectors]) -> None:
        super().__init__(pane)
        self.pane = pane
        #: makes the detectors of a shown session's redaction (tests inject a failing one)
        self.detectors = detectors
        self._shown: ShownRedaction | None = None
        self._for: tuple[int, str | None] | None = None
        #: the window's redactor while on (its numbering: every view, every session id)
        self.redactor: Redactor | None = None
        pane.view.viewport().installEventFilter(self)
        #: says the conversation is shown redacted (above the messages, while on)
        self.notice = QLabel(
            "Shown redacted: hover a placeholder for its kind; copies are redacted too.", pane,
        )
        self.notice.setWordWrap(True)
        self.notice.setContentsMargins(10, 2, 10, 4)
        self.notice.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.notice.hide()
        pane.header_area.addWidget(self.notice)

    @property
    def on(self) -> bool:
        return self.pane.shown is not None

    def set_on(self, on: bool) -> None:
        """Show the conversation redacted (``on``) or as stored, reloading what is shown."""
        if on == self.on:
            return
        self._shown, self._for = None, None
        self.redactor = Redactor(self.detectors()) if on else None
        self.pane.shown = self.page if on else None
        self.pane.shown_anew = self.anew if on else None
        self.pane.ids.set_redact(self.redactor.session_id if self.redactor is not None else None)
        self.notice.setVisible(on)
        if self.pane.session_id is not None:
            self.pane.paging.reload(keep_position=True)
        else:
            self.pane.view.viewport().update()

    def current(self) -> ShownRedaction:
        """The redaction of the session shown (a new one for another session: its
        findings by message), through the window's redactor."""
        key = (id(self.pane.store), self.pane.session_id)
        if self._shown is None or self._for != key:
            self._shown, self._for = ShownRedaction(*self._redactor()), key
        return self._shown

    def anew(self) -> PageTransform:
        """A redaction for another view (a comparison's both sides, a merged timeline),
        through the window's redactor: its placeholders are the window's."""
        return ShownRedaction(*self._redactor()).page

    def _redactor(self) -> tuple[Detectors, Redactor]:
        redactor = self.redactor if self.redactor is not None else Redactor(self.detectors())
        return redactor.detectors, redactor

    def page(self, messages: list[Message]) -> list[Message]:
        """A page redacted (in a worker thread)."""
        return self.current().page(messages)

    def tip(self, m: Message, placeholder: str | None = None) -> str:
        """The card's tooltip: the placeholder under the pointer first, then all of them."""
        shown = self._shown
        if shown is None or not self.on:
            return ""
        text = shown.tip(m.id)
        if not text:
            return ""
        if placeholder is not None:
            found = shown.found.get(m.id, [])
            for s in found:
                if s.placeholder == placeholder:
                    line = f"{s.placeholder}: {kind_label(s.kind)} ({s.masked})"
                    return line if len(found) == 1 else f"{line}\n\n{text}"
        return text

    # -- hovering ----------------------------------------------------------------------

    def eventFilter(self, watched: Any, event: Any) -> bool:  # noqa: N802 - Qt's name
        if event.type() != QEvent.Type.ToolTip or not self.on:
            return False
        view = self.pane.view
        index = view.indexAt(event.pos())
        m = index.data(MESSAGE_ROLE) if index.isValid() else None
        if not isinstance(m, Message):
            return False
        tip = self.tip(m, self._under(m, view.visualRect(index), event.pos()))
        if not tip:
            return False
        QToolTip.showText(event.globalPos(), f"<p style='white-space:pre'>{escape(tip)}</p>", view)
        return True

    def _under(self, m: Message, rect: Any, pos: Any) -> str | None:
        """The placeholder under ``pos`` in the card's body (``None``: none, or the body
        is not a laid-out document)."""
        try:
            body = self.pane.delegate.layout_rows(rect, m).body
            if not body.contains(pos):
                return None
            doc = self.pane.delegate.document(m)
            layout = doc.documentLayout()
            at = layout.hitTest(QPointF(pos - body.topLeft()), Qt.HitTestAccuracy.FuzzyHit)
            text = doc.toPlainText()
        except (AttributeError, TypeError):  # a chunked plain body: the card's tip only
            return None
        for match in _PLACEHOLDER.finditer(text):
            if match.start() <= at <= match.end():
                return match.group()
        return None
