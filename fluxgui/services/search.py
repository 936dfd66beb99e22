"""Searching a store's sessions in batches, without Qt.

A store's search (:meth:`~fluxgui.core.roles.Reader.search_session_ids`) yields the
ids of matching sessions one by one, as its query finds them; a list wants rows
(:class:`~fluxgui.core.model.SessionInfo`), and wants them in few, not too large, pieces.
:func:`search_batches` does the batching: ids go to ``sessions_by_ids`` in small batches
(sent when full, or once the first id of a batch has waited a moment) while the search
keeps reading, and the rows fetched are handed out at most so often (the first ones at
once) or when enough are waiting. A consumer that inserts each batch into a view so
repaints a few times a second, never once per id, and never holds its thread long.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from fluxgui.core.model import SessionInfo
from fluxgui.core.roles import Store

#: ids per ``sessions_by_ids`` query while a search runs
SEARCH_BATCH = 50
#: a search fetches the rows of the ids it found after at most this long, even if the
#: batch is not full
SEARCH_FLUSH_SECONDS = 0.05
#: search results are handed out at most this often (the first ones at once): each
#: insertion makes a view repaint, which costs more than the rows themselves
SEARCH_SHOW_SECONDS = 0.1
#: ... or as soon as this many are waiting (an insertion's cost grows with its rows)
SEARCH_SHOW_MAX = 250


@dataclass(frozen=True)
class SearchBatch:
    """Sessions found: ``ids`` in the order the search found them, ``sessions`` their rows
    as ``sessions_by_ids`` answered (in any order; a session deleted since is missing)."""

    ids: list[str]
    sessions: list[SessionInfo]


async def search_batches(
    store: Store,
    text: str,
    *,
    batch: int = SEARCH_BATCH,
    flush_after: float = SEARCH_FLUSH_SECONDS,
    show_every: float = SEARCH_SHOW_SECONDS,
    show_max: int = SEARCH_SHOW_MAX,
    ids: AsyncGenerator[str, None] | None = None,
) -> AsyncGenerator[SearchBatch, None]:
    """The sessions whose id or message text contains ``text``, as batches of rows.

    Ids go to ``sessions_by_ids`` ``batch`` at a time (a batch is sent when full, or once
    its first id has waited ``flush_after`` seconds) while the search keeps reading; the
    rows fetched are yielded at most every ``show_every`` seconds (the first ones at
    once), or as soon as ``show_max`` ids are waiting, and once more at the end.
    ``ids`` replaces the store's own search as the source of ids (the search index). The
    search's own error is raised after the rows found before it. However the iteration
    ends (cancelled, or closed early), the store's search generator is closed — and so
    its cursor released — before this one finishes: close it (``contextlib.aclosing``)
    when you stop early.
    """
    loop = asyncio.get_running_loop()
    batch = max(1, batch)
    pending: list[str] = []  # ids found whose rows are not fetched yet
    first_pending_at = [0.0]  # when the oldest of them was found
    ready_ids: list[str] = []  # ids whose rows are fetched but not handed out yet
    ready: list[SessionInfo] = []
    shown_at = -float("inf")
    wake = asyncio.Event()

    async def produce() -> None:
        # aclosing: however this ends (cancelled included), the generator is closed
        # and its cursor released before the task finishes.
        source = ids if ids is not None else store.reader.search_session_ids(text)
        async with contextlib.aclosing(source) as found:
            async for sid in found:
                if not pending:
                    first_pending_at[0] = loop.time()
                pending.append(sid)
                # Wake the consumer for a first id (it then waits at most
                # flush_after for more) and for a full batch.
                if len(pending) == 1 or len(pending) >= batch:
                    wake.set()

    producer = asyncio.ensure_future(produce())
    try:
        while True:
            now = loop.time()
            finished = producer.done() and not pending
            if ready_ids and (
                finished or now - shown_at >= show_every or len(ready_ids) >= show_max
            ):
                out = SearchBatch(ready_ids, ready)
                ready_ids, ready = [], []
                yield out
                shown_at = now
                continue
            if pending and (
                len(pending) >= batch
                or producer.done()
                or now - first_pending_at[0] >= flush_after
            ):
                chunk = pending[:batch]
                del pending[:batch]
                first_pending_at[0] = now
                # The search keeps reading while these rows are fetched.
                ready.extend(await store.reader.sessions_by_ids(chunk))
                ready_ids.extend(chunk)
                continue
            if finished:
                break
            deadlines = []
            if pending:
                deadlines.append(first_pending_at[0] + flush_after)
            if ready_ids:
                deadlines.append(shown_at + show_every)
            wake.clear()
            waiter = asyncio.ensure_future(wake.wait())
            try:
                await asyncio.wait(
                    {producer, waiter},
                    timeout=max(0.0, min(deadlines) - now) if deadlines else None,
                    return_when=asyncio.FIRST_COMPLETED,
                )
            finally:
                waiter.cancel()
        producer.result()  # the search's own error, if it failed
    finally:
        if not producer.done():
            producer.cancel()
            await asyncio.wait({producer})
