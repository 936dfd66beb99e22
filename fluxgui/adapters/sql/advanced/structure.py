"""``AdvancedSQLiteSession`` stores: a session's structure rows as the doctor reads them.

One read (three queries) of ``message_structure`` for a session, each row with the
session of the item it points at (``NULL``: no such item), the branches with
``turn_usage`` rows, and the session's items no structure row points at. The judging is
the doctor's (:mod:`fluxgui.services.doctor.structure`); this only reads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fluxgui.core.structure import StructureReport, StructureRow

from ..backend import Backend
from .schema import STRUCTURE, USAGE


async def structure_report(
    backend: Backend, M: str, has_table: Callable[[str], Awaitable[bool]], session_id: str
) -> StructureReport:
    """The structure of ``session_id`` (see :class:`StructureReport`) in the store whose
    messages table is ``M`` (quoted); ``has_table`` tells whether a table exists."""
    rows = await backend.fetchall(
        f"""SELECT s.id, s.message_id, s.branch_id, s.message_type, s.sequence_number,
                   s.user_turn_number, s.branch_turn_number, m.session_id
            FROM {STRUCTURE} s LEFT JOIN {M} m ON m.id = s.message_id
            WHERE s.session_id = :s
            ORDER BY s.branch_id, s.sequence_number, s.id""",
        {"s": session_id},
    )
    usage: list[tuple[object, ...]] = []
    if await has_table(USAGE):
        usage = await backend.fetchall(
            f"SELECT DISTINCT branch_id FROM {USAGE} WHERE session_id = :s ORDER BY branch_id",
            {"s": session_id},
        )
    loose = await backend.fetchall(
        f"""SELECT m.id FROM {M} m WHERE m.session_id = :s AND NOT EXISTS
                (SELECT 1 FROM {STRUCTURE} s WHERE s.message_id = m.id)
            ORDER BY m.id""",
        {"s": session_id},
    )
    return StructureReport(
        rows=tuple(
            StructureRow(
                int(r[0]), int(r[1]), str(r[2]), None if r[3] is None else str(r[3]),
                r[4], r[5], r[6], None if r[7] is None else str(r[7]),
            )
            for r in rows
        ),
        usage_branches=tuple(str(r[0]) for r in usage),
        unreferenced_ids=tuple(int(r[0]) for r in loose),
    )
