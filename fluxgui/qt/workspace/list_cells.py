"""The all-stores list's cells: the Store column as a coloured tag (one store) or a badge
(a session in several stores: orange when split, grey when only copied); a narrow list
hides its Messages and Last active columns (the tooltip carries them)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView, QHeaderView, QStyledItemDelegate, QStyleOptionViewItem, QTableView, QWidget,
)

from ..widgets import session_table
from .list_model import ROW_ROLE, WorkspaceListModel

_Index = QModelIndex | QPersistentModelIndex
SPLIT = "#b91c1c"
COPIED = "#7f8c8d"


class BadgeCells(QStyledItemDelegate):
    """Paints the Store column's tag or badge (see the module)."""

    def __init__(self, view: QTableView) -> None:
        super().__init__(view)
        self._view = view

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        if index.column() != WorkspaceListModel.STORE:
            super().paint(painter, option, index)
            return
        item = index.data(ROW_ROLE)
        text = str(index.data() or "")
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = self._view.style()
        style.drawControl(style.ControlElement.CE_ItemViewItem, opt, painter, self._view)
        if item is None:
            return
        badge = item.badge()
        fm = option.fontMetrics
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = option.rect.adjusted(3, 3, -3, -3)
        shown = fm.elidedText(text, Qt.TextElideMode.ElideRight, rect.width() - 12)
        w = min(fm.horizontalAdvance(shown) + 12, rect.width())
        pill = QRect(rect.left(), rect.top(), w, rect.height())
        if item.hits:
            colour = QColor(self._colour(item.hits[0]))
        elif badge is not None:
            colour = QColor(SPLIT if item.split else COPIED)
        else:
            colour = QColor(self._colour(item.labels[0]))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(pill, pill.height() / 2, pill.height() / 2)
        painter.setPen(QColor("#ffffff"))
        painter.drawText(pill, int(Qt.AlignmentFlag.AlignCenter), shown)
        painter.restore()

    def _colour(self, label: str) -> str:
        colour_of: Any = getattr(self._view, "colour_of", None)
        return colour_of(label) if colour_of is not None else "#2f7ed8"


class NarrowStoreColumns(QObject):
    """Hides Last active, then Messages, while the ids would get less than a third."""

    def __init__(self, view: QTableView) -> None:
        super().__init__(view)
        self._view = view

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize:
            self.fit(self._view.contentsRect().width())
        return False

    def fit(self, width: int) -> None:
        header = self._view.horizontalHeader()
        fm = self._view.fontMetrics()
        pad = 3 * fm.averageCharWidth()
        store = fm.horizontalAdvance("split across 3 stores") + pad + 16
        count = fm.horizontalAdvance("Messages") + pad
        updated = fm.horizontalAdvance("2088-08-28 08:08") + pad
        hide_updated = width - store - count - updated < width / 3
        hide_count = width - store - count < width / 3
        for column, hide, size in ((WorkspaceListModel.UPDATED, hide_updated, updated),
                                   (WorkspaceListModel.COUNT, hide_count, count)):
            if header.isSectionHidden(column) != hide:
                header.setSectionHidden(column, hide)
                if not hide:
                    header.resizeSection(column, size)


def make_view(parent: QWidget, model: WorkspaceListModel) -> QTableView:
    """The all-stores table: one row selected at a time, ids elided at their start."""
    view = QTableView(parent)
    view.setObjectName("workspaceSessions")
    view.setModel(model)
    session_table(view, QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(parent.fontMetrics().height() + 10)
    header = view.horizontalHeader()
    header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    header.setSectionResizeMode(WorkspaceListModel.ID, QHeaderView.ResizeMode.Stretch)
    fm = view.fontMetrics()
    pad = 3 * fm.averageCharWidth()
    for column, sample in ((WorkspaceListModel.STORE, "split across 3 stores"),
                           (WorkspaceListModel.COUNT, "Messages"),
                           (WorkspaceListModel.UPDATED, "2088-08-28 08:08")):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(column, fm.horizontalAdvance(sample) + pad + 16)
    view.setItemDelegate(BadgeCells(view))
    view.installEventFilter(NarrowStoreColumns(view))
    return view
