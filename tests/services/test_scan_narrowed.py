"""A search without an index on the SQL stores: the database's ``LIKE``/``ILIKE`` narrows
the rows, and only those are read and checked — with the very hits, in the same order, of
reading and checking every message (``full_scan``), on text whose case folding the
database cannot judge: ß/ẞ/ss, Turkish İ and ı, Greek final sigma, combining marks, the
Kelvin and Ångström signs, letters beyond the BMP, NUL characters, LIKE's own ``%``/``_``/
``\\``, and Agents SDK items whose text a person reads is not a string of the stored JSON
(``\\u`` escapes, content parts joined by a line break, a call's ``name(arguments)``).

Stores are written by the real libraries: ``flux.sessions.SQLiteSession``,
``agents.SQLiteSession`` (ASCII-escaped JSON), ``SQLAlchemySession`` on Postgres (compact
JSON, with and without ``ensure_ascii``); flux on Postgres by fluxgui's own writer (flux
has none for Postgres).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

import pytest
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from helpers import write_agents, write_flux

from fluxgui.adapters import open_store
from fluxgui.adapters.sql.search import ASCII_FROM_OTHERS, LONG_FOLDS
from fluxgui.core.hits import fold
from fluxgui.core.ports import OpenOptions
from fluxgui.services.index import full_scan, scan, search

TEXTS = [
    "STRASSE und Straße, die Maße, GROẞE Sache",
    "İstanbul istanbul ISTANBUL ı dotless",
    "ΟΔΟΣ ΣΊΣΥΦΟΣ σίσυφος ς",
    "café CAFÉ cafe\u0301 CAFE\u0301",
    "Kelvin 5 \u212a, \u212bngström, Ohm \u2126",
    "ǅemal ǄEMAL ǆemal",
    "emoji 😀🎉 party 𐐀𐐨 deseret",
    "percent 50%_off and back\\slash and tab\there",
    'quotes "NEAR" and {"json": [1, 2]}',
    "nul \x00 byte, then more",
    "zero\u200bwidth and \u202eoverride",
    "line one\nline two",
    "plain zanzibar word",
]
NEEDLES = [
    "straße", "STRASSE", "strasse", "große", "ß", "ẞ", "maße", "istanbul", "i̇stanbul",
    "İstanbul", "İ", "i", "ı", "σίσυφος", "ΣΊΣΥΦΟΣ", "οδος", "ΟΔΟΣ", "ς", "σ", "café", "CAFÉ",
    "cafe\u0301", "e\u0301", "\u0301", "k", "5 k", "\u212a", "å", "ångström", "ω", "ǆemal", "ǅ",
    "😀🎉", "𐐨", "𐐀", "50%_off", "%", "_", "back\\slash", "\\", "\t", '"near"', 'json": [1',
    "1, 2", "\x00 byte", "\x00", "then more", "zero\u200bwidth", "one\nline", "ends\npart",
    "get_weather({", 'weather({"city', '"city": "zürich"', "zürich", "ZÜRICH", "(", "{", ")",
    "σας", "ΣΑΣ", "zanzibar", "sess", "séß", " ", "nothing-here", '"query": "straße"',
    "search_call(", "one ends", "part two", "e", "\u202e",
]


def agents_items(i: int, *, nul: bool = True) -> list[dict[str, Any]]:
    texts = [t for t in TEXTS if nul or "\x00" not in t]
    items: list[dict[str, Any]] = [
        {"role": "user", "content": texts[(i + j) % len(texts)]} for j in range(3)
    ]
    items += [
        {"type": "message", "role": "assistant", "status": "completed", "id": f"msg_{i}",
         "content": [{"type": "output_text", "text": "part one ends", "annotations": []},
                     {"type": "output_text", "text": "part two starts ΣΑΣ", "annotations": []}]},
        {"type": "function_call", "call_id": f"c{i}", "name": "get_weather",
         "arguments": '{"city": "Zürich"}'},
        {"type": "function_call_output", "call_id": f"c{i}", "output": "Sunny in ZÜRICH"},
        {"type": "web_search_call", "id": f"ws_{i}", "status": "completed",
         "action": {"type": "search", "query": "Straße"}},
    ]
    return items


def flux_messages(i: int, *, nul: bool = True) -> list[dict[str, Any]]:
    texts = [t for t in TEXTS if nul or "\x00" not in t]
    return [{"role": "user" if j % 2 == 0 else "assistant", "content": texts[(i + j) % len(texts)]}
            for j in range(5)]


SESSIONS = ["sess-00", "séß-İ 😀", "sess-02", "ΣΑΣ-3", "sess-04", "plain-5"]


async def write_sqlite(kind: str, path: Path) -> None:
    make = flux_messages if kind == "flux" else agents_items
    data = {sid: make(i) for i, sid in enumerate(SESSIONS)}
    await asyncio.to_thread(write_flux if kind == "flux" else write_agents, path, data)


async def write_postgres(kind: str, url: str, *, ensure_ascii: bool = True) -> None:
    if kind == "flux":  # Postgres text holds no NUL character
        store = await open_store(url, OpenOptions(create="flux"))
        try:
            for i, sid in enumerate(SESSIONS):
                await store.writer.add_messages(sid, flux_messages(i, nul=False))
        finally:
            await store.close()
        return
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    try:
        for i, sid in enumerate(SESSIONS):
            s = SQLAlchemySession(sid, engine=engine, create_tables=True, ensure_ascii=ensure_ascii)
            await s.add_items(agents_items(i))  # type: ignore[arg-type]
    finally:
        await engine.dispose()


def listed(result: Any) -> list[tuple[Any, ...]]:
    return [(h.session_id, h.message_id, h.role, h.snippet, h.start, h.length) for h in result.hits]


class Counting:
    """The real store, counting the messages it hands to the search (to see that the
    database narrowed them); everything else goes to the store."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.read = 0

    @property
    def text_filter(self) -> Counting:  # the roles it stands in for
        return self

    @property
    def feed(self) -> Counting:
        return self

    def __getattr__(self, name: str) -> Any:
        # the roles' other members, else what the store is (all parts of one store)
        for part in (self._store.feed, self._store.text_filter):
            if part is not None and hasattr(part, name):
                return getattr(part, name)
        return getattr(self._store, name)

    async def search_messages(self, text: str, limit: int | None = None) -> Any:
        async with contextlib.aclosing(self._store.text_filter.search_messages(text, limit)) as batches:
            async for batch in batches:
                self.read += len(batch)
                yield batch

    async def messages_after(self, *args: Any, **kwargs: Any) -> Any:
        rows = await self._store.feed.messages_after(*args, **kwargs)
        self.read += len(rows)
        return rows


