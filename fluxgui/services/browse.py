"""Browsing: list sessions (paged or searched) and read one session's messages."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

from fluxgui.core.roles import Store, refuse
from fluxgui.core.errors import BranchNotFound, show_id
from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.ports import MAIN


@dataclass
class SessionListing:
    format: str
    sessions: list[SessionInfo]
    cursor: tuple[Any, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"format": self.format, "sessions": [s.to_dict() for s in self.sessions]}


async def list_sessions(
    store: Store,
    *,
    limit: int | None = 50,
    search: str | None = None,
    cursor: tuple[Any, ...] | None = None,
) -> SessionListing:
    """Sessions, most recently active first: one page, or the ones matching ``search``
    (a case-insensitive substring of the session id or of any message text)."""
    if search:
        return SessionListing(store.format, await store.reader.search_sessions(search, limit=limit))
    if limit is None:
        sessions: list[SessionInfo] = []
        async for chunk in iter_session_pages(store):
            sessions.extend(chunk)
        return SessionListing(store.format, sessions)
    page = await store.reader.list_sessions(limit=limit, cursor=cursor)
    return SessionListing(store.format, page.sessions, page.cursor)


async def iter_session_pages(store: Store, *, page_size: int = 200) -> AsyncGenerator[list[SessionInfo], None]:
    """Every session, a page at a time."""
    cursor = None
    while True:
        page = await store.reader.list_sessions(limit=page_size, cursor=cursor)
        if page.sessions:
            yield page.sessions
        if page.cursor is None:
            return
        cursor = page.cursor


async def session_messages(
    store: Store, session_id: str, *, limit: int | None = None, branch: str | None = None
) -> tuple[SessionInfo, AsyncIterator[list[Message]]]:
    """The session's list row and its messages (of ``branch``, for stores with branches;
    default ``main``) in stored order, streamed in pages (with ``limit``: the most recent
    ``limit``, oldest first). Raises :class:`~fluxgui.core.errors.SessionNotFound` for an
    unknown id, :class:`~fluxgui.core.errors.BranchNotFound` for an unknown branch and
    :class:`~fluxgui.core.errors.Unsupported` for a branch of a store without any."""
    info = await store.reader.require_session(session_id)
    if branch is not None and branch != MAIN:
        if store.branches is None:
            await store.reader.count_messages(session_id, branch=branch)  # says why not
        elif not await (store.branches or refuse(store, "branches")).branch_exists(session_id, branch):
            raise BranchNotFound(
                f"branch {show_id(branch)} does not exist in session {show_id(session_id)}"
            )
    if branch is not None and store.branches is not None:
        info = await store.reader.session_info(session_id, branch=branch) or info

    async def pages() -> AsyncGenerator[list[Message], None]:
        if limit is not None:
            yield await store.reader.latest_messages(session_id, limit, branch=branch)
            return
        async for page in store.reader.iter_messages(session_id, branch=branch):
            yield page

    return info, pages()


def window_reads(store: Store) -> dict[str, Any]:
    """The ``page_messages`` keywords of the window's pages: an item stored in more than
    :data:`~fluxgui.core.bodies.PARTIAL_BYTES` is read as its start where the store can
    (``traits.partial_reads``; :attr:`~fluxgui.core.model.Message.partial`)."""
    from fluxgui.core.bodies import PARTIAL_BYTES  # (the window's: ``ls`` loads no bodies)

    return {"whole_up_to": PARTIAL_BYTES} if store.traits.partial_reads else {}


async def whole_message(store: Store, session_id: str, m: Message, *, branch: str | None = None) -> Message:
    """``m`` read whole when only its start was read (:attr:`Message.partial`), else ``m``;
    ``m`` itself when it is gone from the store meanwhile."""
    if m.partial is None or not m.sort_key or not isinstance(m.sort_key[-1], int):
        return m
    # the page after the key just below m's starts with m (keys end with the row id)
    below = (*m.sort_key[:-1], m.sort_key[-1] - 1)
    page = await store.reader.page_messages(session_id, limit=1, anchor=below, direction="forward", branch=branch)
    return page[0] if page and page[0].id == m.id else m
