"""flux's ``messages`` table (``flux.sessions.SQLiteSession``), on SQLite or any SQL URL.

One table, no sessions table: a session is a distinct ``session_id``. Order is ``id``.
Writes follow flux's own rules: missing role → ``user``, missing content → ``''``,
``None`` → NULL, metadata as JSON text or NULL for an empty dict.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fluxgui.core.items import validate_flux_message
from fluxgui.core.model import Message, SessionInfo, from_flux_row, iso_time
from fluxgui.core.roles import Traits
from fluxgui.core.ports import Capabilities, Direction
from fluxgui.core.undecodable import flag_message, has_undecodable, id_text, strip_flag

from ..base import check_branch
from .backend import Backend, Params
from .detect import FLUX_COLUMNS as REQUIRED_COLUMNS
from .detect import FLUX_TABLE as TABLE
from .heads import flux_page
from .search import MAX_KEY, bind_all, in_clause, search_ids, session_ids, text_condition
from .sessionrows import RowReads
from .fluxvalues import plain_message as _plain_message
from .fluxvalues import storable as _storable
from .fluxvalues import text_value as _text_value
from .store import SqlStore

if TYPE_CHECKING:
    from fluxgui.core.changes import Row
    from fluxgui.core.jsonrecords import RowPage

    from .editor import TableEditor

__all__ = ["REQUIRED_COLUMNS", "TABLE", "FluxStore"]

SQLITE_DDL = [
    """CREATE TABLE IF NOT EXISTS messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT,
        metadata TEXT,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
    )""",
    "CREATE INDEX IF NOT EXISTS idx_session ON messages(session_id)",
]
GENERIC_DDL = [
    """CREATE TABLE IF NOT EXISTS messages (
        id BIGSERIAL PRIMARY KEY,
        session_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT,
        metadata TEXT,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
    )""",
    "CREATE INDEX IF NOT EXISTS idx_session ON messages(session_id, id)",
]

_COLS = "id, role, content, metadata, created_at"
#: a session's rows after id :b, oldest first
_FORWARD = f"""SELECT {_COLS} FROM messages WHERE session_id = :s AND id > :b
               ORDER BY id LIMIT :n"""


def _per_session(sid: str) -> str:
    """Count, first time, last time and last id of the session ``sid`` (an SQL
    expression), each an index look-up on the session index."""
    return f"""(SELECT COUNT(*) FROM messages c WHERE c.session_id = {sid}),
               (SELECT f.created_at FROM messages f WHERE f.session_id = {sid}
                ORDER BY f.id LIMIT 1),
               (SELECT l.created_at FROM messages l WHERE l.session_id = {sid}
                ORDER BY l.id DESC LIMIT 1),
               (SELECT MAX(x.id) FROM messages x WHERE x.session_id = {sid})"""


class FluxStore(RowReads, SqlStore):
    """The flux schema."""

    format = "flux"
    TRAITS = Traits(columns=True, strict_metadata=True, partial_reads=True)
    CAPABILITIES = Capabilities(append=True, edit=True, clear=True, fork=True, watermark=True,
                                text_filter=True, partial_reads=True)

    def __init__(self, backend: Backend, target: str) -> None:
        super().__init__(backend, target)
        self._utc = backend.utc_times

    @property
    def capabilities(self) -> Capabilities:
        """Edits, clears, forks, id watermarks, searches the database narrows, items read
        as their start; server-side search on Postgres."""
        return replace(self.CAPABILITIES, server_search=self.backend.dialect == "postgresql")

    @staticmethod
    def ddl(backend: Backend) -> list[str]:
        """The statements that make flux's table on ``backend`` (``create``)."""
        return SQLITE_DDL if backend.dialect == "sqlite" else GENERIC_DDL

    def _message(self, row: tuple[Any, ...]) -> Message:
        m = from_flux_row(row[0], row[1], row[2], row[3], row[4], utc=self._utc)
        if has_undecodable(row):  # bytes that are not UTF-8: see fluxgui.core.undecodable
            m = flag_message(m, {"role": row[1], "content": row[2], "metadata": row[3]})
        return m

    def _info(self, sid: Any, count: Any, first: Any, last: Any, last_id: Any) -> SessionInfo:
        return SessionInfo(
            id=id_text(sid),
            messages=int(count),
            created_at=iso_time(first, utc=self._utc),
            updated_at=iso_time(last, utc=self._utc),
            sort_key=(int(last_id),),
        )

    # -- sessions ------------------------------------------------------------------

    def _row_info(self, row: tuple[Any, ...]) -> SessionInfo:
        return self._info(*row)

    async def _page_by_activity(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]:
        # Cursor: the id of the last row of the page's last session.
        cmp, way = ("<", "DESC") if descending else (">", "ASC")
        bound = int(cursor[0]) if cursor else (MAX_KEY if descending else -MAX_KEY)
        if descending and self.backend.dialect != "sqlite":
            from .fluxpages import latest_sessions

            return await latest_sessions(self.backend, limit, bound)
        # Walk the table by id (backwards for the most recent first) and keep each
        # session's last row: the cost follows the page, not the table (MAX(id) per
        # session is one seek on the session index; no GROUP BY over the whole table).
        # Counts and first times only for the rows shown.
        sql = f"""
            SELECT m.session_id,
                   (SELECT COUNT(*) FROM messages c WHERE c.session_id = m.session_id),
                   (SELECT f.created_at FROM messages f WHERE f.session_id = m.session_id
                    ORDER BY f.id LIMIT 1),
                   m.created_at, m.id
            FROM messages m
            WHERE m.id {cmp} :before
              AND m.id = (SELECT MAX(x.id) FROM messages x WHERE x.session_id = m.session_id)
            ORDER BY m.id {way} LIMIT :limit"""
        return await self.backend.fetchall(sql, {"before": bound, "limit": limit})

    async def _page_by_id(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]:
        # There is no sessions table: hop from one distinct session id to the next through
        # the session index (a "loose index scan"), one index seek per session, so a page
        # costs its own sessions and not the table. Cursor: the page's last session id.
        cmp, way = ("<", "DESC") if descending else (">", "ASC")
        params: Params = {"limit": limit}
        if cursor is not None:
            first = (
                f"SELECT s.session_id FROM messages s WHERE s.session_id {cmp} :after "
                f"ORDER BY s.session_id {way} LIMIT 1"
            )
            params["after"] = str(cursor[0])
        else:  # MIN/MAX: one index seek to either end
            first = f"SELECT {'MAX' if descending else 'MIN'}(s.session_id) FROM messages s"
        sql = f"""
            WITH RECURSIVE ids(sid, n) AS (
                SELECT ({first}), 1
                UNION ALL
                SELECT (SELECT s.session_id FROM messages s WHERE s.session_id {cmp} ids.sid
                        ORDER BY s.session_id {way} LIMIT 1), ids.n + 1
                FROM ids WHERE ids.sid IS NOT NULL AND ids.n < :limit
            )
            SELECT ids.sid, {_per_session("ids.sid")}
            FROM ids WHERE ids.sid IS NOT NULL ORDER BY ids.n"""
        return await self.backend.fetchall(sql, params)

    async def _page_by_count(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]:
        # A count is only known by counting: one GROUP BY over the table (through the
        # session index), keyset on (count, session id); times only for the page's rows.
        cmp, way = ("<", "DESC") if descending else (">", "ASC")
        params: Params = {"limit": limit}
        having = ""
        if cursor is not None:
            having = (
                f"HAVING COUNT(*) {cmp} :c OR (COUNT(*) = :c AND session_id {cmp} :s)"
            )
            params["c"], params["s"] = int(cursor[0]), str(cursor[1])
        sql = f"""
            SELECT g.sid, g.cnt, f.created_at, l.created_at, g.last_id
            FROM (SELECT session_id AS sid, COUNT(*) AS cnt, MIN(id) AS first_id,
                         MAX(id) AS last_id
                  FROM messages GROUP BY session_id {having}
                  ORDER BY COUNT(*) {way}, session_id {way} LIMIT :limit) g
            JOIN messages f ON f.id = g.first_id
            JOIN messages l ON l.id = g.last_id
            ORDER BY g.cnt {way}, g.sid {way}"""
        return await self.backend.fetchall(sql, params)

    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None:
        check_branch(self, branch)
        if self.backend.dialect == "sqlite":
            # Each an index look-up; only the count walks the session's entries (one
            # aggregate of COUNT and MAX would step MAX through all of them too).
            sql = f"SELECT {_per_session(':s')}"
        else:
            sql = """SELECT COUNT(*),
                      (SELECT f.created_at FROM messages f WHERE f.session_id = :s
                       ORDER BY f.id LIMIT 1),
                      (SELECT l.created_at FROM messages l WHERE l.session_id = :s
                       ORDER BY l.id DESC LIMIT 1),
                      MAX(id)
               FROM messages WHERE session_id = :s"""
        row = await self.backend.fetchone(sql, {"s": session_id})
        if row is None or not row[0]:
            return None
        return self._info(session_id, row[0], row[1], row[2], row[3])

    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]:
        if not ids:
            return []
        params: Params = {}
        if self.backend.dialect == "sqlite":
            # Index look-ups per session (as session_info does) instead of reading every
            # row of every matched session.
            values = ", ".join(f"({name})" for name in bind_all(ids, params, "i"))
            rows = await self.backend.fetchall(
                f"""WITH ids(sid) AS (VALUES {values})
                    SELECT sid, {_per_session("ids.sid")} FROM ids""",
                params,
            )
            return [self._info(*r) for r in rows if r[1]]
        rows = await self.backend.fetchall(
            f"""SELECT session_id, COUNT(*), MIN(created_at), MAX(created_at), MAX(id)
                FROM messages WHERE session_id IN {in_clause(ids, params, "i")}
                GROUP BY session_id""",
            params,
        )
        return [self._info(*r) for r in rows]

    def search_session_ids(self, text: str) -> AsyncIterator[str]:
        def row_sql(params: Params) -> str:
            # One pass over the table checks both the session id and the text.
            on_id = text_condition(self.backend, "session_id", text, params, "i")
            on_text = text_condition(self.backend, "content", text, params, "p")
            return (
                f"SELECT session_id, content FROM messages WHERE {on_id} OR {on_text} "
                "ORDER BY id DESC"
            )

        def row_text(row: tuple[Any, ...]) -> str:
            return from_flux_row(0, "user", row[1], None, None).text

        return search_ids(self.backend, text, None, row_sql, row_text)

    # -- search support ------------------------------------------------------------

    async def messages_after(
        self, watermark: int, *, limit: int = 1000, session_id: str | None = None
    ) -> list[tuple[str, Message]]:
        params: Params = {"w": int(watermark), "n": limit}
        if session_id is not None:
            params["s"] = session_id
        from .textsearch import after_sql, as_messages  # (search support, loaded for it)

        rows = await self.backend.fetchall(after_sql(TABLE, _COLS, session_id), params)
        return await as_messages(rows, lambda r: self._message(r[1:]))

    async def session_marks(self) -> dict[str, tuple[int, int]]:
        from .textsearch import marks

        return await marks(self.backend, TABLE)

    async def message_total(self) -> int:
        from .textsearch import total

        return await total(self.backend, TABLE)

    async def server_text_index(self) -> str | None:
        from .textsearch import trigram_index

        return await trigram_index(self.backend, TABLE, "content")

    async def ids_holding(self, text: str) -> list[str]:
        params: Params = {}
        cond = text_condition(self.backend, "sid", text, params, "p")
        rows = await self.backend.fetchall(f"{session_ids(TABLE)} WHERE sid IS NOT NULL AND {cond}", params)
        return [id_text(r[0]) for r in rows]

    def text_index_advice(self) -> str:
        from .textsearch import trigram_advice

        return trigram_advice(TABLE, "content")

    async def index_advice(self) -> list[str]:
        from .textsearch import missing_index

        return await missing_index(
            self.backend, TABLE, ("session_id", "id"), "listing sessions by activity"
        )

    def search_messages(
        self, text: str, limit: int | None = None
    ) -> AsyncIterator[list[tuple[str, Message]]]:
        from .textsearch import candidates

        params: Params = {}
        cond = text_condition(self.backend, "content", text, params, "p")
        return candidates(
            self.backend, TABLE, f"session_id, {_COLS}", cond, params,
            lambda r: self._message(r[1:]), limit,
        )

    # -- messages ------------------------------------------------------------------

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 100,
        anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward",
        branch: str | None = None,
        whole_up_to: int | None = None,
    ) -> list[Message]:
        check_branch(self, branch)
        if whole_up_to is not None:
            return await flux_page(self.backend, self._message, session_id, limit, anchor, direction == "backward", whole_up_to)
        rows = await self._page_rows(session_id, limit, anchor, direction == "backward")
        return [self._message(r) for r in rows]

    async def _page_rows(
        self, session_id: str, limit: int, anchor: tuple[Any, ...] | None, backward: bool
    ) -> list[tuple[Any, ...]]:
        """Up to ``limit`` rows (:data:`_COLS`) next to ``anchor``, oldest first."""
        if not backward:
            bound = int(anchor[0]) if anchor else -MAX_KEY
            return await self.backend.fetchall(_FORWARD, {"s": session_id, "b": bound, "n": limit})
        bound = int(anchor[0]) if anchor else MAX_KEY
        rows = await self.backend.fetchall(
            f"""SELECT {_COLS} FROM messages WHERE session_id = :s AND id < :b
                ORDER BY id DESC LIMIT :n""",
            {"s": session_id, "b": bound, "n": limit},
        )
        rows.reverse()
        return rows

    # (the export's reads: RowReads)
    _row_table, _row_columns, _row_order = TABLE, _COLS, "id"

    def _row_anchor(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        return (int(row[0]),)

    async def _row_page(self, rows: list[tuple[Any, ...]], session_id: str) -> RowPage:
        from fluxgui.core.jsonrecords import RowPage

        return RowPage("flux", rows, self._message, self._utc)

    async def message_anchor(
        self, session_id: str, message_id: int, *, branch: str | None = None
    ) -> tuple[Any, ...] | None:
        check_branch(self, branch)
        row = await self.backend.fetchone(
            "SELECT id FROM messages WHERE session_id = :s AND id = :i",
            {"s": session_id, "i": int(message_id)},
        )
        return (int(row[0]),) if row is not None else None

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        check_branch(self, branch)
        row = await self.backend.fetchone(
            "SELECT COUNT(*) FROM messages WHERE session_id = :s", {"s": session_id}
        )
        return int(row[0]) if row else 0

    async def count_turns_before(self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None) -> int:
        check_branch(self, branch)
        if self.backend.dialect != "sqlite":
            return await super().count_turns_before(session_id, anchor)
        # A user row opens a turn unless its metadata is unreadable (then it shows as
        # "other"): the same rule as from_flux_row (any JSON value reads, an empty text
        # is none), counted by SQLite.
        row = await self.backend.fetchone(
            """SELECT COUNT(*) FROM messages WHERE session_id = :s AND id < :a
               AND role = 'user' AND (metadata IS NULL OR CAST(metadata AS TEXT) = ''
               OR json_valid(CAST(metadata AS TEXT)))""",
            {"s": session_id, "a": int(anchor[0])},
        )
        return int(row[0]) if row else 0

    async def flux_messages(self, session_id: str, limit: int | None, *, branch: str | None = None) -> list[dict[str, Any]]:
        check_branch(self, branch)
        # Straight from the rows, as flux returns them (a NULL content stays None).
        sql = "SELECT role, content, metadata FROM messages WHERE session_id = :s"
        params: Params = {"s": session_id}
        if limit:
            rows = await self.backend.fetchall(sql + " ORDER BY id DESC LIMIT :n", {**params, "n": limit})
            rows.reverse()
        else:
            rows = await self.backend.fetchall(sql + " ORDER BY id", params)
        import json

        out: list[dict[str, Any]] = []
        for role, content, metadata in rows:
            item: dict[str, Any] = {"role": role, "content": content}
            if metadata:
                try:
                    item["metadata"] = json.loads(metadata)
                except ValueError:
                    pass  # flux itself would fail here; the text is not a message's metadata
            out.append(item)
        return out

    # -- writing -------------------------------------------------------------------

    async def add_messages(self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None) -> int:
        import json

        check_branch(self, branch)
        self._check_writable()
        rows = [
            {
                "s": session_id,
                "r": str(m.get("role") or "user"),
                "c": _text_value(m.get("content", "")),
                "m": json.dumps(m["metadata"]) if m.get("metadata") else None,
            }
            for m in messages
        ]
        if not rows:
            return 0
        await self.backend.write(
            [
                (
                    "INSERT INTO messages (session_id, role, content, metadata) "
                    "VALUES (:s, :r, :c, :m)",
                    rows,
                )
            ]
        )
        return len(rows)

    def table_editor(self) -> TableEditor:
        from .editor import TableEditor

        return TableEditor(
            self.place,
            table=TABLE,
            table_name=TABLE,
            columns=("role", "content", "metadata", "created_at"),
            order=("id",),
        )

    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> Row:
        import json

        m = validate_flux_message(spec, stored_metadata=original.metadata if original else None)
        return {
            "role": m.get("role") or "user",
            "content": _text_value(m.get("content", "")),
            "metadata": json.dumps(m["metadata"]) if m.get("metadata") else None,
        }

    def import_row(self, message: Message) -> Row:
        import json

        m = message
        raw = m.raw
        if m.kind == "other" and isinstance(raw, str) and raw != m.text:
            # A flux row whose metadata is not an object: keep that text as it is.
            return {"role": _storable(m.role), "content": _storable(m.text), "metadata": _storable(raw)}
        if m.metadata is not None and not isinstance(m.metadata, dict):
            # Metadata that is a list, a string…: written back as the same JSON value.
            return {"role": _storable(m.role or "user"), "content": _storable(m.text),
                    "metadata": json.dumps(m.metadata)}
        meta = dict(m.metadata) if m.metadata else {}
        # A row read with bytes that were not UTF-8 is copied with its replacement
        # characters, without the reader's flag (fluxgui.core.undecodable).
        flagged = strip_flag(m, meta)
        content = _storable(m.text)
        if isinstance(raw, dict) and (not _plain_message(raw) or content != m.text):
            # An Agents SDK item flux has no columns for (or whose text a database
            # cannot hold as it is) rides along in the metadata.
            meta["agents_item"] = raw
        # json.dumps defaults, as flux writes it (ASCII: a lone surrogate stays storable);
        # an empty object read from a row is written back as it was, not as NULL.
        keep = meta or (m.metadata is not None and not flagged)
        return {
            "role": _storable(m.role or "user"),
            "content": content,
            "metadata": json.dumps(meta) if keep else None,
        }

    async def clear_session(self, session_id: str) -> int:
        self._check_writable()
        (count,) = await self.backend.write(
            [("DELETE FROM messages WHERE session_id = :s", {"s": session_id})]
        )
        return count
