"""The sessions of every store of a workspace in one list, most recently active first.

Lazy: each store's own list is read a page at a time (its ``list_sessions`` by
activity) and the pages are merged k ways by last activity, so the first page costs
about what one store's first page costs, whatever the stores hold. A session id in
several stores is one row naming them all: the first time an id comes up is in the
store where it was active last (every store's list is newest first), and its other
stores are found for a whole page at once (``reader.sessions_by_ids``). The stores are
asked side by side (first pages, then a page's holders).

The first store's first page tells how recent the others' first rows must be (the
time of its last row: the merged first page holds nothing older), and a store that can
read just those more cheaply than its first page does so (``list_sessions(since=…)``:
SQLite's sessions table, which has no index on ``updated_at``, is sorted only from that
time on); what the stores give is the same either way.

A row's ``messages`` is what its merged timeline holds (copies once): for an id in one
store that store's count; for one in several, its merged count is read (``exact``:
:func:`.timeline.merged_count`) or the largest store's count is shown as a lower bound.
"""

from __future__ import annotations

import asyncio
import heapq
from contextlib import aclosing
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from fluxgui.core.model import SessionInfo
from fluxgui.core.times import unix_time

from .timeline import merged_count
from .workspace import Member, Workspace


@dataclass
class WorkspaceSession:
    """One row of the workspace's session list."""

    id: str
    #: (label, that store's row) for every store holding it, in workspace order
    stores: list[tuple[str, SessionInfo]] = field(default_factory=list)
    #: the merged timeline's count (copies once), when known
    merged: int | None = None

    @property
    def messages(self) -> int:
        if self.merged is not None:
            return self.merged
        return max((info.messages for _s, info in self.stores), default=0)

    @property
    def updated_at(self) -> str | None:
        return max(
            (info.updated_at for _s, info in self.stores if info.updated_at),
            key=lambda t: unix_time(t) or 0.0, default=None,
        )

    @property
    def labels(self) -> list[str]:
        return [s for s, _info in self.stores]

    @property
    def several(self) -> bool:
        return len(self.stores) > 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "messages": self.messages,
            "updated_at": self.updated_at,
            "stores": [{"store": s, "messages": info.messages} for s, info in self.stores],
        }


async def _store_rows(
    member: Member, page: int, reach: asyncio.Future[float | None], *, first: bool
) -> AsyncIterator[SessionInfo]:
    """A store's sessions by activity, a page at a time. The ``first`` store sets
    ``reach`` from its first page; the others' first pages leave out what is older where
    that reads less (``since``, see the module), and go on after it."""
    cursor = None
    since = None
    try:
        since = None if first else await reach
        while True:
            got = await member.store.reader.list_sessions(limit=page, cursor=cursor, since=since)
            if first and not reach.done():
                last = got.sessions[-1] if len(got.sessions) == page else None
                reach.set_result(unix_time(last.updated_at) if last is not None else None)
            for info in got.sessions:
                yield info
            if since is not None:  # a first page that may have left older ones out
                since, cursor = None, got.sessions[-1].sort_key if got.sessions else None
                continue
            if got.cursor is None or not got.sessions:
                return
            cursor = got.cursor
    finally:
        if first and not reach.done():  # (its read failed: the others read as they would)
            reach.set_result(None)


def _activity(info: SessionInfo) -> float:
    t = unix_time(info.updated_at)
    return t if t is not None else float("-inf")


async def merged_sessions(
    workspace: Workspace, *, page: int = 50, exact: bool = True,
) -> AsyncGenerator[WorkspaceSession, None]:
    """Every session id of the workspace once, most recently active first (see the
    module); rows come a page at a time."""
    reach: asyncio.Future[float | None] = asyncio.get_running_loop().create_future()
    streams = [_store_rows(m, page, reach, first=i == 0) for i, m in enumerate(workspace.members)]
    heap: list[tuple[float, int, int, SessionInfo]] = []
    serial = 0

    async def pull(i: int) -> None:
        nonlocal serial
        info = await anext(streams[i], None)
        if info is not None:
            serial += 1
            heapq.heappush(heap, (-_activity(info), i, serial, info))

    await asyncio.gather(*(pull(i) for i in range(len(streams))))  # (each store its own wait)
    emitted: set[str] = set()
    while heap:
        batch: list[str] = []
        while heap and len(batch) < page:
            _t, i, _n, info = heapq.heappop(heap)
            await pull(i)
            if info.id in emitted:
                continue
            emitted.add(info.id)
            batch.append(info.id)
        for row in await rows_for(workspace, batch, exact=exact):
            yield row


async def rows_for(
    workspace: Workspace, ids: list[str], *, exact: bool = True
) -> list[WorkspaceSession]:
    """The rows of ``ids`` (in that order): every store holding each, asked once per
    store for them all."""
    rows = {sid: WorkspaceSession(sid) for sid in ids}
    if not ids:
        return []
    found = await asyncio.gather(*(m.store.reader.sessions_by_ids(list(ids)) for m in workspace.members))
    for m, infos in zip(workspace.members, found):
        for info in infos:
            row = rows.get(info.id)
            if row is not None and m.label not in row.labels:
                row.stores.append((m.label, info))
    for row in rows.values():
        if len(row.stores) == 1:
            row.merged = row.stores[0][1].messages if row.stores[0][1].count_exact else None
        elif row.several and exact:
            row.merged = await merged_count(workspace, row.id, row.labels)
    return [rows[sid] for sid in ids if rows[sid].stores]


async def session_rows(
    workspace: Workspace, ids: list[str] | None = None, *, limit: int | None = None,
    exact: bool = True,
) -> list[WorkspaceSession]:
    """The rows of ``ids``, or the first ``limit`` of the merged list (``None``: all)."""
    if ids:
        return await rows_for(workspace, list(dict.fromkeys(ids)), exact=exact)
    out: list[WorkspaceSession] = []
    async with aclosing(merged_sessions(workspace, page=min(limit or 200, 200), exact=exact)) as rows:
        async for row in rows:
            out.append(row)
            if limit is not None and len(out) >= limit:
                break
    return out
