"""Search in SQL stores: ``LIKE``/``ILIKE`` pre-filters that every match passes, checked
again in Python on the text a person reads; and the small keyset helpers the SQL formats
share.

:func:`text_condition` lets the database decide what it can: a row whose text, case
folded by :func:`fluxgui.core.hits.fold`, holds the folded needle always passes it, so
checking only the rows it lets through finds what reading every row finds. Where the
database cannot judge — a character whose fold is several ("İ" → "i̇"), one folding to
an ASCII letter (the Kelvin sign), a cased letter beyond ASCII (LIKE folds ASCII only),
text a reader joins from several JSON strings — the pattern holds a wildcard there and
Python decides.

Listing sessions uses only the keyset helpers: the search pieces load on the first search.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any, Literal

from fluxgui.core.undecodable import id_text

from .backend import Backend, Params

__all__ = [
    "MAX_KEY", "bind_all", "in_clause", "search_ids", "session_ids", "text_condition", "text_patterns",
]

MAX_KEY = 2**63 - 1

Variant = Literal["plain", "json", "json-ascii"]

#: the folds of several characters (``str.lower``: only "İ" → "i̇"); the facts this module
#: relies on are checked against Python's tables by tests/adapters/test_text_prefilter.py
LONG_FOLDS = ("i\u0307",)
#: ASCII letters a character beyond ASCII folds to (the Kelvin sign "K" → "k")
ASCII_FROM_OTHERS = frozenset("k")
#: the characters that join the strings of an Agents SDK item into the text a person
#: reads (content parts by "\n", a call's name and arguments by "(" and ")", a JSON value
#: shown whole by its punctuation, ", " and ": "): a run of other characters of a needle
#: lies inside one JSON string, key or number of the stored item
JSON_GLUE = frozenset('\n(){}[]",:')


def _like_literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _in_long_fold(folded: str, i: int) -> bool:
    """Whether ``folded[i]`` may be part of one character's several-character fold."""
    for long in LONG_FOLDS:
        for j, ch in enumerate(long):
            if ch != folded[i]:
                continue
            start = i - j  # where that fold would begin in the needle
            lo, hi = max(0, start), min(len(folded), start + len(long))
            if folded[lo:hi] == long[lo - start : hi - start]:
                return True
    return False


def _fragment(folded: str, i: int, variant: Variant) -> str:
    """The LIKE pattern that matches every stored form of each character whose fold is
    ``folded[i]``: as ``plain`` text, or inside a JSON string written with non-ASCII
    characters as they are (``json``) or as ``\\u`` escapes (``json-ascii``)."""
    import json

    ch = folded[i]
    if _in_long_fold(folded, i):
        return "%"  # one character or several: the database cannot tell
    if ch.isascii():
        if ch in ASCII_FROM_OTHERS:
            # "k", "K" or the Kelvin sign: one character, but six as an escape
            return "%" if variant == "json-ascii" else "_"
        # LIKE and ILIKE fold ASCII case themselves
        return _like_literal(ch if variant == "plain" else json.dumps(ch)[1:-1])
    if ch.upper() == ch:  # no other character folds to it: itself
        return _like_literal(ch if variant != "json-ascii" else json.dumps(ch)[1:-1])
    # A cased letter: its capitals (all of its plane) are other characters to LIKE.
    if variant != "json-ascii":
        return "_"
    return "\\\\u____" * (1 if ord(ch) <= 0xFFFF else 2)


def _pattern(folded: str, variant: Variant) -> str:
    out = ["%"]
    for i in range(len(folded)):
        piece = _fragment(folded, i, variant)
        if piece != "%" or out[-1] != "%":  # (one wildcard for a run of them)
            out.append(piece)
    if out[-1] != "%":
        out.append("%")
    return "".join(out)


def _json_pieces(folded: str) -> list[str]:
    """The runs of ``folded`` that lie inside one JSON string, key or number of an item
    wherever the needle is found in the text a reader builds from it (a space after the
    glue may be a separator: left out)."""
    pieces: list[str] = []
    run: list[str] = []
    for ch in folded + "\n":
        if ch in JSON_GLUE:
            piece = "".join(run).lstrip(" ")
            if piece:
                pieces.append(piece)
            run = []
        else:
            run.append(ch)
    return pieces


#: a pre-filter: rows pass that match, for some alternative, one pattern of each of its
#: groups (``None``: every row passes)
Filter = list[list[list[str]]] | None


