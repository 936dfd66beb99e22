"""What export, import and copy share: their result, the id conflict, the progress
callback, choosing the sessions to move, and worker-thread hand-offs a cancelled caller
cannot cut."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fluxgui.core.aio import run_to_end
from fluxgui.core.errors import Conflict
from fluxgui.core.model import SessionInfo
from fluxgui.core.roles import Store

Progress = Callable[[int, int], None]
T = TypeVar("T")


@dataclass
class TransferResult:
    sessions: int = 0
    messages: int = 0
    bytes: int = 0
    #: things the user should know about what was written (one line each)
    notes: list[str] = field(default_factory=list)
    #: (source session id, id written) for imports and copies
    written: list[tuple[str, str]] = field(default_factory=list)

    @property
    def renamed(self) -> list[tuple[str, str]]:
        """The sessions written under another id than their own (``rename``)."""
        return [(old, new) for old, new in self.written if old != new]


class IdTaken(Conflict):
    """A session to import or copy has an id the destination already holds (or that
    comes twice in what is imported); nothing was written."""

    def __init__(self, message: str, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


async def in_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread. When the caller is cancelled, the thread's work
    is waited for before the cancellation goes on: nothing keeps writing to a file that
    the caller is about to close and remove."""
    return await run_to_end(asyncio.to_thread(fn, *args))


async def resolve(store: Store, ids: Sequence[str]) -> list[SessionInfo]:
    """The list rows of ``ids`` (each once, in the order given); an unknown id raises
    ``SessionNotFound`` before anything is done."""
    return [await store.reader.require_session(sid) for sid in dict.fromkeys(ids)]


async def session_infos(store: Store, ids: Sequence[str] | None) -> AsyncGenerator[SessionInfo, None]:
    """The sessions ``ids`` in the order given, or (None) every session, the least
    recently active first: written in that order, a copy or an import of the export lists
    them in the same order as the source does."""
    if ids:
        for info in await resolve(store, ids):
            yield info
        return
    cursor = None
    while True:
        page = await store.reader.list_sessions(limit=200, cursor=cursor, descending=False)
        for info in page.sessions:
            yield info
        if page.cursor is None:
            return
        cursor = page.cursor


def repeated(ids: Sequence[str]) -> list[int]:
    """The positions in ``ids`` of the ids that came before."""
    seen: set[str] = set()
    out = []
    for n, sid in enumerate(ids):
        if sid in seen:
            out.append(n)
        seen.add(sid)
    return out


async def held(store: Store, ids: Sequence[str], *, first: bool = False) -> list[int]:
    """The positions in ``ids`` of the ids ``store`` holds already (``first``: stop at the
    first found)."""
    out = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found = {i.id for i in await store.reader.sessions_by_ids(list(dict.fromkeys(chunk)))}
        for n, sid in enumerate(chunk, start):
            # (Agents SDK items whose session row is missing are only found one by one.)
            if sid in found or (store.traits.rowless_sessions and await store.reader.session_info(sid)):
                out.append(n)
                if first:
                    return out
    return out


async def count_messages(store: Store, ids: Sequence[str] | None) -> int:
    """The number of messages an export or copy of ``ids`` (None: all) will move."""
    total = 0
    async for info in session_infos(store, ids):
        total += info.messages
    return total


async def iter_infos(items: list[SessionInfo]) -> AsyncGenerator[SessionInfo, None]:
    for item in items:
        yield item
