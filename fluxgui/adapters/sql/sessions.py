"""Writing a whole session into a SQL store (import, copy): one transaction, with the
session's times kept, and the conversion of ISO times to what a timestamp column holds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timezone
from typing import Any

from fluxgui.core.changes import Row
from fluxgui.core.errors import Conflict, show_id

from .backend import Tx
from .editor import TableEditor
from .fluxvalues import storable


def stored_time(iso: str | None, dialect: str, utc: bool) -> Any:
    """An ISO 8601 time as a timestamp column of ``dialect`` holds it (``None``: unknown).

    Times with a zone become UTC where the store keeps UTC; SQLite gets text in its
    ``CURRENT_TIMESTAMP`` layout (``YYYY-MM-DD HH:MM:SS[.ffffff]``), others a naive datetime.
    """
    if not iso:
        return None
    try:
        dt = datetime.fromisoformat(iso[:-1] + "+00:00" if iso.endswith("Z") else iso)
    except ValueError:
        return None
    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc if utc else None).replace(tzinfo=None)
    if dialect == "sqlite":
        return dt.isoformat(sep=" ")
    return dt


async def session_exists(editor: TableEditor, tx: Tx, sid: str) -> bool:
    """Whether the store holds the session ``sid`` (a row, or a sessions-table row)."""
    got = await tx.fetchall(
        f"SELECT 1 FROM {editor.table} WHERE session_id = :s LIMIT 1", {"s": sid}
    )
    if got:
        return True
    return await editor.session_row(tx, sid) is not None


async def write_session(
    editor: TableEditor,
    sid: str,
    pages: AsyncIterator[list[Row]],
    *,
    created_at: Any = None,
    updated_at: Any = None,
    rename: bool = False,
) -> tuple[str, int]:
    """Write a new session from pages of rows (stored column values without ``id``), in
    one transaction; returns (the session id used, rows written).

    A session id the store already has is refused (:class:`Conflict`), or with
    ``rename`` the first free ``<id>-2``, ``<id>-3``, … is used. A lone surrogate in the
    id (a JSON string can hold one; an id read from bytes that are not UTF-8 holds them)
    is written as U+FFFD, as in text: what fluxgui writes is UTF-8.
    """
    sid = storable(sid)

    async def body(tx: Tx) -> tuple[str, int]:
        target, n = sid, 1
        while await session_exists(editor, tx, target):
            if not rename:
                raise Conflict(
                    f"session {show_id(sid)} already exists in {editor.place.target}; "
                    "nothing was written for it"
                )
            n += 1
            target = f"{sid}-{n}"
        now = await editor.now(tx)
        first = last = None
        if editor.sessions_table is not None:
            await tx.execute(
                f"INSERT INTO {editor.sessions_table} (session_id, created_at, updated_at) "
                "VALUES (:s, :c, :u)",
                {"s": target, "c": created_at or now, "u": updated_at or now},
            )
        cols = ("session_id", *editor.columns)
        sql = (
            f"INSERT INTO {editor.table} ({', '.join(cols)}) "
            f"VALUES ({', '.join(':' + c for c in cols)})"
        )
        count = 0
        async for page in pages:
            rows = [
                {**row, "session_id": target, "created_at": row.get("created_at") or now}
                for row in page
            ]
            if not rows:
                continue
            first = first or rows[0]["created_at"]
            last = rows[-1]["created_at"]
            await tx.executemany(sql, rows)
            count += len(rows)
        if editor.sessions_table is not None and (created_at is None or updated_at is None):
            await tx.execute(
                f"UPDATE {editor.sessions_table} SET created_at = :c, updated_at = :u "
                "WHERE session_id = :s",
                {"s": target, "c": created_at or first or now, "u": updated_at or last or now},
            )
        return target, count

    return await editor.place.backend.transaction(body)