def text_patterns(text: str, *, json_items: bool = False) -> Filter:
    """The pre-filter of ``text`` (see :data:`Filter`; ``\\`` escapes) for a column of
    plain text, or with ``json_items`` of Agents SDK items (JSON, or text that is not JSON,
    which a reader shows as it is)."""
    from fluxgui.core.hits import fold

    folded = fold(text)
    plain = _pattern(folded, "plain")
    if not json_items:
        return [[[plain]]]
    pieces = _json_pieces(folded)
    if not pieces:
        return None  # the needle is all glue: any item may hold it
    groups = [list(dict.fromkeys(_pattern(p, v) for v in ("json", "json-ascii"))) for p in pieces]
    if pieces == [folded]:
        return [[list(dict.fromkeys([plain, *groups[0]]))]]
    return [[[plain]], groups]


def text_condition(
    backend: Backend, column: str, text: str, params: Params, prefix: str, *, json_items: bool = False
) -> str:
    """The SQL condition of :func:`text_patterns` on ``column`` (``ILIKE`` on Postgres),
    its patterns bound in ``params`` as ``prefix0``, ``prefix1``…; ``1 = 1`` when every
    row passes.

    SQLite's ``LIKE`` sees a text only up to its first NUL character (Postgres' text holds
    none): there, a row of plain text holding one is let through too, and checked
    (``instr``: +70 % on the ``LIKE``; comparing the text with ``substr``'s copy up to the
    NUL costs +50 %, but holds a huge value three times). JSON items hold none (JSON
    writes it ``\u0000``): only a row that is not JSON could, which no library writes."""
    found = text_patterns(text, json_items=json_items)
    if found is None:
        return "1 = 1"
    sqlite = backend.dialect == "sqlite"
    op = "LIKE" if sqlite else "ILIKE"
    names = iter(range(1_000_000))

    def like(pattern: str) -> str:
        name = f"{prefix}{next(names)}"
        params[name] = pattern
        return f"{column} {op} :{name} ESCAPE '\\'"

    if not sqlite:  # a raw NUL or a lone surrogate: no text holds one, nor can a parameter
        found = [[[p for p in group if storable(p)] for group in groups] for groups in found]
        found = [groups for groups in found if all(groups)]
    alternatives = [
        " AND ".join("(" + " OR ".join(like(p) for p in group) + ")" for group in groups)
        for groups in found
    ]
    if sqlite and not json_items:
        alternatives.append(f"instr({column}, char(0)) > 0")
    return "(" + " OR ".join(f"({a})" for a in alternatives) + ")" if alternatives else "1 = 0"


def storable(pattern: str) -> bool:
    """Whether a server's text can hold ``pattern``: no NUL, no lone surrogate (UTF-8
    has none; such text is stored only as a JSON item's ``\\u`` escape)."""
    if "\x00" in pattern:
        return False
    try:
        pattern.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def session_ids(table: str) -> str:
    """SQL of a table's distinct session ids as ``sid`` (a last row holds ``NULL``): one
    seek each on its session index (a loose index scan; ``DISTINCT`` reads every entry:
    70 ms against 18 on a million rows on SQLite, 304 against 158 on Postgres)."""
    return f"""WITH RECURSIVE ids(sid) AS (
        SELECT MIN(session_id) FROM {table} UNION ALL
        SELECT (SELECT MIN(s.session_id) FROM {table} s WHERE s.session_id > ids.sid)
        FROM ids WHERE ids.sid IS NOT NULL) SELECT sid FROM ids"""


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
) -> AsyncGenerator[str, None]:
    """Yield each session id whose id, or any of whose messages' text, contains ``text``.

    ``id_sql`` and ``row_sql`` build the pre-filter queries (``session_id`` first in each
    row; without ``id_sql`` the row query also pre-filters on the id); ``row_text`` gives
    the text a person reads for a message row. Every hit is checked here, in Python.
    """
    from ..textmatch import contains

    seen: set[str] = set()
    if id_sql is not None:
        async for sid in ids_named(backend, id_sql, text, seen):
            yield sid
    params: Params = {}
    async for batch in backend.stream(row_sql(params), params):
        for row in batch:
            sid = id_text(row[0])
            if sid not in seen and (contains(sid, text) or contains(row_text(row), text)):
                seen.add(sid)
                yield sid


async def ids_named(
    backend: Backend, id_sql: Callable[[Params], str], text: str, seen: set[str]
) -> AsyncGenerator[str, None]:
    """The session ids (of ``id_sql``'s rows, ``session_id`` first) that contain ``text``
    and are not in ``seen`` (each added to it)."""
    from ..textmatch import contains

    params: Params = {}
    async for batch in backend.stream(id_sql(params), params):
        for row in batch:
            sid = id_text(row[0])
            if sid not in seen and contains(sid, text):
                seen.add(sid)
                yield sid
