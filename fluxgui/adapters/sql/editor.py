"""Edits of SQL session stores as reversible :class:`~fluxgui.core.changes.Change` records.

Every edit (clear, delete, pop, update, insert) runs in one transaction that reads what
it is about to change, changes it and returns a ``Change``: the rows it removed and
the rows it added, each with its id, time and stored values, and the session row before
and after. ``change.inverse()`` applied to the store undoes the edit exactly (the removed
rows come back with their own ids and times); applying the change again redoes it.

Applying a change first checks that the store still holds what the change expects (the
rows to remove are there, unchanged; the ids to add are free), else it raises
:class:`~fluxgui.core.errors.Conflict` and nothing is written.

Inserting into the middle of a session that is ordered by id moves the rows after the
insertion point to new ids (same values, same times), in the same transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fluxgui.core.changes import Change, Row, SessionRow, Where
from fluxgui.core.errors import Conflict, SessionNotFound, show_id

from ..parts import Place
from .backend import Backend, Params, Tx

_CHUNK = 400

class TableEditor:
    """Edits one session store kept in SQL tables (at ``place``).

    ``table`` and ``sessions_table`` are quoted names (``sessions_table`` ``None`` when
    the format has none); ``columns`` are the stored columns besides ``id`` and
    ``session_id``. Every format orders a session's rows by ``id``.
    """

    def __init__(
        self,
        place: Place[Backend],
        *,
        table: str,
        table_name: str,
        columns: Sequence[str],
        sessions_table: str | None = None,
    ) -> None:
        self.place = place
        self.table = table
        self.table_name = table_name
        self.columns = tuple(columns)
        self.sessions_table = sessions_table

    def sealed(self, sid: str, values: Row) -> Row:
        """New values as this store writes them into ``sid`` (a store with an encryption
        key seals them; the plain editor keeps them as they are)."""
        return values

    # -- reading inside a transaction ---------------------------------------------

    def _select(self) -> str:
        return ", ".join(("id", *self.columns))

    def _row(self, values: tuple[Any, ...]) -> Row:
        return dict(zip(("id", *self.columns), values, strict=True))

    async def rows(self, tx: Tx, sid: str) -> list[Row]:
        got = await tx.fetchall(
            f"SELECT {self._select()} FROM {self.table} WHERE session_id = :s "
            "ORDER BY id",
            {"s": sid},
        )
        return [self._row(r) for r in got]

    async def rows_by_id(self, tx: Tx, sid: str, ids: Sequence[int]) -> dict[int, Row]:
        out: dict[int, Row] = {}
        for start in range(0, len(ids), _CHUNK):
            chunk = list(ids[start : start + _CHUNK])
            params: Params = {"s": sid}
            names = []
            for n, value in enumerate(chunk):
                params[f"i{n}"] = int(value)
                names.append(f":i{n}")
            got = await tx.fetchall(
                f"SELECT {self._select()} FROM {self.table} "
                f"WHERE session_id = :s AND id IN ({', '.join(names)})",
                params,
            )
            for r in got:
                row = self._row(r)
                out[int(row["id"])] = row
        return out

    async def rows_after(self, tx: Tx, sid: str, anchor: Row, *, inclusive: bool) -> list[Row]:
        """The rows of the session after ``anchor`` in stored order (and it, if inclusive)."""
        op = ">=" if inclusive else ">"
        got = await tx.fetchall(
            f"SELECT {self._select()} FROM {self.table} WHERE session_id = :s AND id {op} :i "
            "ORDER BY id",
            {"s": sid, "i": anchor["id"]},
        )
        return [self._row(r) for r in got]

    async def row_before(self, tx: Tx, sid: str, anchor: Row) -> Row | None:
        got = await tx.fetchall(
            f"SELECT {self._select()} FROM {self.table} WHERE session_id = :s AND id < :i "
            "ORDER BY id DESC LIMIT 1",
            {"s": sid, "i": anchor["id"]},
        )
        return self._row(got[0]) if got else None

    async def last_row(self, tx: Tx, sid: str) -> Row | None:
        got = await tx.fetchall(
            f"SELECT {self._select()} FROM {self.table} WHERE session_id = :s "
            "ORDER BY id DESC LIMIT 1",
            {"s": sid},
        )
        return self._row(got[0]) if got else None

    async def session_row(self, tx: Tx, sid: str) -> SessionRow | None:
        if self.sessions_table is None:
            return None
        got = await tx.fetchall(
            f"SELECT created_at, updated_at FROM {self.sessions_table} WHERE session_id = :s",
            {"s": sid},
        )
        return SessionRow(got[0][0], got[0][1]) if got else None

    async def now(self, tx: Tx) -> Any:
        """The time a ``CURRENT_TIMESTAMP`` default would store, as the column holds it."""
        sql = "SELECT LOCALTIMESTAMP" if tx.dialect == "postgresql" else "SELECT CURRENT_TIMESTAMP"
        return (await tx.fetchall(sql))[0][0]

    async def touched(self, tx: Tx, sid: str, before: SessionRow | None) -> SessionRow | None:
        """The session row after an edit: ``updated_at`` now (created now if missing)."""
        if self.sessions_table is None:
            return None
        now = await self.now(tx)
        return SessionRow(before.created_at if before else now, now)

    async def new_ids(self, tx: Tx, n: int) -> list[int]:
        """``n`` fresh ids, increasing, above every id the table has ever handed out."""
        if n <= 0:
            return []
        if tx.dialect == "postgresql":
            seq = (
                await tx.fetchall("SELECT pg_get_serial_sequence(:t, 'id')", {"t": self.table})
            )[0][0]
            if seq is not None:
                got = await tx.fetchall(
                    "SELECT nextval(CAST(:q AS regclass)) FROM generate_series(1, :n) ORDER BY 1",
                    {"q": seq, "n": n},
                )
                return [int(r[0]) for r in got]
            await tx.execute(f"LOCK TABLE {self.table} IN EXCLUSIVE MODE")
        top = (await tx.fetchall(f"SELECT MAX(id) FROM {self.table}"))[0][0] or 0
        if tx.dialect == "sqlite":
            # AUTOINCREMENT never reuses an id, even a deleted one: start past its counter.
            has_seq = await tx.fetchall(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'"
            )
            if has_seq:
                got = await tx.fetchall(
                    "SELECT seq FROM sqlite_sequence WHERE name = :t", {"t": self.table_name}
                )
                if got and got[0][0] is not None:
                    top = max(int(top), int(got[0][0]))
        return list(range(int(top) + 1, int(top) + 1 + n))

    # -- applying ------------------------------------------------------------------

    async def apply(self, tx: Tx, change: Change, *, checked: bool = False) -> None:
        """Write ``change`` (see the module text). ``checked``: its removed rows were just
        read in this transaction, so they need no second look."""
        sid = change.session_id
        if not checked:
            await self._expect(tx, change)
        if self.sessions_table is not None and change.session_after is not None:
            after = change.session_after
            await tx.execute(
                f"INSERT INTO {self.sessions_table} (session_id, created_at, updated_at) "
                "VALUES (:s, :c, :u) ON CONFLICT (session_id) DO UPDATE "
                "SET created_at = excluded.created_at, updated_at = excluded.updated_at",
                {"s": sid, "c": after.created_at, "u": after.updated_at},
            )
        removed = change.removed_ids
        for start in range(0, len(removed), _CHUNK):
            chunk = removed[start : start + _CHUNK]
            params: Params = {"s": sid}
            names = []
            for n, value in enumerate(chunk):
                params[f"i{n}"] = value
                names.append(f":i{n}")
            count = await tx.execute(
                f"DELETE FROM {self.table} WHERE session_id = :s AND id IN ({', '.join(names)})",
                params,
            )
            if count != len(chunk):
                raise self._conflict(sid)
        if change.added:
            cols = ("id", "session_id", *self.columns)
            await tx.executemany(
                f"INSERT INTO {self.table} ({', '.join(cols)}) "
                f"VALUES ({', '.join(':' + c for c in cols)})",
                [{**row, "session_id": sid} for row in change.added],
            )
        if (
            self.sessions_table is not None
            and change.session_after is None
            and change.session_before is not None
        ):
            await tx.execute(
                f"DELETE FROM {self.sessions_table} WHERE session_id = :s", {"s": sid}
            )

    async def _expect(self, tx: Tx, change: Change) -> None:
        sid = change.session_id
        if change.removed:
            found = await self.rows_by_id(tx, sid, change.removed_ids)
            for row in change.removed:
                now = found.get(int(row["id"]))
                if now is None or any(now[c] != row[c] for c in self.columns):
                    raise self._conflict(sid)
        if change.added:
            # The ids to add must be free, but for those this change removes first.
            freed = set(change.removed_ids)
            taken = await self._taken(tx, [i for i in change.added_ids if i not in freed])
            if taken:
                raise self._conflict(sid)
        if self.sessions_table is not None:
            current = await self.session_row(tx, sid)
            before = change.session_before
            if (current is None) != (before is None):
                raise self._conflict(sid)

    async def _taken(self, tx: Tx, ids: list[int]) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for start in range(0, len(ids), _CHUNK):
            listed = ", ".join(str(int(i)) for i in ids[start : start + _CHUNK])
            out += await tx.fetchall(f"SELECT id FROM {self.table} WHERE id IN ({listed})")
        return out

    def _conflict(self, sid: str) -> Conflict:
        return Conflict(
            f"session {show_id(sid)} changed in {self.place.target} since; "
            "nothing was written (reload to see what it holds now)"
        )

    # -- edits -------------------------------------------------------------------------

    async def run(self, build: Callable[[Tx], Awaitable[Change]]) -> Change:
        """Build a change from what the store holds and write it, in one transaction."""

        async def body(tx: Tx) -> Change:
            change = await build(tx)
            await self.apply(tx, change, checked=True)
            return change

        return await self.place.backend.transaction(body)

    async def replay(self, change: Change) -> Change:
        """Apply a change (an undo's inverse, or a redo) after checking it still fits."""

        async def body(tx: Tx) -> Change:
            await self.apply(tx, change)
            return change

        return await self.place.backend.transaction(body)

    async def _require_rows(self, tx: Tx, sid: str) -> list[Row]:
        rows = await self.rows(tx, sid)
        if not rows and await self.session_row(tx, sid) is None:
            raise self._unknown(sid)
        return rows

    def _unknown(self, sid: str) -> SessionNotFound:
        return SessionNotFound(f"unknown session id {show_id(sid)} in {self.place.target}")

    async def clear(self, sid: str, label: str) -> Change:
        async def build(tx: Tx) -> Change:
            rows = await self._require_rows(tx, sid)
            before = await self.session_row(tx, sid)
            return Change(sid, label, tuple(rows), (), before, await self.touched(tx, sid, before))

        return await self.run(build)

    async def delete_session(self, sid: str, label: str) -> Change:
        async def build(tx: Tx) -> Change:
            rows = await self._require_rows(tx, sid)
            before = await self.session_row(tx, sid)
            return Change(sid, label, tuple(rows), (), before, None)

        return await self.run(build)

    async def as_written(self, sid: str, label: str) -> Change:
        """The session as the change that wrote it (no row before, its rows after): read
        in one transaction, nothing written."""

        async def body(tx: Tx) -> Change:
            rows = await self._require_rows(tx, sid)
            return Change(sid, label, (), tuple(rows), None, await self.session_row(tx, sid))

        return await self.place.backend.transaction(body)

    async def delete_rows(self, sid: str, ids: Sequence[int], label: str) -> Change:
        async def build(tx: Tx) -> Change:
            found = await self.rows_by_id(tx, sid, ids)
            missing = [i for i in ids if int(i) not in found]
            if missing:
                raise SessionNotFound(
                    f"message {missing[0]} is not in session {show_id(sid)} (reload)"
                )
            before = await self.session_row(tx, sid)
            rows = [found[int(i)] for i in dict.fromkeys(int(i) for i in ids)]
            rows.sort(key=lambda r: int(r["id"]))
            return Change(sid, label, tuple(rows), (), before, await self.touched(tx, sid, before))

        return await self.run(build)

    async def pop_last(self, sid: str, label: str) -> Change:
        async def build(tx: Tx) -> Change:
            last = await self.last_row(tx, sid)
            if last is None:
                if await self.session_row(tx, sid) is None:
                    raise self._unknown(sid)
                raise SessionNotFound(f"session {show_id(sid)} has no message to remove")
            before = await self.session_row(tx, sid)
            return Change(sid, label, (last,), (), before, await self.touched(tx, sid, before))

        return await self.run(build)

    async def update_row(self, sid: str, row_id: int, values: Row, label: str) -> Change:
        async def build(tx: Tx) -> Change:
            found = await self.rows_by_id(tx, sid, [row_id])
            if row_id not in found:
                raise SessionNotFound(f"message {row_id} is not in session {show_id(sid)} (reload)")
            old = found[row_id]
            before = await self.session_row(tx, sid)
            new = {**old, **values}
            return Change(sid, label, (old,), (new,), before, await self.touched(tx, sid, before))

        return await self.run(build)

    async def insert_row(
        self, sid: str, anchor_id: int | None, where: Where, values: Row, label: str
    ) -> Change:
        """Insert ``values`` before or after the row ``anchor_id`` (``None``: at the end)."""

        async def build(tx: Tx) -> Change:
            before = await self.session_row(tx, sid)
            if anchor_id is None:
                tail: list[Row] = []
                prev = await self.last_row(tx, sid)
                if prev is None and before is None:
                    raise self._unknown(sid)
            else:
                found = await self.rows_by_id(tx, sid, [anchor_id])
                if anchor_id not in found:
                    raise SessionNotFound(
                        f"message {anchor_id} is not in session {show_id(sid)} (reload)"
                    )
                anchor = found[anchor_id]
                tail = await self.rows_after(tx, sid, anchor, inclusive=where == "before")
                prev = anchor if where == "after" else await self.row_before(tx, sid, anchor)
            # The new row takes its neighbour's time, so times stay in order.
            if prev is not None:
                created = prev["created_at"]
            elif tail:
                created = tail[0]["created_at"]
            else:
                created = await self.now(tx)
            ids = await self.new_ids(tx, 1 + len(tail))
            added = [{**values, "id": ids[0], "created_at": created}]
            added += [replace_id(row, new_id) for row, new_id in zip(tail, ids[1:], strict=True)]
            return Change(
                sid, label, tuple(tail), tuple(added), before, await self.touched(tx, sid, before)
            )

        return await self.run(build)


def replace_id(row: Row, new_id: int) -> Row:
    """``row`` moved to the id ``new_id`` (same values, same time)."""
    return {**row, "id": new_id}


__all__ = ["TableEditor", "replace_id"]
