"""A SQLite search without an index, read by two connections at once (issue 34.5).

A text the database cannot find early (fewer hits than asked for, all hits, a word no row
holds) makes SQLite read every row; on flux's plain text it also passes over each row's
bytes for a NUL (:func:`~.search.text_condition`), which doubles its work. SQLite lets go
of the interpreter's lock while it steps, so the rows up to the middle id are read at the
same time by a second, read-only connection in a thread of its own, which keeps only the
ids the condition lets through; the store's connection walks the upper half newest first,
then reads the lower half's rows by those ids. On a machine with a free core this takes
about half the time; where a second connection cannot be had (a backend that offers none,
or the thread's open or query fails) the store's connection reads the lower half itself,
as one query did before. A caller that stops (a limited search that has its hits, a
cancelled one) stops the thread and waits for it, its connection closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from fluxgui.core.model import Message

from .backend import Backend, Params
from .sqlitetext import as_stored_bytes

#: a table spanning fewer ids than this is read in one pass (a second connection and its
#: thread cost a few ms)
SPLIT_IDS = 50_000
#: the lower half's ids kept at most: rows below the last of them are read after, by the
#: store's connection (a text nearly every row holds would hold a list of them all)
MAX_IDS = 100_000
#: how long a limited search walks the newest rows alone before the second connection
#: starts (most find their hits sooner: two scans at once slow each other down)
DELAY = 0.05
#: how long the second connection waits for a writer's lock (seconds)
BUSY_TIMEOUT = 5.0

Rows = list[tuple[Any, ...]]
#: what makes a batch of rows what the caller wants (Messages, in a worker thread)
AsBatch = Callable[[Rows], Awaitable[list[tuple[str, Message]]]]


class LowerHalf:
    """The ids of the rows of ``sql`` (``SELECT id … ORDER BY id DESC``), read by a
    read-only connection to ``uri`` in a thread of its own: ``(ids, more)`` (``more``:
    stopped at :data:`MAX_IDS`), or ``None`` when that connection could not read them."""

    def __init__(self, uri: str, sql: str, params: Params, delay: float = 0.0) -> None:
        self._stopped = threading.Event()
        self._lock = threading.Lock()  # (stop's interrupt against the connection's close)
        self._conn: sqlite3.Connection | None = None
        self._asleep = False
        self.connections = 0  # opened so far (and each closed before the thread ends)
        sql, params = as_stored_bytes(sql, params)
        self._task = asyncio.ensure_future(self._later(delay, uri, sql, params))

    async def _later(self, delay: float, uri: str, sql: str, params: Params) -> tuple[list[int], bool] | None:
        if delay:
            self._asleep = True
            with contextlib.suppress(asyncio.CancelledError):  # (stop wakes it)
                await asyncio.sleep(delay)
            self._asleep = False
        if self._stopped.is_set():
            return None
        return await asyncio.to_thread(self._run, uri, sql, params)

    def _run(self, uri: str, sql: str, params: Params) -> tuple[list[int], bool] | None:
        if self._stopped.is_set():
            return None
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error:
            return None
        self.connections += 1
        with self._lock:
            self._conn = conn
        try:
            conn.execute("PRAGMA query_only=ON")
            ids: list[int] = []
            # A stop interrupts the query (stop() asks until the thread ends: one asked
            # before the query began is lost); a progress handler looking at the flag
            # would take the interpreter's lock every few steps, which held the scan up.
            cur = conn.execute(sql, params)
            while not self._stopped.is_set() and (rows := cur.fetchmany(1000)):
                ids += [int(r[0]) for r in rows]
                if len(ids) >= MAX_IDS:
                    return ids, True
            return None if self._stopped.is_set() else (ids, False)
        except sqlite3.Error:
            return None  # stopped, or it could not read: the store's connection reads them
        finally:
            with self._lock:
                self._conn = None
            conn.close()

    async def result(self) -> tuple[list[int], bool] | None:
        """What the thread found (waited for)."""
        return await asyncio.shield(self._task)

    async def stop(self) -> None:
        """Stop the thread and wait until it has ended, its connection closed (a caller
        cancelled meanwhile sees the cancellation after)."""
        self._stopped.set()
        if self._asleep:
            self._task.cancel()  # (only its sleep: it then returns None)
        cancelled = False
        while not self._task.done():
            # (an interrupt before the query began is lost: asked again until it ends)
            with self._lock:
                if self._conn is not None:
                    self._conn.interrupt()
            try:
                await asyncio.wait({self._task}, timeout=0.005)
            except asyncio.CancelledError:
                cancelled = True
        if not self._task.cancelled():
            self._task.exception()  # (result() gave it, or no one wants it any more)
        if cancelled:
            raise asyncio.CancelledError


async def newest_first(
    backend: Backend, table: str, columns: str, cond: str, params: Params, as_batch: AsBatch,
    limit: int | None,
) -> AsyncGenerator[list[tuple[str, Message]], None]:
    """The rows of SQLite ``table`` matching ``cond``, newest first, as (session id,
    Message) batches (see :func:`~.textsearch.candidates`): with a ``limit``, that many
    and one more at a time, so that SQLite stops reading once the caller has its hits."""
    order = " ORDER BY id DESC"
    size = 500 if limit is None else limit + 1
    uri = backend.second_reader()
    mid = await _middle(backend, table) if uri is not None else None
    if uri is None or mid is None:
        sql = f"SELECT {columns} FROM {table} WHERE {cond}{order}"
        async with contextlib.aclosing(_batches(backend, sql, params, as_batch, size)) as batches:
            async for batch in batches:
                yield batch
        return
    where = f"SELECT {columns} FROM {table} WHERE ({cond}) AND"
    halves = {**params, "mid": mid}
    lower = LowerHalf(uri, f"SELECT id FROM {table} WHERE ({cond}) AND id <= :mid{order}", halves,
                      0.0 if limit is None else DELAY)
    try:
        upper = _batches(backend, f"{where} id > :mid{order}", halves, as_batch, size)
        async with contextlib.aclosing(upper) as top:
            async for batch in top:
                yield batch
        found = await lower.result()
        if found is None:  # no second reader: this connection reads the lower half
            rest = _batches(backend, f"{where} id <= :mid{order}", halves, as_batch, size)
        else:
            ids, more = found
            for start in range(0, len(ids), size):
                named: Params = {f"i{k}": v for k, v in enumerate(ids[start : start + size])}
                rows = await backend.fetchall(
                    f"SELECT {columns} FROM {table} WHERE id IN ({', '.join(':' + k for k in named)}){order}",
                    named,
                )
                yield await as_batch(rows)
            if not more:
                return
            below = {**params, "below": ids[-1]}
            rest = _batches(backend, f"{where} id < :below{order}", below, as_batch, size)
        async with contextlib.aclosing(rest) as batches:
            async for batch in batches:
                yield batch
    finally:
        await lower.stop()


async def _middle(backend: Backend, table: str) -> int | None:
    """The id that halves ``table``'s span of ids (``None``: under :data:`SPLIT_IDS`);
    two steps down the ends of the rowid tree."""
    # (each in a query of its own: SQLite reads both ends of the tree for those, but every
    # row for ``MIN(id), MAX(id)`` in one)
    row = await backend.fetchone(f"SELECT (SELECT MIN(id) FROM {table}), (SELECT MAX(id) FROM {table})")
    if row is None or row[0] is None or int(row[1]) - int(row[0]) < SPLIT_IDS:
        return None
    return (int(row[0]) + int(row[1])) // 2


async def _batches(
    backend: Backend, sql: str, params: Params, as_batch: AsBatch, size: int
) -> AsyncGenerator[list[tuple[str, Message]], None]:
    """The rows of ``sql`` as (session id, Message) batches of ``size``; the read is
    closed (its cursor released) however the caller stops."""
    async with contextlib.aclosing(backend.stream(sql, params, size)) as parts:
        async for part in parts:
            yield await as_batch(part)
