"""The workspace's store list above the session list: a row of chips ("All stores" and
one per open store, in its tag colour), wrapping when the pane is narrow; the chip
chosen is the scope the session list shows. Right-click: rename or remove a store; the
"+" button adds one (a file, a folder, a URL). Shown once the window holds two stores.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout, QListView, QListWidget, QListWidgetItem, QMenu, QToolButton, QWidget,
)

from ..shown_ids import ShownIds

#: the "All stores" chip's data
ALL = ""
#: a store chip's whole label as shown (its text may be cut to the pane's width)
FULL_ROLE = Qt.ItemDataRole.UserRole + 1


def dot(colour: str, size: int = 10) -> QIcon:
    """A round tag of ``colour`` (a chip's icon)."""
    pix = QPixmap(size * 2, size * 2)
    pix.setDevicePixelRatio(2)
    pix.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pix)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(colour))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    return QIcon(pix)


class StoreBar(QWidget):
    """The chips (see the module). ``scopeChosen(label)``: ``""`` for every store."""

    scopeChosen = Signal(str)
    renameAsked = Signal(str)
    removeAsked = Signal(str)

    def __init__(self, parent: QWidget, add_menu: Callable[[], QMenu], *, ids: ShownIds | None = None) -> None:
        super().__init__(parent)
        #: how the window shows names (View › Redact: a label holding an address redacted)
        self.ids = ids if ids is not None else ShownIds(self)
        self.ids.changed.connect(lambda: self.set_stores(self._stores, self.scope()))
        self._stores: list[tuple[str, str, int | None]] = []
        self.setObjectName("workspaceStores")
        self.chips = QListWidget(self)
        self.chips.setObjectName("workspaceChips")
        self.chips.setFlow(QListView.Flow.LeftToRight)
        self.chips.setWrapping(True)
        self.chips.setResizeMode(QListView.ResizeMode.Adjust)
        self.chips.setSpacing(2)
        self.chips.setUniformItemSizes(False)
        self.chips.setIconSize(QSize(10, 10))
        self.chips.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chips.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.chips.customContextMenuRequested.connect(self._menu)
        self.chips.currentItemChanged.connect(self._on_current)
        self.chips.setToolTip("The stores of this workspace: choose one, or All stores")
        self.add_button = QToolButton(self)
        self.add_button.setText("+")
        self.add_button.setToolTip("Add a store to the workspace")
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_button.setMenu(add_menu())
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.chips, 1)
        layout.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignTop)
        self._quiet = False

    def set_stores(self, stores: list[tuple[str, str, int | None]], scope: str) -> None:
        """The chips: (label, colour, sessions or ``None``) per store; ``scope`` chosen."""
        self._stores = list(stores)
        self._quiet = True
        try:
            self.chips.clear()
            everything = QListWidgetItem(f"All stores ({len(stores)})", self.chips)
            everything.setData(Qt.ItemDataRole.UserRole, ALL)
            everything.setToolTip("Every store's sessions in one list, with a Store column")
            for label, colour, _n in stores:
                shown = self.ids.place(label)  # (a file name may hold hidden characters, an address)
                item = QListWidgetItem(dot(colour), shown, self.chips)
                item.setData(Qt.ItemDataRole.UserRole, label)
                item.setData(FULL_ROLE, shown)
                item.setToolTip(f"{shown}: right-click to rename or remove")
            for i in range(self.chips.count()):
                item = self.chips.item(i)
                if item.data(Qt.ItemDataRole.UserRole) == scope:
                    self.chips.setCurrentItem(item)
        finally:
            self._quiet = False
        self._fit()

    def _fit(self) -> None:
        """As tall as the chips' rows once laid out (at most three; more scroll); a label
        wider than the pane cut in its middle (the whole in its tooltip)."""
        chips = self.chips
        if not chips.count():
            return
        room = chips.viewport().width() - chips.iconSize().width() - 4 * chips.spacing() - 16
        metrics = chips.fontMetrics()
        for i in range(chips.count()):
            item = chips.item(i)
            full = item.data(FULL_ROLE)
            if full:
                item.setText(metrics.elidedText(str(full), Qt.TextElideMode.ElideMiddle, max(room, 40)))
        chips.doItemsLayout()
        top = chips.visualItemRect(chips.item(0)).top()
        row = chips.visualItemRect(chips.item(0)).height() + 2 * chips.spacing()
        bottom = max(chips.visualItemRect(chips.item(i)).bottom() for i in range(chips.count()))
        height = min(bottom - top + 1 + 2 * chips.spacing(), 3 * row)
        chips.setFixedHeight(height + 2 * chips.frameWidth() + 6)

    def resizeEvent(self, event: object) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)  # type: ignore[arg-type]
        QTimer.singleShot(0, self, self._fit)  # once the list has laid its items out

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(200, self.chips.height())

    def scope(self) -> str:
        item = self.chips.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else ALL

    def choose(self, label: str) -> None:
        """Mark ``label``'s chip chosen (without telling: the caller shows it)."""
        self._quiet = True
        try:
            for i in range(self.chips.count()):
                item = self.chips.item(i)
                if item.data(Qt.ItemDataRole.UserRole) == label:
                    self.chips.setCurrentItem(item)
        finally:
            self._quiet = False

    def _on_current(self, item: QListWidgetItem | None, _previous: object) -> None:
        if item is not None and not self._quiet:
            self.scopeChosen.emit(str(item.data(Qt.ItemDataRole.UserRole)))

    def _menu(self, pos: QPoint) -> None:
        item = self.chips.itemAt(pos)
        label = str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else ALL
        if label == ALL:
            return
        menu = QMenu(self)
        menu.addAction("Rename…", lambda: self.renameAsked.emit(label))
        menu.addAction("Remove from Workspace", lambda: self.removeAsked.emit(label))
        menu.exec(self.chips.viewport().mapToGlobal(pos))
        menu.deleteLater()
