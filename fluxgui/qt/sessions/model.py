"""The session list's model: a store's sessions, paged, sorted, searched, merged live.

Rows and their Qt face are :class:`~fluxgui.qt.sessions.table.SessionTable`'s; the
Qt-free rules are services': search batching (:func:`fluxgui.services.search.
search_batches`) and sort keys, refresh reads and merge plans
(:mod:`fluxgui.services.session_list`). This model runs them through the bridge and
keeps the state between.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal

from fluxgui.core.roles import Store
from fluxgui.core.model import SessionInfo
from fluxgui.core.ports import SessionOrder, SessionPage
from fluxgui.services import pages
from fluxgui.services.index import found_session_ids
from fluxgui.services.search import search_batches
from fluxgui.services.session_list import (
    Refresh,
    ids_to_check,
    order_key,
    plan_merge,
    read_refresh,
)

from ..bridge import AsyncBridge
from .table import _Index, SessionTable

log = logging.getLogger(__name__)


class SessionListModel(SessionTable):
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
        self._cursor: tuple[Any, ...] | None = None
        self._at_end = True
        self._loading = False
        self._failed = False
        self._search_text = ""
        self._searching = False
        self._hits: dict[str, int] = {}  # session → its newest hit (index searches)
        self._generation = 0  # bumped on every reset; older results are dropped
        self._task: asyncio.Task[Any] | None = None  # the load or search now running
        self._refresh_key = f"{self._key}:refresh"
        self._refreshing = False  # a refresh query is running
        self._refresh_queued: set[str] | None = None  # refresh again after it (extra ids)
        self._sweep = 0  # where the next refresh's rotating check of loaded rows starts
        #: a review filter (``services.reviews.listing.FilteredPages``): pages and search
        #: batches go through it while set
        self._filter: Any = None

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

    def hit_message(self, session_id: str) -> int | None:
        """The first message of ``session_id`` the running search's index hit (``None``:
        not known, as when the search scanned)."""
        return self._hits.get(session_id) if self._search_text else None

    @property
    def search_text(self) -> str:
        """The text being searched for ("" while the model lists sessions)."""
        return self._search_text

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

    @property
    def review_filter(self) -> Any:
        return self._filter

    @property
    def _sorted_here(self) -> bool:
        """The rows come in an order of their own and are sorted here: search results,
        and the pages of a review filter the review database answers (its order)."""
        return bool(self._search_text) or not getattr(self._filter, "by_store", True)

    def set_review_filter(self, pages: Any) -> None:
        """List only the sessions ``pages`` (a ``FilteredPages``; ``None``: no filter)
        lets through, still a page at a time (pages in the review database's order are
        sorted here, as search results are); a running search is run again through it.
        While a filter is set, a live refresh leaves the rows alone (the review workflow
        reloads when reviews change)."""
        self._filter = pages
        self.reload()

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
        if self._filter is not None:
            return
        if self._refreshing or self._searching:
            self._refresh_queued = (self._refresh_queued or set()) | extra
            return
        self._refreshing = True
        order, descending = self.list_order
        check, self._sweep = ids_to_check(
            [info.id for info in self._rows], self._page_size, self._sweep, extra
        )
        self._bridge.start(
            self._refresh_key,
            self._read_refresh(
                store, self._generation, bool(self._search_text), order, descending, check
            ),
            self._on_refresh,
            self._on_refresh_failed,
        )

    # -- Qt model API (paging, sorting) ------------------------------------------------

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
        if self._sorted_here:
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
        if self._filter is not None:
            page = await self._filter.page(
                store, limit=self._page_size, cursor=cursor, order=order, descending=descending
            )
            return "page", generation, page
        page = await pages.session_page(
            store, limit=self._page_size, cursor=cursor, order=order, descending=descending
        )
        return "page", generation, page

    def _on_page(self, page: SessionPage) -> None:
        self._loading = False
        fresh = [info for info in page.sessions if info.id not in self._known]
        if self._sorted_here:
            self._insert_found(fresh)
        else:
            self._append_rows(fresh)
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
        """Insert the search's results batch by batch as
        :func:`~fluxgui.services.search.search_batches` hands them out."""
        # The search index answers once it is built; until then the store's search.
        self._hits = {}
        ids = found_session_ids(store, text, self._hits)
        batches = search_batches(store, text, batch=self._search_batch, ids=ids)
        # aclosing: however this ends (cancelled included), the search is closed and its
        # cursor released before the task finishes.
        async with contextlib.aclosing(batches):
            async for found in batches:
                got, sessions = found.ids, found.sessions
                if self._filter is not None:
                    kept = await self._filter.keep(got)
                    got = [sid for sid in got if sid in kept]
                    sessions = [info for info in sessions if info.id in kept]
                self._on_search_batch(generation, got, sessions)
        return "search", generation, None

    def _on_search_batch(self, generation: int, ids: list[str], infos: list[SessionInfo]) -> None:
        if generation != self._generation:
            return
        by_id = {info.id: info for info in infos}
        fresh: list[SessionInfo] = []
        for sid in ids:  # in the order found (sessions_by_ids answers in any order)
            info = by_id.get(sid)
            if info is not None and sid not in self._known:  # (not gone since, listed once)
                fresh.append(info)
                self._known.add(sid)
        if not fresh:
            return
        self._insert_found(fresh)
        self.pageLoaded.emit(len(fresh), True)
        self.searchProgress.emit(len(self._rows))

    # -- live refresh ------------------------------------------------------------------

    async def _read_refresh(
        self,
        store: Store,
        generation: int,
        search: bool,
        order: SessionOrder,
        descending: bool,
        check: list[str],
    ) -> tuple[int, bool, Refresh]:
        found = await read_refresh(
            store,
            page_size=self._page_size,
            search=search,
            order=order,
            descending=descending,
            check=check,
        )
        return generation, search, found

    def _on_refresh(self, result: tuple[int, bool, Refresh]) -> None:
        generation, search, found = result
        self._refreshing = False
        queued, self._refresh_queued = self._refresh_queued, None
        if (
            generation == self._generation
            and self._store is not None
            and search == bool(self._search_text)
        ):
            self._merge(found, search)
        if queued is not None:
            self.refresh(queued)

    def _merge(self, found: Refresh, search: bool) -> None:
        """Apply a refresh's answers to the rows: update, remove, move, insert."""
        if search:
            key_of, descending = self._search_key()
        else:
            order, descending = self.list_order
            key_of = order_key(order)
        plan = plan_merge(
            self._rows,
            found,
            key_of=key_of,
            descending=descending,
            search=search,
            known=self._known,
            more=not search and not self._at_end,
        )
        inserted, removed, updated = self._apply_merge(plan)
        if search and (updated or removed):
            self._rekey(key_of)
        if not search and (inserted or removed):
            self.pageLoaded.emit(inserted, not self._at_end)
        self.refreshed.emit(inserted, removed, updated)

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
