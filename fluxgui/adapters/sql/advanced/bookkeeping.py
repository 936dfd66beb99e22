"""The library's bookkeeping inside a branch write: branch-id reservations, clear
generations, and the structure and usage rows a change records (each the library's own
SQL, run in the caller's transaction)."""

from __future__ import annotations

import time
from typing import Any

from fluxgui.core.changes import Row
from fluxgui.core.errors import BranchError, show_id

from ..backend import Params, Tx
from ..search import in_clause
from .schema import GENERATIONS, RESERVATIONS, STRUCTURE, STRUCTURE_ROW, USAGE, USAGE_ROW


async def ensure_reservations(tx: Tx, session_id: str) -> None:
    """The library's ``_ensure_branch_reservations_table``: the table, and every
    branch the session has reserved (stores from before reservations existed)."""
    await tx.execute(
        f"""
        CREATE TABLE IF NOT EXISTS {RESERVATIONS} (
            session_id TEXT NOT NULL,
            branch_id TEXT NOT NULL,
            PRIMARY KEY (session_id, branch_id)
        )
    """
    )
    missing = await tx.fetchall(
        f"""SELECT 1 FROM {STRUCTURE} ms WHERE ms.session_id = :s
            AND NOT EXISTS (SELECT 1 FROM {RESERVATIONS} br
                            WHERE br.session_id = ms.session_id AND br.branch_id = ms.branch_id)
            LIMIT 1""",
        {"s": session_id},
    )
    if missing:
        await tx.execute(
            f"""INSERT OR IGNORE INTO {RESERVATIONS} (session_id, branch_id)
                SELECT DISTINCT session_id, branch_id FROM {STRUCTURE} WHERE session_id = :s""",
            {"s": session_id},
        )


async def ensure_generation(tx: Tx, session_id: str) -> int:
    """The library's ``_ensure_session_clear_generations_table``; the generation."""
    await tx.execute(
        f"""
        CREATE TABLE IF NOT EXISTS {GENERATIONS} (
            session_id TEXT PRIMARY KEY,
            generation INTEGER NOT NULL DEFAULT 0
        )
    """
    )
    await tx.execute(
        f"INSERT OR IGNORE INTO {GENERATIONS} (session_id, generation) VALUES (:s, 0)",
        {"s": session_id},
    )
    row = await tx.fetchall(
        f"SELECT generation FROM {GENERATIONS} WHERE session_id = :s", {"s": session_id}
    )
    return int(row[0][0])


async def reserve(tx: Tx, session_id: str, name: str | None, turn: int) -> str:
    """The library's ``_reserve_branch_id``: a name used before is refused; without
    one, ``branch_from_turn_<N>_<unix time>`` (then ``_2``, ``_3``, …)."""
    sql = (
        f"INSERT OR IGNORE INTO {RESERVATIONS} (session_id, branch_id) VALUES (:s, :b)"
    )
    if name is not None:
        if await tx.execute(sql, {"s": session_id, "b": name}) == 0:
            raise BranchError(
                f"branch id {show_id(name)} has already been used in session "
                f"{show_id(session_id)}: choose a new one"
            )
        return name
    base = f"branch_from_turn_{turn}_{int(time.time())}"
    candidate, suffix = base, 1
    while await tx.execute(sql, {"s": session_id, "b": candidate}) != 1:
        suffix += 1
        candidate = f"{base}_{suffix}"
    return candidate


async def max_sequence(tx: Tx, session_id: str) -> int:
    """The session's highest ``sequence_number`` over every branch (0: none)."""
    row = await tx.fetchall(
        f"SELECT COALESCE(MAX(sequence_number), 0) FROM {STRUCTURE} WHERE session_id = :s",
        {"s": session_id},
    )
    return int(row[0][0])


async def structure_rows(tx: Tx, session_id: str, branch_id: str) -> list[Row]:
    """A branch's ``message_structure`` rows, in the library's order."""
    return await _branch_rows(tx, STRUCTURE, STRUCTURE_ROW, "sequence_number", session_id, branch_id)


async def usage_rows(tx: Tx, session_id: str, branch_id: str) -> list[Row]:
    """A branch's ``turn_usage`` rows, by turn."""
    return await _branch_rows(tx, USAGE, USAGE_ROW, "user_turn_number", session_id, branch_id)


async def _branch_rows(
    tx: Tx, table: str, columns: tuple[str, ...], order: str, session_id: str, branch_id: str
) -> list[Row]:
    got = await tx.fetchall(
        f"""SELECT {', '.join(columns)} FROM {table}
            WHERE session_id = :s AND branch_id = :b ORDER BY {order}, id""",
        {"s": session_id, "b": branch_id},
    )
    return [dict(zip(columns, r, strict=True)) for r in got]


async def rows_by_id(
    tx: Tx, table: str, cols: tuple[str, ...], ids: list[Any]
) -> dict[int, Row]:
    """Row id → the row (``cols``) of the rows ``ids`` of ``table`` that exist."""
    out: dict[int, Row] = {}
    ids = [int(i) for i in ids]
    for start in range(0, len(ids), 400):
        params: Params = {}
        cond = in_clause(ids[start : start + 400], params, "i")
        for r in await tx.fetchall(
            f"SELECT {', '.join(cols)} FROM {table} WHERE id IN {cond}", params
        ):
            row = dict(zip(cols, r, strict=True))
            out[int(row["id"])] = row
    return out
