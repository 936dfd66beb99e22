"""The all-stores session list: every store's sessions in one table with a Store column,
a session held by several stores once with its badge ("split across 3 stores"), fetched
a page at a time (:func:`fluxgui.services.workspace.rows.listed_pages`); searched over
every store, each hit naming the store it is in.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from fluxgui.core.display import short_time
from fluxgui.services.workspace import Workspace
from fluxgui.services.workspace.rows import ListedSession, listed_pages, search_pages, split_of

from ..bridge import AsyncBridge
from ..shown_ids import ShownIds

_Index = QModelIndex | QPersistentModelIndex
KEY = "workspace-list"
#: the background task telling which rows in several stores are split
SPLIT_KEY = "workspace-split"
#: the role whose data is a row's :class:`ListedSession`
ROW_ROLE = Qt.ItemDataRole.UserRole + 36


class WorkspaceListModel(QAbstractTableModel):
    """The rows of every store of a workspace (see the module)."""

    ID, STORE, COUNT, UPDATED = range(4)
    HEADERS = ("Session", "Store", "Messages", "Last active")

    #: a page (or a batch of search results) arrived: (rows now, whether more may come)
    pageLoaded = Signal(int, bool)
    loadFailed = Signal(object)

    def __init__(self, bridge: AsyncBridge, parent: Any = None, *, ids: ShownIds | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        #: how ids are shown (View › Redact: redacted); the rows keep the real ids
        self.ids = ids if ids is not None else ShownIds(self)
        self.ids.changed.connect(self._ids_changed)
        self._workspace: Workspace | None = None
        self._rows: list[ListedSession] = []
        self._pages: AsyncGenerator[list[ListedSession], None] | None = None
        self._more = False
        self._loading = False
        self.search_text = ""
        #: rows in several stores whose split flag is not known yet (their ids)
        self._unsplit: list[str] = []
        self._splitting = False

    # -- what it lists -------------------------------------------------------------

    def set_workspace(self, workspace: Workspace | None, search: str = "") -> None:
        """List ``workspace`` (``search``: only the sessions containing that text)."""
        self._bridge.cancel(KEY)
        self._bridge.cancel(SPLIT_KEY)
        self._unsplit, self._splitting = [], False
        self.beginResetModel()
        self._rows = []
        self.endResetModel()
        self._workspace, self.search_text = workspace, search
        self._pages = None
        self._loading = False
        if workspace is None or not workspace.members:
            self._more = False
            return
        self._pages = search_pages(workspace, search) if search else listed_pages(workspace, exact=False)
        self._more = True
        self.fetchMore(QModelIndex())

    def set_search(self, text: str) -> None:
        if text != self.search_text:
            self.set_workspace(self._workspace, text)

    @property
    def loading(self) -> bool:
        return self._loading

    @property
    def splitting(self) -> bool:
        """Rows in several stores are still being told split or copied."""
        return self._splitting

    def _ids_changed(self) -> None:
        if self._rows:
            self.dataChanged.emit(self.index(0, self.ID), self.index(len(self._rows) - 1, self.STORE))

    def row_of(self, session_id: str) -> int | None:
        return next((i for i, r in enumerate(self._rows) if r.id == session_id), None)

    def listed(self, row: int) -> ListedSession | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    # -- paging --------------------------------------------------------------------

    def canFetchMore(self, parent: _Index) -> bool:  # noqa: N802 - Qt's name
        return not parent.isValid() and self._more and not self._loading

    def fetchMore(self, parent: _Index) -> None:  # noqa: N802 - Qt's name
        pages = self._pages
        if parent.isValid() or pages is None or self._loading or not self._more:
            return
        self._loading = True
        # a search yields batches as it goes: read them all; a listing one page
        want = 10_000 if self.search_text else 1

        async def next_pages() -> list[list[ListedSession]]:
            got: list[list[ListedSession]] = []
            for _ in range(want):
                page = await anext(pages, None)
                if page is None:
                    got.append([])
                    break
                got.append(page)
                if self.search_text:
                    self._add(page)
            return got

        self._bridge.start(KEY, next_pages(), lambda got: self._on_pages(pages, got), self._on_failed)

    def _add(self, page: list[ListedSession]) -> None:
        fresh = []
        for item in page:
            row = self.row_of(item.id)
            if row is None:
                fresh.append(item)
            else:
                self._rows[row] = item
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))
        if fresh:
            start = len(self._rows)
            self.beginInsertRows(QModelIndex(), start, start + len(fresh) - 1)
            self._rows.extend(fresh)
            self.endInsertRows()
        self._unsplit += [i.id for i in page if i.split is None and i.id not in self._unsplit]
        self._tell_splits()
        self.pageLoaded.emit(len(self._rows), True)

    def _tell_splits(self) -> None:
        """Read, in the background, the merged timelines of the rows in several stores
        not told yet: each row's badge says split or copied once known."""
        workspace = self._workspace
        if self._splitting or not self._unsplit or workspace is None:
            return
        self._splitting = True

        async def tell() -> None:
            while self._unsplit:
                sid = self._unsplit.pop(0)
                row = self.row_of(sid)
                item = self._rows[row] if row is not None else None
                if item is None or item.split is not None:
                    continue
                await split_of(workspace, item)
                row = self.row_of(sid)
                if row is not None:
                    self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.HEADERS) - 1))

        def done(_none: None) -> None:
            self._splitting = False
            self.pageLoaded.emit(len(self._rows), self._more)

        def failed(error: Exception) -> None:
            self._splitting = False
            self.loadFailed.emit(error)

        self._bridge.start(SPLIT_KEY, tell(), done, failed)  # (a screenshot waits for the badges)

    def _on_pages(self, pages: Any, got: list[list[ListedSession]]) -> None:
        if pages is not self._pages:
            return
        self._loading = False
        ended = bool(got) and not got[-1]
        if not self.search_text:
            for page in got:
                if page:
                    self._add(page)
        if ended or self.search_text:
            self._more = False
        self.pageLoaded.emit(len(self._rows), self._more)

    def _on_failed(self, error: Exception) -> None:
        self._loading = False
        self._more = False
        self.loadFailed.emit(error)

    # -- Qt's model ------------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: N802, B008 - Qt's
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        item = self.listed(index.row()) if index.isValid() else None
        if item is None:
            return None
        if role == ROW_ROLE:
            return item
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.ID:
                return self.ids.line(item.id)
            if column == self.STORE:  # a search's hit: the stores it was found in
                return ", ".join(map(self.ids.place, item.hits)) if item.hits else item.badge() or self.ids.place(item.labels[0])
            if column == self.COUNT:
                return str(item.row.messages)
            if column == self.UPDATED:
                return short_time(item.row.updated_at) if item.row.updated_at else ""
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{self.ids.line(item.id)}\n{item.where(self.ids.place)}\n{item.row.messages} messages"
        return None
