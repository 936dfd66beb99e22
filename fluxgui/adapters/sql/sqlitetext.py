"""How the SQLite back-end reads text: tolerant of bytes that are not UTF-8, and able to
read the head of a huge value without loading all of it; and how it gives such a value
back as a parameter (:func:`as_stored_bytes`).

Errors are ``sqlite3`` errors, left to :class:`~.sqlite.SqliteBackend` to word.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from fluxgui.core.undecodable import storable, tolerant_text, utf8

Rows = list[tuple[Any, ...]]


def as_stored_bytes(sql: str, params: Any) -> tuple[str, Any]:
    """``sql`` and ``params`` (a dict, or a list of them) for parameters that UTF-8 cannot
    encode — a session id read from bytes that are not UTF-8 is kept as those bytes
    decoded with ``surrogateescape`` (:func:`~fluxgui.core.undecodable.id_text`) — each
    such parameter given as its bytes and compared as text (``CAST(:p AS TEXT)``: the
    stored bytes, which SQLite compares byte for byte). A text holding other lone
    surrogates (which no stored bytes decode to) is given with U+FFFD in their place."""
    sets = params if isinstance(params, list) else [params or {}]
    odd = {k for p in sets for k, v in p.items() if isinstance(v, str) and not utf8(v)}
    if not odd:
        return sql, params
    for name in odd:
        sql = re.sub(rf":{name}(?![A-Za-z0-9_])", f"CAST(:{name} AS TEXT)", sql)
    fixed = [{k: _raw(v) if k in odd and isinstance(v, str) else v for k, v in p.items()} for p in sets]
    return sql, fixed if isinstance(params, list) else fixed[0]


def _raw(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return storable(text).encode("utf-8")


def not_utf8(exc: BaseException) -> bool:
    """Whether ``exc`` is ``sqlite3`` refusing a TEXT value that is not UTF-8."""
    return isinstance(exc, sqlite3.OperationalError) and "Could not decode to UTF-8" in str(exc)


class TextMode:
    """How one aiosqlite connection turns TEXT into ``str``.

    The default text factory is the C one (no Python call per value); it fails a whole
    query on one value that is not UTF-8. A query that fails so runs again with
    :func:`~fluxgui.core.undecodable.tolerant_text`, which gives an ``Undecodable`` for
    such a value. That factory is set only while such a query runs and restored after
    (counted: reads may overlap on the connection; another read meanwhile gets the same
    values, as ``str``, only slower).
    """

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._users = 0
        self._saved: Any = None

    @contextlib.asynccontextmanager
    async def mode(self, tolerant: bool) -> AsyncIterator[None]:
        """Within: the tolerant factory when ``tolerant`` (else nothing changes)."""
        if not tolerant:
            yield
            return
        if self._users == 0:
            self._saved = self._conn.text_factory
            self._conn.text_factory = tolerant_text
        self._users += 1
        try:
            yield
        finally:
            self._users -= 1
            if self._users == 0:
                self._conn.text_factory = self._saved

    async def fetchall(self, sql: str, params: dict[str, Any] | None) -> Rows:
        """All rows of a read; run again tolerant when a value is not UTF-8."""
        try:
            rows = await self._conn.execute_fetchall(sql, params or {})  # one thread hop
        except UnicodeEncodeError:  # (refused while binding: nothing ran)
            return await self.fetchall(*as_stored_bytes(sql, params))
        except sqlite3.OperationalError as exc:
            if not not_utf8(exc):
                raise
            async with self.mode(True):
                rows = await self._conn.execute_fetchall(sql, params or {})
        return [tuple(r) for r in rows]

    async def stream(
        self, sql: str, params: dict[str, Any] | None, batch: int
    ) -> AsyncGenerator[Rows, None]:
        """The rows of a read in batches. A value that is not UTF-8 makes the query run
        again tolerant, skipping the rows already yielded (callers stream ordered
        queries), and the rest is read tolerant."""
        sent = 0  # rows yielded so far
        tolerant = False
        while True:
            async with self.mode(tolerant):
                try:
                    cur = await self._conn.execute(sql, params or {})
                except UnicodeEncodeError:  # (refused while binding: nothing ran)
                    sql, params = as_stored_bytes(sql, params)
                    cur = await self._conn.execute(sql, params or {})
            skip = sent
            try:
                while True:
                    try:
                        async with self.mode(tolerant):
                            rows = await cur.fetchmany(min(batch, skip) if skip else batch)
                    except sqlite3.OperationalError as exc:
                        if tolerant or not not_utf8(exc):
                            raise
                        tolerant = True
                        break  # run it again, tolerant
                    if not rows:
                        return
                    if skip:
                        skip -= len(rows)
                        continue
                    sent += len(rows)
                    yield [tuple(r) for r in rows]
            finally:
                await cur.close()


async def blob_heads(
    conn: Any, table: str, column: str, ids: list[int], size: int
) -> dict[int, tuple[str, int]] | None:
    """Row id → (the first ``size`` bytes of ``column`` decoded with replacement
    characters, the value's length in bytes) for the rows ``ids`` of a rowid ``table``.

    SQL's ``substr`` would make SQLite load the whole value (200 MB for a 200 MB item);
    incremental blob I/O reads only the pages holding those bytes. ``None`` when it is
    not available (an aiosqlite without its worker queue, a table without rowid, a value
    that is not text): read through SQL then.
    """
    try:
        run, raw = conn._execute, conn._conn  # aiosqlite's worker-thread queue, its sqlite3
    except (AttributeError, ValueError):
        return None
    if not hasattr(raw, "blobopen"):  # Python before 3.11
        return None

    def read() -> dict[int, tuple[str, int]] | None:
        out: dict[int, tuple[str, int]] = {}
        for row_id in ids:
            try:
                with raw.blobopen(table, column, int(row_id), readonly=True) as blob:
                    out[int(row_id)] = (blob.read(size).decode("utf-8", "replace"), len(blob))
            except sqlite3.OperationalError as exc:
                if "no such rowid" not in str(exc):
                    return None
                # (deleted since its id was read: nothing to look at)
        return out

    return await run(read)
