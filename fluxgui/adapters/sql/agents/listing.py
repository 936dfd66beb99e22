"""The Agents SDK schema, first layer: the store's tables and its session list.

``agent_sessions`` (one row per session: ``created_at``, ``updated_at``) and
``agent_messages`` (one JSON item per row), both names configurable. Written by
``agents.SQLiteSession`` / ``AsyncSQLiteSession`` (SQLite, ordered by ``id``) and
``SQLAlchemySession`` (any URL), every one ordered by ``id``. This layer lists
sessions; :mod:`.reading` reads their items, :mod:`.writing` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from fluxgui.core.errors import KeyNeeded
from fluxgui.core.model import SessionInfo
from fluxgui.core.times import iso_time
from fluxgui.core.undecodable import id_text

from ...parts import Place
from ...reading import ListingReader
from ..backend import Backend, Params, quote_ident
from ..detect import AGENTS_MESSAGES as DEFAULT_MESSAGES
from ..detect import AGENTS_SESSIONS as DEFAULT_SESSIONS
from ..search import in_clause

if TYPE_CHECKING:
    from ...encryption import ItemCipher


#: why a store holding AdvancedSQLiteSession's structure rows takes no single-message edit
ADVANCED_EDITS = (
    " is an AdvancedSQLiteSession store: editing it is not supported yet (its "
    "message_structure and turn_usage rows would go out of step)"
)


class AgentsTables:
    """Where an Agents SDK store is: its back-end and its two tables (names as given and
    quoted). Every writer reads a session by ``id`` (``SQLAlchemySession`` since
    openai-agents 0.25; 0.24 read it by ``(created_at, id)``)."""

    def __init__(
        self,
        place: Place[Backend],
        sessions_table: str = DEFAULT_SESSIONS,
        messages_table: str = DEFAULT_MESSAGES,
        *,
        has_branches: bool = False,
    ) -> None:
        self.place = place
        self.sessions_table = sessions_table
        self.messages_table = messages_table
        #: ``message_structure`` rows are present (an AdvancedSQLiteSession store)
        self.has_branches = has_branches
        self.S = quote_ident(sessions_table)
        self.M = quote_ident(messages_table)
        self.utc = place.backend.utc_times
        #: ``updated_at`` in microseconds (not SQLite's seconds): sessions rarely tie
        self.ties_rare = place.backend.dialect != "sqlite"

    def key_parts(self) -> dict[str, str | None]:
        """The two tables (their names are the store's, a database may hold several)."""
        return {"sessions": self.sessions_table, "messages": self.messages_table}

    def ddl(self) -> list[str]:
        """The statements that make the two tables (``create``), as the library does."""
        S, M = self.S, self.M
        idx = quote_ident(f"idx_{self.messages_table}_session_id")
        if self.place.backend.dialect == "sqlite":
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
            f"CREATE INDEX IF NOT EXISTS {idx} ON {M} (session_id, id)",
        ]


@dataclass
class AgentsKeys:
    """An Agents SDK store's ``EncryptedSession`` keys, and whether it holds envelopes
    (shared by its reader, which may meet one, and its writing parts, which seal)."""

    #: decrypts envelopes and seals what is written (``None``: no key given)
    cipher: ItemCipher | None = None
    #: the store holds envelopes (found at open, or met while reading, or written)
    encrypted: bool = False

    @property
    def needs_key(self) -> bool:
        """The store holds ``EncryptedSession`` envelopes."""
        return self.encrypted

    @property
    def has_key(self) -> bool:
        """A key for ``EncryptedSession`` items was given."""
        return self.cipher is not None

    @property
    def reads_encrypted(self) -> bool:
        """Whether the flux view reads as ``EncryptedSession.get_items`` does (only
        decrypted, unexpired items): the store holds envelopes, or a key was given (then
        everything written is sealed, and the SDK would read the store with that key)."""
        return self.encrypted or self.cipher is not None

    def note_sealed(self) -> None:
        """Sealed items were written: the store needs its key from now on."""
        if self.cipher is not None:
            self.encrypted = True

    def key_needed(self, target: str) -> KeyNeeded:
        return KeyNeeded(
            f"{target} holds encrypted sessions: give the key (--key or FLUXGUI_KEY) "
            "to write to it"
        )


