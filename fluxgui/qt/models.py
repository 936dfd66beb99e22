"""Thin Qt item models over the store: they hold rows already fetched and page lazily."""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from fluxgui.core.ports import SessionOrder, SessionPage
from fluxgui.core.ports import SessionStore as Store
from fluxgui.core.model import SessionInfo

from .bridge import AsyncBridge
from .render import esc, short_time

_Index = QModelIndex | QPersistentModelIndex

log = logging.getLogger(__name__)

SESSION_ROLE = Qt.ItemDataRole.UserRole + 1

#: a search fetches the rows of the ids it found after at most this long, even if the
#: batch is not full
SEARCH_FLUSH_SECONDS = 0.05
#: search results are inserted at most this often (the first ones at once): each
#: insertion makes the view repaint, which costs more than the rows themselves
SEARCH_SHOW_SECONDS = 0.1
#: ... or as soon as this many are waiting (an insertion's cost grows with its rows)
SEARCH_SHOW_MAX = 250
#: besides its first page, each :meth:`SessionListModel.refresh` re-checks this many more
#: loaded rows (a window that moves on at every refresh, so that deleted sessions further
#: down the list are noticed too without any refresh costing more than a page or two)
REFRESH_SWEEP = 200
#: ids per ``sessions_by_ids`` query
ID_BATCH = 500


def _activity_key(info: SessionInfo) -> tuple[Any, ...]:
    # A store's own activity key (comparable within one store). Only its first part (a
    # time, for the Agents SDK) can be NULL: such a session sorts as the least recent.
    key = info.sort_key
    return (bool(key) and key[0] is not None, *key)


def _order_key(order: SessionOrder) -> Callable[[SessionInfo], Any]:
    """The Python key that sorts list rows as the store's ``order`` does (ids compare by
    code point: SQLite's BINARY collation; a Postgres collation may break ties otherwise)."""
    if order == "id":
        return lambda info: info.id
    if order == "messages":
        return lambda info: (info.messages, info.id)
    return _activity_key


def _differs(old: SessionInfo, new: SessionInfo) -> bool:
    return (
        old.messages != new.messages
        or old.updated_at != new.updated_at
        or old.created_at != new.created_at
        or old.sort_key != new.sort_key
    )


