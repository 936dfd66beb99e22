"""A session held by several stores, shown as one merged timeline
(:func:`fluxgui.services.workspace.timeline.timeline`): every card tagged with the label
of the store it is read from (in the store's colour; a copy folded into one card names
every store holding it), in the order the conversation happened, whole turns kept
together; turns whose times cannot order them are marked "order uncertain".

Above the cards: the session, its stores, and when it is split the doctor's sentence
(``split_session``). F2 (or Edit…) edits the selected card's message in the store that
holds it; Ctrl+Z / Ctrl+Shift+Z undo and redo those edits (:mod:`.editing`).
"""

from __future__ import annotations

from collections.abc import Callable

import html
from typing import Any

from PySide6.QtCore import QAbstractListModel, QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QKeyEvent, QKeySequence, QPainter, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout, QLabel, QListView, QMenu, QPushButton, QStyle, QStyledItemDelegate,
    QStyleOptionViewItem, QToolButton, QVBoxLayout, QWidget,
)

from fluxgui.core.display import role_colour, short_time
from fluxgui.core.model import Message
from fluxgui.core.visible import visible
from fluxgui.services.workspace.timeline import Placed, Timeline

from ..shown_ids import ShownIds, one_line

_Index = QModelIndex | QPersistentModelIndex
PLACED_ROLE = Qt.ItemDataRole.UserRole + 37
#: a card shows at most this many lines of its text
CARD_LINES = 6
#: ... of at most this many characters of it (a card measured and painted from a message
#: of megabytes would freeze the window; the pane's collapsed preview, 2,000 characters
#: and 30 lines, is more than six lines hold, and each card is measured at every layout)
CARD_CHARS = 1_200
UNCERTAIN = "order uncertain"


