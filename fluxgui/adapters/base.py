"""The store every format implements, format-neutral, and its flux ``Session`` adapter.

A :class:`Store` is an open session store (it implements
:class:`fluxgui.core.ports.SessionStore`). It lists sessions (paged, most recently active
first), pages one session's messages by keyset from either end, counts, searches, and
hands out :class:`StoreSession` objects that satisfy flux's ``Session`` protocol so that
``flux.Runner.run(agent, text, session=store.session(id))`` works on any store.

What a format can do beyond reading is declared in its :attr:`Store.capabilities`; the
methods of a capability it lacks exist here and raise (``Unsupported`` for branches and
usage, ``ReadOnlyError`` for edits). The SQL formats' edits live in
:class:`fluxgui.adapters.sql.store.SqlStore`.

A store talks to its storage through a back-end; all this base needs of one is a
:class:`StoreBackend` (a SQL connection, a Redis client, a folder index).
"""

from __future__ import annotations

import contextlib

from abc import abstractmethod
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from fluxgui.core.errors import FluxguiError, ReadOnlyError, SessionNotFound, show_id
from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.ports import (
    ORDERS,
    Capabilities,
    Direction,
    SessionOrder,
    SessionPage,
)

from .refusals import Refusals, check_branch
from .roleviews import RoleViews

if TYPE_CHECKING:
    from .session import StoreSession

__all__ = [
    "ORDERS",
    "Direction",
    "Store",
    "StoreBackend",
    "check_branch",
    "check_order",
    "cut_page",
]

if TYPE_CHECKING:  # the export's pages: loaded when an export reads
    from fluxgui.core.jsonrecords import RowPage


class StoreBackend(Protocol):
    """What a :class:`Store` needs of its back-end, whatever the storage."""

    #: opened for writing (stores open read-only unless asked)
    writable: bool

    async def change_token(self) -> Any:
        """A cheap value that changes when another process writes (``None``: unknown)."""
        ...

    def local_paths(self) -> list[Path]:
        """The files or folders on this machine that hold the store (none for a server)."""
        ...

    def location(self) -> str:
        """Where the store is, the same on every machine and without secrets (see
        :mod:`fluxgui.core.storekey`): ``sqlite:/abs/path``, ``postgresql://host:5432/db``…"""
        ...

    async def close(self) -> None: ...


B = TypeVar("B", bound=StoreBackend)


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


