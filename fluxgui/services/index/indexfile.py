"""The index file: one SQLite database per store in fluxgui's cache folder.

Never in the agent's store: the file is ``cache_dir()/index/<sha256 of store_key>.sqlite``,
mode 0600 (``private_file``; SQLite gives its ``-wal``/``-shm`` the same mode).

Tables:

* ``msg(rid, session_id, message_id, role, text)`` — one row per stored message. ``rid``
  is the store's message id where ids increase store-wide (the SQL formats), else a
  number of our own; ``text`` is what a person reads, ``NULL`` for an encrypted item
  (its clear text is never written here: such a row only counts).
* ``fts`` — an FTS5 table with the trigram tokenizer over each message's text *case
  folded* (:func:`fluxgui.core.hits.fold`, as every search compares), contentless, without positions (``detail='none'``: a
  third of the size, twice as fast to build). A query asks for every trigram of the
  folded needle: each row holding the needle is among the candidates, and each
  candidate is checked on its stored text with :func:`fluxgui.core.hits.find_folded`
  (the rule every search path applies).
* ``sess(session_id, n, last_id, sealed, mark)`` — what the index holds of each session
  (count, largest message id, encrypted rows) and the store's change mark it was built
  from (stores without id watermarks).
* ``state(key, value)`` — schema version, the store key, the build mode, the id
  watermark and ``ready`` (the build finished once).

Text that UTF-8 cannot hold — a lone surrogate, which a JSON string can carry (the Agents
SDK's ``json.dumps`` writes ``"\\udc80"``), or an id read from bytes that are not UTF-8 —
is kept exactly: such a value is stored as its ``surrogatepass`` bytes (a BLOB, read back
as the same ``str``), and the FTS table is given U+FFFD in each surrogate's place (a
query leaves out the trigrams that hold one, as for NUL): the candidates are checked on
the exact text, so the index finds what a scan finds. So is a text longer than
``stored.PIECE`` characters, written a piece at a time (see :mod:`.stored`).

Every change is one transaction that also moves the watermark, so a process killed in the
middle of a build (SIGKILL) leaves a consistent file that the next update continues.
All methods are blocking: call them in a worker thread (one lock serialises them).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from fluxgui.core.hits import fold as hits_fold
from fluxgui.core.paths import cache_dir, private_file
from fluxgui.core.undecodable import utf8
from fluxgui.core.walmode import use_wal

from .failures import damaged, set_aside, unavailable
from .stored import (
    as_stored, fts_parts, fts_text, long_text, many, read, read_row, stored, utf8_size, write_long,
)

SCHEMA_VERSION = "4"

_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS state(key TEXT PRIMARY KEY, value TEXT)",
    """CREATE TABLE IF NOT EXISTS sess(
        session_id TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0,
        last_id INTEGER NOT NULL DEFAULT 0, sealed INTEGER NOT NULL DEFAULT 0, mark TEXT)""",
    """CREATE TABLE IF NOT EXISTS msg(
        rid INTEGER PRIMARY KEY, session_id TEXT NOT NULL, message_id INTEGER,
        role TEXT, text TEXT)""",
    "CREATE INDEX IF NOT EXISTS msg_session ON msg(session_id)",
    """CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
        t, tokenize='trigram case_sensitive 1', content='', columnsize=0, detail='none')""",
]

#: rows ``(rid, session_id, message_id, role, text)`` of the index
Rows = list[tuple[int, str, int, str, str]]


@dataclass(slots=True)
class Record:
    """One message as the index keeps it (``text`` ``None``: encrypted, not indexed)."""

    rid: int | None
    session_id: str
    message_id: int
    role: str
    text: str | None


def index_path(store_key: str) -> Path:
    """Where the index of the store named ``store_key`` lives."""
    digest = hashlib.sha256(store_key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return cache_dir() / "index" / f"{digest}.sqlite"


def peek_state(store_key: str) -> dict[str, str]:
    """The state row of the store's index without opening it for writing (empty when
    there is none yet): a build running elsewhere is not waited for."""
    path = index_path(store_key)
    if not path.exists():
        return {}
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return {k: read(v) for k, v in db.execute("SELECT key, value FROM state")}  # type: ignore[misc]
        finally:
            db.close()
    except sqlite3.Error:
        return {}


def fold(text: str) -> str:
    """The text as the index holds it (:func:`fluxgui.core.hits.fold`)."""
    return hits_fold(text)


def _unsearchable(chunk: str) -> bool:
    """Whether a trigram cannot be asked of the FTS table (NUL, a lone surrogate)."""
    return "\x00" in chunk or not utf8(chunk)


def match_query(needle: str) -> str | None:
    """The FTS5 query for the folded ``needle`` (three characters or more): trigrams that
    cover it, each a quoted string — every third one and the last. A row holding the
    needle holds them all; the candidates are checked on their text anyway, and each
    trigram fewer is a posting list fewer to read (a sixteen-letter phrase: a quarter of
    the time of asking for all fourteen). A trigram holding a NUL character cannot be
    written in a query (FTS5 ends the string there) and is left out; ``None`` when every
    trigram holds one (every indexed row is a candidate). So is a trigram holding a lone
    surrogate (the table holds U+FFFD in its place)."""
    folded = fold(needle)
    usable = [i for i in range(len(folded) - 2) if not _unsearchable(folded[i : i + 3])]
    starts: list[int] = []
    for i in usable:
        if not starts or i >= starts[-1] + 3:
            starts.append(i)
    if usable and starts[-1] != usable[-1]:
        starts.append(usable[-1])
    trigrams = dict.fromkeys(folded[i : i + 3] for i in starts)
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in trigrams) or None


class IndexFile:
    """An open index file (see the module text)."""

    def __init__(self, path: Path, store_key: str, *, reading: bool = False) -> None:
        self.path = path
        self.store_key = store_key
        self._lock = threading.Lock()
        #: where a damaged file found at this opening was moved (``None``: it was not)
        self.set_aside_as: Path | None = None
        # A folder that cannot be written, a full disk: IndexUnavailable. A damaged file
        # is set aside and made again (the index is a cache).
        try:
            self._open(reading)
        except (OSError, sqlite3.Error) as exc:
            if not damaged(exc):
                raise unavailable(path, exc) from None
            self.set_aside_as = set_aside(path)
            try:
                self._open(reading)
            except (OSError, sqlite3.Error) as again:
                raise unavailable(path, again) from None

    def _open(self, reading: bool) -> None:
        private_file(self.path)
        self._db = db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout = 30000")
            use_wal(db.execute)  # (another process may be switching the new file)
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA cache_size = -65536")
            with self._lock:
                # A search (``reading``) of a current file takes no write lock: a build
                # running in another process does not make it wait.
                if not (reading and self._current()):
                    self._setup()
        except BaseException:
            db.close()
            raise

    def _current(self) -> bool:
        """Whether the file holds this schema version of this store's index."""
        try:
            state = {k: read(v) for k, v in self._db.execute(
                "SELECT key, value FROM state WHERE key IN ('version', 'store_key')")}
        except sqlite3.Error:
            return False
        return state.get("version") == SCHEMA_VERSION and state.get("store_key") == self.store_key

    @classmethod
    def for_store(cls, store_key: str, *, reading: bool = False) -> IndexFile:
        """The index of the store named ``store_key`` (made empty when missing)."""
        return cls(index_path(store_key), store_key, reading=reading)

    def _setup(self) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for sql in _SCHEMA:
                db.execute(sql)
            state = {k: read(v) for k, v in db.execute("SELECT key, value FROM state")}
            if state and (
                state.get("version") != SCHEMA_VERSION or state.get("store_key") != self.store_key
            ):
                # Another schema, or (a digest collision) another store: start again.
                for table in ("msg", "sess", "state", "fts"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                for sql in _SCHEMA:
                    db.execute(sql)
                state = {}
            if not state:
                db.executemany(
                    "INSERT INTO state(key, value) VALUES (?, ?)",
                    [("version", SCHEMA_VERSION), ("store_key", stored(self.store_key)),
                     ("watermark", "0"), ("ready", "0")],
                )
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- state -----------------------------------------------------------------------

    def state(self) -> dict[str, str]:
        with self._lock:
            return {k: read(v) for k, v in self._db.execute("SELECT key, value FROM state")}  # type: ignore[misc]

    def set_state(self, **values: str) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)", list(values.items())
            )

    def message_count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM msg").fetchone()[0])

    def total(self) -> int:
        """The rows indexed, by the sessions' counts (no pass over the text table)."""
        with self._lock:
            return int(self._db.execute("SELECT COALESCE(SUM(n), 0) FROM sess").fetchone()[0])

    def sessions(self) -> dict[str, tuple[int, int, int, str | None]]:
        """Each indexed session's (count, last id, encrypted rows, mark)."""
        with self._lock:
            rows = self._db.execute("SELECT session_id, n, last_id, sealed, mark FROM sess")
            return {read(r[0]): (int(r[1]), int(r[2]), int(r[3]), read(r[4])) for r in rows}  # type: ignore[misc]

    # -- writing ---------------------------------------------------------------------

    def add(self, records: list[Record], *, watermark: int | None = None, expect: int | None = None) -> bool:
        """Add ``records`` (replacing rows with the same ``rid``) and, with ``watermark``,
        move the watermark, in one transaction. With ``expect``, nothing is written unless
        the watermark still is ``expect`` (another process got there first): ``False``."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                if expect is not None:
                    current = int(db.execute(
                        "SELECT value FROM state WHERE key = 'watermark'").fetchone()[0])
                    if current != expect:
                        db.execute("ROLLBACK")
                        return False
                self._put(records)
                if watermark is not None:
                    db.execute(
                        "UPDATE state SET value = ? WHERE key = 'watermark'", (str(watermark),)
                    )
                db.execute("COMMIT")
                return True
            except BaseException:
                _rollback(db)
                raise

    def replace_sessions(
        self, batches: dict[str, list[Record]], marks: dict[str, str | None] | None = None
    ) -> None:
        """Drop what the index holds of these sessions and add their ``records`` (a session
        given no records is forgotten), recording ``marks``, in one transaction."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                for sid in batches:
                    self._drop(sid)
                self._put([r for records in batches.values() for r in records])
                for sid, mark in (marks or {}).items():
                    db.execute(
                        "INSERT INTO sess(session_id, mark) VALUES (?, ?) "
                        "ON CONFLICT(session_id) DO UPDATE SET mark = excluded.mark",
                        (stored(sid), stored(mark)),
                    )
                db.execute("COMMIT")
            except BaseException:
                _rollback(db)
                raise

    def _drop(self, sid: str) -> None:
        db = self._db
        key = stored(sid)
        rows = db.execute("SELECT rid, text FROM msg WHERE session_id = ? AND text IS NOT NULL", (key,))
        _fts_delete(db, rows)
        db.execute("DELETE FROM msg WHERE session_id = ?", (key,))
        db.execute("DELETE FROM sess WHERE session_id = ?", (key,))

    def _put(self, records: list[Record]) -> None:
        db = self._db
        if not records:
            return
        given = [r.rid for r in records if r.rid is not None]
        touched: set[str] = set()  # sessions whose counts must be recounted
        if given:
            top = db.execute("SELECT MAX(rid) FROM msg").fetchone()[0]
            if top is not None and min(given) <= top:
                # Rows indexed already (a session re-read while new rows came): replace.
                old = db.execute(
                    f"SELECT rid, session_id, text FROM msg WHERE rid IN ({','.join('?' * len(given))})",
                    given,
                ).fetchall()
                _fts_delete(db, ((rid, text) for rid, _sid, text in old if text is not None))
                db.executemany("DELETE FROM msg WHERE rid = ?", ((rid,) for rid, _s, _t in old))
                touched.update(read(sid) for _rid, sid, _t in old)  # type: ignore[misc]
        insert = "INSERT INTO msg(rid, session_id, message_id, role, text) VALUES (?, ?, ?, ?, ?)"
        fts_insert = "INSERT INTO fts(rowid, t) VALUES (?, ?)"
        long = [r for r in records if long_text(r.text)]
        short = [r for r in records if not long_text(r.text)] if long else records
        wrote_bytes = bool(long)  # (a long text is stored as its bytes)
        if len(given) == len(records):
            wrote_bytes |= _insert_all(db, insert, [(r.rid, r.session_id, r.message_id, r.role, r.text) for r in short])
            _insert_all(db, fts_insert, [(r.rid, fts_text(r.text)) for r in short if r.text is not None])
            for r in long:
                _put_long(db, r)
        else:
            cur = db.cursor()
            fts_rows = []
            for r in records:
                if long_text(r.text):
                    _put_long(db, r)
                    continue
                row, odd = as_stored((r.rid, r.session_id, r.message_id, r.role, r.text))
                wrote_bytes |= odd
                cur.execute(insert, row)
                if r.text is not None:
                    fts_rows.append((cur.lastrowid, fts_text(r.text)))
            db.executemany(fts_insert, fts_rows)
        if wrote_bytes:  # (matches() reads such values back only when this says so)
            db.execute("INSERT OR REPLACE INTO state(key, value) VALUES ('bytes', '1')")
        if touched:  # rows were replaced: count those sessions again
            touched.update(r.session_id for r in records)
            db.executemany(
                """INSERT INTO sess(session_id, n, last_id, sealed)
                   SELECT ?1, COUNT(*), COALESCE(MAX(message_id), 0), COUNT(*) - COUNT(text)
                   FROM msg WHERE session_id = ?1
                   ON CONFLICT(session_id) DO UPDATE SET
                     n = excluded.n, last_id = excluded.last_id, sealed = excluded.sealed""",
                ((stored(sid),) for sid in touched),
            )
            return
        # Only new rows: add them to each session's counts (a build's common case; a
        # recount of a 100,000-message session per batch would cost more than the batch).
        counts: dict[str, list[int]] = {}
        for r in records:
            c = counts.setdefault(r.session_id, [0, 0, 0])
            c[0] += 1
            c[1] = max(c[1], r.message_id)
            c[2] += r.text is None
        db.executemany(
            """INSERT INTO sess(session_id, n, last_id, sealed) VALUES (?, ?, ?, ?)
               ON CONFLICT(session_id) DO UPDATE SET n = n + excluded.n,
                 last_id = MAX(last_id, excluded.last_id), sealed = sealed + excluded.sealed""",
            ((stored(sid), c[0], c[1], c[2]) for sid, c in counts.items()),
        )

    # -- reading ---------------------------------------------------------------------

    def matches(self, needle: str, batch: int = 500) -> Generator[Rows, None, None]:
        """Rows ``(rid, session_id, message_id, role, text)`` whose folded text holds the
        folded ``needle`` (three characters or more), newest first, in batches. Holds
        the lock while iterated: read it to the end or close it."""
        query = match_query(needle)
        with self._lock:
            # values stored as bytes (see the module text) are read back when there are any
            decode = self._db.execute("SELECT 1 FROM state WHERE key = 'bytes'").fetchone() is not None
            if query is not None:
                cur = self._db.execute(
                    """SELECT m.rid, m.session_id, m.message_id, m.role, m.text
                       FROM fts JOIN msg m ON m.rid = fts.rowid
                       WHERE fts MATCH ? ORDER BY fts.rowid DESC""",
                    (query,),
                )
            else:  # no trigram to ask for: every indexed row is a candidate
                cur = self._db.execute(
                    """SELECT rid, session_id, message_id, role, text FROM msg
                       WHERE text IS NOT NULL ORDER BY rid DESC"""
                )
            try:
                # a small first batch: a search usually wants a page of hits, no more
                size = min(batch, 64)
                while rows := cur.fetchmany(size):
                    yield cast(Rows, [read_row(r) for r in rows] if decode else rows)
                    size = min(batch, size * 4)
            finally:
                cur.close()

    def sealed_sessions(self) -> list[str]:
        """Sessions holding encrypted rows (searched by scanning, with the key)."""
        with self._lock:
            return [read(r[0]) for r in self._db.execute(  # type: ignore[misc]
                "SELECT session_id FROM sess WHERE sealed > 0 ORDER BY last_id DESC")]

    def session_ids(self) -> list[str]:
        with self._lock:
            return [read(r[0]) for r in self._db.execute("SELECT session_id FROM sess")]  # type: ignore[misc]


