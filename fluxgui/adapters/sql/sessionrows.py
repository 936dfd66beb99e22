"""The export's reads of a SQL format: pages of rows, several small sessions at once.

:class:`RowReads` gives a SQL store :meth:`~fluxgui.adapters.base.Store.iter_row_pages`
and :meth:`~fluxgui.adapters.base.Store.row_pages_of`: the rows ``page_messages`` reads,
handed over unread (:class:`~fluxgui.core.jsonrecords.RowPage`) for the export to read,
or write straight as JSON, in its worker thread. One query per session costs a round
trip to the connection's thread each (and, on a server, over the network):
:func:`rows_of_sessions` reads a group of sessions whose counts add up to a page in one
query and splits the rows by session. A session it cannot vouch for (the rows went past
the limit, so its last rows may be missing) is left out, for the caller to read alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from .backend import Backend, Params
from .search import in_clause

if TYPE_CHECKING:
    from fluxgui.core.jsonrecords import RowPage
    from fluxgui.core.model import Message

Rows = list[tuple[Any, ...]]


class RowReads:
    """Mixed into a SQL format's store (before its base): the export's reads, from the
    format's ``_page_rows`` (forward pages of rows), ``_row_page`` (rows as a page to
    export), ``_row_anchor`` (the keyset anchor after a row) and ``_row_table``,
    ``_row_columns``, ``_row_order`` (what ``_page_rows`` reads, in which order). A
    subclass that reads its messages otherwise (its own ``page_messages``) gets the
    defaults, which read Messages."""

    backend: Backend
    _row_table: str
    _row_columns: str
    _row_order: str

    @property
    def rows(self) -> RowReads:
        """The export's row pages (a role: see :class:`fluxgui.core.roles.Rows`)."""
        return self

    def _reads_rows(self) -> bool:
        owner = next(c for c in type(self).__mro__ if "_row_page" in vars(c))
        return type(self).page_messages is owner.page_messages  # type: ignore[attr-defined]

    async def iter_row_pages(self, session_id: str, *, batch: int = 500) -> AsyncIterator[list[Message] | RowPage]:
        if not self._reads_rows():
            async for page in super().iter_row_pages(session_id, batch=batch):  # type: ignore[misc]
                yield page
            return
        anchor: tuple[Any, ...] | None = None
        while True:
            rows = await self._page_rows(session_id, batch, anchor, False)  # type: ignore[attr-defined]
            if not rows:
                return
            yield await self._row_page(rows, session_id)  # type: ignore[attr-defined]
            if len(rows) < batch:
                return
            anchor = self._row_anchor(rows[-1])  # type: ignore[attr-defined]

    async def row_pages_of(self, session_ids: list[str], *, limit: int) -> dict[str, list[Message] | RowPage]:
        if not self._reads_rows():
            return await super().row_pages_of(session_ids, limit=limit)  # type: ignore[misc]
        found = await rows_of_sessions(
            self.backend, self._row_table, self._row_columns, self._row_order, session_ids, limit
        )
        # in the order asked for: reading a page may change what the store knows (an
        # envelope met), and so how the next ones read, as session by session
        return {
            sid: await self._row_page(found[sid], sid)  # type: ignore[attr-defined]
            for sid in session_ids if sid in found
        }


async def rows_of_sessions(
    backend: Backend, table: str, columns: str, order: str, session_ids: list[str], limit: int
) -> dict[str, Rows]:
    """Session id → its rows (``columns``, then ``session_id``, in ``order``) for each of
    ``session_ids`` read whole (none: no rows), at most ``limit`` rows in all. When the
    sessions hold more than that, the last session met and the ones after it in the
    database's order are left out; so is every session when the database's order does
    not keep each session's rows together or gives other ids than those asked for (a
    collation that finds two ids equal)."""
    if not session_ids:
        return {}
    params: Params = {"n": limit + 1}
    rows = await backend.fetchall(
        f"SELECT {columns}, session_id FROM {table} WHERE session_id IN "
        f"{in_clause(session_ids, params, 's')} ORDER BY session_id, {order} LIMIT :n",
        params,
    )
    groups = [(sid, list(part)) for sid, part in groupby(rows, key=itemgetter(-1))]
    found = dict(groups)
    if len(found) != len(groups) or not found.keys() <= set(session_ids):
        return {}
    if len(rows) <= limit:
        return {sid: found.get(sid, []) for sid in session_ids}
    found.pop(groups[-1][0])  # cut short: the rest is read session by session
    return found
