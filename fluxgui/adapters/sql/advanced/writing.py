"""``AdvancedSQLiteSession`` stores: appending items to a branch (the Writer role), and
forking a branch into a new session (the Forks role).

fluxgui never opens a store through the library (it creates tables); it reads and writes
these tables itself, with the library's SQL, so that each answer is the one the library
gives on the same file, and what fluxgui writes reads back identically through it.
Item edits are refused (as for the plain ``agents`` format they would leave the
structure rows out of step): the writer's other writes are the plain store's, which
refuse them.
"""

from __future__ import annotations

from typing import Any

from fluxgui.core.branches import MAIN, BranchChange
from fluxgui.core.changes import Row, SessionRow
from fluxgui.core.errors import InvalidItem, SessionNotFound, UnreadableItems, show_id
from fluxgui.core.model import message_to_item

from ...encryption import looks_encrypted
from ..agents.writing import AgentsEditor, AgentsWriter
from ..backend import Tx
from ..editor import TableEditor
from ..edits import SqlForks
from ..forks import free_fork_id, record_fork
from .branches import AdvancedBranches
from .schema import MESSAGE_ROW, STRUCTURE, STRUCTURE_ROW


class AdvancedWriter(AgentsWriter):
    """Messages appended to a branch as the library's ``add_items`` does; a branch
    change undone or redone by the store's branches."""

    def __init__(self, editor: AgentsEditor, branches: AdvancedBranches) -> None:
        super().__init__(editor)
        self.branches = branches

    async def add_messages(
        self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None
    ) -> int:
        """Append messages to ``branch`` (default ``main``) as the library's ``add_items``
        does: the items, and their ``message_structure`` rows (message type, sequence
        number after the session's last, user and branch turn numbers), in one
        transaction. Only message items for now: tool items would need the library's
        tool-name rules, and are refused with that reason."""
        self.editor.check_writable()
        items: list[dict[str, Any]] = []
        for m in messages:
            if not isinstance(m, dict):
                raise InvalidItem(f"an item must be a JSON object, not {type(m).__name__}")
            item = message_to_item(m)
            if item.get("type", "message") != "message" or "name" in item:
                raise InvalidItem(
                    "only messages can be added to an AdvancedSQLiteSession store yet "
                    "(tool items need the library's tool-name rules)"
                )
            items.append(item)
        if not items:
            return 0
        branch = branch or MAIN
        editor = self.editor.table_editor()

        def message_type(item: dict[str, Any]) -> str:  # the library's classification
            if item.get("role") == "user":
                return "user"
            if item.get("role") == "assistant":
                return "assistant"
            return str(item["type"]) if item.get("type") else "other"

        async def body(tx: Tx) -> int:
            await tx.execute(
                f"INSERT INTO {self.tables.S} (session_id) VALUES (:s) ON CONFLICT (session_id) DO NOTHING",
                {"s": session_id},
            )
            ids = await editor.new_ids(tx, len(items))
            await tx.executemany(
                f"INSERT INTO {self.tables.M} (id, session_id, message_data) VALUES (:i, :s, :d)",
                [{"i": i, "s": session_id, "d": self.editor.dump(item)} for i, item in zip(ids, items)],
            )
            seq = (await tx.fetchall(
                f"SELECT COALESCE(MAX(sequence_number), 0) FROM {STRUCTURE} WHERE session_id = :s",
                {"s": session_id},
            ))[0][0]
            turn, branch_turn = (await tx.fetchall(
                f"""SELECT COALESCE(MAX(user_turn_number), 0), COALESCE(MAX(branch_turn_number), 0)
                    FROM {STRUCTURE} WHERE session_id = :s AND branch_id = :b""",
                {"s": session_id, "b": branch},
            ))[0]
            rows = []
            users = 0
            for n, (message_id, item) in enumerate(zip(ids, items)):
                users += item.get("role") == "user"
                rows.append({
                    "s": session_id, "m": message_id, "b": branch, "t": message_type(item),
                    "q": int(seq) + n + 1, "u": int(turn) + users, "bt": int(branch_turn) + users,
                })
            await tx.executemany(
                f"""INSERT INTO {STRUCTURE} (session_id, message_id, branch_id, message_type,
                        sequence_number, user_turn_number, branch_turn_number, tool_name)
                    VALUES (:s, :m, :b, :t, :q, :u, :bt, NULL)""",
                rows,
            )
            await tx.execute(
                f"UPDATE {self.tables.S} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = :s",
                {"s": session_id},
            )
            return len(items)

        return await self.backend.transaction(body)

    async def apply_change(self, change: Any) -> Any:
        """Undo/redo of any edit of this store: a :class:`BranchChange` is written by
        :meth:`AdvancedBranches.apply_branch_change`, anything else as every store writes its changes
        (so branch edits share the window's one undo stack)."""
        if isinstance(change, BranchChange):
            return await self.branches.apply_branch_change(change)
        return await super().apply_change(change)


