"""An ``AdvancedSQLiteSession`` session's own bookkeeping, as plain records.

The library keeps one ``message_structure`` row per item per branch, pointing at a shared
``agent_messages`` row, and ``turn_usage`` rows per branch and user turn. The session
doctor (:mod:`fluxgui.services.doctor`) reads them as a :class:`StructureReport` to find
rows that point nowhere, branches that hold nothing and turn numbers out of order.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StructureRow:
    """One ``message_structure`` row of a session."""

    id: int
    message_id: int
    branch_id: str
    message_type: str | None
    sequence_number: int | None
    user_turn_number: int | None
    branch_turn_number: int | None
    #: the session of the ``agent_messages`` row it points at (``None``: no such row)
    message_session: str | None


@dataclass(frozen=True)
class StructureReport:
    """What a session's structure holds: its rows in the library's reading order
    (``sequence_number``, then row id), the branches that have ``turn_usage`` rows, and
    the ids of the session's stored items that no structure row points at (the library
    never reads them)."""

    rows: tuple[StructureRow, ...]
    usage_branches: tuple[str, ...]
    unreferenced_ids: tuple[int, ...]
