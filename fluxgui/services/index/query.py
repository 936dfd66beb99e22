"""Searching a store for messages: through the local index, the server, or a scan.

Every path gives :class:`fluxgui.core.hits.Hit` values and the same matches: the case-
folded needle inside the case-folded text a person reads
(:func:`fluxgui.core.hits.find_folded`), or inside the session id (a hit without a
message id). Which path a search took is said (:attr:`SearchResult.path`):

* ``"index"`` — the local trigram index (needles of three characters or more), brought up
  to date first unless told not to; encrypted items are never in it: with the key their
  sessions are scanned, without it they are not searched and the result says so;
* ``"server"`` — a Postgres store whose text column has a ``pg_trgm`` index: the server's
  ``ILIKE`` finds the candidates, each checked here;
* ``"scan"`` — no index (short needles, none built, or the caller asked for it): on the
  SQL stores the database's ``LIKE``/``ILIKE`` narrows the rows and only those are read
  and checked; elsewhere every message of every session is read (:func:`full_scan`, the
  baseline every path equals).

Every path gives the hits in one order (:func:`full_scan` says it), so ``limit`` keeps
the same ones whichever path answers: the hits on session ids first, by session id; then
the messages, newest first — by id, highest first, where ids grow store-wide (the SQL
formats); elsewhere sessions most recently active first, each one's newest first.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncGenerator, Iterable
from dataclasses import dataclass, field
from typing import Literal

from fluxgui.core.hits import Hit, find_folded, snippet
from fluxgui.core.model import Message
from fluxgui.core.roles import Store, TextFilter

from .failures import IndexUnavailable, after_failure, damaged_note
from .indexfile import IndexFile, fold, peek_state
from .update import has_index, open_index, searchable_text, sealed, update_index

Path = Literal["index", "scan", "server"]
#: needles shorter than this (case folded) are searched by scanning: a trigram index
#: cannot look them up
MIN_INDEXED = 3
#: a text longer than this (characters) is searched a slice at a time
SLICE_CHARS = 1_000_000


@dataclass
class SearchResult:
    """Hits in the one order of every path (see the module text); ``path`` is how they
    were found; ``notes`` are sentences for the user (what was not searched, and why)."""

    hits: list[Hit]
    path: Path
    notes: list[str] = field(default_factory=list)
    #: more hits exist than ``limit`` let through
    truncated: bool = False

    def session_ids(self) -> list[str]:
        """The sessions hit, each once, in the order of their first hit."""
        return list(dict.fromkeys(h.session_id for h in self.hits))

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "hits": [h.to_dict() for h in self.hits],
            "notes": self.notes,
            "truncated": self.truncated,
        }


def message_hit(session_id: str, m: Message, needle: str) -> Hit | None:
    """The hit of ``needle`` in a message, ``None`` when it does not match."""
    text = searchable_text(m)
    return text_hit(session_id, int(m.id), m.role, text, needle) if text else None


def text_hit(sid: str, message_id: int | None, role: str, text: str, needle: str) -> Hit | None:
    at = find_folded(text, needle) if len(text) <= SLICE_CHARS else _find_in_slices(text, needle)
    if at is None:
        return None
    piece, start = snippet(text, *at)
    return Hit(sid, message_id, role, piece, start, at[1])


def _find_in_slices(text: str, needle: str) -> tuple[int, int] | None:
    """:func:`find_folded` on a huge text a slice at a time (each slice overlapping the
    next by the longest span a match can have), so that no folded copy of all of it is
    made (a 50 MB tool output would be held twice). A text holding a capital sigma,
    whose fold depends on the letters around it, is folded whole."""
    if "\u03a3" in text:
        return find_folded(text, needle)
    span = len(fold(needle))  # (each character folds to one at least)
    for start in range(0, len(text), SLICE_CHARS):
        at = find_folded(text[start : start + SLICE_CHARS + span], needle)
        if at is not None:
            return start + at[0], at[1]
    return None


def id_hit(session_id: str, needle: str) -> Hit | None:
    """A hit on the session id itself."""
    return text_hit(session_id, None, "", session_id, needle)


def id_hits(session_ids: Iterable[str], needle: str) -> list[Hit]:
    """The hits on these session ids, in their order (by session id)."""
    found = (id_hit(sid, needle) for sid in sorted(set(session_ids)))
    return [h for h in found if h is not None]


async def index_ready(store: Store) -> bool:
    """Whether the store's index finished building once (it may lag the store a little:
    the window updates it when the store changes)."""
    state = await asyncio.to_thread(peek_state, store.store_key)
    return state.get("ready") == "1"


async def found_session_ids(
    store: Store, needle: str, hits: dict[str, int] | None = None
) -> AsyncGenerator[str, None]:
    """The window's search: ids of the sessions whose id or messages hold ``needle``, from
    the index when it is ready (not updated here); on a server with a trigram index
    (which gets no local index) from the server's candidates; else by the store's own
    search (a scan) until the index is ready. ``hits`` receives each session's first
    matching message id, in stored order (index and server paths), for opening the
    session at it. An index that cannot be used is passed by (the store's search)."""
    result = None
    if indexable(needle) and await index_ready(store):
        with contextlib.suppress(IndexUnavailable):
            result = await _indexed(store, needle, None, update=False)
    if result is not None:
        for h in result.hits:  # each session's newest first: it keeps its first match
            if hits is not None and h.message_id is not None:
                hits[h.session_id] = h.message_id
        for sid in result.session_ids():
            yield sid
        return
    narrow = store.text_filter
    if (
        indexable(needle) and narrow is not None and store.server_index is not None
        and await store.server_index.server_text_index()
    ):
        async with contextlib.aclosing(_server_session_ids(narrow, needle, hits)) as ids:
            async for sid in ids:
                yield sid
        return
    async with contextlib.aclosing(store.reader.search_session_ids(needle)) as ids:
        async for sid in ids:
            yield sid


async def _server_session_ids(
    narrow: TextFilter, needle: str, hits: dict[str, int] | None
) -> AsyncGenerator[str, None]:
    """The sessions whose messages hold ``needle`` (the server's trigram index finds the
    candidates, each checked here), then those whose id does (``ids_holding``: a store's
    own search asks for both in one ``OR``, which keeps the server from its index)."""
    seen: set[str] = set()
    async with contextlib.aclosing(narrow.search_messages(needle, None)) as batches:
        async for batch in batches:  # newest first: each session keeps its first match
            for sid, m in batch:
                if message_hit(sid, m, needle) is None:
                    continue
                if hits is not None:
                    hits[sid] = int(m.id)
                if sid not in seen:
                    seen.add(sid)
                    yield sid
    for sid in await narrow.ids_holding(needle):
        if sid not in seen and id_hit(sid, needle) is not None:
            seen.add(sid)
            yield sid


def indexable(needle: str) -> bool:
    """Whether the index can answer ``needle`` (three characters or more, folded)."""
    return len(fold(needle)) >= MIN_INDEXED


async def search(
    store: Store,
    needle: str,
    *,
    limit: int | None = None,
    use: Literal["auto", "index", "scan"] = "auto",
    update: bool = True,
) -> SearchResult:
    """Hits of ``needle`` (see the module text). ``use="auto"``: the server's trigram
    index when there is one, else the local index when one exists (updated first when
    ``update``), else a scan; ``"index"`` builds the index when missing."""
    notes: list[str] = []
    if use != "scan" and indexable(needle):
        server, narrow = store.server_index, store.text_filter
        if server is not None and narrow is not None and use == "auto":
            if await server.server_text_index():
                return await _narrowed(store, narrow, needle, limit, "server")
        if use == "index" or has_index(store):
            try:
                return await _indexed(store, needle, limit, update=update)
            except IndexUnavailable as exc:  # a cache that cannot be used: scan
                notes.append(f"searched by scanning: {exc}")
        if server is not None:
            notes.append(
                "searched by scanning: the server has no trigram index on the text column "
                f"(a DBA could run: {server.text_index_advice()}), and there is no local "
                "index (fluxgui index TARGET builds one)"
            )
        else:
            notes.append("searched by scanning: no index yet (fluxgui index TARGET builds one)")
    elif use != "scan":
        notes.append(f"searched by scanning: the index needs {MIN_INDEXED} characters or more")
    result = await scan(store, needle, limit=limit)
    result.notes[:0] = notes
    return result


def _key_notes(store: Store, sessions: int | None = None) -> list[str]:
    if store.needs_key and not store.has_key:
        where = f" ({sessions} sessions)" if sessions else ""
        return [f"encrypted items{where} were not searched: give the key (--key or FLUXGUI_KEY)"]
    return []


class _Collector:
    def __init__(self, limit: int | None) -> None:
        self.hits: list[Hit] = []
        self.limit = limit
        self.truncated = False

    def add(self, hit: Hit | None) -> bool:
        """Keep ``hit``; ``False`` once the limit is passed (stop looking)."""
        if hit is None:
            return True
        if self.limit is not None and len(self.hits) >= self.limit:
            self.truncated = True
            return False
        self.hits.append(hit)
        return True

    def add_all(self, hits: Iterable[Hit | None]) -> bool:
        return all(self.add(h) for h in hits)

    @property
    def wanted(self) -> int | None:
        """The hits still wanted (``None``: all)."""
        return None if self.limit is None else max(0, self.limit - len(self.hits))


async def scan(store: Store, needle: str, *, limit: int | None = None) -> SearchResult:
    """The hits without an index: on a store whose database narrows a text search (the SQL
    formats) only the rows its ``LIKE``/``ILIKE`` lets through are read and checked (and
    the session ids it finds); elsewhere every message (:func:`full_scan`)."""
    if store.text_filter is not None:
        return await _narrowed(store, store.text_filter, needle, limit, "scan")
    return await full_scan(store, needle, limit=limit)


async def _narrowed(
    store: Store, narrow: TextFilter, needle: str, limit: int | None, path: Path
) -> SearchResult:
    """The session ids and the messages the database lets through, each checked here:
    the ``"scan"`` path of the SQL stores, and the ``"server"`` path (whose ``ILIKE`` a
    trigram index answers)."""
    # The session ids are asked for meanwhile (another connection on a server).
    on_ids = asyncio.ensure_future(narrow.ids_holding(needle))
    try:
        found: list[Hit] = []  # message hits, newest first: one more than the limit at most
        async with contextlib.aclosing(narrow.search_messages(needle, limit)) as batches:
            async for batch in batches:
                found += [h for h in (message_hit(sid, m, needle) for sid, m in batch) if h is not None]
                if limit is not None and len(found) > limit:
                    break
        out = _Collector(limit)
        if out.add_all(id_hits(await on_ids, needle)):
            out.add_all(found)
    finally:
        if not on_ids.done():
            on_ids.cancel()
            await asyncio.wait({on_ids})
    return SearchResult(out.hits, path, _key_notes(store), out.truncated)


async def full_scan(store: Store, needle: str, *, limit: int | None = None) -> SearchResult:
    """Every session and every message read and checked: the baseline every other path
    equals, hits in the order every path gives (see the module text)."""
    out = _Collector(limit)
    sessions = [sid async for sid in _all_sessions(store)]  # most recently active first
    if out.add_all(id_hits(sessions, needle)):
        if store.feed is not None:
            found: list[Hit] = []
            after = 0
            while rows := await store.feed.messages_after(after, limit=1000):
                found += await _checked(rows, needle)
                after = max(int(m.id) for _s, m in rows)
            out.add_all(reversed(found))  # newest first
        else:
            for sid in sessions:
                hits: list[Hit] = []
                async with contextlib.aclosing(store.reader.iter_messages(sid)) as pages:
                    async for page in pages:
                        hits += await _checked([(sid, m) for m in page], needle)
                if not out.add_all(reversed(hits)):  # the session's newest first
                    break
    return SearchResult(out.hits, "scan", _key_notes(store), out.truncated)


async def _checked(rows: list[tuple[str, Message]], needle: str) -> list[Hit]:
    """The hits among ``rows``, in their order (many are checked in a worker thread)."""

    def check() -> list[Hit]:
        return [h for h in (message_hit(sid, m, needle) for sid, m in rows) if h is not None]

    return await asyncio.to_thread(check) if len(rows) > 200 else check()


async def _all_sessions(store: Store) -> AsyncGenerator[str, None]:
    cursor = None
    while True:
        page = await store.reader.list_sessions(limit=500, cursor=cursor)
        for s in page.sessions:
            yield s.id
        cursor = page.cursor
        if cursor is None:
            return


async def session_messages(store: Store, sid: str) -> AsyncGenerator[list[Message], None]:
    """A session's messages as the index reads them: every row by id where ids increase
    store-wide (every branch's), else the session's messages in order."""
    if store.feed is not None:
        after = 0
        while rows := await store.feed.messages_after(after, limit=1000, session_id=sid):
            yield [m for _s, m in rows]
            after = max(int(m.id) for _s, m in rows)
        return
    async for page in store.reader.iter_messages(sid):
        yield page


async def _indexed(store: Store, needle: str, limit: int | None, *, update: bool) -> SearchResult:
    idx: IndexFile = await asyncio.to_thread(lambda: open_index(store, reading=not update))
    failure: OSError | sqlite3.Error
    try:
        if update:
            await update_index(store, idx)
        by_id = store.feed is not None
        # one hand-off: the session ids, the index's candidates and the sealed sessions;
        # where ids grow store-wide the index's order is the order wanted, and one hit
        # more than the limit is enough to know there are more
        want = None if limit is None or not by_id else limit + 1
        on_ids, found, sealed_sessions = await asyncio.to_thread(_from_index, idx, needle, want)
        notes = [damaged_note(idx.set_aside_as)] if idx.set_aside_as is not None else []
        if sealed_sessions and store.has_key:
            for sid in sealed_sessions:
                found += await _sealed_hits(store, sid, needle)
        elif sealed_sessions:
            notes += _key_notes(store, len(sealed_sessions)) or [
                f"encrypted items ({len(sealed_sessions)} sessions) were not searched"
            ]
        out = _Collector(limit)
        if out.add_all(on_ids):
            out.add_all(await _in_order(store, found, sealed=bool(sealed_sessions and store.has_key)))
        return SearchResult(out.hits, "index", notes, out.truncated)
    except (OSError, sqlite3.Error) as exc:
        failure = exc
    finally:
        await asyncio.to_thread(idx.close)
    raise await asyncio.to_thread(after_failure, idx.path, failure)


async def _in_order(store: Store, hits: list[Hit], *, sealed: bool) -> list[Hit]:
    """Message hits in the order of every path (the index gives them by its own row
    numbers, which are the store's ids only where ids grow store-wide)."""
    if store.feed is not None:
        if sealed:  # the sealed sessions' hits were added after the index's
            hits.sort(key=lambda h: -(h.message_id or 0))
        return hits
    sessions = {sid: rank for rank, sid in enumerate([s async for s in _all_sessions(store)])}
    last = len(sessions)
    return sorted(hits, key=lambda h: (sessions.get(h.session_id, last), -(h.message_id or 0)))


def _from_index(idx: IndexFile, needle: str, want: int | None) -> tuple[list[Hit], list[Hit], list[str]]:
    """The hits on session ids, up to ``want`` hits on messages (the index's order:
    newest first), and the sessions holding encrypted rows."""
    folded = fold(needle)
    # most ids do not hold the needle: the plain test first, the hit only for those
    on_ids = id_hits((sid for sid in idx.session_ids() if folded in fold(sid)), needle)
    if want is not None:
        want = max(0, want - len(on_ids))
    found: list[Hit] = []
    if want != 0:
        gen = idx.matches(needle)
        try:
            for rows in gen:
                # every candidate is checked (and its snippet cut) on the stored text
                found += [h for h in (text_hit(sid, mid, role, text, needle)
                                      for _rid, sid, mid, role, text in rows) if h is not None]
                if want is not None and len(found) >= want:
                    del found[want:]
                    break
        finally:
            gen.close()
    return on_ids, found, idx.sealed_sessions()


async def _sealed_hits(store: Store, sid: str, needle: str) -> list[Hit]:
    """The hits among the encrypted items of one session, decrypted with the key."""
    hits: list[Hit] = []
    async with contextlib.aclosing(session_messages(store, sid)) as pages:
        async for page in pages:
            hits += [h for h in (message_hit(sid, m, needle) for m in page if sealed(m)) if h is not None]
    return hits
