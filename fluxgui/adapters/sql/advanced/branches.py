"""``AdvancedSQLiteSession`` stores: their branches and turns listed, branches created
and deleted, and those changes undone or redone (the Branches role).

Each is one transaction written with the library's SQL, so that what fluxgui writes reads
back identically through the library; each returns a
:class:`~fluxgui.core.branches.BranchChange` whose ``inverse()`` undoes it.
"""

from __future__ import annotations

import json

from fluxgui.core.branches import MAIN, BranchChange, BranchInfo, TurnInfo
from fluxgui.core.changes import Row
from fluxgui.core.errors import BranchError, Conflict, SessionNotFound, show_id
from fluxgui.core.structure import StructureReport

from ..agents.writing import AgentsEditor
from ..backend import Params, Tx
from ..search import in_clause
from . import bookkeeping as bk
from .reading import AdvancedReader
from .schema import MESSAGE_ROW, STRUCTURE, STRUCTURE_ROW, USAGE, USAGE_ROW, content_preview
from .structure import structure_report
from .tables import AdvancedTables, no_branch


class AdvancedBranches:
    """The branches of an ``AdvancedSQLiteSession`` store (see the module text): read
    with the library's queries, written in its transactions, each write checked by the
    store's ``editor`` (writable; holding envelopes, with its key)."""

    def __init__(self, reader: AdvancedReader, tables: AdvancedTables, editor: AgentsEditor) -> None:
        self.reader = reader
        self.tables = tables
        self.editor = editor
        self.place = reader.place
        self.backend = reader.backend
        self.target = reader.target
        self._M = reader.tables.M
        self._S = reader.tables.S

    async def branch_exists(self, session_id: str, branch: str) -> bool:
        """Whether the session has ``branch`` (``main`` always counts: a fresh reader is
        on it even before anything was written)."""
        if branch == MAIN:
            return True
        row = await self.backend.fetchone(
            f"SELECT COUNT(*) FROM {STRUCTURE} WHERE session_id = :s AND branch_id = :b",
            {"s": session_id, "b": branch},
        )
        return bool(row and row[0])

    async def require_branch(self, session_id: str, branch: str) -> None:
        """Raise :class:`SessionNotFound` / :class:`BranchNotFound` unless the session
        has ``branch``."""
        if not await self.branch_exists(session_id, branch):
            await self.reader.require_session(session_id)
            raise no_branch(session_id, branch)

    async def list_branches(
        self, session_id: str, *, current: str | None = None
    ) -> list[BranchInfo]:
        """The session's branches as ``list_branches()`` lists them (same counts, same
        order: by first structure row's time), ``current`` (default ``main``) marked. An
        unknown session has none."""
        current = current or MAIN
        # The library's query, word for word: ties in created_at come out in the order
        # SQLite's plan gives them, so the same SQL gives the same order.
        rows = await self.backend.fetchall(
            """
                        SELECT
                            ms.branch_id,
                            COUNT(*) as message_count,
                            COUNT(CASE WHEN ms.message_type = 'user' THEN 1 END) as user_turns,
                            MIN(ms.created_at) as created_at
                        FROM message_structure ms
                        WHERE ms.session_id = :s
                        GROUP BY ms.branch_id
                        ORDER BY created_at
                    """,
            {"s": session_id},
        )
        return [
            BranchInfo(str(b), int(n), int(u), created, is_current=b == current)
            for b, n, u, created in rows
        ]

    async def conversation_turns(
        self, session_id: str, *, branch: str | None = None
    ) -> list[TurnInfo]:
        """The user turns of a branch (``main`` by default), as
        ``get_conversation_turns()`` gives them: the numbers to branch from."""
        branch = branch or MAIN
        rows = await self.backend.fetchall(
            f"""
                        SELECT
                            ms.branch_turn_number,
                            am.message_data,
                            ms.created_at
                        FROM message_structure ms
                        JOIN {self._M} am ON ms.message_id = am.id
                        WHERE ms.session_id = :s AND ms.branch_id = :b
                        AND ms.message_type = 'user'
                        ORDER BY ms.branch_turn_number
                    """,
            {"s": session_id, "b": branch},
        )
        turns: list[TurnInfo] = []
        for number, data, created in rows:
            try:
                content = json.loads(data).get("content", "")
            except (ValueError, TypeError, AttributeError, RecursionError):
                continue  # the library skips what it cannot parse
            turns.append(TurnInfo(number, content_preview(content, 100), content, created))
        return turns
    async def structure_report(self, session_id: str) -> StructureReport:
        """The session's ``message_structure`` rows, the branches with usage rows and the
        items no structure row points at (what the session doctor checks)."""
        return await structure_report(self.backend, self._M, self.tables.has_table, session_id)


    async def create_branch_from_turn(
        self,
        session_id: str,
        turn_number: int,
        branch_name: str | None = None,
        *,
        branch: str | None = None,
    ) -> BranchChange:
        """Make a branch holding the items of ``branch`` (default ``main``) before user
        turn ``turn_number`` (its branch turn number, see :meth:`conversation_turns`), as
        ``create_branch_from_turn()`` does (one transaction; the library's session then
        reads the new branch: a caller shows ``change.branch_id``). The turns' usage is not copied. Without ``branch_name`` the
        library's ``branch_from_turn_<N>_<unix time>`` is used.

        Raises :class:`BranchError` for a blank or already used name (ids are never
        reused, deleted ones included) or a turn that is not a user turn of the branch.
        Returns the change; its ``branch_id`` is the new branch.
        """
        self.editor.check_writable()
        if branch_name is not None and not branch_name.strip():
            raise BranchError("a branch name cannot be empty")
        turn = int(turn_number)
        source = branch or MAIN

        async def body(tx: Tx) -> tuple[BranchChange, int]:
            await bk.ensure_reservations(tx, session_id)
            generation = await bk.ensure_generation(tx, session_id)
            found = await tx.fetchall(
                f"""SELECT am.message_data FROM {STRUCTURE} ms
                    JOIN {self._M} am ON ms.message_id = am.id
                    WHERE ms.session_id = :s AND ms.branch_id = :b
                    AND ms.branch_turn_number = :t AND ms.message_type = 'user'""",
                {"s": session_id, "b": source, "t": turn},
            )
            if not found:
                if not await self._session_exists(tx, session_id):
                    raise SessionNotFound(
                        f"unknown session id {show_id(session_id)} in {self.target}"
                    )
                raise BranchError(
                    f"turn {turn} does not contain a user message in branch "
                    f"{show_id(source)} of session {show_id(session_id)}"
                )
            branch_id = await bk.reserve(tx, session_id, branch_name, turn)
            copied = await tx.fetchall(
                f"""SELECT message_id, message_type, sequence_number, user_turn_number,
                           branch_turn_number, tool_name
                    FROM {STRUCTURE}
                    WHERE session_id = :s AND branch_id = :b AND branch_turn_number < :t
                    ORDER BY sequence_number""",
                {"s": session_id, "b": source, "t": turn},
            )
            added: tuple[Row, ...] = ()
            if copied:
                start = await bk.max_sequence(tx, session_id)
                await tx.executemany(
                    f"""INSERT INTO {STRUCTURE}
                        (session_id, message_id, branch_id, message_type, sequence_number,
                         user_turn_number, branch_turn_number, tool_name)
                        VALUES (:s, :m, :b, :ty, :q, :u, :bt, :tn)""",
                    [
                        {
                            "s": session_id, "m": r[0], "b": branch_id, "ty": r[1],
                            "q": start + i + 1, "u": r[3], "bt": r[4], "tn": r[5],
                        }
                        for i, r in enumerate(copied)
                    ],
                )
                added = tuple(await bk.structure_rows(tx, session_id, branch_id))
            change = BranchChange(
                session_id,
                branch_id,
                f"Branch {show_id(branch_id)} from turn {turn}",
                added={"structure": added},
            )
            return change, generation

        change, _generation = await self.backend.transaction(body)
        return change

    async def delete_branch(
        self, session_id: str, branch_id: str, *, current: str | None = None
    ) -> BranchChange:
        """Delete a branch as ``delete_branch()`` does (one transaction): its structure
        rows and usage rows, then every item of the session no branch points at any
        more. Its id stays reserved. ``main`` cannot be deleted, nor the branch the
        caller reads (``current``: switch to another first, as the library asks).
        Returns the change (apply its inverse to undo)."""
        self.editor.check_writable()
        if not branch_id or not branch_id.strip():
            raise BranchError("a branch id cannot be empty")
        if branch_id == MAIN:
            raise BranchError("the 'main' branch cannot be deleted")
        if branch_id == current:
            raise BranchError(
                f"branch {show_id(branch_id)} is the current branch of session "
                f"{show_id(session_id)}: switch to another branch first"
            )

        async def body(tx: Tx) -> BranchChange:
            await bk.ensure_reservations(tx, session_id)
            structure = await bk.structure_rows(tx, session_id, branch_id)
            if not structure:
                if not await self._session_exists(tx, session_id):
                    raise SessionNotFound(
                        f"unknown session id {show_id(session_id)} in {self.target}"
                    )
                raise no_branch(session_id, branch_id)
            usage: list[Row] = []
            if await self.tables.tx_has_table(tx, USAGE):
                usage = await bk.usage_rows(tx, session_id, branch_id)
                await tx.execute(
                    f"DELETE FROM {USAGE} WHERE session_id = :s AND branch_id = :b",
                    {"s": session_id, "b": branch_id},
                )
            await tx.execute(
                f"DELETE FROM {STRUCTURE} WHERE session_id = :s AND branch_id = :b",
                {"s": session_id, "b": branch_id},
            )
            orphans = f"""FROM {self._M} WHERE session_id = :s
                          AND id NOT IN (SELECT message_id FROM {STRUCTURE} ms
                                         WHERE ms.session_id = :s)"""
            messages = [
                dict(zip(MESSAGE_ROW, r, strict=True))
                for r in await tx.fetchall(
                    f"SELECT {', '.join(MESSAGE_ROW)} {orphans} ORDER BY id", {"s": session_id}
                )
            ]
            await tx.execute(f"DELETE {orphans}", {"s": session_id})
            return BranchChange(
                session_id,
                branch_id,
                f"Delete branch {show_id(branch_id)}",
                removed={
                    "structure": tuple(structure),
                    "usage": tuple(usage),
                    "messages": tuple(messages),
                },
            )

        return await self.backend.transaction(body)

    async def apply_branch_change(self, change: BranchChange) -> BranchChange:
        """Write a branch change again (redo) or its ``inverse()`` (undo), in one
        transaction, if the store still holds what it expects (else :class:`Conflict`
        and nothing is written). A caller reading a branch that no longer exists
        afterwards goes back to ``main``."""
        self.editor.check_writable()
        tables = {"messages": (self._M, MESSAGE_ROW), "structure": (STRUCTURE, STRUCTURE_ROW),
                  "usage": (USAGE, USAGE_ROW)}
        sid = change.session_id

        def conflict() -> Conflict:
            return Conflict(
                f"session {show_id(sid)} changed in {self.target} since; "
                "nothing was written (reload to see what it holds now)"
            )

        async def body(tx: Tx) -> BranchChange:
            for key, rows in list(change.removed.items()) + list(change.added.items()):
                if rows and key == "usage" and not await self.tables.tx_has_table(tx, USAGE):
                    raise conflict()
            for key, rows in change.removed.items():
                table, cols = tables[key]
                found = await bk.rows_by_id(tx, table, cols, [r["id"] for r in rows])
                for r in rows:
                    now = found.get(int(r["id"]))
                    if now is None or any(now[c] != r.get(c) for c in cols):
                        raise conflict()
            for key, rows in change.added.items():
                table, cols = tables[key]
                freed = {int(r["id"]) for r in change.removed.get(key, ())}
                wanted = [r["id"] for r in rows if int(r["id"]) not in freed]
                if await bk.rows_by_id(tx, table, cols, wanted):
                    raise conflict()
            before, after = change.sessions or (None, None)
            if change.sessions is not None:
                current = await tx.fetchall(
                    f"SELECT 1 FROM {self._S} WHERE session_id = :s", {"s": sid}
                )
                if bool(current) != (before is not None):
                    raise conflict()
                if after is not None:
                    await tx.execute(
                        f"INSERT INTO {self._S} (session_id, created_at, updated_at) "
                        "VALUES (:s, :c, :u) ON CONFLICT (session_id) DO UPDATE SET "
                        "created_at = excluded.created_at, updated_at = excluded.updated_at",
                        {"s": sid, "c": after.created_at, "u": after.updated_at},
                    )
            for key in ("usage", "structure", "messages"):
                table, _ = tables[key]
                ids = [int(r["id"]) for r in change.removed.get(key, ())]
                for start in range(0, len(ids), 400):
                    params: Params = {}
                    cond = in_clause(ids[start : start + 400], params, "i")
                    await tx.execute(f"DELETE FROM {table} WHERE id IN {cond}", params)
            for key in ("messages", "structure", "usage"):
                table, cols = tables[key]
                rows = change.added.get(key, ())
                if rows:
                    await tx.executemany(
                        f"INSERT INTO {table} ({', '.join(cols)}) "
                        f"VALUES ({', '.join(':' + c for c in cols)})",
                        [{c: r.get(c) for c in cols} for r in rows],
                    )
            if change.sessions is not None and after is None and before is not None:
                await tx.execute(f"DELETE FROM {self._S} WHERE session_id = :s", {"s": sid})
            return change

        result = await self.backend.transaction(body)
        return result

    # -- transaction helpers ---------------------------------------------------------

    async def _session_exists(self, tx: Tx, session_id: str) -> bool:
        for table in (self._S, self._M):
            got = await tx.fetchall(
                f"SELECT 1 FROM {table} WHERE session_id = :s LIMIT 1", {"s": session_id}
            )
            if got:
                return True
        return False
