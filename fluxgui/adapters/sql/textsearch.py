"""What the SQL formats give a search index and a server-side search.

* Rows above an id watermark and per-session (count, last id) marks: both formats'
  message ids increase store-wide and are never reused (``AUTOINCREMENT``, ``SERIAL``),
  so an index follows new rows by id and finds changed or deleted sessions by their marks.
* On Postgres, a ``pg_trgm`` GIN (or GiST) index on the text column makes ``ILIKE``
  fast: :func:`trigram_index` finds one (one catalog query, asked when a search first
  needs it, never at open); :func:`trigram_advice` is what a DBA could run (fluxgui never
  creates anything in an agent's database).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import Any

from fluxgui.core.model import Message
from fluxgui.core.undecodable import id_text

from .backend import Backend, Params, quote_ident

#: a batch of more rows than this is turned into Messages in a worker thread
INLINE_ROWS = 256

_TRGM_SQL = """
    SELECT ic.relname
    FROM pg_index i
    JOIN pg_class ic ON ic.oid = i.indexrelid
    JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = ANY(i.indkey)
    JOIN pg_opclass oc ON oc.oid = ANY(i.indclass)
    WHERE t.relname = :t AND a.attname = :c AND i.indisvalid
      AND n.nspname = ANY(current_schemas(false))
      AND oc.opcname IN ('gin_trgm_ops', 'gist_trgm_ops')
    ORDER BY ic.relname LIMIT 1"""


async def trigram_index(backend: Backend, table: str, column: str) -> str | None:
    """The name of a valid trigram index on ``table.column`` (Postgres), else ``None``."""
    if backend.dialect != "postgresql":
        return None
    row = await backend.fetchone(_TRGM_SQL, {"t": table, "c": column})
    return str(row[0]) if row else None


def trigram_advice(table: str, column: str) -> str:
    """The statements that make the trigram index server-side search uses."""
    name = quote_ident(f"{table}_{column}_trgm")
    return (
        "CREATE EXTENSION IF NOT EXISTS pg_trgm; "
        f"CREATE INDEX CONCURRENTLY {name} ON {quote_ident(table)} "
        f"USING gin ({quote_ident(column)} gin_trgm_ops);"
    )


_INDEX_COLUMNS_SQL = """
    SELECT ic.relname, array_agg(a.attname ORDER BY k.ord)
    FROM pg_index i
    JOIN pg_class t ON t.oid = i.indrelid
    JOIN pg_class ic ON ic.oid = i.indexrelid
    CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
    JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
    WHERE t.relname = :t AND i.indisvalid
      AND t.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
    GROUP BY ic.relname"""


async def missing_index(
    backend: Backend, table: str, columns: tuple[str, ...], what: str
) -> list[str]:
    """On Postgres: a sentence with the exact ``CREATE INDEX`` a DBA could run when no
    valid index of ``table`` starts with ``columns`` (what makes ``what`` slow without
    it); nothing when one does, or on other databases (the libraries make theirs)."""
    if backend.dialect != "postgresql":
        return []
    rows = await backend.fetchall(_INDEX_COLUMNS_SQL, {"t": table})
    if any(tuple(r[1])[: len(columns)] == columns for r in rows):
        return []
    name = quote_ident(f"{table}_{'_'.join(columns)}")
    cols = ", ".join(quote_ident(c) for c in columns)
    return [
        f"{what} is slow on {table}: it has no index on ({', '.join(columns)}). "
        f"A DBA could run: CREATE INDEX CONCURRENTLY {name} ON {quote_ident(table)} ({cols});"
    ]


async def as_messages(
    rows: list[tuple[Any, ...]], convert: Callable[[tuple[Any, ...]], Message]
) -> list[tuple[str, Message]]:
    """Rows ``(session_id, …)`` as (session id, Message) pairs; many of them are converted
    in a worker thread (JSON parsing, decryption) so the event loop stays free."""

    def run() -> list[tuple[str, Message]]:
        return [(id_text(r[0]), convert(r)) for r in rows]

    if len(rows) > INLINE_ROWS:
        return await asyncio.to_thread(run)
    return run()


#: the first page of candidates a limited server search asks for: this many per hit
#: wanted (the server's pre-filter lets through more than the check keeps), at least
#: _MIN_PAGE
_FIRST_PAGE_PER_HIT = 8
_MIN_PAGE = 200
#: the newest rows a limited search reads one by one, per hit wanted, before it asks
#: the trigram index for the older ones (between _MIN_WINDOW and _MAX_WINDOW ids)
_WINDOW_PER_HIT = 100
_MIN_WINDOW = 2_000
_MAX_WINDOW = 20_000
#: rows read at once by their ids (the trigram index's, or the scan's, finds)
_ROWS_BY_ID = 500


async def candidates(
    backend: Backend,
    table: str,
    columns: str,
    cond: str,
    params: Params,
    convert: Callable[[tuple[Any, ...]], Message],
    limit: int | None,
) -> AsyncGenerator[list[tuple[str, Message]], None]:
    """The rows of ``table`` (``columns``: ``session_id, id, …``) matching ``cond``,
    newest first, as (session id, Message) batches.

    Postgres' planner guesses how common a text is from its statistics, and a wrong
    guess costs a hundredfold: for ``ORDER BY id DESC LIMIT n`` it walks the primary key
    backwards, which stops after a few rows for a common text but reads most of the table
    for a rare one it took for common (850 ms against 2 ms through the trigram index, on
    a million rows). So the plan is not left to the guess:

    1. with a ``limit`` (the hits the caller wants), the newest rows are read one by one,
       a bounded window of ids (``OFFSET 0`` keeps the text condition outside it, so no
       other plan can be chosen): a common text fills the first page there, in a few ms;
    2. the rows below that window (all rows without a limit) come from the ids the text
       condition finds through the trigram index, all of them first (a ``MATERIALIZED``
       CTE, which no ``LIMIT`` reaches into), then read newest first, a batch of ids at a
       time: this costs the index scan and its recheck, whatever the planner thinks of
       the text (without the index, a scan the server may share among its workers);
    3. a text that filled the first page in the window goes on walking the key there.

    SQLite plans no such guess: it walks the key backwards, testing each row, and the
    rows stream from the newest — with a ``limit``, that many and one more at a time: it
    stops reading there (a batch of 500 made it read on, through the whole table for a
    text with fewer matches); a big table's lower half is read meanwhile by a second
    connection (:mod:`.scansplit`)."""
    order = " ORDER BY id DESC"
    if backend.dialect == "sqlite":
        from .scansplit import newest_first  # (two connections read a big table's halves)

        async def as_batch(rows: list[tuple[Any, ...]]) -> list[tuple[str, Message]]:
            return await as_messages(rows, convert)

        scan = newest_first(backend, table, columns, cond, params, as_batch, limit)
        async with contextlib.aclosing(scan) as batches:
            async for batch in batches:
                yield batch
        return
    below: int | None = None
    if limit is not None:
        top = await backend.fetchone(f"SELECT MAX(id) FROM {table}")
        if top is None or top[0] is None:
            return
        n = max(_MIN_PAGE, _FIRST_PAGE_PER_HIT * (limit + 1))
        window = min(max(_WINDOW_PER_HIT * (limit + 1), _MIN_WINDOW), _MAX_WINDOW)
        below = int(top[0]) - window
        newest = f"(SELECT * FROM {table} WHERE id > :lo ORDER BY id DESC OFFSET 0) w"
        rows = await backend.fetchall(
            f"SELECT {columns} FROM {newest} WHERE {cond}{order} LIMIT :n",
            {**params, "lo": below, "n": n},
        )
        if rows:
            yield await as_messages(rows, convert)
        if len(rows) == n:  # common: walk on below the last row
            rest = {**params, "before": int(rows[-1][1])}
            sql = f"SELECT {columns} FROM {table} WHERE ({cond}) AND id < :before{order}"
            async with contextlib.aclosing(_messages(backend, sql, rest, convert)) as batches:
                async for batch in batches:
                    yield batch
            return
    bound, rest = "", dict(params)
    if below is not None:
        bound, rest["lo"] = " WHERE id <= :lo", below
    # The ids in one query, not through a cursor: Postgres plans no parallel scan for a
    # cursor (a scan without a trigram index takes twice as long on two cores).
    found = await backend.fetchall(
        f"WITH found AS MATERIALIZED (SELECT id FROM {table} WHERE {cond}) "
        f"SELECT id FROM found{bound}{order}",
        rest,
    )
    for start in range(0, len(found), _ROWS_BY_ID):
        ids: Params = {f"i{k}": int(r[0]) for k, r in enumerate(found[start : start + _ROWS_BY_ID])}
        rows = await backend.fetchall(
            f"SELECT {columns} FROM {table} WHERE id IN ({', '.join(':' + k for k in ids)}){order}", ids
        )
        yield await as_messages(rows, convert)


async def _messages(
    backend: Backend, sql: str, params: Params, convert: Callable[[tuple[Any, ...]], Message],
    batch: int = 500,
) -> AsyncGenerator[list[tuple[str, Message]], None]:
    """The rows of ``sql`` as (session id, Message) batches; the read is closed (its
    cursor released) however the caller stops."""
    async with contextlib.aclosing(backend.stream(sql, params, batch)) as parts:
        async for part in parts:
            yield await as_messages(part, convert)


async def marks(backend: Backend, table: str) -> dict[str, tuple[int, int]]:
    """Each session's (count, largest id) in ``table``: one pass over its session index."""
    rows = await backend.fetchall(
        f"SELECT session_id, COUNT(*), MAX(id) FROM {quote_ident(table)} GROUP BY session_id"
    )

    def by_session() -> dict[str, tuple[int, int]]:
        return {id_text(r[0]): (int(r[1]), int(r[2])) for r in rows}

    # (ten thousand sessions: milliseconds of Python, not on the event loop)
    return await asyncio.to_thread(by_session) if len(rows) > INLINE_ROWS else by_session()


async def total(backend: Backend, table: str) -> int:
    """The rows of ``table``: one ``COUNT(*)`` (SQLite counts a b-tree's pages: 5 ms on a
    million rows, against 68 ms for :func:`marks`)."""
    row = await backend.fetchone(f"SELECT COUNT(*) FROM {quote_ident(table)}")
    return int(row[0]) if row else 0


async def rows_after(
    backend: Backend, table: str, columns: str, watermark: int, limit: int, session_id: str | None
) -> list[tuple[Any, ...]]:
    """The rows ``(session_id, columns…)`` above ``watermark`` (of ``session_id`` when
    given), by id, at most ``limit``: the feed's ``messages_after``."""
    params: Params = {"w": int(watermark), "n": limit}
    if session_id is not None:
        params["s"] = session_id
    return await backend.fetchall(after_sql(table, columns, session_id), params)


def after_sql(table: str, columns: str, session_id: str | None) -> str:
    """The query of the rows above ``:w`` (of session ``:s`` when given), by id."""
    where = "id > :w" + (" AND session_id = :s" if session_id is not None else "")
    return (
        f"SELECT session_id, {columns} FROM {quote_ident(table)} WHERE {where} "
        "ORDER BY id LIMIT :n"
    )
