"""Forks of SQL sessions, and fluxgui's sidecar table that remembers where each came from.

A fork is a new session holding another's rows up to a message; the origin is never
changed. ``fluxgui_forks`` (fluxgui's own table; the libraries never read it) records
the origin session, the message and the time.
"""

from __future__ import annotations

from typing import Any

from fluxgui.core.changes import Change, SessionRow
from fluxgui.core.errors import Conflict, SessionNotFound, show_id

from .backend import Backend, Tx
from .editor import TableEditor
from .sessions import session_exists

FORKS_TABLE = "fluxgui_forks"


def forks_ddl(dialect: str) -> str:
    """fluxgui's own sidecar table: where each fork came from. The libraries never read
    it; the origin session itself is never changed by a fork."""
    id_type = "INTEGER" if dialect == "sqlite" else "BIGINT"
    return (
        f"CREATE TABLE IF NOT EXISTS {FORKS_TABLE} ("
        "session_id TEXT PRIMARY KEY, origin_session_id TEXT NOT NULL, "
        f"origin_message_id {id_type} NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)"
    )


async def fork(
    editor: TableEditor, sid: str, at_id: int, new_id: str | None, label: str
) -> Change:
    """A new session holding ``sid``'s rows up to and including ``at_id`` (stored values
    copied as they are, times included), in one transaction with its sidecar record.

    ``new_id`` taken → :class:`Conflict`; ``None`` → the first free ``<sid>-fork``,
    ``<sid>-fork-2``, …
    """

    async def body(tx: Tx) -> Change:
        found = await editor.rows_by_id(tx, sid, [at_id])
        if at_id not in found:
            raise SessionNotFound(f"message {at_id} is not in session {show_id(sid)}")
        anchor = found[at_id]
        target = await free_fork_id(editor, tx, sid, new_id)
        origin_row = await editor.session_row(tx, sid)
        now = await editor.now(tx)
        after = SessionRow(origin_row.created_at if origin_row else now, now)
        if editor.sessions_table is not None:
            await tx.execute(
                f"INSERT INTO {editor.sessions_table} (session_id, created_at, updated_at) "
                "VALUES (:s, :c, :u)",
                {"s": target, "c": after.created_at, "u": after.updated_at},
            )
        cols = ", ".join(editor.columns)
        await tx.execute(
            f"INSERT INTO {editor.table} (session_id, {cols}) "
            f"SELECT :t, {cols} FROM {editor.table} WHERE session_id = :s AND id <= :i "
            "ORDER BY id",
            {"t": target, "s": sid, "i": anchor["id"]},
        )
        await record_fork(tx, target, sid, at_id)
        added = await editor.rows(tx, target)
        return Change(
            target, label, (), tuple(added),
            None, after if editor.sessions_table is not None else None,
        )

    return await editor.place.backend.transaction(body)


async def record_fork(tx: Tx, fork_id: str, origin_id: str, at_id: int) -> None:
    """Note in the sidecar table that ``fork_id`` was forked from ``origin_id`` at
    message ``at_id`` (a fork made again under the same name replaces the note)."""
    await tx.execute(forks_ddl(tx.dialect))
    await tx.execute(
        f"INSERT INTO {FORKS_TABLE} (session_id, origin_session_id, origin_message_id) "
        "VALUES (:t, :s, :i) ON CONFLICT (session_id) DO UPDATE SET "
        "origin_session_id = excluded.origin_session_id, "
        "origin_message_id = excluded.origin_message_id, created_at = CURRENT_TIMESTAMP",
        {"t": fork_id, "s": origin_id, "i": int(at_id)},
    )


async def free_fork_id(editor: TableEditor, tx: Tx, sid: str, new_id: str | None) -> str:
    """``new_id`` if free (else :class:`Conflict`), or the first free ``<sid>-fork…``."""
    if new_id is not None:
        if await session_exists(editor, tx, new_id):
            raise Conflict(f"session {show_id(new_id)} already exists in {editor.place.target}")
        return new_id
    target, n = f"{sid}-fork", 1
    while await session_exists(editor, tx, target):
        n += 1
        target = f"{sid}-fork-{n}"
    return target


async def fork_origin(backend: Backend, session_id: str) -> dict[str, Any] | None:
    """Where a session was forked from (``None``: not a fork made by fluxgui).

    Runs each time a session is shown: one look-up for the sidecar table, not a read
    of the whole schema."""
    if backend.dialect == "sqlite":
        exists = await backend.fetchone(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n", {"n": FORKS_TABLE}
        )
    elif backend.dialect == "postgresql":
        exists = await backend.fetchone("SELECT to_regclass(:n)", {"n": FORKS_TABLE})
        exists = exists if exists and exists[0] is not None else None
    else:
        exists = (1,) if FORKS_TABLE in await backend.tables() else None
    if exists is None:
        return None
    row = await backend.fetchone(
        f"SELECT origin_session_id, origin_message_id, created_at FROM {FORKS_TABLE} "
        "WHERE session_id = :s",
        {"s": session_id},
    )
    if row is None:
        return None
    return {"session_id": row[0], "message_id": int(row[1]), "created_at": str(row[2])}