class TimelineModel(QAbstractListModel):
    """The placed messages of one merged timeline."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.placed: list[Placed] = []

    def set_placed(self, placed: list[Placed]) -> None:
        self.beginResetModel()
        self.placed = placed
        self.endResetModel()

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's
        return 0 if parent.isValid() else len(self.placed)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.placed):
            return None
        p = self.placed[index.row()]
        if role == PLACED_ROLE:
            return p
        if role == Qt.ItemDataRole.DisplayRole:
            return p.message.text
        if role == Qt.ItemDataRole.ToolTipRole:
            where = ", ".join(p.stores)
            text = f"message {p.message.id} in {where} (turn {p.turn})"
            return text + (f"\n{UNCERTAIN}: the same second in several stores" if p.order_uncertain else "")
        return None


def card_text(m: Message) -> str:
    """What a card shows of ``m``: its start (:data:`CARD_CHARS`), every hidden
    character a marker, as in the conversation pane (a right-to-left override shown,
    never obeyed)."""
    text = m.text
    # (controls by name, ⟨ESC⟩: the window's fonts often have no control pictures)
    if len(text) <= CARD_CHARS:
        return visible(text, pictures=False)
    return visible(text[:CARD_CHARS], pictures=False) + "…"


class CardDelegate(QStyledItemDelegate):
    """A card: the store tags, the role, the time, "order uncertain", then the text."""

    def __init__(self, colour_of: Any, parent: Any = None, *, shown: Callable[[str], str] = one_line) -> None:
        super().__init__(parent)
        self._colour_of = colour_of
        #: a store's label as the window shows it (View › Redact: redacted)
        self._shown = shown

    def _text_rect(self, option: QStyleOptionViewItem) -> QRect:
        fm = option.fontMetrics
        return option.rect.adjusted(12, fm.height() + 14, -12, -8)

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        p = index.data(PLACED_ROLE)
        fm: QFontMetrics = option.fontMetrics
        width = max(option.rect.width(), 200) - 24
        text = card_text(p.message) if p is not None else ""
        lines = fm.boundingRect(QRect(0, 0, width, 10_000), int(Qt.TextFlag.TextWordWrap), text).height()
        lines = min(max(lines, fm.height()), CARD_LINES * fm.lineSpacing())
        return QSize(width, lines + fm.height() + 24)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        p: Placed | None = index.data(PLACED_ROLE)
        if p is None:
            return
        painter.save()
        pal = option.palette
        dark = pal.color(QPalette.ColorRole.Base).lightness() < 128
        card = option.rect.adjusted(4, 3, -4, -3)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QColor(pal.color(QPalette.ColorRole.Highlight) if selected else pal.color(QPalette.ColorRole.Mid)))
        painter.setBrush(pal.color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(card, 6, 6)
        fm = option.fontMetrics
        x, y = card.left() + 8, card.top() + 5
        h = fm.height() + 2
        for label in p.stores:
            tag = self._shown(label)
            w = fm.horizontalAdvance(tag) + 12
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(self._colour_of(label)))
            painter.drawRoundedRect(QRect(x, y, w, h), h / 2, h / 2)
            painter.setPen(QColor("#ffffff"))
            painter.drawText(QRect(x, y, w, h), int(Qt.AlignmentFlag.AlignCenter), tag)
            x += w + 4
        head = visible(p.message.role, keep_layout=False, pictures=False)
        if p.message.created_at:
            head += f" · {short_time(p.message.created_at)}"
        painter.setPen(QColor(role_colour(p.message.role, dark=dark)))
        painter.drawText(QRect(x + 4, y, card.right() - x, h), int(Qt.AlignmentFlag.AlignVCenter), head)
        if p.order_uncertain:
            warn = f"⚠ {UNCERTAIN}"
            w = fm.horizontalAdvance(warn) + 8
            painter.setPen(QColor("#d9822b"))
            painter.drawText(QRect(card.right() - w, y, w, h), int(Qt.AlignmentFlag.AlignVCenter), warn)
        painter.setPen(pal.color(QPalette.ColorRole.Text))
        rect = self._text_rect(option)
        text = card_text(p.message)
        shown = fm.boundingRect(rect, int(Qt.TextFlag.TextWordWrap), text)
        if shown.height() > rect.height():
            text = fm.elidedText(text, Qt.TextElideMode.ElideRight, rect.width() * CARD_LINES)
        painter.drawText(rect, int(Qt.TextFlag.TextWordWrap), text)
        painter.restore()


class TimelineView(QWidget):
    """The merged timeline's pane (see the module). ``editAsked(placed)``: F2 / Edit…;
    ``undoAsked`` / ``redoAsked``: its undo buttons (and Ctrl+Z / Ctrl+Shift+Z)."""

    editAsked = Signal(object)
    undoAsked = Signal()
    redoAsked = Signal()
    #: Compare ▾: the session as two of its stores hold it (their labels)
    compareAsked = Signal(str, str)

    def __init__(self, colour_of: Any, parent: QWidget | None = None, *, ids: ShownIds | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mergedTimeline")
        #: how session ids are shown (View › Redact: redacted)
        self.ids = ids if ids is not None else ShownIds(self)
        self.session_id: str | None = None
        self.line: Timeline | None = None
        #: the timeline is shown redacted (View › Redact): the header says so, Edit waits
        self.redacted = False
        self.header = QLabel(self)
        self.header.setObjectName("mergedHeader")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.model = TimelineModel(self)
        self.cards = QListView(self)
        self.cards.setObjectName("mergedCards")
        self.cards.setModel(self.model)
        self.cards.setItemDelegate(CardDelegate(colour_of, self.cards, shown=self.ids.place))
        self.cards.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.cards.setResizeMode(QListView.ResizeMode.Adjust)
        self.cards.setUniformItemSizes(False)
        self.cards.doubleClicked.connect(lambda _i: self._edit())
        self.cards.installEventFilter(self)
        self.edit_button = QPushButton("Edit…", self)
        self.edit_button.setToolTip("Edit the selected message in the store that holds it (F2)")
        self.edit_button.clicked.connect(self._edit)
        self.undo_button = QPushButton("Undo", self)
        self.undo_button.clicked.connect(self.undoAsked)
        self.redo_button = QPushButton("Redo", self)
        self.redo_button.clicked.connect(self.redoAsked)
        self.compare_button = QToolButton(self)
        self.compare_button.setText("Compare")
        self.compare_button.setToolTip("Compare the session as two of its stores hold it")
        self.compare_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.compare_button.setMenu(QMenu(self.compare_button))
        self.status = QLabel(self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        for b in (self.compare_button, self.edit_button, self.undo_button, self.redo_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addWidget(self.cards, 1)
        layout.addLayout(buttons)

    def clear(self, text: str) -> None:
        self.session_id, self.line = None, None
        self.model.set_placed([])
        self.header.setText(html.escape(self.ids.say(text)))

    def show_first(self, session_id: str, placed: list[Placed]) -> None:
        """The first screen of ``session_id`` while its whole timeline is read (nothing
        when that is already shown, or another session is)."""
        if self.line is not None or self.session_id is not None or not placed:
            return
        self.model.set_placed(placed)
        self.header.setText(f"<b>{html.escape(self.ids.line(session_id))}</b> — merging its stores…")

    def show_timeline(self, line: Timeline) -> None:
        """Show ``line``, keeping the selected card's place when it is the same session."""
        keep = self.cards.currentIndex().row() if line.session_id == self.session_id else -1
        self.session_id, self.line = line.session_id, line
        self.model.set_placed(line.placed())
        stores = ", ".join(f"{html.escape(self.ids.place(s))} ({line.counts[s]})" for s in line.stores)
        head = f"<b>{html.escape(self.ids.line(line.session_id))}</b> — in {len(line.stores)} stores: {stores}"
        if line.folded:
            head += f"; {line.folded} copied items shown once"
        finding = line.split_finding()
        if finding is not None:
            split = visible(self.ids.say(finding["detail"]), keep_layout=False, pictures=False)
            head += f"<br><span style='color:#c0392b'>Split: {html.escape(split)}</span>"
        if line.uncertain:
            head += f"<br><span style='color:#d9822b'>⚠ Some turns have the same time in several stores: their {UNCERTAIN}.</span>"
        if self.redacted:
            head += "<br><i>Shown redacted (View › Redact): placeholders stand for secrets and personal data.</i>"
        self.header.setText(head)
        self.edit_button.setEnabled(not self.redacted)
        menu = self.compare_button.menu()
        menu.clear()
        for i, a in enumerate(line.stores):
            for b in line.stores[i + 1:]:
                action = menu.addAction(f"{self.ids.place(a)}  ↔  {self.ids.place(b)}".replace("&", "&&"))
                action.setData((a, b))
                action.triggered.connect(lambda _c=False, pair=(a, b): self.compareAsked.emit(*pair))
        self.compare_button.setEnabled(len(line.stores) > 1)
        if 0 <= keep < self.model.rowCount():
            self.cards.setCurrentIndex(self.model.index(keep))

    def current(self) -> Placed | None:
        index = self.cards.currentIndex()
        return index.data(PLACED_ROLE) if index.isValid() else None

    def _edit(self) -> None:
        p = self.current()
        if p is not None:
            self.editAsked.emit(p)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        """F2, Ctrl+Z and Ctrl+Shift+Z on the cards are the merged view's (its edits,
        its undo stack), not the window's actions for the conversation pane."""
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) or not isinstance(event, QKeyEvent):
            return False
        if event.key() == Qt.Key.Key_F2:
            what = self._edit
        elif event.matches(QKeySequence.StandardKey.Undo):
            what = self.undoAsked.emit
        elif event.matches(QKeySequence.StandardKey.Redo):
            what = self.redoAsked.emit
        else:
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()
        else:
            what()
        return True
