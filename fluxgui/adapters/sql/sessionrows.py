"""The export's reads of a SQL format: pages of rows, several small sessions at once.

:class:`SqlRows` plays a SQL format's Rows role (:class:`fluxgui.core.roles.Rows`),
``iter_row_pages`` and ``row_pages_of``: the rows its reader's ``page_messages`` reads,
handed over unread (:class:`~fluxgui.core.jsonrecords.RowPage`) for the export to read,
or write straight as JSON, in its worker thread. One query per session costs a round
trip to the connection's thread each (and, on a server, over the network):
:func:`rows_of_sessions` reads a group of sessions whose counts add up to a page in one
query and splits the rows by session. A session it cannot vouch for (the rows went past
the limit, so its last rows may be missing) is left out, for the caller to read alone.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from itertools import groupby
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Protocol

from .backend import Backend, Params
from .search import in_clause

if TYPE_CHECKING:
    from fluxgui.core.jsonrecords import RowPage
    from fluxgui.core.model import Message
    from fluxgui.core.roles import Reader

Rows = list[tuple[Any, ...]]


class RowSource(Protocol):
    """What a SQL format's reader gives :class:`SqlRows`: forward pages of rows of
    ``columns`` from ``table`` in ``order``, each page as one to export, and the keyset
    anchor after a row."""

    @property
    def row_table(self) -> str: ...
    @property
    def row_columns(self) -> str: ...
    @property
    def row_order(self) -> str: ...

    async def page_rows(
        self, session_id: str, limit: int, anchor: tuple[Any, ...] | None, backward: bool
    ) -> Rows: ...
    async def row_page(self, rows: Rows, session_id: str) -> list[Message] | RowPage: ...
    def row_anchor(self, row: tuple[Any, ...]) -> tuple[Any, ...]: ...


class SqlRows:
    """The export's row pages of a SQL format (the Rows role: see
    :class:`fluxgui.core.roles.Rows`), read by its reader (``source``)."""

    def __init__(self, backend: Backend, source: RowSource) -> None:
        self.backend = backend
        self.source = source

    async def iter_row_pages(self, session_id: str, *, batch: int = 500) -> AsyncGenerator[list[Message] | RowPage, None]:
        """A session's rows a page at a time, as :class:`~fluxgui.core.jsonrecords.RowPage`
        (or Messages where a page must be read here)."""
        anchor: tuple[Any, ...] | None = None
        while True:
            rows = await self.source.page_rows(session_id, batch, anchor, False)
            if not rows:
                return
            yield await self.source.row_page(rows, session_id)
            if len(rows) < batch:
                return
            anchor = self.source.row_anchor(rows[-1])

    async def row_pages_of(self, session_ids: list[str], *, limit: int) -> dict[str, list[Message] | RowPage]:
        """Several small sessions read in one query (see :func:`rows_of_sessions`)."""
        src = self.source
        found = await rows_of_sessions(
            self.backend, src.row_table, src.row_columns, src.row_order, session_ids, limit
        )
        # in the order asked for: reading a page may change what the store knows (an
        # envelope met), and so how the next ones read, as session by session
        return {sid: await src.row_page(found[sid], sid) for sid in session_ids if sid in found}


class MessageRows:
    """The export's pages of a format that reads its messages otherwise (one branch of
    an ``AdvancedSQLiteSession`` store): Messages, through its reader; no session is
    read together with others."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader

    async def iter_row_pages(self, session_id: str, *, batch: int = 500) -> AsyncGenerator[list[Message] | RowPage, None]:
        async for page in self.reader.iter_messages(session_id, batch=batch):
            yield page

    async def row_pages_of(self, session_ids: list[str], *, limit: int) -> dict[str, list[Message] | RowPage]:
        return {}


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
