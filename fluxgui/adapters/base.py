"""The store interface every format implements, and its flux ``Session`` adapter.

A :class:`Store` is an open session store. It lists sessions (paged, most recently active
first), pages one session's messages by keyset from either end, counts, searches, and hands
out :class:`StoreSession` objects that satisfy flux's ``Session`` protocol so that
``flux.Runner.run(agent, text, session=store.session(id))`` works on any store.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from fluxgui.core.errors import FluxguiError, ReadOnlyError, SessionNotFound, Unsupported, show_id
from fluxgui.core.ports import (
    MAIN,
    ORDERS,
    Capabilities,
    Direction,
    SessionOrder,
    SessionPage,
)
from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.turns import starts_turn

from .backends import Backend
from .changes import (
    Change,
    Row,
    TableEditor,
    Where,
    fork,
    fork_origin,
    stored_time,
    write_session,
)

def check_branch(store: Store, branch: str | None) -> None:
    """Refuse a branch other than ``main`` for a store without branches."""
    if branch is not None and branch != MAIN:
        raise Unsupported(
            f"{store.target} has no branches (only AdvancedSQLiteSession stores do): "
            f"there is no branch {show_id(branch)}"
        )


def check_order(order: str) -> None:  # (ORDERS: see fluxgui.core.ports)
    """Raise ``ValueError`` for an order :meth:`Store.list_sessions` does not know."""
    if order not in ORDERS:
        raise ValueError(f"unknown session order {order!r} (use one of {', '.join(ORDERS)})")


class Store(ABC):
    """An open session store of one format on one back-end (implements
    :class:`fluxgui.core.ports.SessionStore`).

    What a format can do beyond reading is its :attr:`capabilities`; the methods of a
    capability it lacks raise :class:`~fluxgui.core.errors.Unsupported`.
    """

    #: format name shown to users: "flux", "agents", …
    format: str = ""
    #: what this format supports (a subclass declares its own)
    CAPABILITIES = Capabilities()
    #: the store holds ``EncryptedSession`` envelopes
    needs_key: bool = False

    def __init__(self, backend: Backend, target: str) -> None:
        self.backend = backend
        self.target = target

    @property
    def capabilities(self) -> Capabilities:
        """What this store supports (see :class:`~fluxgui.core.ports.Capabilities`)."""
        return self.CAPABILITIES

    @property
    def can_write(self) -> bool:
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
    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int: ...

    async def count_turns_before(
        self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None
    ) -> int:
        """How many turns (user messages) the session has before the message whose
        ``sort_key`` is ``anchor``. Reads those messages a page at a time."""
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
                count += starts_turn(m)
            if len(page) < 1000:
                return count
            after = page[-1].sort_key

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
    async def flux_messages(
        self, session_id: str, limit: int | None, *, branch: str | None = None
    ) -> list[dict[str, Any]]:
        """What flux's ``Session.get_messages(limit)`` returns: the most recent ``limit``
        message dicts (``role``, ``content``, ``metadata`` when set), oldest first."""

    # -- editing: each edit is one transaction and returns a reversible Change ------

    def editor(self) -> TableEditor:
        """The format's editor (raises when the store cannot be edited)."""
        raise ReadOnlyError(f"{self.target}: this kind of store cannot be edited")

    def check_editable(self) -> None:
        """Raise the reason this store cannot be edited now (read-only, unsupported)."""
        self._check_writable()

    def check_importable(self) -> None:
        """Raise the reason new sessions cannot be written now (import, copy). The SQL
        stores write them through their editor, so by default what stops an edit stops
        this too; stores without an editor (folders, Redis) only need to be writable."""
        self.check_editable()

    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> Row:
        """The stored column values for a message given as a dict, validated: a flux
        message (``role``, ``content``, ``metadata``) or, for item stores, an item."""
        raise ReadOnlyError(f"{self.target}: this kind of store cannot be edited")

    def _editor(self) -> TableEditor:
        self.check_editable()
        return self.editor()

    async def clear_messages(self, session_id: str) -> Change:
        """Remove every message of a session; the session itself stays where it can."""
        return await self._editor().clear(session_id, f"Clear session {_label_id(session_id)}")

    async def delete_session(self, session_id: str) -> Change:
        return await self._editor().delete_session(
            session_id, f"Delete session {_label_id(session_id)}"
        )

    async def delete_messages(self, session_id: str, message_ids: list[int]) -> Change:
        n = len(set(message_ids))
        label = f"Delete message {message_ids[0]}" if n == 1 else f"Delete {n} messages"
        return await self._editor().delete_rows(session_id, message_ids, label)

    async def pop_message(self, session_id: str) -> Change:
        """Remove the session's last message (the Agents SDK's ``pop_item``)."""
        return await self._editor().pop_last(session_id, "Remove the last message")

    async def update_message(
        self, session_id: str, message_id: int, spec: dict[str, Any], *, original: Message | None = None
    ) -> Change:
        values = self.edit_values(spec, original=original)
        return await self._editor().update_row(
            session_id, int(message_id), values, f"Edit message {message_id}"
        )

    async def insert_message(
        self,
        session_id: str,
        spec: dict[str, Any],
        *,
        anchor: int | None = None,
        where: Where = "after",
    ) -> Change:
        """Insert a message before or after the message ``anchor`` (``None``: at the end)."""
        values = self.edit_values(spec)
        label = "Add a message" if anchor is None else f"Insert a message {where} {anchor}"
        return await self._editor().insert_row(session_id, anchor, where, values, label)

    async def fork_session(
        self,
        session_id: str,
        at_message_id: int,
        new_id: str | None = None,
        *,
        branch: str | None = None,
    ) -> Any:
        """Fork: a new session holding the conversation (of ``branch``) up to and
        including ``at_message_id``, named ``new_id`` (default ``<id>-fork``…). The
        origin is not changed; the fork's origin is recorded in fluxgui's sidecar table.
        Undoable (the Change's inverse deletes the fork)."""
        check_branch(self, branch)
        label = f"Fork session {_label_id(session_id)} at message {at_message_id}"
        return await fork(self._editor(), session_id, int(at_message_id), new_id, label)

    async def fork_origin(self, session_id: str) -> dict[str, Any] | None:
        """Where a fork made by fluxgui came from: session id, message id, time."""
        return await fork_origin(self, session_id)

    def import_row(self, message: Message) -> Row:
        """The stored column values (no id, no time) for a Message from another store or
        an export, keeping its raw item wherever the format has room for it."""
        raise ReadOnlyError(f"{self.target}: this kind of store cannot be written")

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
        one transaction; returns (the id used, messages written). An id the store has
        already is refused (``Conflict``) or, with ``rename``, becomes ``<id>-2``, …"""
        editor = self._editor()
        dialect, utc = self.backend.dialect, self.backend.utc_times

        async def rows() -> AsyncIterator[list[Row]]:
            if isinstance(pages, AsyncIterator):
                async for page in pages:
                    yield [self._import_row(m, dialect, utc) for m in page]
            else:
                for page in pages:
                    yield [self._import_row(m, dialect, utc) for m in page]

        return await write_session(
            editor,
            session_id,
            rows(),
            created_at=stored_time(created_at, dialect, utc),
            updated_at=stored_time(updated_at, dialect, utc),
            rename=rename,
        )

    def _import_row(self, m: Message, dialect: str, utc: bool) -> Row:
        return {**self.import_row(m), "created_at": stored_time(m.created_at, dialect, utc)}

    async def apply_change(self, change: Change) -> Change:
        """Write a change again (redo) or its ``inverse()`` (undo), if it still fits."""
        return await self._editor().replay(change)

    async def change_token(self) -> Any:
        """A cheap value that changes when another process writes to the store."""
        return await self.backend.change_token()

    def session(self, session_id: str, *, branch: str | None = None) -> StoreSession:
        """A flux ``Session`` over one session (one ``branch`` of it) of this store."""
        return StoreSession(self, session_id, branch)

    # -- branches and usage: declared by :attr:`capabilities` (``branches``, ``usage``) --

    def _unsupported(self, what: str) -> Unsupported:
        return Unsupported(
            f"{self.target} has no {what}: only AdvancedSQLiteSession stores keep them "
            f"({self.format} format)"
        )

    async def list_branches(self, session_id: str, *, current: str | None = None) -> list[Any]:
        """The session's branches (``current`` marked; default ``main``)."""
        raise self._unsupported("branches")

    async def branch_exists(self, session_id: str, branch: str) -> bool:
        """Whether the session has ``branch`` (every store has ``main``)."""
        return branch == MAIN

    async def conversation_turns(self, session_id: str, *, branch: str | None = None) -> list[Any]:
        raise self._unsupported("branches")

    async def create_branch_from_turn(
        self, session_id: str, turn_number: int, branch_name: str | None = None,
        *, branch: str | None = None,
    ) -> Any:
        raise self._unsupported("branches")

    async def delete_branch(
        self, session_id: str, branch_id: str, *, current: str | None = None
    ) -> Any:
        raise self._unsupported("branches")

    async def turn_usage(self, session_id: str, branch: str | None = None) -> list[Any]:
        raise self._unsupported("token usage")

    async def branch_usage(self, session_id: str, branch: str | None = None) -> Any:
        raise self._unsupported("token usage")

    async def session_usage(self, session_id: str) -> Any:
        raise self._unsupported("token usage")

    async def close(self) -> None:
        await self.backend.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _label_id(session_id: str) -> str:
    text = show_id(session_id)
    return text if len(text) <= 40 else text[:38] + "…\""


class StoreSession:
    """One session (one branch of it) of a store, satisfying flux's ``Session`` protocol.

    ``get_messages(limit)`` returns the most recent ``limit`` messages, oldest first, as
    flux documents it; ``add_messages`` appends to the same branch.
    """

    def __init__(self, store: Store, session_id: str, branch: str | None = None) -> None:
        self._store = store
        self._session_id = session_id
        self._branch = branch

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def store(self) -> Store:
        return self._store

    @property
    def branch(self) -> str | None:
        return self._branch

    async def get_messages(self, limit: int | None = None) -> list[dict[str, Any]]:
        return await self._store.flux_messages(self._session_id, limit, branch=self._branch)

    async def add_messages(self, messages: list[dict[str, Any]]) -> None:
        await self._store.add_messages(self._session_id, messages, branch=self._branch)

    async def clear(self) -> None:
        await self._store.clear_session(self._session_id)
