"""Reading, the role every store plays (:class:`fluxgui.core.roles.Reader`): the part
each format's reader builds on.

A format's reader answers its pages of session rows in each order (``_page_by_*``), the
list row it makes of one, one session's row, a page of its messages by keyset, its count
and flux's view of it; this base makes of those the keyset-paged session list, the
search of sessions, a session read whole or from its end, the anchor of a message and
the turns before one (each a default a format may answer faster).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from collections.abc import AsyncGenerator
from typing import Any, Generic

from fluxgui.core.errors import SessionNotFound, show_id
from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.ports import ORDERS, Direction, SessionOrder, SessionPage

from .parts import B, Place


def cut_page(
    rows: list[Any],
    key: Any,
    limit: int,
    cursor: tuple[Any, ...] | None,
    descending: bool,
) -> list[Any]:
    """One keyset page of session rows held in memory (stores that cannot order them on
    the server: Redis, the Conversations API): the ``limit`` rows after ``cursor`` in the
    order ``key`` gives, reversed when ``descending``."""
    if cursor is not None:
        after = tuple(cursor)
        rows = [r for r in rows if (key(r) < after if descending else key(r) > after)]
    return sorted(rows, key=key, reverse=descending)[:limit]


def check_order(order: str) -> None:  # (ORDERS: see fluxgui.core.ports)
    """Raise ``ValueError`` for an order :meth:`Store.list_sessions` does not know."""
    if order not in ORDERS:
        raise ValueError(f"unknown session order {order!r} (use one of {', '.join(ORDERS)})")


@dataclass(frozen=True)
class Page:
    """Which messages of a session :meth:`ListingReader.page_messages` asks for."""

    limit: int = 100
    anchor: tuple[Any, ...] | None = None
    direction: Direction = "backward"
    branch: str | None = None
    whole_up_to: int | None = None


class ListingReader(ABC, Generic[B]):
    """The reading part of a store of one format on one back-end ``B`` (see the module
    text)."""

    def __init__(self, place: Place[B]) -> None:
        self.place = place

    @property
    def backend(self) -> B:
        return self.place.backend

    @property
    def target(self) -> str:
        return self.place.target

    async def list_sessions(
        self, *, limit: int = 50, cursor: tuple[Any, ...] | None = None,
        order: SessionOrder = "activity", descending: bool = True, since: float | None = None,
    ) -> SessionPage:
        """One page of sessions; by default the most recently active first.

        ``order`` is ``"activity"`` (latest item; ties by the latest item's id),
        ``"id"`` (session id in the database's collation) or ``"messages"`` (message
        count, ties by session id); ``descending`` reverses each. Paging is keyset:
        pass the page's ``cursor`` back with the same ``order`` and ``descending`` to get
        the next page (a cursor of another order is meaningless). Every session shows up
        exactly once across the pages of a listing that nothing writes to meanwhile.

        ``since`` (Unix seconds; the first page by activity, newest first): sessions
        active before it may be left out where that reads less (a merged list knows from
        one store how recent the others' first rows must be). The page is the start of
        the order all the same, but a short one may not be the end: go on after its last
        row's ``sort_key`` (from the start when it is empty) without ``since``.
        """
        check_order(order)
        if limit <= 0:
            return SessionPage([], None)
        rows: list[tuple[Any, ...]] | None = None
        if order == "id":
            rows = await self._page_by_id(limit, cursor, descending)
        elif order == "messages":
            rows = await self._page_by_count(limit, cursor, descending)
        elif since is not None and cursor is None and descending:
            rows = await self._page_since(limit, since)
        if rows is None:
            rows = await self._page_by_activity(limit, cursor, descending)
        infos = [self._row_info(r) for r in rows]
        if len(infos) < limit:
            return SessionPage(infos, None)
        last = infos[-1]
        if order == "id":
            return SessionPage(infos, (last.id,))
        if order == "messages":
            return SessionPage(infos, (last.messages, last.id))
        return SessionPage(infos, last.sort_key)

    async def _page_since(self, limit: int, since: float) -> list[tuple[Any, ...]] | None:
        """The first page by activity, newest first, of the sessions active at or after
        ``since`` (Unix seconds; at least those: a prefix of the order), where a format
        reads those more cheaply than its first page; ``None`` where it does not."""
        return None

    # One page of session rows in each order (``limit`` rows past ``cursor``), and the
    # list row a format builds from one of them.
    @abstractmethod
    async def _page_by_activity(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    async def _page_by_id(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    async def _page_by_count(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def _row_info(self, row: tuple[Any, ...]) -> SessionInfo: ...

    @abstractmethod
    async def session_info(
        self, session_id: str, *, branch: str | None = None
    ) -> SessionInfo | None:
        """The list row of one session (its count of ``branch``, default ``main``), or
        ``None`` when there is no such session."""

    async def require_session(self, session_id: str) -> SessionInfo:
        """The list row of one session; :class:`SessionNotFound` when there is none."""
        info = await self.session_info(session_id)
        if info is None:
            raise SessionNotFound(f"unknown session id {show_id(session_id)} in {self.target}")
        return info

    @abstractmethod
    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]:
        """The list rows of these sessions (missing ids are left out), any order."""

    @abstractmethod
    def search_session_ids(self, text: str) -> AsyncGenerator[str, None]:
        """Ids of sessions whose id or any message text contains ``text`` (case-insensitive),
        yielded as they are found, each once."""

    async def search_sessions(self, text: str, *, limit: int | None = None) -> list[SessionInfo]:
        """Sessions matching ``text``, most recently active first."""
        found: list[str] = []
        async for sid in self.search_session_ids(text):
            found.append(sid)
        infos: list[SessionInfo] = []
        for start in range(0, len(found), 500):
            infos.extend(await self.sessions_by_ids(found[start : start + 500]))
        infos.sort(key=lambda s: s.sort_key, reverse=True)
        return infos[:limit] if limit is not None else infos

    # -- messages ------------------------------------------------------------------

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 100,
        anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward",
        branch: str | None = None,
        whole_up_to: int | None = None,
    ) -> list[Message]:
        """Up to ``limit`` messages next to ``anchor`` (a message's ``sort_key``), oldest first.

        ``backward`` gives the messages just before ``anchor`` (the latest ones when it is
        ``None``); ``forward`` the ones just after it (the first ones when ``None``).
        ``branch`` (stores with branches; default ``main``) is the branch read. A format
        whose traits say ``partial_reads`` reads an item stored in more than
        ``whole_up_to`` bytes as its start and its size (others read every item whole).
        Each format reads the :class:`Page` in :meth:`read_page`.
        """
        return await self.read_page(session_id, Page(limit, anchor, direction, branch, whole_up_to))

    @abstractmethod
    async def read_page(self, session_id: str, page: Page) -> list[Message]:
        """The messages of :meth:`page_messages`."""

    async def iter_messages(
        self, session_id: str, *, batch: int = 500, branch: str | None = None
    ) -> AsyncGenerator[list[Message], None]:
        """All messages of a session (of ``branch``) in stored order, a page at a time."""
        anchor: tuple[Any, ...] | None = None
        while True:
            page = await self.page_messages(
                session_id, limit=batch, anchor=anchor, direction="forward", branch=branch
            )
            if not page:
                return
            yield page
            if len(page) < batch:
                return
            anchor = page[-1].sort_key

    async def message_anchor(
        self, session_id: str, message_id: int, *, branch: str | None = None
    ) -> tuple[Any, ...] | None:
        """The keyset anchor (``sort_key``) of message ``message_id`` of the session (of
        ``branch``), to page from it (``None``: no such message). This default reads the
        session forward until the id turns up; SQL stores ask for the one row."""
        pages = self.iter_messages(session_id, branch=branch)
        async with contextlib.aclosing(pages):
            async for page in pages:
                for m in page:
                    if m.id == message_id:
                        return tuple(m.sort_key)
        return None

    async def latest_messages(
        self, session_id: str, limit: int | None, *, branch: str | None = None
    ) -> list[Message]:
        """The most recent ``limit`` messages, oldest first (all when ``limit`` is None)."""
        if limit is not None:
            if limit <= 0:
                return []
            return await self.page_messages(session_id, limit=limit, branch=branch)
        out: list[Message] = []
        async for page in self.iter_messages(session_id, branch=branch):
            out.extend(page)
        return out

    @abstractmethod
    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        """How many messages the session (its ``branch``) holds."""

    async def count_turns_before(
        self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None
    ) -> int:
        """How many turns (user messages) the session has before the message whose
        ``sort_key`` is ``anchor``, since the last compaction item before it (see
        :func:`fluxgui.core.turns.turns_before`). Reads those messages a page at a time."""
        from fluxgui.core.turns import turns_before  # (reading a page needs no turns)

        count = 0
        after: tuple[Any, ...] | None = None
        limit = tuple(anchor)
        while True:
            page = await self.page_messages(
                session_id, limit=1000, anchor=after, direction="forward", branch=branch
            )
            for m in page:
                if tuple(m.sort_key) >= limit:
                    return count
                count = turns_before((m,), count)
            if len(page) < 1000:
                return count
            after = page[-1].sort_key

    @abstractmethod
    async def flux_messages(
        self, session_id: str, limit: int | None, *, branch: str | None = None
    ) -> list[dict[str, Any]]:
        """What flux's ``Session.get_messages(limit)`` returns: the most recent ``limit``
        message dicts (``role``, ``content``, ``metadata`` when set), oldest first."""

