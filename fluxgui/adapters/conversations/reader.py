"""Reading OpenAI conversations: the listed ids, cursor paging from either end, search.

The API cannot list conversations, so the sessions are the ids the store was given,
listed in that order (there are no times to order by: items carry none, and the SDK never
reads a conversation's own; the window gives its remembered ids newest first). A listing reads the
latest :data:`COUNT_PROBE` items of each id (a few at a time) and keeps that snapshot
until the next listing starts: a conversation with no more items than that has its
count, a longer one "≥ 100" (``count_exact`` false). An id the server does not know is
left out and reported in the store's problems (:meth:`~.known.Known.problems`).

Messages are paged with the API's cursor exactly as the SDK pages them: ``order=desc``
from the end (the latest page first, so a 100,000-item conversation opens without
reading the rest), ``order=asc`` from the start, ``after`` the item id of the page's
edge, at most 100 items a request.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from fluxgui.core.errors import SessionNotFound, Unsupported
from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.ports import SessionOrder, SessionPage

from ..parts import Place
from ..reading import ListingReader, Page, cut_page
from ..textmatch import contains
from .answers import item_page
from .client import ConversationsBackend
from .known import Known, Row

#: items read per listed conversation (its count when it holds no more)
COUNT_PROBE = 100
#: the API's largest page
PAGE_MAX = 100
#: conversations read at once while listing
PARALLEL = 8


class ConversationsReader(ListingReader[ConversationsBackend]):
    """The conversations listed and their items (see the module text); what it reads is
    kept in the store's :class:`~.known.Known`."""

    def __init__(self, place: Place[ConversationsBackend], known: Known) -> None:
        super().__init__(place)
        self.known = known

    # -- one request -----------------------------------------------------------------

    async def fetch(
        self, cid: str, *, order: str, after: str | None = None, limit: int = PAGE_MAX
    ) -> tuple[list[dict[str, Any]], bool]:
        """One page of items (``order`` ``asc``/``desc``) and whether more follow;
        :class:`SessionNotFound` for an unknown conversation, another error (never an
        empty page) for an answer that is not the API's."""
        kwargs: dict[str, Any] = {"order": order, "limit": max(1, min(limit, PAGE_MAX))}
        if after is not None:
            kwargs["after"] = after
        async def read(client: Any) -> tuple[list[dict[str, Any]], bool]:
            return item_page(await client.conversations.items.with_raw_response.list(cid, **kwargs))

        with self.backend.failing(cid):
            items, more = await self.backend.run(read)
        return items, more and bool(items)

    # -- sessions ------------------------------------------------------------------

    async def _row(self, cid: str, *, keep: bool = False) -> Row | None:
        """The row of ``cid`` (its latest items read; ``keep``: kept as the probe)."""
        try:
            items, more = await self.fetch(cid, order="desc", limit=COUNT_PROBE)
        except SessionNotFound as exc:
            self.known.lost(cid, str(exc))
            return None
        self.known.found(cid)
        for item in items:
            self.known.message(item)
        if keep:
            self.known.keep_probe(cid, items, more)
        return (cid, self.known.position(cid), len(items), not more)

    async def _rows_of(self, ids: list[str]) -> list[Row]:
        """The rows of ``ids`` the server knows; the first error of any (the other reads
        cancelled: none is left running)."""
        gate = asyncio.Semaphore(PARALLEL)

        async def one(cid: str) -> Row | None:
            async with gate:
                return await self._row(cid)

        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(cid)) for cid in ids]
        except BaseExceptionGroup as failed:
            raise _first(failed) from None
        return [r for r in (t.result() for t in tasks) if r is not None]

    async def _rows(self) -> list[Row]:
        if self.known.snapshot is None:
            self.known.snapshot = await self._rows_of(self.known.ids)
        return self.known.snapshot

    async def list_sessions(
        self, *, limit: int = 50, cursor: tuple[Any, ...] | None = None,
        order: SessionOrder = "activity", descending: bool = True, since: float | None = None,
    ) -> SessionPage:
        """A page of the listed conversations (in the order given, by default); a
        listing from its start reads them again."""
        if cursor is None:
            self.known.forget()
        return await super().list_sessions(
            limit=limit, cursor=cursor, order=order, descending=descending, since=since
        )

    async def _page_by_activity(self, limit: int, cursor: tuple[Any, ...] | None, descending: bool) -> list[tuple[Any, ...]]:
        # "Most recently active first" is the order given: the first id ranks highest.
        return cut_page(await self._rows(), lambda r: (-r[1], r[0]), limit, cursor, descending)

    async def _page_by_id(self, limit: int, cursor: tuple[Any, ...] | None, descending: bool) -> list[tuple[Any, ...]]:
        return cut_page(await self._rows(), lambda r: (r[0],), limit, cursor, descending)

    async def _page_by_count(self, limit: int, cursor: tuple[Any, ...] | None, descending: bool) -> list[tuple[Any, ...]]:
        return cut_page(await self._rows(), lambda r: (r[2], r[0]), limit, cursor, descending)

    def _row_info(self, row: tuple[Any, ...]) -> SessionInfo:
        cid, position, count, exact = row
        return SessionInfo(cid, count, None, None, sort_key=(-position, cid), count_exact=exact)

    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None:
        """The conversation's row (its latest items read to count them); ``None`` when
        the server does not know it."""
        self.place.check_branch(branch)
        row = await self._row(session_id, keep=True)
        return self._row_info(row) if row is not None else None

    async def require_session(self, session_id: str) -> SessionInfo:
        """The conversation's row; the client's one line (a 404's) when the server does
        not know it."""
        info = await self.session_info(session_id)
        if info is None:
            raise self.backend.unknown(session_id)
        return info

    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]:
        return [self._row_info(r) for r in await self._rows_of(list(dict.fromkeys(ids)))]

    async def search_session_ids(self, text: str) -> AsyncGenerator[str, None]:
        """Listed conversations whose id or any item's text holds ``text``: ids first,
        then each conversation read from its start until a hit."""
        rows = await self._rows()
        rest = []
        for cid, *_ in rows:
            if contains(cid, text):
                yield cid
            else:
                rest.append(cid)
        for cid in rest:
            async for page in self.iter_messages(cid):
                if any(contains(m.text, text) for m in page):
                    yield cid
                    break

    # -- messages ------------------------------------------------------------------

    async def read_page(self, session_id: str, page: Page) -> list[Message]:
        """See :meth:`ListingReader.page_messages`; every item is read whole (the API
        sends items whole: ``whole_up_to`` changes nothing)."""
        limit, anchor, direction, branch = page.limit, page.anchor, page.direction, page.branch
        self.place.check_branch(branch)
        if limit <= 0:
            return []
        order = "desc" if direction == "backward" else "asc"
        after: str | None = str(anchor[0]) if anchor else None
        got, more = self.known.take_probe(session_id) if order == "desc" and after is None else ([], True)
        del got[limit:]
        try:
            while len(got) < limit and more:
                start = str(got[-1].get("id")) if got else after
                items, more = await self.fetch(session_id, order=order, after=start, limit=limit - len(got))
                got.extend(items)
        except SessionNotFound:
            return []  # as every store: no such session, no messages
        if order == "desc":
            got.reverse()
        return [self.known.message(i) for i in got]

    async def iter_messages(
        self, session_id: str, *, batch: int = 500, branch: str | None = None
    ) -> AsyncGenerator[list[Message], None]:
        """Every item from the start, a page of the API at a time."""
        self.place.check_branch(branch)
        after: str | None = None
        while True:
            try:
                items, more = await self.fetch(session_id, order="asc", after=after)
            except SessionNotFound:
                return
            if items:
                yield [self.known.message(i) for i in items]
            if not more:
                return
            after = str(items[-1].get("id"))

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        """The item count, read through the whole conversation (the API tells none)."""
        n = 0
        async for page in self.iter_messages(session_id, branch=branch):
            n += len(page)
        return n

    async def count_turns_before(
        self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None
    ) -> int:
        """Refused: an item's position is only known by reading every item before it
        (1,000 requests for a 100,000-item conversation), so the window numbers a long
        conversation's turns once its start is loaded."""
        raise Unsupported(
            f"{self.target} tells no item's position: turns are numbered once the "
            "conversation's start is loaded"
        )

    async def flux_messages(
        self, session_id: str, limit: int | None, *, branch: str | None = None
    ) -> list[dict[str, Any]]:
        """The latest ``limit`` items (0/None: all) as flux dicts."""
        picked = await self.latest_messages(session_id, limit or None, branch=branch)
        return [{"role": m.role, "content": m.text} for m in picked]


def _first(group: BaseExceptionGroup) -> BaseException:
    """The first error of a task group's (nested groups opened)."""
    first = group.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first