class AdvancedForks(SqlForks):
    """A branch of a session forked into a new session, with its structure rows."""

    editor: AgentsEditor

    def __init__(self, editor: AgentsEditor) -> None:
        super().__init__(editor.place, editor)
        self.tables = editor.tables

    async def fork_session(
        self, session_id: str, at_message_id: int, new_id: str | None = None, *,
        branch: str | None = None, drop_unreadable: bool = False,
    ) -> BranchChange:
        """Fork ``branch`` (default ``main``) of the session up to and including ``at_message_id`` into a
        new session (on its ``main``), as the library would have written it: its items
        copied, and their ``message_structure`` rows with the library's message types,
        tool names, sequence and turn numbers. Usage is not copied (as the library's
        branches do not copy it). The origin is not changed; undoable. A session holding
        ``EncryptedSession`` envelopes is not forked: fluxgui reads no key in these stores,
        and an envelope copied as it is would never open under the fork's id
        (``drop_unreadable`` changes nothing)."""
        self.editor.check_writable()
        sid, at = session_id, int(at_message_id)
        branch = branch or MAIN
        editor = self.editor.table_editor()
        structure_ids = TableEditor(
            self.place, table=STRUCTURE, table_name=STRUCTURE, columns=()
        )
        label = f"Fork session {show_id(sid)} at message {at}"

        async def body(tx: Tx) -> BranchChange:
            got = await tx.fetchall(
                f"SELECT sequence_number FROM {STRUCTURE} WHERE session_id = :s "
                "AND branch_id = :b AND message_id = :m",
                {"s": sid, "b": branch, "m": at},
            )
            if not got:
                raise SessionNotFound(
                    f"message {at} is not in session {show_id(sid)} (branch {show_id(branch)})"
                )
            target = await free_fork_id(editor, tx, sid, new_id)
            rows = await tx.fetchall(
                f"""SELECT m.message_data, m.created_at, s.message_type, s.tool_name
                    FROM {STRUCTURE} s JOIN {self.tables.M} m ON m.id = s.message_id
                    WHERE s.session_id = :s AND s.branch_id = :b AND s.sequence_number <= :q
                    ORDER BY s.sequence_number""",
                {"s": sid, "b": branch, "q": got[0][0]},
            )
            sealed = sum(looks_encrypted(r[0]) for r in rows)
            if sealed:
                raise UnreadableItems(
                    f"session {show_id(sid)} in {self.place.target} holds encrypted items "
                    "(EncryptedSession), which fluxgui does not open in an "
                    "AdvancedSQLiteSession store: a fork would hold them sealed for its new "
                    "id, where no key opens them (nothing was written)",
                    sid, lost=sealed, opened=0,
                )
            now = await editor.now(tx)
            origin = await editor.session_row(tx, sid)
            after = SessionRow(origin.created_at if origin else now, now)
            await tx.execute(
                f"INSERT INTO {self.tables.S} (session_id, created_at, updated_at) VALUES (:s, :c, :u)",
                {"s": target, "c": after.created_at, "u": after.updated_at},
            )
            message_ids = await editor.new_ids(tx, len(rows))
            struct_ids = await structure_ids.new_ids(tx, len(rows))
            messages: list[Row] = []
            structure: list[Row] = []
            turn = 0
            for n, (data, created, mtype, tool) in enumerate(rows):
                turn += mtype == "user"
                messages.append({"id": message_ids[n], "session_id": target,
                                 "message_data": data, "created_at": created})
                structure.append({
                    "id": struct_ids[n], "session_id": target, "message_id": message_ids[n],
                    "branch_id": "main", "message_type": mtype, "sequence_number": n + 1,
                    "user_turn_number": turn, "branch_turn_number": turn, "tool_name": tool,
                    "created_at": now,
                })
            for table, cols, new in (
                (self.tables.M, MESSAGE_ROW, messages), (STRUCTURE, STRUCTURE_ROW, structure)
            ):
                if new:
                    await tx.executemany(
                        f"INSERT INTO {table} ({', '.join(cols)}) "
                        f"VALUES ({', '.join(':' + c for c in cols)})",
                        new,
                    )
            await record_fork(tx, target, sid, at)
            return BranchChange(
                target, "main", label, {},
                {"messages": tuple(messages), "structure": tuple(structure)},
                (None, after),
            )

        return await self.backend.transaction(body)
