"""Searching a store for messages: through the local index, the server, or a scan.

Every path gives :class:`fluxgui.core.hits.Hit` values and the same matches: the case-
folded needle inside the case-folded text a person reads
(:func:`fluxgui.core.hits.find_folded`), or inside the session id (a hit without a
message id). Which path a search took is said (:attr:`SearchResult.path`):

* ``"index"`` — the local trigram index (needles of three characters or more), brought up
  to date first unless told not to; encrypted items are never in it: with the key their
  sessions are scanned, without it they are not searched and the result says so;
* ``"server"`` — a Postgres store whose text column has a ``pg_trgm`` index: the server's
  ``ILIKE`` finds the candidates, each checked here (message text only: session ids are
  not matched on this path);
* ``"scan"`` — every message of every session read and checked (short needles, no
  index, or the caller asked for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal

from fluxgui.core.hits import Hit, find_folded, snippet
from fluxgui.core.model import Message
from fluxgui.core.ports import SessionStore

from .failures import IndexUnavailable, after_failure, damaged_note
from .indexfile import IndexFile, fold, peek_state
from .update import has_index, open_index, searchable_text, sealed, update_index

Path = Literal["index", "scan", "server"]
#: needles shorter than this (case folded) are searched by scanning: a trigram index
#: cannot look them up
MIN_INDEXED = 3


@dataclass
class SearchResult:
    """Hits, newest first within each path's order; ``path`` is how they were found;
    ``notes`` are sentences for the user (what was not searched, and why)."""

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
    at = find_folded(text, needle)
    if at is None:
        return None
    piece, start = snippet(text, *at)
    return Hit(sid, message_id, role, piece, start, at[1])


def id_hit(session_id: str, needle: str) -> Hit | None:
    """A hit on the session id itself."""
    return text_hit(session_id, None, "", session_id, needle)


async def index_ready(store: SessionStore) -> bool:
    """Whether the store's index finished building once (it may lag the store a little:
    the window updates it when the store changes)."""
    state = await asyncio.to_thread(peek_state, store.store_key)
    return state.get("ready") == "1"


async def found_session_ids(
    store: SessionStore, needle: str, hits: dict[str, int] | None = None
) -> AsyncIterator[str]:
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
        for h in result.hits:  # newest first: each session keeps its first match
            if hits is not None and h.message_id is not None:
                hits[h.session_id] = h.message_id
        for sid in result.session_ids():
            yield sid
        return
    if indexable(needle) and store.capabilities.server_search and await store.server_text_index():
        async with contextlib.aclosing(_server_session_ids(store, needle, hits)) as ids:
            async for sid in ids:
                yield sid
        return
    async with contextlib.aclosing(store.search_session_ids(needle)) as ids:
        async for sid in ids:
            yield sid


async def _server_session_ids(
    store: SessionStore, needle: str, hits: dict[str, int] | None
) -> AsyncIterator[str]:
    """The sessions whose messages hold ``needle`` (the server's trigram index finds the
    candidates, each checked here), then those whose id does (``ids_holding``: a store's
    own search asks for both in one ``OR``, which keeps the server from its index)."""
    seen: set[str] = set()
    async with contextlib.aclosing(store.search_messages(needle, None)) as batches:
        async for batch in batches:  # newest first: each session keeps its first match
            for sid, m in batch:
                if message_hit(sid, m, needle) is None:
                    continue
                if hits is not None:
                    hits[sid] = int(m.id)
                if sid not in seen:
                    seen.add(sid)
                    yield sid
    for sid in await store.ids_holding(needle):
        if sid not in seen and id_hit(sid, needle) is not None:
            seen.add(sid)
            yield sid


def indexable(needle: str) -> bool:
    """Whether the index can answer ``needle`` (three characters or more, folded)."""
    return len(fold(needle)) >= MIN_INDEXED


async def search(
    store: SessionStore,
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
        caps = store.capabilities
        if caps.server_search and use == "auto":
            if await store.server_text_index():
                return await _server(store, needle, limit)
        if use == "index" or has_index(store):
            try:
                return await _indexed(store, needle, limit, update=update)
            except IndexUnavailable as exc:  # a cache that cannot be used: scan
                notes.append(f"searched by scanning: {exc}")
        if caps.server_search:
            notes.append(
                "searched by scanning: the server has no trigram index on the text column "
                f"(a DBA could run: {store.text_index_advice()}), and there is no local "
                "index (fluxgui index TARGET builds one)"
            )
        else:
            notes.append("searched by scanning: no index yet (fluxgui index TARGET builds one)")
    elif use != "scan":
        notes.append(f"searched by scanning: the index needs {MIN_INDEXED} characters or more")
    result = await scan(store, needle, limit=limit)
    result.notes[:0] = notes
    return result


def _key_notes(store: SessionStore, sessions: int | None = None) -> list[str]:
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


async def scan(store: SessionStore, needle: str, *, limit: int | None = None) -> SearchResult:
    """Every session and every message read and checked, sessions most recently active
    first (the baseline every other path equals)."""
    out = _Collector(limit)
    async for sid in _all_sessions(store):
        if not out.add(id_hit(sid, needle)):
            break
        if not await _scan_session(store, sid, needle, out):
            break
    return SearchResult(out.hits, "scan", _key_notes(store), out.truncated)


async def _all_sessions(store: SessionStore) -> AsyncIterator[str]:
    cursor = None
    while True:
        page = await store.list_sessions(limit=500, cursor=cursor)
        for s in page.sessions:
            yield s.id
        cursor = page.cursor
        if cursor is None:
            return


async def session_messages(store: SessionStore, sid: str) -> AsyncIterator[list[Message]]:
    """A session's messages as the index reads them: every row by id where ids increase
    store-wide (every branch's), else the session's messages in order."""
    if store.capabilities.watermark:
        after = 0
        while rows := await store.messages_after(after, limit=1000, session_id=sid):
            yield [m for _s, m in rows]
            after = max(int(m.id) for _s, m in rows)
        return
    async for page in store.iter_messages(sid):
        yield page


async def _scan_session(store: SessionStore, sid: str, needle: str, out: _Collector) -> bool:
    async with contextlib.aclosing(session_messages(store, sid)) as pages:
        async for page in pages:
            found = await asyncio.to_thread(
                lambda p=page: [message_hit(sid, m, needle) for m in p]
            ) if len(page) > 200 else [message_hit(sid, m, needle) for m in page]
            for hit in found:
                if not out.add(hit):
                    return False
    return True


async def _indexed(store: SessionStore, needle: str, limit: int | None, *, update: bool) -> SearchResult:
    idx: IndexFile = await asyncio.to_thread(lambda: open_index(store, reading=not update))
    failure: OSError | sqlite3.Error
    try:
        if update:
            await update_index(store, idx)
        out = _Collector(limit)
        notes = [damaged_note(idx.set_aside_as)] if idx.set_aside_as is not None else []
        # one hand-off: the session ids, the index's candidates and the sealed sessions
        sealed_sessions = await asyncio.to_thread(_from_index, idx, needle, out)
        if sealed_sessions and store.has_key and not out.truncated:
            for sid in sealed_sessions:
                if not await _scan_sealed(store, sid, needle, out):
                    break
        elif sealed_sessions:
            notes += _key_notes(store, len(sealed_sessions)) or [
                f"encrypted items ({len(sealed_sessions)} sessions) were not searched"
            ]
        return SearchResult(out.hits, "index", notes, out.truncated)
    except (OSError, sqlite3.Error) as exc:
        failure = exc
    finally:
        await asyncio.to_thread(idx.close)
    raise await asyncio.to_thread(after_failure, idx.path, failure)


def _from_index(idx: IndexFile, needle: str, out: _Collector) -> list[str]:
    """Hits on session ids, then on messages, into ``out``; the sessions holding
    encrypted rows."""
    folded = fold(needle)
    for sid in idx.session_ids():
        # most ids do not hold the needle: the plain test first, the hit only for those
        if folded in fold(sid) and not out.add(id_hit(sid, needle)):
            break
    if not out.truncated:
        _index_hits(idx, needle, out)
    return idx.sealed_sessions()


def _index_hits(idx: IndexFile, needle: str, out: _Collector) -> None:
    # Every candidate is checked (and its snippet cut) on the stored text.
    gen = idx.matches(needle)
    try:
        for rows in gen:
            for _rid, sid, mid, role, text in rows:
                if not out.add(text_hit(sid, mid, role, text, needle)):
                    return
    finally:
        gen.close()


async def _scan_sealed(store: SessionStore, sid: str, needle: str, out: _Collector) -> bool:
    """The encrypted items of one session, decrypted with the key and checked."""
    async with contextlib.aclosing(session_messages(store, sid)) as pages:
        async for page in pages:
            for m in page:
                if sealed(m) and not out.add(message_hit(sid, m, needle)):
                    return False
    return True


async def _server(store: SessionStore, needle: str, limit: int | None) -> SearchResult:
    # Message text only: matching session ids would need a pass over every session,
    # which the server's text index cannot speed up.
    out = _Collector(limit)
    async with contextlib.aclosing(store.search_messages(needle, limit)) as batches:
        async for batch in batches:
            if not all(out.add(message_hit(sid, m, needle)) for sid, m in batch):
                break
    return SearchResult(out.hits, "server", _key_notes(store), out.truncated)