def _rollback(db: sqlite3.Connection) -> None:
    """End a failed transaction: SQLite ends one itself on some errors (a full disk), and
    a ROLLBACK then would fail and hide why."""
    if db.in_transaction:
        db.execute("ROLLBACK")


def _put_long(db: sqlite3.Connection, r: Record) -> None:
    """Add a record whose text is longer than ``PIECE`` characters, in pieces (see
    :mod:`.stored`): never bound whole (SQLite would copy it twice)."""
    assert r.text is not None
    head, _odd = as_stored((r.rid, r.session_id, r.message_id, r.role))
    cur = db.execute(
        "INSERT INTO msg(rid, session_id, message_id, role, text) VALUES (?, ?, ?, ?, zeroblob(?))",
        (*head, utf8_size(r.text)),
    )
    rid = cur.lastrowid
    assert rid is not None
    write_long(db, "msg", "text", rid, r.text)
    db.executemany("INSERT INTO fts(rowid, t) VALUES (?, ?)", ((rid, t) for t in fts_parts(r.text)))


def _fts_delete(db: sqlite3.Connection, rows: Iterable[tuple[int, object]]) -> None:
    """Take rows ``(rid, stored text)`` out of the FTS table (given what they were given)."""
    db.executemany(
        "INSERT INTO fts(fts, rowid, t) VALUES('delete', ?, ?)",
        ((rid, t) for rid, text in rows for t in fts_parts(read(text))),  # type: ignore[arg-type]
    )


