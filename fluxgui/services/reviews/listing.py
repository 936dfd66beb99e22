"""The session list under a review filter, still paged.

Two roads, so that neither reads a whole store:

* a filter the review database answers (reviewed, flagged, in review, a tag, a reviewer,
  has notes): a page of matching ids from the review database (most recently reviewed
  first, keyset-paged), then the store's rows for just those ids (``sessions_by_ids``);
  sessions the store no longer holds drop out (the window sorts the rows it has by the
  column chosen, inserting each later page's where they sort, as for search results);
* "unreviewed" alone: the store's own pages in the list's order, the reviewed and
  claimed sessions of each page dropped (a page may come back short; the cursor goes on).

:class:`FilteredPages` is what the window's session list model calls instead of
``list_sessions`` while a filter is set; ``keep`` filters a search's batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fluxgui.core.ports import SessionOrder, SessionPage
from fluxgui.core.roles import Store

from .model import ReviewFilter
from .repository import ReviewDB

#: store pages read at most for one short "unreviewed" page (more follow on fetchMore)
MAX_STORE_PAGES = 5


@dataclass
class FilteredPages:
    """The pages of one store's session list under one review filter."""

    db: ReviewDB
    store_key: str
    filter: ReviewFilter

    @property
    def by_store(self) -> bool:
        """The store pages (its order holds); else the review database does."""
        return self.filter.wants_unreviewed and not (self.filter.tag or self.filter.reviewer or self.filter.has_notes)

    async def page(
        self, store: Store, *, limit: int, cursor: tuple[Any, ...] | None,
        order: SessionOrder = "activity", descending: bool = True,
    ) -> SessionPage:
        if self.by_store:
            return await self._store_page(store, limit, cursor, order, descending)
        ids, more = await self.db.matching(
            self.store_key, self.filter, limit=limit, cursor=tuple(cursor) if cursor else None
        )
        infos = {info.id: info for info in await store.reader.sessions_by_ids(ids)} if ids else {}
        return SessionPage([infos[sid] for sid in ids if sid in infos], more)

    async def _store_page(
        self, store: Store, limit: int, cursor: tuple[Any, ...] | None,
        order: SessionOrder, descending: bool,
    ) -> SessionPage:
        # Never an empty page with a cursor (a view would ask for ever): read on until a
        # session passes, then at most MAX_STORE_PAGES store pages for one page of ours.
        kept_rows: list[Any] = []
        reads = 0
        while True:
            page = await store.reader.list_sessions(limit=limit, cursor=cursor, order=order, descending=descending)
            reads += 1
            kept = await self.db.keep_matching(self.store_key, [i.id for i in page.sessions], self.filter)
            kept_rows.extend(i for i in page.sessions if i.id in kept)
            cursor = page.cursor
            if cursor is None or not page.sessions:
                return SessionPage(kept_rows, None)
            if kept_rows and (len(kept_rows) >= limit or reads >= MAX_STORE_PAGES):
                return SessionPage(kept_rows, cursor)

    async def keep(self, ids: list[str]) -> set[str]:
        """Which of a search's ids pass the filter."""
        return await self.db.keep_matching(self.store_key, ids, self.filter)