def _place(keys: list[Any], key: Any, descending: bool) -> int:
    """Where ``key`` goes in ``keys`` (sorted in display order), after its equals."""
    lo, hi = 0, len(keys)
    while lo < hi:
        mid = (lo + hi) // 2
        if (keys[mid] >= key) if descending else (keys[mid] <= key):
            lo = mid + 1
        else:
            hi = mid
    return lo


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Sorted row numbers as ``(first, last)`` runs of consecutive rows."""
    out: list[tuple[int, int]] = []
    for row in rows:
        if out and out[-1][1] + 1 == row:
            out[-1] = (out[-1][0], row)
        else:
            out.append((row, row))
    return out


class SessionListModel(QAbstractTableModel):
    """The sessions of one store, fetched a page at a time, sortable and searchable.

    **Listing.** Nothing is loaded until a view (or the window) calls :meth:`fetchMore`;
    each call loads one page through ``store.list_sessions`` and its keyset cursor, so a
    store with a million sessions costs one page to show. The order is the store's: most
    recently active first until :meth:`sort` picks a column (Session → by id, Messages →
    by count, Last active → by activity), which resets the list and pages again in that
    order.

    **Search.** :meth:`set_search` with text replaces the rows with the sessions whose id
    or message text contains it, inserted batch by batch while the store's search runs
    (``store.search_session_ids`` for the ids, ``store.sessions_by_ids`` for their rows).
    Rows keep the order they were found in unless a sort is set, in which case each lands
    in its sorted place. Empty text goes back to the listing.

    Every load runs through the bridge under this model's key, so a new page load, search,
    sort or :meth:`set_store` cancels what was running; a cancelled search closes the
    store's search generator (and so its SQL cursor).

    **Live refresh.** :meth:`refresh` merges what changed in the store (another process
    appended, created or deleted sessions) into the rows already shown, without a reset:
    changed rows get ``dataChanged``, a session with new activity moves to its new place
    (``beginMoveRows``), new sessions are inserted where they sort, vanished ones removed,
    so views keep their selection and scroll position. Each refresh costs a page or two.

    Signals: ``pageLoaded(added, more)`` for each page and for each batch of search results
    (``more`` is false once the listing or the search is complete), and after a refresh
    that inserted or removed listing rows; ``loadFailed(error)``;
    ``searchStarted(text)``; ``searchProgress(found)`` after each batch; and
    ``searchFinished(found)``. A search ends with ``searchFinished`` or ``loadFailed``,
    unless it is cancelled (then neither). ``refreshed(inserted, removed, updated)`` after
    each refresh was merged in.
    """

    COLUMNS = ("Session", "Messages", "Last active")
    ID, COUNT, UPDATED = range(3)
    #: the store order behind each sortable column
    COLUMN_ORDERS: dict[int, SessionOrder] = {ID: "id", COUNT: "messages", UPDATED: "activity"}

    #: a page (or a batch of search results) arrived: (rows added, whether more may come)
    pageLoaded = Signal(int, bool)
    #: a page or a search failed (the exception); fetching stops until :meth:`retry`
    loadFailed = Signal(object)
    #: a search began (its text); the rows were cleared
    searchStarted = Signal(str)
    #: a batch of search results was inserted (sessions found so far)
    searchProgress = Signal(int)
    #: the search is complete (sessions found)
    searchFinished = Signal(int)
    #: a :meth:`refresh` was merged in: (rows inserted, rows removed, rows updated)
    refreshed = Signal(int, int, int)

    def __init__(
        self,
        bridge: AsyncBridge,
        *,
        page_size: int = 100,
        search_batch: int = 50,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._key = f"sessions:{id(self):x}"
        self._page_size = page_size
        self._search_batch = max(1, search_batch)
        self._store: Store | None = None
        self._rows: list[SessionInfo] = []
        self._known: set[str] = set()
        self._cursor: tuple[Any, ...] | None = None
        self._at_end = True
        self._loading = False
        self._failed = False
        self._search_text = ""
        self._searching = False
        self._found_order: dict[str, int] = {}  # search mode: id → position found in
        self._keys: list[Any] = []  # search mode: the rows' sort keys, ascending
        self._sort_column = -1  # -1: the store's natural order (most recently active first)
        self._sort_order = Qt.SortOrder.DescendingOrder
        self._generation = 0  # bumped on every reset; older results are dropped
        self._task: asyncio.Task[Any] | None = None  # the load or search now running
        self._refresh_key = f"{self._key}:refresh"
        self._refreshing = False  # a refresh query is running
        self._refresh_queued: set[str] | None = None  # refresh again after it (extra ids)
        self._sweep = 0  # where the next refresh's rotating check of loaded rows starts
        self._removing = False

    # -- state ---------------------------------------------------------------------

    @property
    def store(self) -> Store | None:
        return self._store

    @property
    def loading(self) -> bool:
        """A page of the listing is being loaded."""
        return self._loading

    @property
    def at_end(self) -> bool:
        """Every row there is to show has arrived (listing complete, or search done)."""
        if self._search_text:
            return not self._searching
        return self._at_end

    @property
    def searching(self) -> bool:
        """A search is running."""
        return self._searching

    @property
    def search_text(self) -> str:
        """The text being searched for ("" while the model lists sessions)."""
        return self._search_text

    @property
    def list_order(self) -> tuple[SessionOrder, bool]:
        """The ``(order, descending)`` the listing asks the store for."""
        if self._sort_column < 0:
            return "activity", True
        return (
            self.COLUMN_ORDERS[self._sort_column],
            self._sort_order == Qt.SortOrder.DescendingOrder,
        )

    def sortColumn(self) -> int:  # noqa: N802 - Qt's naming (as QSortFilterProxyModel)
        """The column set by :meth:`sort`; -1 while the store's natural order is shown."""
        return self._sort_column

    def sortOrder(self) -> Qt.SortOrder:  # noqa: N802
        return self._sort_order

    @property
    def removing(self) -> bool:
        """A refresh is removing rows of sessions that are gone (true while views react to
        ``rowsAboutToBeRemoved``/``rowsRemoved``: a selection model moving its current row
        off a removed row is not the user's choice)."""
        return self._removing

    @property
    def refreshing(self) -> bool:
        """A :meth:`refresh` is running or queued."""
        return self._refreshing or self._refresh_queued is not None

    def set_store(self, store: Store | None) -> None:
        """Show ``store``'s sessions (none yet: call :meth:`fetchMore`).

        Cancels a running load, search or refresh and leaves search mode; the sort is kept.
        """
        self._bridge.cancel(self._key)
        self._bridge.cancel(self._refresh_key)
        self._refreshing = False
        self._refresh_queued = None
        self._store = store
        self._search_text = ""
        self._reset_listing()

    def set_search(self, text: str) -> None:
        """Search the store for ``text`` (id or message text, ignoring case); results are
        inserted as they are found. Empty (or blank) text goes back to the listing and
        loads its first page. The same text again is a no-op unless the last try failed."""
        text = text if text.strip() else ""
        if text == self._search_text and not self._failed:
            return
        self._bridge.cancel(self._key)
        self._search_text = text
        if not text:
            self._reset_listing()
            self.fetchMore(QModelIndex())
            return
        self._start_search()

    def reload(self) -> None:
        """Load the current listing or search again from the start (F5)."""
        self._bridge.cancel(self._key)
        if self._search_text:
            self._start_search()
        else:
            self._reset_listing()
            self.fetchMore(QModelIndex())

    def retry(self) -> None:
        """Fetch again after a failed page (or run a failed search again)."""
        if self._search_text:
            self._failed = False
            self._start_search()
            return
        self._failed = False
        self.fetchMore(QModelIndex())

    def refresh(self, session_ids: Iterable[str] = ()) -> None:
        """Merge the store's current state into the rows shown, without a reset.

        Listing: the store's first page in the current order (and, for another order, the
        most recently active page, where every session that just got a message is) gives
        the rows to update, move or insert; the ids of the first loaded page, of a window
        of further loaded rows that moves on at each refresh, and ``session_ids`` are
        checked with ``sessions_by_ids`` so that deleted sessions leave. A session that
        now sorts after the last loaded row leaves too (its page brings it back); a new
        one there is left to paging. Search: the rows shown are updated (and re-sorted
        when a sort is set) and vanished ones removed; new matches are not looked for.

        Runs in the background under its own key: it never cancels a load or a search,
        and a refresh asked for while one runs (or while a search runs) follows it.
        Failures are logged, not shown: the next change tries again.
        """
        store = self._store
        if store is None:
            return
        extra = set(session_ids)
        if self._refreshing or self._searching:
            self._refresh_queued = (self._refresh_queued or set()) | extra
            return
        self._refreshing = True
        order, descending = self.list_order
        self._bridge.start(
            self._refresh_key,
            self._fetch_refresh(
                store,
                self._generation,
                bool(self._search_text),
                order,
                descending,
                self._ids_to_check(extra),
            ),
            self._on_refresh,
            self._on_refresh_failed,
        )

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
        if role == Qt.ItemDataRole.InitialSortOrderRole:
            # a first click on a column: ids A→Z, the most messages / most recent first
            if section == self.ID:
                return Qt.SortOrder.AscendingOrder
            return Qt.SortOrder.DescendingOrder
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def canFetchMore(self, parent: _Index) -> bool:
        if parent.isValid() or self._search_text:
            return False
        return self._store is not None and not self._at_end and not self._failed

    def fetchMore(self, parent: _Index) -> None:
        if not self.canFetchMore(parent) or self._loading:
            return
        assert self._store is not None
        self._loading = True
        order, descending = self.list_order
        self._task = self._bridge.start(
            self._key,
            self._load(self._store, self._cursor, order, descending, self._generation),
            self._on_loaded,
            self._on_load_failed,
        )

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by a column (Session: id, Messages: count, Last active: activity); -1
        goes back to the store's natural order (most recently active first).

        The listing is reset and paged again in the new order (its first page is loaded
        at once); search results are rearranged in place and later ones inserted sorted.
        """
        column = column if column in self.COLUMN_ORDERS else -1
        order = Qt.SortOrder(order)
        if (column, order) == (self._sort_column, self._sort_order):
            return
        before = self.list_order
        self._sort_column, self._sort_order = column, order
        if self._search_text:
            self._rearrange()
        elif self.list_order != before:
            self._bridge.cancel(self._key)
            self._reset_listing()
            self.fetchMore(QModelIndex())

    # -- listing -----------------------------------------------------------------------

    def _clear_rows(self) -> None:
        self.beginResetModel()
        self._generation += 1
        self._task = None
        self._rows = []
        self._known = set()
        self._found_order = {}
        self._keys = []
        self._cursor = None
        self._loading = False
        self._failed = False
        self._searching = False
        self._sweep = 0
        self.endResetModel()

    def _reset_listing(self) -> None:
        self._clear_rows()
        self._at_end = self._store is None

    async def _load(
        self,
        store: Store,
        cursor: tuple[Any, ...] | None,
        order: SessionOrder,
        descending: bool,
        generation: int,
    ) -> tuple[str, int, SessionPage]:
        page = await store.list_sessions(
            limit=self._page_size, cursor=cursor, order=order, descending=descending
        )
        return "page", generation, page

    def _on_page(self, page: SessionPage) -> None:
        self._loading = False
        fresh = [info for info in page.sessions if info.id not in self._known]
        if fresh:
            first = len(self._rows)
            self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
            self._rows.extend(fresh)
            self._known.update(info.id for info in fresh)
            self.endInsertRows()
        self._cursor = page.cursor
        # An empty page that still has a cursor would make views ask forever.
        self._at_end = page.cursor is None or not page.sessions
        self.pageLoaded.emit(len(fresh), not self._at_end)

    # -- search ------------------------------------------------------------------------

    def _start_search(self) -> None:
        self._clear_rows()
        self._at_end = True  # no paging in search mode
        store = self._store
        if store is None:
            return
        self._searching = True
        self.searchStarted.emit(self._search_text)
        self._task = self._bridge.start(
            self._key,
            self._search(store, self._search_text, self._generation),
            self._on_loaded,
            self._on_load_failed,
        )

    async def _search(self, store: Store, text: str, generation: int) -> tuple[str, int, None]:
        """Consume the store's search: ids go to ``sessions_by_ids`` in small batches (a
        batch is sent when full, or once its first id has waited
        :data:`SEARCH_FLUSH_SECONDS`) while the search keeps reading; the rows fetched are
        inserted at most every :data:`SEARCH_SHOW_SECONDS` (the first ones at once) or when
        :data:`SEARCH_SHOW_MAX` are waiting, so a fast search does not make the view
        repaint for every small batch and no insertion holds the UI thread for long."""
        loop = asyncio.get_running_loop()
        batch = self._search_batch
        pending: list[str] = []  # ids found whose rows are not fetched yet
        first_pending_at = [0.0]  # when the oldest of them was found
        ready_ids: list[str] = []  # ids whose rows are fetched but not shown yet
        ready: list[SessionInfo] = []
        shown_at = -float("inf")
        wake = asyncio.Event()

        async def produce() -> None:
            # aclosing: however this ends (cancelled included), the generator is closed
            # and its cursor released before the task finishes.
            async with contextlib.aclosing(store.search_session_ids(text)) as ids:
                async for sid in ids:
                    if not pending:
                        first_pending_at[0] = loop.time()
                    pending.append(sid)
                    # Wake the consumer for a first id (it then waits at most
                    # SEARCH_FLUSH_SECONDS for more) and for a full batch.
                    if len(pending) == 1 or len(pending) >= batch:
                        wake.set()

        producer = asyncio.ensure_future(produce())
        try:
            while True:
                now = loop.time()
                finished = producer.done() and not pending
                if ready_ids and (
                    finished
                    or now - shown_at >= SEARCH_SHOW_SECONDS
                    or len(ready_ids) >= SEARCH_SHOW_MAX
                ):
                    self._on_search_batch(generation, ready_ids, ready)
                    ready_ids, ready = [], []
                    shown_at = now
                    continue
                if pending and (
                    len(pending) >= batch
                    or producer.done()
                    or now - first_pending_at[0] >= SEARCH_FLUSH_SECONDS
                ):
                    ids = pending[:batch]
                    del pending[:batch]
                    first_pending_at[0] = now
                    # The search keeps reading while these rows are fetched.
                    ready.extend(await store.sessions_by_ids(ids))
                    ready_ids.extend(ids)
                    continue
                if finished:
                    break
                deadlines = []
                if pending:
                    deadlines.append(first_pending_at[0] + SEARCH_FLUSH_SECONDS)
                if ready_ids:
                    deadlines.append(shown_at + SEARCH_SHOW_SECONDS)
                wake.clear()
                waiter = asyncio.ensure_future(wake.wait())
                try:
                    await asyncio.wait(
                        {producer, waiter},
                        timeout=max(0.0, min(deadlines) - now) if deadlines else None,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                finally:
                    waiter.cancel()
            producer.result()  # the search's own error, if it failed
        finally:
            if not producer.done():
                producer.cancel()
                await asyncio.wait({producer})
        return "search", generation, None

    def _search_key(self) -> tuple[Callable[[SessionInfo], Any], bool]:
        """Sort key and direction of the rows in search mode."""
        if self._sort_column < 0:
            found = self._found_order
            return (lambda info: found[info.id]), False
        order, descending = self.list_order
        if order == "id":
            return (lambda info: info.id), descending
        if order == "messages":
            return (lambda info: (info.messages, info.id)), descending
        return _activity_key, descending

    def _on_search_batch(self, generation: int, ids: list[str], infos: list[SessionInfo]) -> None:
        if generation != self._generation:
            return
        by_id = {info.id: info for info in infos}
        fresh: list[SessionInfo] = []
        for sid in ids:  # in the order found (sessions_by_ids answers in any order)
            info = by_id.get(sid)
            if info is None or sid in self._known:
                continue  # gone since (or listed twice)
            self._known.add(sid)
            self._found_order[sid] = len(self._found_order)
            fresh.append(info)
        if not fresh:
            return
        key_of, descending = self._search_key()
        keyed = sorted(((key_of(info), info) for info in fresh), key=lambda kv: kv[0])
        # ``_keys`` holds the shown rows' keys in ascending order: a C-level bisect gives
        # each new row its place among the rows already shown. Consecutive new rows with
        # the same place become one insertion, done from the bottom up so that the places
        # computed before any insertion stay right.
        keys, total = self._keys, len(self._rows)
        if descending:
            keyed.reverse()
        runs: list[tuple[int, list[SessionInfo]]] = []
        for key, info in keyed:
            at = bisect.bisect_right(keys, key)
            pos = total - at if descending else at
            if runs and runs[-1][0] == pos:
                runs[-1][1].append(info)
            else:
                runs.append((pos, [info]))
        for pos, run in reversed(runs):
            self.beginInsertRows(QModelIndex(), pos, pos + len(run) - 1)
            self._rows[pos:pos] = run
            self.endInsertRows()
        keys.extend(key for key, _ in keyed)
        keys.sort()  # two sorted runs: linear
        self.pageLoaded.emit(len(fresh), True)
        self.searchProgress.emit(len(self._rows))

    def _rearrange(self) -> None:
        """Put the search results in the current sort's order (a layout change, so that
        selections and persistent indexes follow their rows)."""
        if not self._rows:
            return
        key_of, descending = self._search_key()
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        ids = [self._rows[p.row()].id if 0 <= p.row() < len(self._rows) else None for p in persistent]
        self._rows.sort(key=key_of, reverse=descending)
        self._keys = sorted(key_of(info) for info in self._rows)
        where = {info.id: row for row, info in enumerate(self._rows)}
        moved = [
            self.index(where[sid], p.column()) if sid is not None else QModelIndex()
            for p, sid in zip(persistent, ids)
        ]
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    # -- live refresh ------------------------------------------------------------------

    def _ids_to_check(self, extra: set[str]) -> list[str]:
        """The loaded ids a refresh re-checks: the first page, a window of later rows that
        moves on at each refresh, and ``extra``."""
        n, first = len(self._rows), self._page_size
        ids = [info.id for info in self._rows[:first]]
        if n > first:
            start = self._sweep if first <= self._sweep < n else first
            end = min(n, start + REFRESH_SWEEP)
            ids += [info.id for info in self._rows[start:end]]
            self._sweep = end if end < n else first
        seen = set(ids)
        ids += sorted(sid for sid in extra if sid not in seen)
        return ids

    async def _fetch_refresh(
        self,
        store: Store,
        generation: int,
        search: bool,
        order: SessionOrder,
        descending: bool,
        check: list[str],
    ) -> tuple[int, bool, list[SessionInfo], list[SessionInfo], list[str], list[SessionInfo]]:
        top: list[SessionInfo] = []
        if not search:
            page = await store.list_sessions(
                limit=self._page_size, order=order, descending=descending
            )
            top = page.sessions
        if not search and order == "activity" and descending:
            recent = top
        else:
            recent = (await store.list_sessions(limit=self._page_size)).sessions
        # Last, so that a session deleted meanwhile counts as gone.
        checked: list[SessionInfo] = []
        for start in range(0, len(check), ID_BATCH):
            checked.extend(await store.sessions_by_ids(check[start : start + ID_BATCH]))
        return generation, search, top, recent, check, checked

    def _on_refresh(self, result: tuple[Any, ...]) -> None:
        generation, search, top, recent, asked, checked = result
        self._refreshing = False
        queued, self._refresh_queued = self._refresh_queued, None
        if (
            generation == self._generation
            and self._store is not None
            and search == bool(self._search_text)
        ):
            self._merge(top, recent, asked, checked, search)
        if queued is not None:
            self.refresh(queued)

    def _merge(
        self,
        top: list[SessionInfo],
        recent: list[SessionInfo],
        asked: list[str],
        checked: list[SessionInfo],
        search: bool,
    ) -> None:
        """Apply a refresh's answers to the rows: update, remove, move, insert."""
        fresh: dict[str, SessionInfo] = {info.id: info for info in recent}
        fresh.update((info.id, info) for info in top)
        fresh.update((info.id, info) for info in checked)
        answered = {info.id for info in checked}
        vanished = {sid for sid in asked if sid not in answered}
        if search:
            key_of, descending = self._search_key()
        else:
            order, descending = self.list_order
            key_of = _order_key(order)
        rows = self._rows

        # 1. Rows whose data changed: updated in place; those whose key changed must move.
        updated: list[int] = []
        moved: set[str] = set()
        for row, info in enumerate(rows):
            new = fresh.get(info.id)
            if new is None or info.id in vanished or not _differs(info, new):
                continue
            rows[row] = new
            updated.append(row)
            if key_of(new) != key_of(info):
                moved.add(info.id)
        last_column = len(self.COLUMNS) - 1
        for first, last in _runs(updated):
            self.dataChanged.emit(self.index(first, 0), self.index(last, last_column))

        # 2. The order wanted: the rows that stay put, with the moved and the new ones
        # placed among them by their keys. Past the last loaded row (more to page), a moved
        # row leaves and a new one is not added: paging brings them where they belong.
        target = [info for info in rows if info.id not in moved and info.id not in vanished]
        keys = [key_of(info) for info in target]
        incoming = [info for info in rows if info.id in moved]
        if not search:
            seen: set[str] = set()
            for info in (*top, *recent):
                if info.id not in self._known and info.id not in seen:
                    seen.add(info.id)
                    incoming.append(fresh[info.id])
        more = not search and not self._at_end
        dropped: set[str] = set()
        placing: set[str] = set()
        for info in sorted(incoming, key=key_of, reverse=descending):
            key = key_of(info)
            at = _place(keys, key, descending)
            if more and at == len(target):
                if info.id in moved:
                    dropped.add(info.id)
                continue
            target.insert(at, info)
            keys.insert(at, key)
            placing.add(info.id)

        # 3. Remove the vanished and the dropped rows, bottom up.
        gone = vanished | dropped
        removed_rows = [row for row, info in enumerate(rows) if info.id in gone]
        if removed_rows:
            self._removing = True
            try:
                for first, last in reversed(_runs(removed_rows)):
                    self.beginRemoveRows(QModelIndex(), first, last)
                    for info in rows[first : last + 1]:
                        self._known.discard(info.id)
                        self._found_order.pop(info.id, None)
                    del rows[first : last + 1]
                    self.endRemoveRows()
            finally:
                self._removing = False

        # 4. Move and insert: each placed row goes right after the row before it in the
        # wanted order (the rows that stay put already are in order).
        ids = [info.id for info in rows]
        inserted = 0
        for at, info in enumerate(target):
            sid = info.id
            if sid not in placing:
                continue
            dest = ids.index(target[at - 1].id) + 1 if at else 0
            if sid in self._known:
                src = ids.index(sid)
                if src == dest:
                    continue
                self.beginMoveRows(QModelIndex(), src, src, QModelIndex(), dest)
                del rows[src], ids[src]
                to = dest - 1 if dest > src else dest
                rows.insert(to, info)
                ids.insert(to, sid)
                self.endMoveRows()
            else:
                self.beginInsertRows(QModelIndex(), dest, dest)
                rows.insert(dest, info)
                ids.insert(dest, sid)
                self._known.add(sid)
                self.endInsertRows()
                inserted += 1

        removed = len(removed_rows)
        if search and (updated or removed):
            search_key = self._search_key()[0]
            self._keys = sorted(search_key(info) for info in rows)
        if not search and (inserted or removed):
            self.pageLoaded.emit(inserted, not self._at_end)
        self.refreshed.emit(inserted, removed, len(updated))

    # -- outcomes ----------------------------------------------------------------------

    def _on_loaded(self, result: tuple[str, int, SessionPage | None]) -> None:
        kind, generation, page = result
        if generation != self._generation:  # a load for rows we no longer show
            return
        if kind == "page":
            assert page is not None
            self._on_page(page)
        else:
            self._searching = False
            found = len(self._rows)
            self.pageLoaded.emit(0, False)
            self.searchFinished.emit(found)
            self._run_queued_refresh()

    def _on_refresh_failed(self, error: Exception) -> None:
        # Quiet: the store may be busy or the server gone for a moment; the next change
        # (or F5) tries again.
        log.info("refreshing the session list failed: %s", error)
        self._refreshing = False
        self._refresh_queued = None

    def _on_load_failed(self, error: Exception) -> None:
        # The bridge reports from inside the task; a task cancelled after its last await
        # (by a handler of one of our own signals) may still report: ignore it.
        if asyncio.current_task() is not self._task:
            return
        searching = self._searching
        self._loading = False
        self._searching = False
        self._failed = True
        self.loadFailed.emit(error)
        if searching:
            self._run_queued_refresh()

    def _run_queued_refresh(self) -> None:
        if self._refresh_queued is not None and not self._refreshing:
            queued, self._refresh_queued = self._refresh_queued, None
            self.refresh(queued)
