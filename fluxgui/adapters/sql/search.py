"""Search in SQL stores: LIKE pre-filters that every match passes, checked again in Python
on the text a person reads; and the small keyset helpers the SQL formats share.

Listing sessions uses only the keyset helpers: the search pieces load on the first search.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from fluxgui.core.undecodable import id_text

from .backend import Backend, Params

__all__ = ["MAX_KEY", "bind_all", "in_clause", "like_any", "search_ids", "search_patterns"]

MAX_KEY = 2**63 - 1


def _like_literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def search_patterns(text: str) -> list[str]:
    """LIKE patterns (``\\`` escapes) that every row containing ``text`` matches, up to case.

    LIKE/ILIKE fold ASCII case; a letter beyond ASCII that has case becomes a one-character
    wildcard, so "élégant" also finds "Élégant". JSON items may hold that letter as a
    ``\\uXXXX`` escape, hence the second pattern. The pre-filter may let through rows that
    do not match; every hit is checked in Python on the text a person reads.
    """
    import json

    raw: list[str] = []
    escaped: list[str] = []
    for ch in text:
        if ch.isascii():
            raw.append(_like_literal(ch))
            escaped.append(_like_literal(json.dumps(ch)[1:-1]))
        elif ch.lower() != ch.upper():
            raw.append("_")
            # one \uXXXX escape per UTF-16 unit (two for a letter beyond the BMP)
            escaped.append("\\\\u____" * ((len(json.dumps(ch)) - 2) // 6))
        else:
            raw.append(_like_literal(ch))
            escaped.append(_like_literal(json.dumps(ch)[1:-1]))
    patterns = ["%" + "".join(raw) + "%"]
    esc = "%" + "".join(escaped) + "%"
    if esc not in patterns:
        patterns.append(esc)
    return patterns


def like_any(backend: Backend, column: str, patterns: list[str], params: Params, prefix: str) -> str:
    """``(column LIKE :p0 OR …)`` (ILIKE on Postgres), filling ``params``."""
    op = "ILIKE" if backend.dialect == "postgresql" else "LIKE"
    parts = []
    for i, pattern in enumerate(patterns):
        name = f"{prefix}{i}"
        params[name] = pattern
        parts.append(f"{column} {op} :{name} ESCAPE '\\'")
    return "(" + " OR ".join(parts) + ")"


def bind_all(values: list[Any], params: Params, prefix: str) -> list[str]:
    """Bind each value as ``:prefixN`` in ``params``; return the placeholders."""
    names = []
    for i, v in enumerate(values):
        params[f"{prefix}{i}"] = v
        names.append(f":{prefix}{i}")
    return names


def in_clause(values: list[Any], params: Params, prefix: str) -> str:
    """``(:x0, :x1, …)`` for an IN list, filling ``params``."""
    return "(" + ", ".join(bind_all(values, params, prefix)) + ")"


async def search_ids(
    backend: Backend,
    text: str,
    id_sql: Callable[[Params], str] | None,
    row_sql: Callable[[Params], str],
    row_text: Callable[[tuple[Any, ...]], str],
) -> AsyncIterator[str]:
    """Yield each session id whose id, or any of whose messages' text, contains ``text``.

    ``id_sql`` and ``row_sql`` build the pre-filter queries (``session_id`` first in each
    row; without ``id_sql`` the row query also pre-filters on the id); ``row_text`` gives
    the text a person reads for a message row. Every hit is checked here, in Python.
    """
    from ..textmatch import contains

    seen: set[str] = set()
    if id_sql is not None:
        params: Params = {}
        async for batch in backend.stream(id_sql(params), params):
            for row in batch:
                sid = id_text(row[0])
                if sid not in seen and contains(sid, text):
                    seen.add(sid)
                    yield sid
    params = {}
    async for batch in backend.stream(row_sql(params), params):
        for row in batch:
            sid = id_text(row[0])
            if sid not in seen and (contains(sid, text) or contains(row_text(row), text)):
                seen.add(sid)
                yield sid
