"""Clicks and tooltips on a message card: "Show all/less", opening reasoning, the
badges' explanations and link targets (a part of :class:`~.delegate.MessageDelegate`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPointF, QRect, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QStyleOptionViewItem, QToolTip

from fluxgui.core.display import esc
from fluxgui.core.model import Message

from .chunks import ChunkedBody
from .header import BADGE_PARTS
from .model import MESSAGE_ROLE

if TYPE_CHECKING:
    from PySide6.QtWidgets import QListView

    from .geometry import CardRows
    from .header import HeaderPart

_Index = QModelIndex | QPersistentModelIndex


class CardInteraction:
    """The delegate's ``editorEvent`` and ``helpEvent``."""

    _view: QListView
    expanded: set[int]
    full: set[int]

    if TYPE_CHECKING:

        def layout_rows(self, rect: QRect, m: Message) -> CardRows: ...
        def footer_text(self, m: Message) -> str: ...
        def set_full(self, index: _Index, full: bool) -> None: ...
        def toggle(self, index: _Index) -> bool: ...
        def header_parts(self, rect: QRect, m: Message) -> list[HeaderPart]: ...
        def badge(self, m: Message) -> tuple[str, str, str] | None: ...
        def hidden_badge(self, m: Message) -> tuple[str, str, str] | None: ...
        def badge_named(self, m: Message, name: str) -> tuple[str, str, str] | None: ...
        def document(self, m: Message) -> Any: ...

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
            for part in self.header_parts(rows.header, m):
                if part.name in BADGE_PARTS and part.rect.contains(event.pos()):
                    badge = self.badge_named(m, part.name)
                    if badge:
                        tip = esc(badge[1]).replace("\n", "<br>")
                        QToolTip.showText(event.globalPos(), f"<p>{tip}</p>", view)
                        return True
            if rows.body.contains(event.pos()) and not (
                m.kind == "reasoning" and m.id not in self.expanded
            ):
                doc = self.document(m)
                if isinstance(doc, ChunkedBody):  # plain text: no links
                    QToolTip.hideText()
                    return True
                href = doc.documentLayout().anchorAt(QPointF(event.pos() - rows.body.topLeft()))
                if href:
                    QToolTip.showText(
                        event.globalPos(), f"<p style='white-space:pre'>{esc(href)}</p>", view
                    )
                    return True
            QToolTip.hideText()
            return True
        return super().helpEvent(event, view, option, index)  # type: ignore[misc]
