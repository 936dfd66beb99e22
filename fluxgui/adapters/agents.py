"""The OpenAI Agents SDK schema: ``agent_sessions`` + ``agent_messages`` (names configurable).

Written by ``agents.SQLiteSession`` / ``AsyncSQLiteSession`` (SQLite, ordered by ``id``)
and ``SQLAlchemySession`` (any URL, ordered by ``(created_at, id)``). Items are JSON.

``EncryptedSession`` around any of these stores envelopes instead of items (see
:mod:`.encryption`). Every row is read through :func:`stored_message`, which opens an
envelope with the store's key (or shows it locked); with a key, everything written is
sealed for the session it goes into, as ``EncryptedSession.add_items`` does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from fluxgui.core.errors import (
    Conflict,
    InvalidItem,
    KeyNeeded,
    ReadOnlyError,
    SessionNotFound,
    show_id,
)
from fluxgui.core.items import MESSAGE_ROLES, validate_item
from fluxgui.core.turns import starts_turn
from fluxgui.core.model import (
    Message,
    SessionInfo,
    iso_time,
    message_to_item,
)

from fluxgui.core.ports import Capabilities

from .base import Direction, Store, _label_id, check_branch
from .backends import Backend, Params, Tx, quote_ident
from .changes import (
    Change,
    Row,
    SessionRow,
    TableEditor,
    Where,
    free_fork_id,
    record_fork,
    stored_time,
    write_session,
)
from .sqlstore import contains, in_clause, like_any, search_ids, search_patterns
from .encryption import (
    ItemCipher,
    encrypted_at,
    is_envelope,
    looks_encrypted,
    readable,
    stored_message,
)

SESSION_COLUMNS = {"session_id", "created_at", "updated_at"}
MESSAGE_COLUMNS = {"id", "session_id", "message_data", "created_at"}
DEFAULT_SESSIONS = "agent_sessions"
DEFAULT_MESSAGES = "agent_messages"


#: How many of the latest rows (besides the first) :meth:`AgentsStore.detect_encryption`
#: looks at: a primary-key range, never a scan of the table.
DETECT_SAMPLE = 50
#: How much of a sampled item's head :meth:`AgentsStore.detect_encryption` reads to
#: tell an envelope (``{"__enc__": 1, …``) from an item.
HEAD_BYTES = 200
#: What an envelope's head holds (:func:`looks_encrypted` looks in its first 64 chars).
ENVELOPE_MARK = '"__enc__"'
#: In a store with a key, a page of more rows than this is read (decrypted) in a worker
#: thread: one Fernet decryption is cheap, a thousand on the event loop are not.
INLINE_ROWS = 32
#: A LIKE pattern (``\`` escapes) that every stored envelope matches: SQL cannot see
#: inside one, so searches and turn counts let these rows through to be decrypted.
ENVELOPE_LIKE = '%"\\_\\_enc\\_\\_"%'


def _count_user_items(
    rows: list[tuple[Any, ...]], session_id: str, cipher: ItemCipher | None
) -> int:
    return sum(
        starts_turn(stored_message(r[0], r[1], None, session_id=session_id, cipher=cipher))
        for r in rows
    )


def _sealed(m: Message) -> bool:
    """Whether a message was stored as an envelope (opened or not)."""
    return "encryption" in (m.metadata or {})


class _SealingEditor(TableEditor):
    """The editor of a store with a key: the new values of an update or an insert are
    sealed for the session they go into. Rows it only moves or restores (undo, redo, the
    ids an insert shifts) keep their stored values, envelopes included, so replaying a
    change writes back exactly what was there."""

    def __init__(self, store: AgentsStore, **kwargs: Any) -> None:
        super().__init__(store, **kwargs)
        self._agents = store

    async def update_row(self, sid: str, row_id: int, values: Row, label: str) -> Change:
        change = await super().update_row(sid, row_id, self._agents._sealed_row(sid, values), label)
        self._agents._note_sealed()
        return change

    async def insert_row(
        self, sid: str, anchor_id: int | None, where: Where, values: Row, label: str
    ) -> Change:
        sealed = self._agents._sealed_row(sid, values)
        change = await super().insert_row(sid, anchor_id, where, sealed, label)
        self._agents._note_sealed()
        return change


class AgentsStore(Store):
    """The Agents SDK schema on SQLite or any SQLAlchemy URL."""

    format = "agents"

    @property
    def capabilities(self) -> Capabilities:
        """Edits, clears and forks, except where ``message_structure`` rows (branches the
        plain schema cannot keep in step) are present; encrypted items with a key."""
        plain = not self.has_branches
        return Capabilities(append=plain, edit=plain, clear=plain, fork=plain, encryption=True)

    @property
    def has_key(self) -> bool:
        return self.cipher is not None

    def __init__(
        self,
        backend: Backend,
        target: str,
        sessions_table: str = DEFAULT_SESSIONS,
        messages_table: str = DEFAULT_MESSAGES,
        *,
        has_branches: bool = False,
        cipher: ItemCipher | None = None,
    ) -> None:
        super().__init__(backend, target)
        #: decrypts envelopes and seals what is written (``None``: no key given)
        self.cipher = cipher
        #: the store holds ``EncryptedSession`` envelopes (found by
        #: :meth:`detect_encryption`, or met while reading)
        self.encrypted = False
        self.sessions_table = sessions_table
        self.messages_table = messages_table
        self.has_branches = has_branches
        self.has_usage = has_branches
        self._S = quote_ident(sessions_table)
        self._M = quote_ident(messages_table)
        self._utc = backend.utc_times
        # SQLiteSession reads by id; SQLAlchemySession by (created_at, id).
        self._by_time = backend.dialect != "sqlite"

    def ddl(self) -> list[str]:
        S, M = self._S, self._M
        idx = quote_ident(f"idx_{self.messages_table}_session_id")
        if self.backend.dialect == "sqlite":
            return [
                f"""CREATE TABLE IF NOT EXISTS {S} (
                    session_id TEXT PRIMARY KEY,
                    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)""",
                f"""CREATE TABLE IF NOT EXISTS {M} (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    session_id TEXT NOT NULL,
                    message_data TEXT NOT NULL,
                    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
                    FOREIGN KEY (session_id) REFERENCES {S} (session_id) ON DELETE CASCADE)""",
                f"CREATE INDEX IF NOT EXISTS {idx} ON {M} (session_id, id)",
            ]
        idx = quote_ident(f"idx_{self.messages_table}_session_time")
        return [
            f"""CREATE TABLE IF NOT EXISTS {S} (
                session_id VARCHAR NOT NULL PRIMARY KEY,
                created_at TIMESTAMP WITHOUT TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL,
                updated_at TIMESTAMP WITHOUT TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL)""",
            f"""CREATE TABLE IF NOT EXISTS {M} (
                id SERIAL PRIMARY KEY,
                session_id VARCHAR NOT NULL REFERENCES {S} (session_id) ON DELETE CASCADE,
                message_data TEXT NOT NULL,
                created_at TIMESTAMP WITHOUT TIME ZONE DEFAULT CURRENT_TIMESTAMP NOT NULL)""",
            f"CREATE INDEX IF NOT EXISTS {idx} ON {M} (session_id, created_at)",
        ]

    async def detect_encryption(self) -> None:
        """Look for ``EncryptedSession`` envelopes (set ``encrypted`` and ``needs_key``)
        and check the key against them.

        Cheap on any size of store: the latest :data:`DETECT_SAMPLE` rows and the first
        one, by primary key, and of each only its head (:data:`HEAD_BYTES`, read without
        loading the item: one item may be hundreds of MB). Only rows whose head names
        ``__enc__`` are read whole, one at a time, smallest first, until one is an
        envelope (with a key: one that opens). With a key, :class:`WrongKey` is raised
        when no sampled envelope opens with it (one envelope that does is enough: a
        corrupt one must not lock the user out of the rest). An envelope outside the
        sample is still read as one, and flags the store when it is met (see
        :meth:`_messages`).
        """
        M = self._M
        ids = await self.backend.fetchall(
            f"SELECT id FROM {M} ORDER BY id DESC LIMIT :n", {"n": DETECT_SAMPLE}
        )
        ids += await self.backend.fetchall(f"SELECT id FROM {M} ORDER BY id LIMIT 1")
        heads = await self.backend.text_heads(
            self.messages_table, "message_data", sorted({int(r[0]) for r in ids}), HEAD_BYTES
        )
        maybe = sorted((size, i) for i, (head, size) in heads.items() if ENVELOPE_MARK in head[:64])
        first: tuple[str, Any] | None = None  # the first envelope read, to name a wrong key
        for _size, row_id in maybe:
            row = await self.backend.fetchone(
                f"SELECT session_id, message_data FROM {M} WHERE id = :i", {"i": row_id}
            )
            if row is None or not looks_encrypted(row[1]):
                continue
            self.encrypted = self.needs_key = True
            if self.cipher is None:
                return
            sid, envelope = str(row[0]), json.loads(row[1])
            if self.cipher.open(sid, envelope).state != "unreadable":
                return
            first = first or (sid, envelope)
        if first is not None and self.cipher is not None:
            self.cipher.check(*first, self.target)

    @property
    def reads_encrypted(self) -> bool:
        """Whether the flux view reads as ``EncryptedSession.get_items`` does (only
        decrypted, unexpired items): the store holds envelopes, or a key was given (then
        everything written is sealed, and the SDK would read the store with that key)."""
        return self.encrypted or self.cipher is not None

    def _key_needed(self) -> KeyNeeded:
        return KeyNeeded(
            f"{self.target} holds encrypted sessions: give the key (--key or FLUXGUI_KEY) "
            "to write to it"
        )

    # -- helpers -------------------------------------------------------------------

    def _message(self, row: tuple[Any, ...], session_id: str) -> Message:
        row_id, data, created = row[0], row[1], row[2]
        key = (created, int(row_id)) if self._by_time else (int(row_id),)
        return stored_message(
            row_id, data, created, session_id=session_id, cipher=self.cipher, utc=self._utc,
            sort_key=key,
        )

    async def _messages(self, rows: list[tuple[Any, ...]], session_id: str) -> list[Message]:
        """Rows ``(id, message_data, created_at)`` of one session as Messages, envelopes
        opened (in a worker thread when there are many to decrypt)."""
        if self.cipher is not None and len(rows) > INLINE_ROWS:
            out = await asyncio.to_thread(lambda: [self._message(r, session_id) for r in rows])
        else:
            out = [self._message(r, session_id) for r in rows]
        if not self.encrypted and any(_sealed(m) for m in out):
            # An envelope the sample at open did not see: writes need the key from now on.
            self.encrypted = self.needs_key = True
        return out

    def _info(self, row: tuple[Any, ...]) -> SessionInfo:
        sid, created, updated, last_id, count = row
        return SessionInfo(
            id=str(sid),
            messages=int(count or 0),
            created_at=iso_time(created, utc=self._utc),
            updated_at=iso_time(updated, utc=self._utc),
            sort_key=(updated, int(last_id or 0), str(sid)),
        )

    def _last_id(self, alias: str) -> str:
        """The id of the session's latest item (0 when it has none): it orders sessions
        whose ``updated_at`` ties (one-second resolution on SQLite)."""
        order = "m.created_at DESC, m.id DESC" if self._by_time else "m.id DESC"
        return (
            f"COALESCE((SELECT m.id FROM {self._M} m WHERE m.session_id = {alias}.session_id "
            f"ORDER BY {order} LIMIT 1), 0)"
        )

    def _info_sql(self, where: str) -> str:
        return f"""SELECT s.session_id, s.created_at, s.updated_at, {self._last_id("s")},
                       {self._count("s")}
                   FROM {self._S} s WHERE {where}"""

    # -- sessions ------------------------------------------------------------------

    def _row_info(self, row: tuple[Any, ...]) -> SessionInfo:
        return self._info(row)

    def _count(self, alias: str) -> str:
        """The message count of the session ``alias.session_id``, as an SQL scalar."""
        return f"(SELECT COUNT(*) FROM {self._M} m WHERE m.session_id = {alias}.session_id)"

    def _counts_by_session(self) -> str:
        """``SELECT session_id, COUNT(*) AS cnt … GROUP BY session_id`` over the messages."""
        return f"SELECT session_id, COUNT(*) AS cnt FROM {self._M} GROUP BY session_id"

    async def _page_by_activity(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]:
        # Sessions are ordered by (updated_at, latest item id, session_id). There is no
        # index on updated_at, so: find the updated_at of the limit-th session past the
        # cursor, take the sessions from there on (all ties included), and only for those
        # look up the latest item and the count.
        cmp, reach, way = ("<", ">=", "DESC") if descending else (">", "<=", "ASC")
        S, last_id = self._S, self._last_id("s")
        params: Params = {"n": limit, "off": max(limit - 1, 0)}
        before = ""
        parts = []
        if cursor is not None:
            params["u"], params["l"], params["sid"] = cursor
            before = f"s.updated_at {cmp} :u AND "
            parts.append(
                f"""SELECT * FROM (SELECT s.session_id, s.created_at, s.updated_at,
                                          {last_id} AS last_id
                                   FROM {S} s WHERE s.updated_at = :u) t
                    WHERE t.last_id {cmp} :l OR (t.last_id = :l AND t.session_id {cmp} :sid)"""
            )
        threshold = (
            f"(SELECT x.updated_at FROM {S} x WHERE {before.replace('s.', 'x.')}1 = 1 "
            f"ORDER BY x.updated_at {way} LIMIT 1 OFFSET :off)"
        )
        parts.append(
            f"""SELECT s.session_id, s.created_at, s.updated_at, {last_id} AS last_id
                FROM {S} s
                WHERE {before}s.updated_at {reach} COALESCE({threshold}, s.updated_at)"""
        )
        union = " UNION ALL ".join(parts)
        return await self.backend.fetchall(
            f"""SELECT p.session_id, p.created_at, p.updated_at, p.last_id, {self._count("p")}
                FROM (SELECT * FROM ({union}) k
                      ORDER BY k.updated_at {way}, k.last_id {way}, k.session_id {way}
                      LIMIT :n) p
                ORDER BY p.updated_at {way}, p.last_id {way}, p.session_id {way}""",
            params,
        )

    async def _page_by_id(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]:
        # The sessions table's primary key: the page costs its own rows.
        cmp, way = ("<", "DESC") if descending else (">", "ASC")
        params: Params = {"n": limit}
        where = "1 = 1"
        if cursor is not None:
            where = f"s.session_id {cmp} :after"
            params["after"] = str(cursor[0])
        return await self.backend.fetchall(
            f"""SELECT p.session_id, p.created_at, p.updated_at, {self._last_id("p")},
                       {self._count("p")}
                FROM (SELECT s.session_id, s.created_at, s.updated_at FROM {self._S} s
                      WHERE {where} ORDER BY s.session_id {way} LIMIT :n) p
                ORDER BY p.session_id {way}""",
            params,
        )

    async def _page_by_count(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]:
        # One GROUP BY over the items (through the session index), joined to the sessions
        # table so that sessions without items count 0; keyset on (count, session id).
        cmp, way = ("<", "DESC") if descending else (">", "ASC")
        params: Params = {"n": limit}
        where = ""
        if cursor is not None:
            where = f"WHERE q.cnt {cmp} :c OR (q.cnt = :c AND q.session_id {cmp} :sid)"
            params["c"], params["sid"] = int(cursor[0]), str(cursor[1])
        counted = f"""SELECT s.session_id, s.created_at, s.updated_at,
                             COALESCE(c.cnt, 0) AS cnt
                      FROM {self._S} s
                      LEFT JOIN ({self._counts_by_session()}) c
                             ON c.session_id = s.session_id"""
        return await self.backend.fetchall(
            f"""SELECT p.session_id, p.created_at, p.updated_at, {self._last_id("p")}, p.cnt
                FROM (SELECT * FROM ({counted}) q {where}
                      ORDER BY q.cnt {way}, q.session_id {way} LIMIT :n) p
                ORDER BY p.cnt {way}, p.session_id {way}""",
            params,
        )

    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None:
        check_branch(self, branch)
        row = await self.backend.fetchone(self._info_sql("s.session_id = :s"), {"s": session_id})
        if row is not None:
            return self._info(row)
        # Items whose session row is missing (a writer without foreign keys) still count.
        row = await self.backend.fetchone(
            f"""SELECT COUNT(*), MIN(created_at), MAX(created_at), MAX(id) FROM {self._M}
                WHERE session_id = :s""",
            {"s": session_id},
        )
        if row is None or not row[0]:
            return None
        return self._info((session_id, row[1], row[2], row[3], row[0]))

    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]:
        if not ids:
            return []
        params: Params = {}
        rows = await self.backend.fetchall(
            self._info_sql(f"s.session_id IN {in_clause(ids, params, 'i')}"), params
        )
        return [self._info(r) for r in rows]

    def search_session_ids(self, text: str) -> AsyncIterator[str]:
        """Sessions whose id or item text contains ``text``. SQL LIKE cannot see inside
        envelopes: with a key, every envelope row is let through and decrypted (in a worker
        thread); without one, an encrypted row matches by its session id only."""
        variants = search_patterns(text)

        def id_sql(params: Params) -> str:
            cond = like_any(self.backend, "session_id", variants, params, "p")
            return f"SELECT session_id FROM {self._S} WHERE {cond}"

        def row_sql(params: Params) -> str:
            cond = like_any(self.backend, "message_data", variants, params, "p")
            if self.cipher is not None:
                params["env"] = ENVELOPE_LIKE
                cond = f"({cond} OR message_data LIKE :env ESCAPE '\\')"
            return (
                f"SELECT session_id, id, message_data, created_at FROM {self._M} "
                f"WHERE {cond} ORDER BY id DESC"
            )

        if self.cipher is None:
            return search_ids(self.backend, text, id_sql, row_sql, self._search_text)
        return self._search_decrypting(text, id_sql, row_sql)

    def _search_text(self, row: tuple[Any, ...]) -> str:
        """The text a person reads for a row ``(session_id, id, message_data, …)``; nothing
        for an envelope that does not open (its placeholder is not the item's text)."""
        m = stored_message(row[1], row[2], None, session_id=str(row[0]), cipher=self.cipher)
        state = (m.metadata or {}).get("encryption", {}).get("state")
        return "" if state in ("locked", "unreadable") else m.text

    def _matching(self, rows: list[tuple[Any, ...]], text: str) -> list[str]:
        """The session ids, each once, of the rows whose id or text contains ``text``
        (run in a worker thread: it decrypts)."""
        found: dict[str, None] = {}
        for row in rows:
            sid = str(row[0])
            if sid not in found and (contains(sid, text) or contains(self._search_text(row), text)):
                found[sid] = None
        return list(found)

    async def _search_decrypting(
        self,
        text: str,
        id_sql: Callable[[Params], str],
        row_sql: Callable[[Params], str],
    ) -> AsyncIterator[str]:
        # search_ids with the row check moved off the event loop, and the rows of a
        # session already found left undecrypted.
        seen: set[str] = set()
        params: Params = {}
        async for batch in self.backend.stream(id_sql(params), params):
            for row in batch:
                sid = str(row[0])
                if sid not in seen and contains(sid, text):
                    seen.add(sid)
                    yield sid
        params = {}
        async for batch in self.backend.stream(row_sql(params), params):
            todo = [r for r in batch if str(r[0]) not in seen]
            if not todo:
                continue
            for sid in await asyncio.to_thread(self._matching, todo, text):
                if sid not in seen:
                    seen.add(sid)
                    yield sid

    # -- messages ------------------------------------------------------------------

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 100,
        anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward",
        branch: str | None = None,
    ) -> list[Message]:
        check_branch(self, branch)
        params: Params = {"s": session_id, "n": limit}
        backward = direction == "backward"
        order = "DESC" if backward else "ASC"
        op = "<" if backward else ">"
        if self._by_time:
            order_by = f"created_at {order}, id {order}"
            bound = ""
            if anchor is not None:
                params["c"], params["i"] = anchor
                bound = f" AND (created_at {op} :c OR (created_at = :c AND id {op} :i))"
        else:
            order_by = f"id {order}"
            bound = ""
            if anchor is not None:
                params["i"] = anchor[0]
                bound = f" AND id {op} :i"
        rows = await self.backend.fetchall(
            f"""SELECT id, message_data, created_at FROM {self._M}
                WHERE session_id = :s{bound} ORDER BY {order_by} LIMIT :n""",
            params,
        )
        if backward:
            rows.reverse()
        return await self._messages(rows, session_id)

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        check_branch(self, branch)
        row = await self.backend.fetchone(
            f"SELECT COUNT(*) FROM {self._M} WHERE session_id = :s", {"s": session_id}
        )
        return int(row[0]) if row else 0

    async def count_turns_before(self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None) -> int:
        """User messages before ``anchor`` (the rule of :func:`starts_turn`: an item
        with role ``user`` and no type or type ``message``), counted by the database on
        SQLite, else from the rows that mention "user", parsed in a worker thread. The
        database cannot look inside envelopes: in an encrypted store they are decrypted
        (in the worker thread) and counted too."""
        check_branch(self, branch)
        params: Params = {"s": session_id}
        if self._by_time:
            params["c"], params["i"] = anchor
            before = "(created_at < :c OR (created_at = :c AND id < :i))"
        else:
            params["i"] = anchor[0]
            before = "id < :i"
        if self.backend.dialect == "sqlite" and not self.reads_encrypted:
            row = await self.backend.fetchone(
                f"""SELECT COUNT(*) FROM {self._M} WHERE session_id = :s AND {before}
                    AND json_valid(message_data)
                    AND json_type(message_data) = 'object'
                    AND json_type(message_data, '$.role') = 'text'
                    AND json_extract(message_data, '$.role') = 'user'
                    AND COALESCE(json_extract(message_data, '$.type'), 'message') = 'message'""",
                params,
            )
            return int(row[0]) if row else 0
        mentions = "message_data LIKE '%user%'"
        if self.reads_encrypted:
            params["env"] = ENVELOPE_LIKE
            mentions = f"({mentions} OR message_data LIKE :env ESCAPE '\\')"
        count = 0
        async for rows in self.backend.stream(
            f"SELECT id, message_data FROM {self._M} WHERE session_id = :s AND {before} "
            f"AND {mentions}",
            params,
            batch=2000,
        ):
            count += await asyncio.to_thread(_count_user_items, rows, session_id, self.cipher)
        return count

    async def flux_messages(self, session_id: str, limit: int | None, *, branch: str | None = None) -> list[dict[str, Any]]:
        """The flux view. In an encrypted store (see :attr:`reads_encrypted`) it holds what
        ``EncryptedSession.get_items(limit)`` returns: the most recent ``limit`` readable
        items, skipping expired, unreadable and plain ones as the library does."""
        limit = limit or None  # 0: all, as flux
        if not self.reads_encrypted:
            picked = await self.latest_messages(session_id, limit, branch=branch)
        elif limit is None:
            picked = [
                m
                async for page in self.iter_messages(session_id, branch=branch)
                for m in page
                if readable(m)
            ]
        else:
            picked = await self._latest_readable(session_id, limit, branch=branch)
        return [{"role": m.role, "content": m.text} for m in picked]

    async def _latest_readable(
        self, session_id: str, limit: int, *, branch: str | None = None
    ) -> list[Message]:
        """The most recent ``limit`` readable messages, oldest first: pages back from the
        end until there are enough (skipped items make the page count unknowable)."""
        if limit <= 0:
            return []
        picked: list[Message] = []
        batch = max(limit, 50)
        anchor: tuple[Any, ...] | None = None
        while len(picked) < limit:
            page = await self.page_messages(session_id, limit=batch, anchor=anchor, branch=branch)
            picked[:0] = [m for m in page if readable(m)]
            if len(page) < batch:
                break
            anchor = page[0].sort_key
        return picked[-limit:]

    # -- writing -------------------------------------------------------------------

    def _dump(self, item: Any) -> str:
        # SQLiteSession writes json.dumps defaults; SQLAlchemySession compact JSON.
        if self.backend.dialect == "sqlite":
            return json.dumps(item)
        return json.dumps(item, separators=(",", ":"))

    def _stored(self, session_id: str, item: Any, *, at: float | None = None) -> str:
        """The ``message_data`` of ``item`` in ``session_id``: sealed when the store has a
        key (``at``: the encryption time to keep, Unix seconds). An envelope (a locked item
        copied as it is) is stored as it is: sealing it again would bury it."""
        if self.cipher is not None and not is_envelope(item):
            item = self.cipher.seal(session_id, item, at=at)
        return self._dump(item)

    def _sealed_row(self, session_id: str, row: Row) -> Row:
        """``row`` (from :meth:`edit_values`) with its item sealed for ``session_id``."""
        data = row.get("message_data")
        if self.cipher is None or not isinstance(data, str) or looks_encrypted(data):
            return row
        try:
            item = json.loads(data)
        except (ValueError, RecursionError):
            return row
        return {**row, "message_data": self._stored(session_id, item)}

    def _note_sealed(self) -> None:
        """Sealed items were written: the store needs its key from now on."""
        if self.cipher is not None:
            self.encrypted = self.needs_key = True

    def _check_writable(self) -> None:
        super()._check_writable()
        if self.encrypted and self.cipher is None:
            # Without the key nothing can be sealed, and deleting what cannot be read
            # is deleting blind: every write waits for the key.
            raise self._key_needed()

    def editor(self) -> TableEditor:
        make = _SealingEditor if self.cipher is not None else TableEditor
        return make(
            self,
            table=self._M,
            table_name=self.messages_table,
            columns=("message_data", "created_at"),
            order=("created_at", "id") if self._by_time else ("id",),
            sessions_table=self._S,
        )

    def check_editable(self) -> None:
        self._check_writable()
        if self.has_branches:
            raise ReadOnlyError(
                f"{self.target} is an AdvancedSQLiteSession store: editing it is not "
                "supported yet (its message_structure and turn_usage rows would go out of step)"
            )

    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> Row:
        """An item as it is (a dict with a ``type``, or a message role); a flux-style
        message dict mapped to an item. Checked to be a valid item of its type.

        The values hold the plain item: the editor seals it for its session when a store
        with a key writes it. ``original`` is the message as read (its ``raw`` is the
        decrypted item); an envelope that did not open says nothing about the type.
        """
        if self.encrypted and self.cipher is None:
            raise self._key_needed()
        if not isinstance(spec, dict):
            raise InvalidItem(f"an item must be a JSON object, not {type(spec).__name__}")
        if is_envelope(spec):
            raise InvalidItem(
                "that is an encrypted envelope, not an item: give the item itself "
                "(fluxgui encrypts it when the store has a key)"
            )
        item = spec if "type" in spec or spec.get("role") in MESSAGE_ROLES else message_to_item(spec)
        original_type = None
        raw = original.raw if original is not None else None
        if isinstance(raw, dict) and not is_envelope(raw):
            original_type = raw.get("type", "message")
        validate_item(item, original_type=original_type)
        return {"message_data": self._dump(item)}

    def import_row(self, message: Message, *, session_id: str | None = None) -> Row:
        """The stored values for ``message`` (see :meth:`Store.import_row`). A store with
        a key seals the item for ``session_id`` (required then), keeping the time an item
        read from an encrypted store was first encrypted (see :meth:`ItemCipher.seal`)."""
        if self.cipher is not None and session_id is None:
            raise TypeError("import_row needs the session id to seal an item with the store's key")
        m = message
        if isinstance(m.raw, dict):
            item: Any = m.raw
        elif isinstance(m.raw, str) and m.kind == "other" and m.raw == m.text:
            return {"message_data": m.raw}  # stored text that is not JSON: kept as it is
        elif m.metadata and isinstance(m.metadata.get("agents_item"), dict):
            item = m.metadata["agents_item"]
        else:
            role = m.role
            if role not in MESSAGE_ROLES and role != "tool":
                role = "system" if role == "summary" else "user"
            meta = m.metadata or {}
            item = message_to_item(
                {"role": role, "content": m.text, "tool_call_id": meta.get("tool_call_id")}
            )
        if session_id is None:
            return {"message_data": self._dump(item)}
        return {"message_data": self._stored(session_id, item, at=encrypted_at(m))}

    def _import_row(
        self, m: Message, dialect: str, utc: bool, session_id: str | None = None
    ) -> Row:
        return {
            **self.import_row(m, session_id=session_id),
            "created_at": stored_time(m.created_at, dialect, utc),
        }

    async def import_session(
        self,
        session_id: str,
        pages: AsyncIterator[list[Message]] | Iterator[list[Message]],
        *,
        created_at: str | None = None,
        updated_at: str | None = None,
        rename: bool = False,
    ) -> tuple[str, int]:
        """See :meth:`Store.import_session`. With a key, the items are sealed for the id
        they land under; with ``rename`` that id is known only once a free one is found,
        so each candidate is tried in its own transaction (the pages are not read until
        the id is taken, so a refused candidate costs one look-up)."""
        if self.cipher is None:
            return await super().import_session(
                session_id, pages, created_at=created_at, updated_at=updated_at, rename=rename
            )
        editor = self._editor()
        dialect, utc = self.backend.dialect, self.backend.utc_times
        started = False

        async def rows(target: str) -> AsyncIterator[list[Row]]:
            nonlocal started
            started = True
            if isinstance(pages, AsyncIterator):
                async for page in pages:
                    yield [self._import_row(m, dialect, utc, target) for m in page]
            else:
                for page in pages:
                    yield [self._import_row(m, dialect, utc, target) for m in page]

        n = 1
        while True:
            target = session_id if n == 1 else f"{session_id}-{n}"
            try:
                written = await write_session(
                    editor,
                    target,
                    rows(target),
                    created_at=stored_time(created_at, dialect, utc),
                    updated_at=stored_time(updated_at, dialect, utc),
                )
            except Conflict:
                if not rename or started:
                    raise
                n += 1
                continue
            self._note_sealed()
            return written

    async def fork_session(
        self,
        session_id: str,
        at_message_id: int,
        new_id: str | None = None,
        *,
        branch: str | None = None,
    ) -> Change:
        """See :meth:`Store.fork_session`. An envelope is bound to its session (the id is
        the key's salt), so with a key the fork's items are sealed again for the fork,
        each keeping its encryption time (what had expired stays expired)."""
        check_branch(self, branch)
        if self.cipher is None:
            return await super().fork_session(session_id, at_message_id, new_id)
        editor = self._editor()
        at_id = int(at_message_id)
        label = f"Fork session {_label_id(session_id)} at message {at_id}"

        async def body(tx: Tx) -> Change:
            found = await editor.rows_by_id(tx, session_id, [at_id])
            if at_id not in found:
                raise SessionNotFound(f"message {at_id} is not in session {show_id(session_id)}")
            target = await free_fork_id(editor, tx, session_id, new_id)
            origin = await editor.session_row(tx, session_id)
            now = await editor.now(tx)
            after = SessionRow(origin.created_at if origin else now, now)
            await tx.execute(
                f"INSERT INTO {self._S} (session_id, created_at, updated_at) VALUES (:s, :c, :u)",
                {"s": target, "c": after.created_at, "u": after.updated_at},
            )
            rows = await editor.rows(tx, session_id)
            end = next(i for i, r in enumerate(rows) if int(r["id"]) == at_id)
            copied = await asyncio.to_thread(self._resealed, rows[: end + 1], session_id, target)
            await tx.executemany(
                f"INSERT INTO {self._M} (session_id, message_data, created_at) "
                "VALUES (:s, :d, :c)",
                copied,
            )
            await record_fork(tx, target, session_id, at_id)
            added = await editor.rows(tx, target)
            return Change(target, label, (), tuple(added), None, after)

        change = await self.backend.transaction(body)
        self._note_sealed()
        return change

    def _resealed(self, rows: list[Row], origin: str, target: str) -> list[Params]:
        """Insert parameters copying ``rows`` of ``origin`` into ``target``, envelopes
        sealed for ``target``. Plain rows, and envelopes this key does not open (they do
        not open in the origin either), are copied as they are."""
        assert self.cipher is not None
        out: list[Params] = []
        for r in rows:
            data = r["message_data"]
            if looks_encrypted(data):
                envelope = json.loads(data)
                again = self.cipher.reseal(origin, target, envelope)
                if again is not None:
                    data = self._dump(again)
            out.append({"s": target, "d": data, "c": r["created_at"]})
        return out

    async def add_messages(self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None) -> int:
        """Append messages: items (dicts with a ``type``) as they are, flux dicts mapped."""
        check_branch(self, branch)
        self._check_writable()
        if self.has_branches:
            raise InvalidItem(
                "adding items to an AdvancedSQLiteSession store is not supported yet "
                "(its branch structure would not include them)"
            )
        items = []
        for m in messages:
            if not isinstance(m, dict):
                raise InvalidItem(f"an item must be a JSON object, not {type(m).__name__}")
            items.append(message_to_item(m))
        if not items:
            return 0
        await self.backend.write(
            [
                (
                    f"INSERT INTO {self._S} (session_id) VALUES (:s) "
                    "ON CONFLICT (session_id) DO NOTHING",
                    {"s": session_id},
                ),
                (
                    f"INSERT INTO {self._M} (session_id, message_data) VALUES (:s, :d)",
                    [{"s": session_id, "d": self._stored(session_id, i)} for i in items],
                ),
                (
                    f"UPDATE {self._S} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = :s",
                    {"s": session_id},
                ),
            ]
        )
        self._note_sealed()
        return len(items)

    async def clear_session(self, session_id: str) -> int:
        """Remove the session's items and its row, as ``clear_session()`` does."""
        self._check_writable()
        if self.has_branches:
            raise InvalidItem(
                "clearing an AdvancedSQLiteSession store is not supported yet "
                "(its message_structure and turn_usage rows must go with it)"
            )
        counts = await self.backend.write(
            [
                (f"DELETE FROM {self._M} WHERE session_id = :s", {"s": session_id}),
                (f"DELETE FROM {self._S} WHERE session_id = :s", {"s": session_id}),
            ]
        )
        return counts[0]
