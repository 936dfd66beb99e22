"""``AdvancedSQLiteSession`` stores: token usage per turn (``turn_usage``)."""

from __future__ import annotations

from fluxgui.core.branches import MAIN, TurnUsage, UsageTotals

from ..backend import Backend, Params
from .schema import USAGE, details
from .tables import AdvancedTables


class AdvancedUsage:
    """Token usage as the library's ``get_turn_usage`` and ``get_session_usage`` give it
    (the Usage role of an ``AdvancedSQLiteSession`` store)."""

    def __init__(self, backend: Backend, tables: AdvancedTables) -> None:
        self.backend = backend
        self.tables = tables

    async def turn_usage(self, session_id: str, branch: str | None = None) -> list[TurnUsage]:
        """Token usage of each user turn of a branch (``main`` by default), by turn
        number, as ``get_turn_usage(branch_id=…)`` gives it."""
        branch = branch or MAIN
        if not await self.tables.has_table(USAGE):
            return []
        rows = await self.backend.fetchall(
            f"""SELECT user_turn_number, requests, input_tokens, output_tokens,
                       total_tokens, input_tokens_details, output_tokens_details
                FROM {USAGE}
                WHERE session_id = :s AND branch_id = :b
                ORDER BY user_turn_number""",
            {"s": session_id, "b": branch},
        )
        return [
            TurnUsage(r[0], r[1], r[2], r[3], r[4], details(r[5]), details(r[6])) for r in rows
        ]

    async def branch_usage(
        self, session_id: str, branch: str | None = None
    ) -> UsageTotals | None:
        """Usage summed over a branch's turns (``main`` by default), as
        ``get_session_usage(branch_id)``; ``None`` when the branch has no usage rows."""
        return await self._usage_totals(session_id, branch or MAIN)

    async def session_usage(self, session_id: str) -> UsageTotals | None:
        """Usage summed over every branch, as ``get_session_usage()``."""
        return await self._usage_totals(session_id, None)

    async def _usage_totals(self, session_id: str, branch: str | None) -> UsageTotals | None:
        if not await self.tables.has_table(USAGE):
            return None
        params: Params = {"s": session_id}
        where = "session_id = :s"
        if branch:
            where += " AND branch_id = :b"
            params["b"] = branch
        row = await self.backend.fetchone(
            f"""SELECT SUM(requests), SUM(input_tokens), SUM(output_tokens),
                       SUM(total_tokens), COUNT(*)
                FROM {USAGE} WHERE {where}""",
            params,
        )
        if not row or row[0] is None:
            return None
        return UsageTotals(*(int(v or 0) for v in row))
