"""The OpenAI Agents SDK schema: ``agent_sessions`` + ``agent_messages`` (names configurable).

Written by ``agents.SQLiteSession`` / ``AsyncSQLiteSession`` (SQLite, ordered by ``id``)
and ``SQLAlchemySession`` (any URL, ordered by ``(created_at, id)``). Items are JSON.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fluxgui.core.errors import InvalidItem, ReadOnlyError
from fluxgui.core.items import MESSAGE_ROLES, validate_item
from fluxgui.core.turns import starts_turn
from fluxgui.core.model import (
    Message,
    SessionInfo,
    from_agents_row,
    iso_time,
    message_to_item,
)

from .base import Direction, Store
from .backends import Backend, Params, quote_ident
from .changes import Row, TableEditor
from .sqlstore import in_clause, like_any, search_ids, search_patterns
from .encryption import ItemCipher

SESSION_COLUMNS = {"session_id", "created_at", "updated_at"}
MESSAGE_COLUMNS = {"id", "session_id", "message_data", "created_at"}
DEFAULT_SESSIONS = "agent_sessions"
DEFAULT_MESSAGES = "agent_messages"


def _count_user_items(rows: list[tuple[Any, ...]]) -> int:
    return sum(starts_turn(from_agents_row(r[0], r[1], None)) for r in rows)


class AgentsStore(Store):
    """The Agents SDK schema on SQLite or any SQLAlchemy URL."""

    format = "agents"

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
        self.cipher = cipher
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
        """Look for ``EncryptedSession`` envelopes (set ``needs_key``) and check the key."""

    # -- helpers -------------------------------------------------------------------

    def _message(self, row: tuple[Any, ...]) -> Message:
        row_id, data, created = row[0], row[1], row[2]
        key = (created, int(row_id)) if self._by_time else (int(row_id),)
        return from_agents_row(row_id, data, created, utc=self._utc, sort_key=key)

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

    async def session_info(self, session_id: str) -> SessionInfo | None:
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
        variants = search_patterns(text)

        def id_sql(params: Params) -> str:
            cond = like_any(self.backend, "session_id", variants, params, "p")
            return f"SELECT session_id FROM {self._S} WHERE {cond}"

        def row_sql(params: Params) -> str:
            cond = like_any(self.backend, "message_data", variants, params, "p")
            return (
                f"SELECT session_id, id, message_data, created_at FROM {self._M} "
                f"WHERE {cond} ORDER BY id DESC"
            )

        def row_text(row: tuple[Any, ...]) -> str:
            return from_agents_row(row[1], row[2], None).text

        return search_ids(self.backend, text, id_sql, row_sql, row_text)

    # -- messages ------------------------------------------------------------------

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 100,
        anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward",
    ) -> list[Message]:
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
        return [self._message(r) for r in rows]

    async def count_messages(self, session_id: str) -> int:
        row = await self.backend.fetchone(
            f"SELECT COUNT(*) FROM {self._M} WHERE session_id = :s", {"s": session_id}
        )
        return int(row[0]) if row else 0

    async def count_turns_before(self, session_id: str, anchor: tuple[Any, ...]) -> int:
        """User messages before ``anchor`` (the rule of :func:`starts_turn`: an item
        with role ``user`` and no type or type ``message``), counted by the database on
        SQLite, else from the rows that mention "user", parsed in a worker thread."""
        params: Params = {"s": session_id}
        if self._by_time:
            params["c"], params["i"] = anchor
            before = "(created_at < :c OR (created_at = :c AND id < :i))"
        else:
            params["i"] = anchor[0]
            before = "id < :i"
        if self.backend.dialect == "sqlite":
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
        count = 0
        async for rows in self.backend.stream(
            f"SELECT id, message_data FROM {self._M} WHERE session_id = :s AND {before} "
            "AND message_data LIKE '%user%'",
            params,
            batch=2000,
        ):
            count += await asyncio.to_thread(_count_user_items, rows)
        return count

    async def flux_messages(self, session_id: str, limit: int | None) -> list[dict[str, Any]]:
        return [
            {"role": m.role, "content": m.text}
            for m in await self.latest_messages(session_id, limit or None)  # 0: all, as flux
        ]

    # -- writing -------------------------------------------------------------------

    def _dump(self, item: Any) -> str:
        # SQLiteSession writes json.dumps defaults; SQLAlchemySession compact JSON.
        if self.backend.dialect == "sqlite":
            return json.dumps(item)
        return json.dumps(item, separators=(",", ":"))

    def editor(self) -> TableEditor:
        return TableEditor(
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
        message dict mapped to an item. Checked to be a valid item of its type."""
        if not isinstance(spec, dict):
            raise InvalidItem(f"an item must be a JSON object, not {type(spec).__name__}")
        item = spec if "type" in spec or spec.get("role") in MESSAGE_ROLES else message_to_item(spec)
        original_type = None
        if original is not None and isinstance(original.raw, dict):
            original_type = original.raw.get("type", "message")
        validate_item(item, original_type=original_type)
        return {"message_data": self._dump(item)}

    def import_row(self, message: Message) -> Row:
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
        return {"message_data": self._dump(item)}

    async def add_messages(self, session_id: str, messages: list[dict[str, Any]]) -> int:
        """Append messages: items (dicts with a ``type``) as they are, flux dicts mapped."""
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
                    [{"s": session_id, "d": self._dump(i)} for i in items],
                ),
                (
                    f"UPDATE {self._S} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = :s",
                    {"s": session_id},
                ),
            ]
        )
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
