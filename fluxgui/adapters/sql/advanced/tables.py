"""What the parts of an ``AdvancedSQLiteSession`` store share: which of the library's
own tables exist (made on its first write, never dropped), looked up once each."""

from __future__ import annotations

from fluxgui.core.errors import BranchNotFound, show_id

from ..backend import Backend, Tx
from .schema import GENERATIONS, RESERVATIONS, USAGE


class AdvancedTables:
    """The library's optional tables of one store (see the module text)."""

    def __init__(self, backend: Backend, tables: set[str] | None = None) -> None:
        self.backend = backend
        self._known: set[str] = set(tables or ()) & {USAGE, RESERVATIONS, GENERATIONS}

    async def has_table(self, name: str) -> bool:
        # The library makes branch_reservations and session_clear_generations on its
        # first write; tables are never dropped, so only a missing one is asked again.
        if name in self._known:
            return True
        row = await self.backend.fetchone(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n", {"n": name}
        )
        if row:
            self._known.add(name)
        return bool(row)

    async def tx_has_table(self, tx: Tx, name: str) -> bool:
        """:meth:`has_table` inside a transaction (what it finds is not remembered)."""
        if name in self._known:
            return True
        got = await tx.fetchall(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n", {"n": name}
        )
        return bool(got)

    async def generation(self, session_id: str) -> int:
        """The session's clear generation (0 before the library made its table)."""
        if not await self.has_table(GENERATIONS):
            return 0
        row = await self.backend.fetchone(
            f"SELECT generation FROM {GENERATIONS} WHERE session_id = :s", {"s": session_id}
        )
        return int(row[0]) if row and row[0] is not None else 0


def no_branch(session_id: str, branch_id: str) -> BranchNotFound:
    """The error for a branch the session does not have."""
    return BranchNotFound(
        f"branch {show_id(branch_id)} does not exist in session {show_id(session_id)}"
    )
