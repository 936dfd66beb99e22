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
from collections.abc import Callable
from typing import Any

from fluxgui.core.model import Message

from .backend import Backend, quote_ident

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


async def marks(backend: Backend, table: str) -> dict[str, tuple[int, int]]:
    """Each session's (count, largest id) in ``table``: one pass over its session index."""
    rows = await backend.fetchall(
        f"SELECT session_id, COUNT(*), MAX(id) FROM {quote_ident(table)} GROUP BY session_id"
    )
    return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}


def after_sql(table: str, columns: str, session_id: str | None) -> str:
    """The query of the rows above ``:w`` (of session ``:s`` when given), by id."""
    where = "id > :w" + (" AND session_id = :s" if session_id is not None else "")
    return (
        f"SELECT session_id, {columns} FROM {quote_ident(table)} WHERE {where} "
        "ORDER BY id LIMIT :n"
    )