async def assert_scan_equals_full_scan(store: Any) -> None:
    total = nul = 0
    async for _sid, m in _every_message(store):
        total += 1
        nul += "\x00" in m.text  # (SQLite's LIKE ends a text there: such rows are let through)
    found_any = 0
    for needle in NEEDLES:
        every = await full_scan(store, needle)
        counted = Counting(store)
        narrowed = await scan(counted, needle)
        assert narrowed.path == "scan"
        assert listed(narrowed) == listed(every), repr(needle)
        found_any += bool(every.hits)
        for limit in (1, 3):
            part = await scan(store, needle, limit=limit)
            assert listed(part) == listed(every)[:limit], (needle, limit)
            assert part.truncated == (len(every.hits) > limit), (needle, limit)
        if needle in ("zanzibar", "nothing-here", "ǆemal", "zürich"):
            # the database let through only the rows holding it (and none to spare)
            hits = sum(h.message_id is not None for h in every.hits)
            assert hits <= counted.read <= hits + nul < total, needle
    assert found_any > len(NEEDLES) * 2 // 3  # the corpus holds most needles


async def _every_message(store: Any) -> Any:
    after = 0
    while rows := await store.feed.messages_after(after, limit=1000):
        for sid, m in rows:
            yield sid, m
        after = max(int(m.id) for _s, m in rows)


@pytest.mark.parametrize("kind", ["flux", "agents"])
async def test_sqlite_scan_equals_reading_every_message(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    await write_sqlite(kind, path)
    store = await open_store(str(path))
    try:
        await assert_scan_equals_full_scan(store)
    finally:
        await store.close()


@pytest.mark.parametrize(("kind", "ascii_json"), [("flux", True), ("agents", True), ("agents", False)])
async def test_postgres_scan_equals_reading_every_message(kind: str, ascii_json: bool, pg_url: str) -> None:
    await write_postgres(kind, pg_url, ensure_ascii=ascii_json)
    store = await open_store(pg_url)
    try:
        assert await store.server_index.server_text_index() is None  # no trigram index: a scan
        result = await search(store, "zanzibar")
        assert result.path == "scan" and "no trigram index" in result.notes[0]
        await assert_scan_equals_full_scan(store)
    finally:
        await store.close()


def test_the_folding_facts_the_patterns_rely_on() -> None:
    # str.lower over every code point: which characters fold to several, which fold to an
    # ASCII letter from beyond ASCII, and that a cased letter's other forms share its plane
    # and that an uncased one (upper() == itself) is the fold of nothing else.
    long_folds, to_ascii = set(), set()
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        ch = chr(code)
        low = ch.lower()
        if len(low) > 1:
            long_folds.add(low)
            continue
        if low == ch:
            continue
        assert fold(low) == low
        if low.isascii():
            if not ch.isascii():
                to_ascii.add(low)
            continue
        assert low.upper() != low, (hex(code), low)
        assert (code > 0xFFFF) == (ord(low) > 0xFFFF), hex(code)
    assert long_folds == set(LONG_FOLDS)
    assert to_ascii == set(ASCII_FROM_OTHERS)


def test_a_huge_text_is_searched_a_slice_at_a_time_with_the_same_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    # (no folded copy of a 50 MB text: benchmarks/bench_huge_items.py measures the memory)
    import random

    from fluxgui.core.hits import find_folded
    from fluxgui.services.index import query

    monkeypatch.setattr(query, "SLICE_CHARS", 7)
    rng = random.Random(3)
    alphabet = list("abAB İi\u0307ßẞkK\u212aΣσς")
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(8, 40)))
        needle = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4)))
        hit = query.text_hit("s", 1, "user", text, needle)
        at = find_folded(text, needle)
        assert (hit is None) == (at is None), (text, needle)
        if hit is not None:
            assert hit == query.Hit("s", 1, "user", *query.snippet(text, *at), at[1])
