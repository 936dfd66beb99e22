"""Building and updating a store's index, incrementally, without Qt.

Two ways to follow a store, chosen by what it declares:

* a store with a ``feed`` role (the SQL formats: ids increase store-wide, never reused):
  new rows are read by id above the watermark (``messages_after``), a batch per
  transaction that also moves the watermark; then the store's per-session (count, last
  id) marks (``session_marks``, one query) are compared with the index's own: a session
  the store no longer has is dropped, one whose marks differ (rows deleted, cleared,
  moved by an insert) is read again whole — looked for only when the store's row count
  (``message_total``) differs from the index's. Neither library updates a row in place;
  an edit fluxgui makes in place is told with :func:`note_changed`.
* otherwise (Redis lists, JSON folders): the session list's own change marker — message
  count and last activity (the hash's ``updated_at``, the file's ``saved_at``) — names
  the sessions to read again. A session read while its last activity was recent is read
  again at the next update (``updated_at`` counts whole seconds: a pop and an add within
  one second keep both count and time).

An encrypted item is recorded without its text (see :mod:`.indexfile`). Blocking work
on the index file runs in a worker thread; the store is read on the caller's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fluxgui.core.model import Message
from fluxgui.core.roles import Feed, Store

from .failures import IndexUnavailable, after_failure, remove
from .indexfile import IndexFile, Record, index_path

#: rows per ``messages_after`` call (and per index transaction) while building: big
#: transactions make few, big FTS5 segments (less merging)
BATCH = 10_000
#: ``progress(done, total)``: messages indexed so far and in all (``None``: unknown)
Progress = Callable[[int, int | None], None]


@dataclass
class UpdateReport:
    """What an update did."""

    added: int = 0
    reindexed: int = 0
    dropped: int = 0
    seconds: float = 0.0
    built: bool = False  # this update finished a first build
    #: where a damaged index file was moved before this update built it anew ("": none)
    set_aside: str = ""


def sealed(message: Message) -> bool:
    """Whether ``message`` was stored encrypted (an ``EncryptedSession`` envelope)."""
    return isinstance(message.metadata, dict) and "encryption" in message.metadata


def searchable_text(message: Message) -> str | None:
    """The text a search looks in: what a person reads; ``None`` for an encrypted item
    that did not open (its placeholder is not the item's text)."""
    if sealed(message):
        enc = message.metadata.get("encryption") if message.metadata else None
        state = enc.get("state") if isinstance(enc, dict) else None
        if state in ("locked", "unreadable"):
            return None
    return message.text


def record(sid: str, m: Message, *, rid: int | None, encrypted: bool) -> Record:
    """The index row of a message: never the clear text of an encrypted item."""
    text = None if encrypted and sealed(m) else m.text
    return Record(rid, sid, int(m.id), m.role, text)


def open_index(store: Store, *, reading: bool = False) -> IndexFile:
    """The store's index file (made empty when missing; ``reading``: to search it, no
    write lock when it is current). Blocking: a worker thread."""
    return IndexFile.for_store(store.store_key, reading=reading)


def has_index(store: Store) -> bool:
    """Whether an index file exists for the store (it may be unfinished)."""
    return index_path(store.store_key).exists()


async def update_index(
    store: Store,
    index: IndexFile | None = None,
    *,
    progress: Progress | None = None,
    batch: int = BATCH,
) -> UpdateReport:
    """Bring the store's index up to date (building it the first time).
    :class:`~.failures.IndexUnavailable` when its file cannot be used (a damaged file is
    set aside for the next update to build anew)."""
    started = time.perf_counter()
    own = index is None
    idx = index if index is not None else await asyncio.to_thread(open_index, store)
    failure: OSError | sqlite3.Error
    try:
        report = UpdateReport(set_aside=str(idx.set_aside_as or ""))
        was_ready = (await asyncio.to_thread(idx.state)).get("ready") == "1"
        if store.feed is not None:
            await _follow_ids(store, store.feed, idx, report, progress, batch)
        else:
            await _follow_marks(store, idx, report, progress)
        await asyncio.to_thread(idx.set_state, ready="1", mode=_mode(store), updated=str(time.time()))
        report.built = not was_ready
        report.seconds = time.perf_counter() - started
        return report
    except (OSError, sqlite3.Error) as exc:
        if not own:
            raise  # (the caller's file: the caller says it)
        failure = exc
    finally:
        if own:
            await asyncio.to_thread(idx.close)
    raise await asyncio.to_thread(after_failure, idx.path, failure)


def _mode(store: Store) -> str:
    return "watermark" if store.feed is not None else "marks"


async def _follow_ids(
    store: Store, feed: Feed, idx: IndexFile, report: UpdateReport, progress: Progress | None, batch: int
) -> None:
    encrypted = store.traits.encryption
    state = await asyncio.to_thread(idx.state)
    watermark = int(state.get("watermark") or 0)
    total: int | None = None
    done = 0
    if progress is not None:
        marks = await feed.session_marks()
        total = sum(n for n, _last in marks.values())
        done = await asyncio.to_thread(idx.message_count)
        progress(done, total)
    # The next batch is read from the store while the last one is written to the index
    # (a worker thread; SQLite tokenises without holding the GIL): one write in flight.
    read_from = watermark
    writing: asyncio.Future[tuple[bool, int, int]] | None = None

    def write(rows: list[tuple[str, Message]], top: int, expect: int) -> tuple[bool, int, int]:
        recs = [record(sid, m, rid=int(m.id), encrypted=encrypted) for sid, m in rows]
        return idx.add(recs, watermark=top, expect=expect), top, len(recs)

    try:
        while True:
            rows = await feed.messages_after(read_from, limit=batch)
            if writing is not None:
                written, writing = writing, None
                ok, top_written, n = await written
                if not ok:
                    # Another process moved the watermark: carry on from where it is.
                    state = await asyncio.to_thread(idx.state)
                    watermark = read_from = int(state.get("watermark") or 0)
                    continue
                watermark = top_written
                report.added += n
                done += n
                if progress is not None:
                    progress(done, max(total or 0, done))
            if not rows:
                break
            top = max(int(m.id) for _sid, m in rows)
            writing = asyncio.ensure_future(asyncio.to_thread(write, rows, top, watermark))
            read_from = top
    finally:
        if writing is not None:  # cancelled: let the transaction in flight end first
            await asyncio.wait({writing})
    # Sessions changed behind the watermark: deleted, cleared, rows moved or removed.
    # Ids only grow and are never reused, so each of those changes the number of rows
    # the store holds against the index's, as does a row a busy server committed late,
    # below the watermark (an edit fluxgui makes in place takes its session out of the
    # index: note_changed): when they agree, one COUNT saves reading every session's
    # marks (5 ms against 68 on a million rows on SQLite; 23 ms against 148 on Postgres).
    # Only a deletion and a late row between two updates would cancel out there.
    if await feed.message_total() == await asyncio.to_thread(idx.total):
        if progress is not None:
            progress(done, max(total or 0, done))
        return
    marks = await feed.session_marks()
    gone, changed = await asyncio.to_thread(_differences, idx, marks)
    if gone:
        await asyncio.to_thread(idx.replace_sessions, {sid: [] for sid in gone})
        report.dropped += len(gone)
    for sid in changed:
        recs = []
        after = 0
        while rows := await feed.messages_after(after, limit=batch, session_id=sid):
            recs += [record(s, m, rid=int(m.id), encrypted=encrypted) for s, m in rows]
            after = max(int(m.id) for _s, m in rows)
        await asyncio.to_thread(idx.replace_sessions, {sid: recs})
        report.reindexed += 1
    if progress is not None:
        progress(done, max(total or 0, done))


def _differences(idx: IndexFile, marks: dict[str, tuple[int, int]]) -> tuple[list[str], list[str]]:
    """The sessions the index holds that the store no longer has, and those whose
    (count, last id) marks differ from the index's own (blocking: a worker thread)."""
    held = idx.sessions()
    gone = [sid for sid in held if sid not in marks]
    changed = [sid for sid, m in marks.items() if held.get(sid, (None, None))[:2] != m]
    return gone, changed


#: a session whose last activity is this recent (seconds) when the listing starts is read
#: again at the next update: its marker may not move for a change still to come
RACY_SECONDS = 5.0
#: what a racy session's recorded marker ends with (never equal to a listed one)
_RACY = " racy"


def _racy(updated_at: str | None, started: float) -> bool:
    """Whether a session last active at ``updated_at`` may still change without its
    marker moving: Redis's ``updated_at`` has one-second resolution (and a pop does not
    touch it), so a pop and an add within the second the index read the session leave
    count and time as they were. As git's "racily clean" files: a marker no older than
    the read (with a margin for the writers' clocks) is not trusted."""
    if not updated_at:
        return False
    from datetime import datetime

    try:
        when = datetime.fromisoformat(updated_at).timestamp()  # (naive: local time)
    except (ValueError, OverflowError, OSError):
        return False
    return when >= started - RACY_SECONDS


async def _follow_marks(
    store: Store, idx: IndexFile, report: UpdateReport, progress: Progress | None
) -> None:
    encrypted = store.traits.encryption
    marks: dict[str, str] = {}
    counts: dict[str, int] = {}
    racy: set[str] = set()
    started = time.time()
    cursor = None
    while True:
        page = await store.reader.list_sessions(limit=500, cursor=cursor)
        for s in page.sessions:
            marks[s.id] = json.dumps([s.messages, s.updated_at])
            counts[s.id] = s.messages
            if _racy(s.updated_at, started):
                racy.add(s.id)
        cursor = page.cursor
        if cursor is None:
            break
    held = await asyncio.to_thread(idx.sessions)
    gone = [sid for sid in held if sid not in marks]
    if gone:
        await asyncio.to_thread(idx.replace_sessions, {sid: [] for sid in gone})
        report.dropped += len(gone)
    todo = [sid for sid, mark in marks.items() if held.get(sid, (0, 0, 0, None))[3] != mark]
    total = sum(counts.values())
    done = total - sum(counts[sid] for sid in todo)
    if progress is not None:
        progress(done, total)
    for sid in todo:
        recs: list[Record] = []
        async for messages in store.reader.iter_messages(sid):
            recs += [record(sid, m, rid=None, encrypted=encrypted) for m in messages]
        mark = marks[sid] + _RACY if sid in racy else marks[sid]
        await asyncio.to_thread(idx.replace_sessions, {sid: recs}, {sid: mark})
        report.added += len(recs)
        report.reindexed += 1
        done += counts[sid]
        if progress is not None:
            progress(done, total)


def _forget(store_key: str, session_ids: list[str]) -> None:
    path = index_path(store_key)
    if not path.exists():
        return
    try:
        idx = IndexFile(path, store_key)
    except IndexUnavailable:
        _drop_file(path)
        return
    try:
        idx.replace_sessions({sid: [] for sid in session_ids})
        return
    except (OSError, sqlite3.Error):
        pass
    finally:
        idx.close()
    _drop_file(path)


def _drop_file(path: Path) -> None:
    """An index that could not be told of an edit is thrown away (it would find the old
    text), if it can be: the next search builds it anew. The edit stands either way."""
    with contextlib.suppress(IndexUnavailable):
        remove(path)


async def note_changed(store: Store, session_ids: list[str]) -> None:
    """Tell the store's index (if there is one) that fluxgui changed these sessions in
    place (an edit keeps ids and counts): the next update reads them again."""
    if session_ids and has_index(store):
        await asyncio.to_thread(_forget, store.store_key, list(session_ids))
