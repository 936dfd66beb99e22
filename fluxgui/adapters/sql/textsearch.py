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
from collections.abc import AsyncIterator, Callable
from typing import Any

from fluxgui.core.model import Message

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
        return [(str(r[0]), convert(r)) for r in rows]

    if len(rows) > INLINE_ROWS:
        return await asyncio.to_thread(run)
    return run()


#: the first page of candidates a limited server search asks for: this many per hit
#: wanted (the server's pre-filter lets through more than the check keeps), at least
#: _MIN_PAGE
_FIRST_PAGE_PER_HIT = 8
_MIN_PAGE = 200


async def candidates(
    backend: Backend,
    head: str,
    cond: str,
    params: Params,
    convert: Callable[[tuple[Any, ...]], Message],
    limit: int | None,
) -> AsyncIterator[list[tuple[str, Message]]]:
    """The rows of ``head WHERE cond`` (``head`` selects ``session_id, id, …``) newest
    first, as (session id, Message) batches.

    With a ``limit`` (the hits the caller wants), a first page is asked for with
    ``ORDER BY id DESC LIMIT :n``: the LIMIT lets the planner walk the primary key
    backwards and stop after a few rows when the text is common (5 ms where matching and
    sorting every row takes 750 ms on a million), and a rare text is still looked up in
    the trigram index. Only when the caller wants more than that page held are the older
    rows streamed, in one more query (a text whose trigrams are common but which itself
    is rare costs the server the same for any LIMIT: one more query, not one per page).
    Without a limit the rows stream from the start."""
    order = " ORDER BY id DESC"
    before: int | None = None
    if limit is not None:
        n = max(_MIN_PAGE, _FIRST_PAGE_PER_HIT * (limit + 1))
        rows = await backend.fetchall(f"{head} WHERE {cond}{order} LIMIT :n", {**params, "n": n})
        if rows:
            yield await as_messages(rows, convert)
        if len(rows) < n:
            return
        before = int(rows[-1][1])
    where, rest = cond, params
    if before is not None:
        where, rest = f"({cond}) AND id < :before", {**params, "before": before}
    async for rows in backend.stream(f"{head} WHERE {where}{order}", rest):
        yield await as_messages(rows, convert)


async def marks(backend: Backend, table: str) -> dict[str, tuple[int, int]]:
    """Each session's (count, largest id) in ``table``: one pass over its session index."""
    rows = await backend.fetchall(
        f"SELECT session_id, COUNT(*), MAX(id) FROM {quote_ident(table)} GROUP BY session_id"
    )

    def by_session() -> dict[str, tuple[int, int]]:
        return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}

    # (ten thousand sessions: milliseconds of Python, not on the event loop)
    return await asyncio.to_thread(by_session) if len(rows) > INLINE_ROWS else by_session()


def after_sql(table: str, columns: str, session_id: str | None) -> str:
    """The query of the rows above ``:w`` (of session ``:s`` when given), by id."""
    where = "id > :w" + (" AND session_id = :s" if session_id is not None else "")
    return (
        f"SELECT session_id, {columns} FROM {quote_ident(table)} WHERE {where} "
        "ORDER BY id LIMIT :n"
    )
