"""Reading flux's ``messages`` table (``flux.sessions.SQLiteSession``): the session list,
a session's rows by keyset, counts, turns and flux's own view of a session.

One table, no sessions table: a session is a distinct ``session_id``. Order is ``id``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from fluxgui.core.model import Message, SessionInfo, from_flux_row
from fluxgui.core.times import iso_time
from fluxgui.core.undecodable import flag_message, has_undecodable, id_text

from ..parts import Place
from ..reading import ListingReader, Page
from .backend import Backend, Params
from .detect import FLUX_TABLE as TABLE
from .heads import flux_page
from .search import MAX_KEY, bind_all, in_clause, search_ids, text_condition

if TYPE_CHECKING:
    from fluxgui.core.jsonrecords import RowPage

#: the columns a message is read from
COLS = "id, role, content, metadata, created_at"
_COLS = COLS
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


class FluxReader(ListingReader[Backend]):
    """The sessions and messages of flux's table (the Reader role; also the source of
    the export's row pages)."""

    def __init__(self, place: Place[Backend]) -> None:
        super().__init__(place)
        self._utc = place.backend.utc_times

    def message(self, row: tuple[Any, ...]) -> Message:
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
        self.place.check_branch(branch)
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

    def search_session_ids(self, text: str) -> AsyncGenerator[str, None]:
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
    # -- messages ------------------------------------------------------------------

    async def read_page(self, session_id: str, page: Page) -> list[Message]:
        limit, anchor, direction = page.limit, page.anchor, page.direction
        branch, whole_up_to = page.branch, page.whole_up_to
        self.place.check_branch(branch)
        if whole_up_to is not None:
            return await flux_page(self.backend, self.message, session_id, limit, anchor, direction == "backward", whole_up_to)
        rows = await self._page_rows(session_id, limit, anchor, direction == "backward")
        return [self.message(r) for r in rows]

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

    # (the export's reads: SqlRows)
    row_table, row_columns, row_order = TABLE, _COLS, "id"

    async def page_rows(
        self, session_id: str, limit: int, anchor: tuple[Any, ...] | None, backward: bool
    ) -> list[tuple[Any, ...]]:
        return await self._page_rows(session_id, limit, anchor, backward)

    def row_anchor(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        return (int(row[0]),)

    async def row_page(self, rows: list[tuple[Any, ...]], session_id: str) -> RowPage:
        from fluxgui.core.jsonrecords import RowPage

        return RowPage("flux", rows, self.message, self._utc)

    async def message_anchor(
        self, session_id: str, message_id: int, *, branch: str | None = None
    ) -> tuple[Any, ...] | None:
        self.place.check_branch(branch)
        row = await self.backend.fetchone(
            "SELECT id FROM messages WHERE session_id = :s AND id = :i",
            {"s": session_id, "i": int(message_id)},
        )
        return (int(row[0]),) if row is not None else None

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        self.place.check_branch(branch)
        row = await self.backend.fetchone(
            "SELECT COUNT(*) FROM messages WHERE session_id = :s", {"s": session_id}
        )
        return int(row[0]) if row else 0

    async def count_turns_before(self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None) -> int:
        self.place.check_branch(branch)
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
        self.place.check_branch(branch)
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
