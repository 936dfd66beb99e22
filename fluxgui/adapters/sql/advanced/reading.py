"""``AdvancedSQLiteSession`` stores, first layer: reading one branch at a time.

A reader of ``agent_messages`` alone sees every branch's items mixed; this layer reads
one branch at a time, in the library's order, exactly as ``get_items(branch_id=…)`` does.
The current branch is not stored on disk: a fresh reader is on ``main``. The store keeps
no current branch either: every read that depends on one takes it as a parameter
(``branch=None``: ``main``), so a shared store is never switched to read.
"""

from __future__ import annotations

import contextlib
from typing import Any

from fluxgui.core.branches import MAIN
from fluxgui.core.model import Message, SessionInfo, is_compaction
from fluxgui.core.ports import SessionOrder, SessionPage
from fluxgui.core.undecodable import from_agents_value, id_text

from ..agents.reading import AgentsReader
from ..backend import Params
from ..search import in_clause
from .schema import STRUCTURE
from ...reading import Page


class AdvancedReader(AgentsReader):
    """The Agents SDK store read one branch at a time (the Reader role of
    an ``AdvancedSQLiteSession`` store: see :mod:`fluxgui.adapters.sql.advanced`)."""

    # -- sessions: counts are of main in lists, of the current branch for one -------

    def _count(self, alias: str) -> str:
        return f"""(SELECT COUNT(*) FROM {STRUCTURE} ms JOIN {self._M} mm ON mm.id = ms.message_id
                    WHERE ms.session_id = {alias}.session_id AND ms.branch_id = 'main'
                      AND mm.session_id = ms.session_id)"""

    def _counts_by_session(self) -> str:
        return f"""SELECT ms.session_id, COUNT(*) AS cnt
                   FROM {STRUCTURE} ms JOIN {self._M} mm
                        ON mm.id = ms.message_id AND mm.session_id = ms.session_id
                   WHERE ms.branch_id = 'main' GROUP BY ms.session_id"""

    async def session_info(
        self, session_id: str, *, branch: str | None = None
    ) -> SessionInfo | None:
        info = await super().session_info(session_id)
        if info is not None:
            # The count of the branch read (the fallback row of a session without a
            # sessions row counted raw items).
            info.messages = await self.count_messages(session_id, branch=branch)
            await self._note_branches([info])
        return info

    async def list_sessions(
        self, *, limit: int = 50, cursor: tuple[Any, ...] | None = None,
        order: SessionOrder = "activity", descending: bool = True, since: float | None = None,
    ) -> SessionPage:
        page = await super().list_sessions(
            limit=limit, cursor=cursor, order=order, descending=descending, since=since
        )
        await self._note_branches(page.sessions)
        return page

    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]:
        infos = await super().sessions_by_ids(ids)
        await self._note_branches(infos)
        return infos

    async def _note_branches(self, infos: list[SessionInfo]) -> None:
        """Set how many branches each session has (one query for a page of rows)."""
        if not infos:
            return
        params: Params = {}
        ids = in_clause([info.id for info in infos], params, "b")
        rows = await self.backend.fetchall(
            f"""SELECT session_id, COUNT(DISTINCT branch_id) FROM {STRUCTURE}
                WHERE session_id IN {ids} GROUP BY session_id""",
            params,
        )
        counts = {id_text(r[0]): int(r[1]) for r in rows}
        for info in infos:
            info.branches = max(counts.get(info.id, 1), 1)

    # -- messages of one branch ----------------------------------------------------

    async def read_page(self, session_id: str, page: Page) -> list[Message]:
        """Items of ``branch`` (default ``main``) in the library's order
        (``sequence_number``); a message's ``id`` is its ``agent_messages`` row id, its
        ``sort_key`` ``(sequence_number, structure row id)``. Every item is read whole
        (the format does not declare ``partial_reads``: ``whole_up_to`` is not used)."""
        limit, anchor, direction, branch = page.limit, page.anchor, page.direction, page.branch
        branch = branch or MAIN
        params: Params = {"s": session_id, "b": branch, "n": limit}
        backward = direction == "backward"
        order = "DESC" if backward else "ASC"
        op = "<" if backward else ">"
        bound = ""
        if anchor is not None:
            seq, *rest = tuple(anchor)
            params["q"] = seq
            if rest:
                params["k"] = rest[0]
                bound = (
                    f" AND (s.sequence_number {op} :q"
                    f" OR (s.sequence_number = :q AND s.id {op} :k))"
                )
            else:
                bound = f" AND s.sequence_number {op} :q"
        rows = await self.backend.fetchall(
            f"""SELECT m.id, m.message_data, m.created_at, s.sequence_number, s.id
                FROM {STRUCTURE} s JOIN {self._M} m ON m.id = s.message_id
                WHERE s.session_id = :s AND s.branch_id = :b AND m.session_id = :s{bound}
                ORDER BY s.sequence_number {order}, s.id {order} LIMIT :n""",
            params,
        )
        if backward:
            rows.reverse()
        return [
            from_agents_value(r[0], r[1], r[2], utc=self._utc, sort_key=(r[3], r[4])) for r in rows
        ]

    async def message_anchor(
        self, session_id: str, message_id: int, *, branch: str | None = None
    ) -> tuple[Any, ...] | None:
        row = await self.backend.fetchone(
            f"""SELECT s.sequence_number, s.id FROM {STRUCTURE} s
                JOIN {self._M} m ON m.id = s.message_id
                WHERE s.session_id = :s AND s.branch_id = :b AND s.message_id = :i
                  AND m.session_id = :s
                ORDER BY s.sequence_number, s.id LIMIT 1""",
            {"s": session_id, "b": branch or MAIN, "i": int(message_id)},
        )
        return (row[0], row[1]) if row is not None else None

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        branch = branch or MAIN
        row = await self.backend.fetchone(
            f"""SELECT COUNT(*) FROM {STRUCTURE} s JOIN {self._M} m ON m.id = s.message_id
                WHERE s.session_id = :s AND s.branch_id = :b AND m.session_id = :s""",
            {"s": session_id, "b": branch},
        )
        return int(row[0]) if row else 0

    async def count_turns_before(
        self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None
    ) -> int:
        """User messages of ``branch`` (default ``main``) before ``anchor`` (a message's
        ``sort_key``) since the last compaction item before it, by the rule of
        :func:`fluxgui.core.turns.turns_before`."""
        branch = branch or MAIN
        seq, *rest = tuple(anchor)
        params: Params = {"s": session_id, "b": branch, "q": seq}
        before = "s.sequence_number < :q"
        if rest:
            params["k"] = rest[0]
            before = "(s.sequence_number < :q OR (s.sequence_number = :q AND s.id < :k))"
        joined = f"""FROM {STRUCTURE} s JOIN {self._M} m ON m.id = s.message_id
                WHERE s.session_id = :s AND s.branch_id = :b AND m.session_id = :s
                AND {before}"""
        newest_first = self.backend.stream(
            f"""SELECT s.sequence_number, s.id, m.message_data {joined}
                AND m.message_data LIKE '%compaction%'
                ORDER BY s.sequence_number DESC, s.id DESC""",
            dict(params),
            batch=200,
        )
        async with contextlib.aclosing(newest_first) as batches:
            async for rows in batches:
                found = next(
                    (r for r in rows if is_compaction(from_agents_value(0, r[2], None))), None
                )
                if found is not None:  # count from the last compaction item on
                    params["cq"], params["ck"] = found[0], found[1]
                    joined += (
                        " AND (s.sequence_number > :cq OR (s.sequence_number = :cq AND s.id > :ck))"
                    )
                    break
        row = await self.backend.fetchone(
            f"""SELECT COUNT(*) {joined}
                AND json_valid(m.message_data)
                AND json_type(m.message_data) = 'object'
                AND json_type(m.message_data, '$.role') = 'text'
                AND json_extract(m.message_data, '$.role') = 'user'
                AND COALESCE(json_extract(m.message_data, '$.type'), 'message') = 'message'""",
            params,
        )
        return int(row[0]) if row else 0