class Store(RoleViews, Refusals, Generic[B]):
    """An open session store of one format on one back-end ``B`` (implements
    :class:`fluxgui.core.ports.SessionStore`).

    What a format can do beyond reading is its :attr:`capabilities`; the methods of a
    capability it lacks raise (see the module text).
    """

    #: format name shown to users: "flux", "agents", …
    format: str = ""
    #: what this format supports (a subclass declares its own)
    CAPABILITIES = Capabilities()
    #: the store holds ``EncryptedSession`` envelopes
    needs_key: bool = False

    def __init__(self, backend: B, target: str) -> None:
        self.backend: B = backend
        self.target = target
        #: the other Agents SDK table pairs the database holds (see the ports)
        self.other_tables: list[tuple[str, str]] = []
        self.table_sessions: dict[tuple[str, str], int] = {}

    @property
    def capabilities(self) -> Capabilities:
        """What this store supports (see :class:`~fluxgui.core.ports.Capabilities`)."""
        return self.CAPABILITIES

    @property
    def can_write(self) -> bool:
        """Whether the store was opened writable."""
        return self.backend.writable

    @property
    def has_key(self) -> bool:
        """Whether a key for ``EncryptedSession`` items was given."""
        return False

    @property
    def problems(self) -> list[str]:
        """What could not be read, one line each (folders report broken files)."""
        return []

    def edit_reason(self) -> str | None:
        """Why single messages of this store cannot be edited now (``None``: they can)."""
        try:
            self.check_editable()
        except FluxguiError as exc:
            return str(exc)
        return None

    @property
    def store_key(self) -> str:
        """The store named the same way on every machine (its back-end's location and
        this format's own parts; never a password): what fluxgui's own data about it —
        reviews, the search index — is keyed by (see :mod:`fluxgui.core.storekey`)."""
        from fluxgui.core.storekey import compose

        return compose(self.backend.location(), {"format": self.format, **self.key_parts()})

    def key_parts(self) -> dict[str, str | None]:
        """What names this store inside its location besides its format (table names, a
        key prefix)."""
        return {}

    def local_paths(self) -> list[Path]:
        """The files or folders on this machine that hold the store (a SQLite file, a
        JSON session folder); empty for a server. Writers check their outputs against
        them so that nothing is ever written over the store being read."""
        return self.backend.local_paths()

    # -- sessions ------------------------------------------------------------------

    async def list_sessions(
        self,
        *,
        limit: int = 50,
        cursor: tuple[Any, ...] | None = None,
        order: SessionOrder = "activity",
        descending: bool = True,
    ) -> SessionPage:
        """One page of sessions; by default the most recently active first.

        ``order`` is ``"activity"`` (latest item; ties by the latest item's id),
        ``"id"`` (session id in the database's collation) or ``"messages"`` (message
        count, ties by session id); ``descending`` reverses each. Paging is keyset:
        pass the page's ``cursor`` back with the same ``order`` and ``descending`` to get
        the next page (a cursor of another order is meaningless). Every session shows up
        exactly once across the pages of a listing that nothing writes to meanwhile.
        """
        check_order(order)
        if limit <= 0:
            return SessionPage([], None)
        if order == "id":
            rows = await self._page_by_id(limit, cursor, descending)
        elif order == "messages":
            rows = await self._page_by_count(limit, cursor, descending)
        else:
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
    def search_session_ids(self, text: str) -> AsyncIterator[str]:
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

    @abstractmethod
    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 100,
        anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward",
        branch: str | None = None,
    ) -> list[Message]:
        """Up to ``limit`` messages next to ``anchor`` (a message's ``sort_key``), oldest first.

        ``backward`` gives the messages just before ``anchor`` (the latest ones when it is
        ``None``); ``forward`` the ones just after it (the first ones when ``None``).
        ``branch`` (stores with branches; default ``main``) is the branch read.
        """

    async def iter_messages(
        self, session_id: str, *, batch: int = 500, branch: str | None = None
    ) -> AsyncIterator[list[Message]]:
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

    async def iter_row_pages(
        self, session_id: str, *, batch: int = 500
    ) -> AsyncIterator[list[Message] | RowPage]:
        """:meth:`iter_messages` (main branch) for a reader that writes pages out in
        another thread (an export): a SQL format yields its pages of plain rows as
        :class:`~fluxgui.core.jsonrecords.RowPage`, to be read (or written straight as
        JSON) in that thread; this default, and a page that must be read here, Messages."""
        async for page in self.iter_messages(session_id, batch=batch):
            yield page

    async def row_pages_of(
        self, session_ids: list[str], *, limit: int
    ) -> dict[str, list[Message] | RowPage]:
        """Several small sessions (counts adding up to at most ``limit``) read at once:
        session id → all its messages in one page (as :meth:`iter_row_pages` gives
        them; an empty list: none), for each session read whole. A session left out is
        to be read with :meth:`iter_row_pages`; this default reads none."""
        return {}

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

    async def fork_origin(self, session_id: str) -> dict[str, Any] | None:
        """Where a fork made by fluxgui came from: session id, message id, time (``None``:
        not a fork; stores that cannot fork record none)."""
        return None

    async def change_token(self) -> Any:
        """A cheap value that changes when another process writes to the store."""
        return await self.backend.change_token()

    def session(self, session_id: str, *, branch: str | None = None) -> StoreSession:
        """A flux ``Session`` over one session (one ``branch`` of it) of this store."""
        from .session import StoreSession

        return StoreSession(self, session_id, branch)

    # -- writing (the flux Session protocol's verbs) ------------------------------

    def _check_writable(self) -> None:
        if not self.can_write:
            raise ReadOnlyError(f"{self.target} is open read-only; open it writable to change it")

    @abstractmethod
    async def add_messages(
        self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None
    ) -> int:
        """Append flux-style message dicts (or, for item stores, items) to ``branch``
        (default ``main``); return how many."""

    @abstractmethod
    async def clear_session(self, session_id: str) -> int:
        """Remove all messages of a session; return how many were removed."""

    @abstractmethod
    async def import_session(
        self,
        session_id: str,
        pages: AsyncIterator[list[Message]] | Iterator[list[Message]],
        *,
        created_at: str | None = None,
        updated_at: str | None = None,
        rename: bool = False,
    ) -> tuple[str, int]:
        """Write a new session holding these messages (in order, with their times), in
        one write; returns (the id used, messages written). An id the store has
        already is refused (``Conflict``) or, with ``rename``, becomes ``<id>-2``, …"""

    def check_importable(self) -> None:
        """Raise the reason new sessions cannot be written now (import, copy). By default
        what stops an edit stops this too; stores without single-message edits (folders,
        Redis) only need to be writable."""
        self.check_editable()

    async def close(self) -> None:
        """Close the back-end (the store cannot be used afterwards)."""
        await self.backend.close()

    async def __aenter__(self) -> Store[B]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