def _insert_all(db: sqlite3.Connection, insert: str, rows: list[tuple[object, ...]]) -> bool:
    """``executemany(insert, rows)``, but as one statement over a JSON array of the rows
    where SQLite has JSON built in (3.38): one step, during which the interpreter lock is
    free for the whole batch, where ``executemany`` gives it up and waits for it again at
    every row, while another thread converts the next batch. Rows with a NUL character go
    through ``executemany`` (SQLite's JSON reading ends a string there), and so do rows
    with a lone surrogate (stored as bytes): whether there were any."""
    if not _JSON_BUILT_IN:
        return many(db, insert, rows)
    plain: list[tuple[object, ...]] = []
    nul: list[tuple[object, ...]] = []
    for r in rows:
        (nul if any(isinstance(v, str) and "\x00" in v for v in r) else plain).append(r)
    wrote_bytes = many(db, insert, nul) if nul else False
    if plain:
        head, _, _ = insert.partition(" VALUES ")
        picks = ", ".join(f"value ->> {k}" for k in range(len(plain[0])))
        try:
            db.execute(f"{head} SELECT {picks} FROM json_each(?)",
                       (json.dumps(plain, ensure_ascii=False, check_circular=False),))
        except UnicodeEncodeError:
            # A lone surrogate (refused while binding: nothing was written). Rows that
            # UTF-8 can hold go as one statement still; the others are stored as bytes.
            def odd(r: tuple[object, ...]) -> bool:
                return any(isinstance(v, str) and not utf8(v) for v in r)

            _insert_all(db, insert, [r for r in plain if not odd(r)])
            wrote_bytes |= many(db, insert, [r for r in plain if odd(r)])
    return wrote_bytes


#: ``->>`` and ``json_each`` without the JSON1 compile option
_JSON_BUILT_IN = sqlite3.sqlite_version_info >= (3, 38, 0)


def records(rows: Iterable[tuple[int | None, str, int, str, str | None]]) -> list[Record]:
    """``Record`` values from plain tuples."""
    return [Record(*r) for r in rows]
