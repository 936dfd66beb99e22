"""Thin Qt item models over the store: they hold rows already fetched and page lazily."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from fluxgui.adapters.base import SessionPage, Store
from fluxgui.core.model import SessionInfo

from .bridge import AsyncBridge
from .render import esc, short_time

_Index = QModelIndex | QPersistentModelIndex

SESSION_ROLE = Qt.ItemDataRole.UserRole + 1


class SessionListModel(QAbstractTableModel):
    """The sessions of one store, most recently active first, fetched a page at a time.

    Nothing is loaded until a view (or the window) calls :meth:`fetchMore`; each call
    loads one page through ``store.list_sessions`` and its keyset cursor, so a store with
    a million sessions costs one page to show. Loads run through the bridge under this
    model's key; :meth:`set_store` cancels a load still running for the previous store.
    """

    COLUMNS = ("Session", "Messages", "Last active")
    ID, COUNT, UPDATED = range(3)

    #: a page arrived: (number of rows added, whether more pages exist)
    pageLoaded = Signal(int, bool)
    #: a page failed to load (the exception); fetching stops until :meth:`retry`
    loadFailed = Signal(object)

    def __init__(
        self, bridge: AsyncBridge, *, page_size: int = 100, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._key = f"sessions:{id(self):x}"
        self._page_size = page_size
        self._store: Store | None = None
        self._rows: list[SessionInfo] = []
        self._cursor: tuple[Any, ...] | None = None
        self._at_end = True
        self._loading = False
        self._failed = False
        bridge.succeeded.connect(self._on_succeeded)
        bridge.failed.connect(self._on_failed)

    # -- state ---------------------------------------------------------------------

    @property
    def store(self) -> Store | None:
        return self._store

    @property
    def loading(self) -> bool:
        return self._loading

    @property
    def at_end(self) -> bool:
        return self._at_end

    def set_store(self, store: Store | None) -> None:
        """Show ``store``'s sessions (none yet: call :meth:`fetchMore`)."""
        self._bridge.cancel(self._key)
        self.beginResetModel()
        self._store = store
        self._rows = []
        self._cursor = None
        self._at_end = store is None
        self._loading = False
        self._failed = False
        self.endResetModel()

    def retry(self) -> None:
        """Fetch again after a failed page."""
        self._failed = False
        self.fetchMore(QModelIndex())

    def session_at(self, row: int) -> SessionInfo | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, session_id: str) -> int | None:
        """The row of a loaded session, or ``None`` (it may be on a page not fetched yet)."""
        for row, info in enumerate(self._rows):
            if info.id == session_id:
                return row
        return None

    # -- Qt model API ----------------------------------------------------------------

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt idiom
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.parent().isValid():
            return None
        info = self.session_at(index.row())
        if info is None:
            return None
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if col == self.ID:
                # one line: an id with a newline must not break the row
                return " ".join(info.id.split()) or info.id
            if col == self.COUNT:
                return str(info.messages)
            if col == self.UPDATED:
                return short_time(info.updated_at or info.created_at, seconds=False)
        elif role == Qt.ItemDataRole.ToolTipRole:
            lines = [info.id, f"{info.messages} messages"]
            if info.created_at:
                lines.append(f"started {short_time(info.created_at)}")
            if info.updated_at:
                lines.append(f"last active {short_time(info.updated_at)}")
            # Qt guesses whether a tooltip is rich text; make it HTML we wrote, with the
            # id escaped, so an id that looks like markup stays text.
            return "<p style='white-space:pre-wrap'>" + esc("\n".join(lines)) + "</p>"
        elif role == Qt.ItemDataRole.TextAlignmentRole:
            if col == self.COUNT:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        elif role == SESSION_ROLE:
            return info
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and section == self.COUNT:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def canFetchMore(self, parent: _Index) -> bool:
        if parent.isValid():
            return False
        return self._store is not None and not self._at_end and not self._failed

    def fetchMore(self, parent: _Index) -> None:
        if not self.canFetchMore(parent) or self._loading:
            return
        assert self._store is not None
        self._loading = True
        self._bridge.start(self._key, self._load(self._store, self._cursor))

    # -- loading -----------------------------------------------------------------------

    async def _load(
        self, store: Store, cursor: tuple[Any, ...] | None
    ) -> tuple[Store, SessionPage]:
        page = await store.list_sessions(limit=self._page_size, cursor=cursor)
        return store, page

    def _on_succeeded(self, key: str, result: object) -> None:
        if key != self._key:
            return
        store, page = result  # type: ignore[misc]
        if store is not self._store:  # a page of a store we no longer show
            return
        self._loading = False
        known = {info.id for info in self._rows}
        fresh = [info for info in page.sessions if info.id not in known]
        if fresh:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
            self._rows.extend(fresh)
            self.endInsertRows()
        self._cursor = page.cursor
        # An empty page that still has a cursor would make views ask forever.
        self._at_end = page.cursor is None or not page.sessions
        self.pageLoaded.emit(len(fresh), not self._at_end)

    def _on_failed(self, key: str, error: object) -> None:
        if key != self._key:
            return
        self._loading = False
        self._failed = True
        self.loadFailed.emit(error)
