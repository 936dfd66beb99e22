"""The reads a window makes of one open store, as plain coroutines (no Qt).

The window (``fluxgui.qt``) never calls a store's role objects itself: it asks here, so
that what it shows comes from one place a later workspace of several stores can serve.
Each function is one read, run by the window's bridge off the UI thread; huge items are
read as their start where the store can (:func:`~fluxgui.services.browse.window_reads`).
"""

from __future__ import annotations

from typing import Any

from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.ports import Direction, SessionOrder, SessionPage
from fluxgui.core.roles import Store, refuse

from .browse import window_reads


# --------------------------------------------------------------------------- sessions


async def session_row(store: Store, session_id: str, *, branch: str | None = None) -> SessionInfo | None:
    """The session's list row (of ``branch``), ``None`` when there is no such session."""
    return await store.reader.session_info(session_id, branch=branch)


async def known_session(store: Store, session_id: str, *, branch: str | None = None) -> SessionInfo:
    """The session's list row (of ``branch`` where the branch has one); raises
    :class:`~fluxgui.core.errors.SessionNotFound` (the store's sentence) for an unknown id."""
    info = await store.reader.session_info(session_id, branch=branch)
    if info is None:
        info = await store.reader.require_session(session_id)
    return info


async def session_page(
    store: Store,
    *,
    limit: int,
    cursor: tuple[Any, ...] | None = None,
    order: SessionOrder = "activity",
    descending: bool = True,
) -> SessionPage:
    """One page of the store's session list."""
    return await store.reader.list_sessions(limit=limit, cursor=cursor, order=order, descending=descending)


async def sessions_by_ids(store: Store, ids: list[str]) -> list[SessionInfo]:
    """The list rows of those of ``ids`` the store holds."""
    return await store.reader.sessions_by_ids(ids)


async def matching_session_ids(store: Store, text: str) -> list[str]:
    """Every session id whose id or messages hold ``text`` (the store's own search)."""
    return [sid async for sid in store.reader.search_session_ids(text)]


# --------------------------------------------------------------------------- messages


async def latest_messages(
    store: Store, session_id: str, *, limit: int, branch: str | None = None
) -> list[Message]:
    """The session's latest ``limit`` messages (of ``branch``), oldest first."""
    return await store.reader.page_messages(session_id, branch=branch, limit=limit, **window_reads(store))


async def messages_next_to(
    store: Store,
    session_id: str,
    anchor: tuple[Any, ...],
    direction: Direction,
    *,
    limit: int,
    branch: str | None = None,
) -> list[Message]:
    """Up to ``limit`` messages before (``"backward"``) or after (``"forward"``) the
    message whose sort key is ``anchor``, oldest first."""
    return await store.reader.page_messages(
        session_id, branch=branch, limit=limit, anchor=anchor, direction=direction, **window_reads(store)
    )


async def turns_before(
    store: Store, session_id: str, sort_key: tuple[Any, ...], *, branch: str | None = None
) -> int:
    """How many turns come before the message whose sort key is ``sort_key`` (a store
    that cannot count them cheaply refuses with the reason)."""
    return await store.reader.count_turns_before(session_id, sort_key, branch=branch)


async def fork_origin(store: Store, session_id: str) -> dict[str, Any] | None:
    """Where ``session_id`` was forked from (``session_id``, ``message_id``), if it was;
    a store without forks refuses with the reason."""
    return await (store.forks or refuse(store, "forks")).fork_origin(session_id)


# --------------------------------------------------------------------------- the store


async def change_token(store: Store) -> Any:
    """A value that changes when anything in the store changes (live refresh polls it)."""
    return await store.change_token()


async def index_advice(store: Store) -> list[str]:
    """Indexes the database lacks that its searches would use (never created here)."""
    return await store.index_advice()


async def server_searches(store: Store) -> bool:
    """Whether the store's server answers text searches from a trigram index of its own
    (no local index is needed then)."""
    return store.server_index is not None and bool(await store.server_index.server_text_index())