class AgentsListing(ListingReader[Backend]):
    """The Agents SDK tables on SQLite or any SQLAlchemy URL: the session list (the
    first layer of :class:`~.reading.AgentsReader`)."""

    def __init__(self, tables: AgentsTables, keys: AgentsKeys) -> None:
        super().__init__(tables.place)
        self.tables = tables
        self.keys = keys
        self.sessions_table = tables.sessions_table
        self.messages_table = tables.messages_table
        self._S = tables.S
        self._M = tables.M
        self._utc = tables.utc
        self._ties_rare = tables.ties_rare

    def _info(self, row: tuple[Any, ...]) -> SessionInfo:
        sid, created, updated, last_id, count = row
        return SessionInfo(
            id=id_text(sid),
            messages=int(count or 0),
            created_at=iso_time(created, utc=self._utc),
            updated_at=iso_time(updated, utc=self._utc),
            sort_key=(updated, int(last_id or 0), id_text(sid)),
        )

    def _last_id(self, alias: str) -> str:
        """The id of the session's latest item (0 when it has none): it orders sessions
        whose ``updated_at`` ties (one-second resolution on SQLite)."""
        return (
            f"COALESCE((SELECT m.id FROM {self._M} m WHERE m.session_id = {alias}.session_id "
            "ORDER BY m.id DESC LIMIT 1), 0)"
        )

    def _tie_break(self, alias: str, tied: str) -> str:
        """The second part of a session's activity key, as SQL: its latest item's id.

        Where ``updated_at`` has microseconds (not SQLite) that id is looked up only where
        it decides something, for a session whose ``updated_at`` equals another's
        (``tied``, an SQL condition), and is 0 otherwise: the order is the same, each key
        is the same wherever it is read (pages of every order, :meth:`session_info`). A
        table that openai-agents 0.24 made is indexed by ``(session_id, created_at)``,
        not ``id``: there that id costs a read of the whole session (65 ms for 100,000
        items), paid only for the rare tie."""
        if not self._ties_rare:
            return self._last_id(alias)
        return f"CASE WHEN {tied} THEN {self._last_id(alias)} ELSE 0 END"

    def _ties_join(self, alias: str) -> tuple[str, str]:
        """A join naming the ``updated_at`` values that two sessions or more share (one
        pass over the sessions table) and the condition that ``alias`` has one."""
        if not self._ties_rare:
            return "", "1 = 1"
        return (
            f"""LEFT JOIN (SELECT updated_at AS tied_at FROM {self._S} WHERE updated_at IS NOT NULL
                           GROUP BY updated_at HAVING COUNT(*) > 1) ties
                       ON ties.tied_at = {alias}.updated_at""",
            "ties.tied_at IS NOT NULL",
        )

    def _info_sql(self, where: str) -> str:
        join, tied = self._ties_join("s")
        return f"""SELECT s.session_id, s.created_at, s.updated_at, {self._tie_break("s", tied)},
                       {self._count("s")}
                   FROM {self._S} s {join} WHERE {where}"""

    # -- sessions ------------------------------------------------------------------

    def _row_info(self, row: tuple[Any, ...]) -> SessionInfo:
        return self._info(row)

    def _count(self, alias: str) -> str:
        """The message count of the session ``alias.session_id``, as an SQL scalar."""
        return f"(SELECT COUNT(*) FROM {self._M} m WHERE m.session_id = {alias}.session_id)"

    def _counts_by_session(self) -> str:
        """``SELECT session_id, COUNT(*) AS cnt … GROUP BY session_id`` over the messages."""
        return f"SELECT session_id, COUNT(*) AS cnt FROM {self._M} GROUP BY session_id"

    async def _page_since(self, limit: int, since: float) -> list[tuple[Any, ...]] | None:
        """On SQLite, the sessions whose ``updated_at`` text is at or after ``since``
        written as ``CURRENT_TIMESTAMP`` writes times (UTC; a day earlier, as a date,
        where naive times are not UTC), compared as SQLite orders the column: a scan of
        the sessions table that sorts only those, a prefix of the order by activity
        whatever the column holds. Elsewhere ``None``."""
        if self.place.backend.dialect != "sqlite":
            return None
        try:
            if self._utc:
                floor = datetime.fromtimestamp(since, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
            else:
                floor = datetime.fromtimestamp(since - 86_400, tz=timezone.utc).strftime("%Y-%m-%d")
        except (OverflowError, OSError, ValueError):
            return None
        return await self._page_by_activity(limit, None, True, floor=floor)

    async def _page_by_activity(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool, *, floor: str | None = None,
    ) -> list[tuple[Any, ...]]:
        # Sessions are ordered by (updated_at, latest item id, session_id). There is no
        # index on updated_at, so: find the updated_at of the limit-th session past the
        # cursor, take the sessions from there on (all ties included), and only for those
        # look up the latest item and the count.
        # The candidates hold whole groups of equal updated_at, so a window over them
        # tells which sessions tie (see _tie_break). ``floor`` (the first page, newest
        # first): only sessions whose updated_at is at or after it are looked at.
        cmp, reach, way = ("<", ">=", "DESC") if descending else (">", "<=", "ASC")
        S = self._S
        in_group = self._tie_break("s", "COUNT(*) OVER () > 1")
        last_id = self._tie_break(
            "s", "s.updated_at IS NOT NULL AND COUNT(*) OVER (PARTITION BY s.updated_at) > 1"
        )
        params: Params = {"n": limit, "off": max(limit - 1, 0)}
        before = ""
        if floor is not None and cursor is None and descending:
            params["floor"] = floor
            before = "s.updated_at >= :floor AND "
        parts = []
        if cursor is not None:
            params["u"], params["l"], params["sid"] = cursor
            before = f"s.updated_at {cmp} :u AND "
            parts.append(
                f"""SELECT * FROM (SELECT s.session_id, s.created_at, s.updated_at,
                                          {in_group} AS last_id
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
        join, tied = self._ties_join("p")
        return await self.backend.fetchall(
            f"""SELECT p.session_id, p.created_at, p.updated_at, {self._tie_break("p", tied)},
                       {self._count("p")}
                FROM (SELECT s.session_id, s.created_at, s.updated_at FROM {self._S} s
                      WHERE {where} ORDER BY s.session_id {way} LIMIT :n) p {join}
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
        join, tied = self._ties_join("p")
        return await self.backend.fetchall(
            f"""SELECT p.session_id, p.created_at, p.updated_at, {self._tie_break("p", tied)}, p.cnt
                FROM (SELECT * FROM ({counted}) q {where}
                      ORDER BY q.cnt {way}, q.session_id {way} LIMIT :n) p {join}
                ORDER BY p.cnt {way}, p.session_id {way}""",
            params,
        )

    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None:
        self.place.check_branch(branch)
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

