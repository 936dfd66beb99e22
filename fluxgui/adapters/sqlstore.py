"""Shared pieces of the SQL store formats: search patterns and keyset helpers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from .backends import Backend, Params, like_pattern

MAX_KEY = 2**63 - 1


def search_variants(text: str) -> list[str]:
    """Strings to pre-filter stored rows with for a case-insensitive search of ``text``.

    SQLite's LIKE folds ASCII case only and JSON items may hold ``\\uXXXX`` escapes, so
    the pre-filter asks for the lower and upper case forms, raw and JSON-escaped. Every
    hit is then checked in Python on the text a person reads.
    """
    out: list[str] = []
    for form in (text, text.lower(), text.upper()):
        for variant in (form, json.dumps(form)[1:-1], json.dumps(form, ensure_ascii=False)[1:-1]):
            if variant and variant not in out:
                out.append(variant)
    return out


def like_any(backend: Backend, column: str, variants: list[str], params: Params, prefix: str) -> str:
    """``(column LIKE :p0 OR …)`` (ILIKE on Postgres), filling ``params``."""
    op = "ILIKE" if backend.dialect == "postgresql" else "LIKE"
    parts = []
    for i, v in enumerate(variants):
        name = f"{prefix}{i}"
        params[name] = like_pattern(v)
        parts.append(f"{column} {op} :{name} ESCAPE '\\'")
    return "(" + " OR ".join(parts) + ")"


def contains(haystack: str, needle: str) -> bool:
    return needle.casefold() in haystack.casefold()


def in_clause(values: list[Any], params: Params, prefix: str) -> str:
    """``(:x0, :x1, …)`` for an IN list, filling ``params``."""
    names = []
    for i, v in enumerate(values):
        params[f"{prefix}{i}"] = v
        names.append(f":{prefix}{i}")
    return "(" + ", ".join(names) + ")"


async def search_ids(
    backend: Backend,
    text: str,
    id_sql: Callable[[Params], str],
    row_sql: Callable[[Params], str],
    row_text: Callable[[tuple[Any, ...]], str],
) -> AsyncIterator[str]:
    """Yield each session id whose id, or any of whose messages' text, contains ``text``.

    ``id_sql`` and ``row_sql`` build the pre-filter queries (``session_id`` first in each
    row); ``row_text`` gives the text a person reads for a message row.
    """
    seen: set[str] = set()
    params: Params = {}
    async for batch in backend.stream(id_sql(params), params):
        for row in batch:
            sid = str(row[0])
            if sid not in seen and contains(sid, text):
                seen.add(sid)
                yield sid
    params = {}
    async for batch in backend.stream(row_sql(params), params):
        for row in batch:
            sid = str(row[0])
            if sid not in seen and contains(row_text(row), text):
                seen.add(sid)
                yield sid
