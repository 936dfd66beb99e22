"""The Agents SDK's ``AdvancedSQLiteSession`` stores: branches, turns and token usage.

On top of the plain Agents SDK tables (see :mod:`.agents`) the library keeps
``message_structure`` (one row per item per branch, pointing at a shared
``agent_messages`` row, ordered by a per-session ``sequence_number``), ``turn_usage``
(token usage per user turn per branch), ``branch_reservations`` (every branch id ever
used in a session: ids are never reused) and ``session_clear_generations`` (bumped by
``clear_session``, so that a session object still pointing at a deleted branch falls back
to ``main``).

A reader of ``agent_messages`` alone sees every branch's items mixed; this store reads
one branch at a time, in the library's order, exactly as ``get_items(branch_id=…)`` does.
The current branch is not stored on disk: a fresh reader is on ``main``. This store
keeps no current branch either: every read and write that depends on one takes it as a
parameter (``branch=None``: ``main``), so a shared store is never switched to read.

fluxgui never opens a store through the library (it creates tables); it reads and writes
these tables itself, with the library's SQL, so that each answer is the one the library
gives on the same file, and what fluxgui writes reads back identically through it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from fluxgui.core.branches import MAIN, BranchChange, BranchInfo, TurnInfo, TurnUsage, UsageTotals
from fluxgui.core.changes import Row, SessionRow
from fluxgui.core.ports import Capabilities
from fluxgui.core.errors import BranchError, BranchNotFound, Conflict, InvalidItem, SessionNotFound, show_id
from fluxgui.core.model import Message, SessionInfo, message_to_item
from fluxgui.core.undecodable import from_agents_value

from .agents import AgentsStore
from .base import Direction
from .backends import Backend, Params, Tx
from .changes import TableEditor, free_fork_id, record_fork
from .sqlstore import in_clause

STRUCTURE = "message_structure"
USAGE = "turn_usage"
RESERVATIONS = "branch_reservations"
GENERATIONS = "session_clear_generations"
#: Columns ``message_structure`` must have for a store to be read as an Advanced store.
STRUCTURE_COLUMNS = {
    "id",
    "session_id",
    "message_id",
    "branch_id",
    "message_type",
    "sequence_number",
    "user_turn_number",
    "branch_turn_number",
}

_STRUCTURE_ROW = (
    "id",
    "session_id",
    "message_id",
    "branch_id",
    "message_type",
    "sequence_number",
    "user_turn_number",
    "branch_turn_number",
    "tool_name",
    "created_at",
)
_USAGE_ROW = (
    "id",
    "session_id",
    "branch_id",
    "user_turn_number",
    "requests",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_tokens_details",
    "output_tokens_details",
    "created_at",
)
_MESSAGE_ROW = ("id", "session_id", "message_data", "created_at")

# --------------------------------------------------------------------------- records


def _content_preview(content: Any, max_length: int | None = None) -> str:
    # The library's preview: a string as it is, anything else as JSON; then cut.
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if max_length is not None and len(text) > max_length:
        return text[:max_length] + "..."
    return text


def _details(value: Any) -> Any:
    if not value:
        return None
    try:
        return json.loads(value)
    except (ValueError, TypeError):
        return None


# --------------------------------------------------------------------------- the store


class AdvancedStore(AgentsStore):
    """An ``AdvancedSQLiteSession`` store: the Agents SDK tables plus branches and usage.

    Every read of a session's items (paging, counting, ``flux_messages``,
    ``session_info``) is of the branch it is given (``main`` by default). Session lists
    count the items of ``main``; a search looks at the items of every branch. Item edits are refused (as for the
    plain ``agents`` format they would leave the structure rows out of step); branches
    can be created and deleted.
    """

    CAPABILITIES = Capabilities(append=True, fork=True, branches=True, usage=True)

    @property
    def capabilities(self) -> Capabilities:
        return self.CAPABILITIES

    def __init__(
        self,
        backend: Backend,
        target: str,
        sessions_table: str,
        messages_table: str,
        *,
        tables: set[str] | None = None,
    ) -> None:
        super().__init__(backend, target, sessions_table, messages_table, has_branches=True)
        self._known_tables: set[str] = set(tables or ()) & {USAGE, RESERVATIONS, GENERATIONS}

    # -- branches ------------------------------------------------------------------

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
            await self.require_session(session_id)
            raise self._no_branch(session_id, branch)

    async def _has_table(self, name: str) -> bool:
        # The library makes branch_reservations and session_clear_generations on its
        # first write; tables are never dropped, so only a missing one is asked again.
        if name in self._known_tables:
            return True
        row = await self.backend.fetchone(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n", {"n": name}
        )
        if row:
            self._known_tables.add(name)
        return bool(row)

    async def _generation(self, session_id: str) -> int:
        if not await self._has_table(GENERATIONS):
            return 0
        row = await self.backend.fetchone(
            f"SELECT generation FROM {GENERATIONS} WHERE session_id = :s", {"s": session_id}
        )
        return int(row[0]) if row and row[0] is not None else 0

    def _no_branch(self, session_id: str, branch_id: str) -> BranchNotFound:
        return BranchNotFound(
            f"branch {show_id(branch_id)} does not exist in session {show_id(session_id)}"
        )

    # -- branches and turns --------------------------------------------------------

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
            turns.append(TurnInfo(number, _content_preview(content, 100), content, created))
        return turns

    # -- usage ---------------------------------------------------------------------

    async def turn_usage(self, session_id: str, branch: str | None = None) -> list[TurnUsage]:
        """Token usage of each user turn of a branch (``main`` by default), by turn
        number, as ``get_turn_usage(branch_id=…)`` gives it."""
        branch = branch or MAIN
        if not await self._has_table(USAGE):
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
            TurnUsage(r[0], r[1], r[2], r[3], r[4], _details(r[5]), _details(r[6])) for r in rows
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
        if not await self._has_table(USAGE):
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
        return info

    # -- messages of one branch ----------------------------------------------------

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 100,
        anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward",
        branch: str | None = None,
    ) -> list[Message]:
        """Items of ``branch`` (default ``main``) in the library's order
        (``sequence_number``); a message's ``id`` is its ``agent_messages`` row id, its
        ``sort_key`` ``(sequence_number, structure row id)``."""
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
        ``sort_key``), by the rule of :func:`fluxgui.core.turns.starts_turn`."""
        branch = branch or MAIN
        seq, *rest = tuple(anchor)
        params: Params = {"s": session_id, "b": branch, "q": seq}
        before = "s.sequence_number < :q"
        if rest:
            params["k"] = rest[0]
            before = "(s.sequence_number < :q OR (s.sequence_number = :q AND s.id < :k))"
        row = await self.backend.fetchone(
            f"""SELECT COUNT(*) FROM {STRUCTURE} s JOIN {self._M} m ON m.id = s.message_id
                WHERE s.session_id = :s AND s.branch_id = :b AND m.session_id = :s
                AND {before}
                AND json_valid(m.message_data)
                AND json_type(m.message_data) = 'object'
                AND json_type(m.message_data, '$.role') = 'text'
                AND json_extract(m.message_data, '$.role') = 'user'
                AND COALESCE(json_extract(m.message_data, '$.type'), 'message') = 'message'""",
            params,
        )
        return int(row[0]) if row else 0

    # -- writing branches ------------------------------------------------------------

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
        self._check_writable()
        if branch_name is not None and not branch_name.strip():
            raise BranchError("a branch name cannot be empty")
        turn = int(turn_number)
        source = branch or MAIN

        async def body(tx: Tx) -> tuple[BranchChange, int]:
            await self._ensure_reservations(tx, session_id)
            generation = await self._ensure_generation(tx, session_id)
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
            branch_id = await self._reserve(tx, session_id, branch_name, turn)
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
                start = await self._max_sequence(tx, session_id)
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
                added = tuple(await self._structure_rows(tx, session_id, branch_id))
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
        self._check_writable()
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
            await self._ensure_reservations(tx, session_id)
            structure = await self._structure_rows(tx, session_id, branch_id)
            if not structure:
                if not await self._session_exists(tx, session_id):
                    raise SessionNotFound(
                        f"unknown session id {show_id(session_id)} in {self.target}"
                    )
                raise self._no_branch(session_id, branch_id)
            usage: list[Row] = []
            if await self._tx_has_table(tx, USAGE):
                usage = await self._usage_rows(tx, session_id, branch_id)
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
                dict(zip(_MESSAGE_ROW, r, strict=True))
                for r in await tx.fetchall(
                    f"SELECT {', '.join(_MESSAGE_ROW)} {orphans} ORDER BY id", {"s": session_id}
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
        self._check_writable()
        tables = {"messages": (self._M, _MESSAGE_ROW), "structure": (STRUCTURE, _STRUCTURE_ROW),
                  "usage": (USAGE, _USAGE_ROW)}
        sid = change.session_id

        def conflict() -> Conflict:
            return Conflict(
                f"session {show_id(sid)} changed in {self.target} since; "
                "nothing was written (reload to see what it holds now)"
            )

        async def body(tx: Tx) -> BranchChange:
            for key, rows in list(change.removed.items()) + list(change.added.items()):
                if rows and key == "usage" and not await self._tx_has_table(tx, USAGE):
                    raise conflict()
            for key, rows in change.removed.items():
                table, cols = tables[key]
                found = await self._rows_by_id(tx, table, cols, [r["id"] for r in rows])
                for r in rows:
                    now = found.get(int(r["id"]))
                    if now is None or any(now[c] != r.get(c) for c in cols):
                        raise conflict()
            for key, rows in change.added.items():
                table, cols = tables[key]
                freed = {int(r["id"]) for r in change.removed.get(key, ())}
                wanted = [r["id"] for r in rows if int(r["id"]) not in freed]
                if await self._rows_by_id(tx, table, cols, wanted):
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

    async def add_messages(
        self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None
    ) -> int:
        """Append messages to ``branch`` (default ``main``) as the library's ``add_items``
        does: the items, and their ``message_structure`` rows (message type, sequence
        number after the session's last, user and branch turn numbers), in one
        transaction. Only message items for now: tool items would need the library's
        tool-name rules, and are refused with that reason."""
        self._check_writable()
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
        editor = self.editor()

        def message_type(item: dict[str, Any]) -> str:  # the library's classification
            if item.get("role") == "user":
                return "user"
            if item.get("role") == "assistant":
                return "assistant"
            return str(item["type"]) if item.get("type") else "other"

        async def body(tx: Tx) -> int:
            await tx.execute(
                f"INSERT INTO {self._S} (session_id) VALUES (:s) ON CONFLICT (session_id) DO NOTHING",
                {"s": session_id},
            )
            ids = await editor.new_ids(tx, len(items))
            await tx.executemany(
                f"INSERT INTO {self._M} (id, session_id, message_data) VALUES (:i, :s, :d)",
                [{"i": i, "s": session_id, "d": self._dump(item)} for i, item in zip(ids, items)],
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
                f"UPDATE {self._S} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = :s",
                {"s": session_id},
            )
            return len(items)

        return await self.backend.transaction(body)

    async def fork_session(
        self,
        session_id: str,
        at_message_id: int,
        new_id: str | None = None,
        *,
        branch: str | None = None,
    ) -> BranchChange:
        """Fork ``branch`` (default ``main``) of the session up to and including ``at_message_id`` into a
        new session (on its ``main``), as the library would have written it: its items
        copied, and their ``message_structure`` rows with the library's message types,
        tool names, sequence and turn numbers. Usage is not copied (as the library's
        branches do not copy it). The origin is not changed; undoable."""
        self._check_writable()
        sid, at = session_id, int(at_message_id)
        branch = branch or MAIN
        editor = self.editor()
        structure_ids = TableEditor(
            self, table=STRUCTURE, table_name=STRUCTURE, columns=(), order=("id",)
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
                    FROM {STRUCTURE} s JOIN {self._M} m ON m.id = s.message_id
                    WHERE s.session_id = :s AND s.branch_id = :b AND s.sequence_number <= :q
                    ORDER BY s.sequence_number""",
                {"s": sid, "b": branch, "q": got[0][0]},
            )
            now = await editor.now(tx)
            origin = await editor.session_row(tx, sid)
            after = SessionRow(origin.created_at if origin else now, now)
            await tx.execute(
                f"INSERT INTO {self._S} (session_id, created_at, updated_at) VALUES (:s, :c, :u)",
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
                (self._M, _MESSAGE_ROW, messages), (STRUCTURE, _STRUCTURE_ROW, structure)
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

    async def apply_change(self, change: Any) -> Any:
        """Undo/redo of any edit of this store: a :class:`BranchChange` is written by
        :meth:`apply_branch_change`, anything else as every store writes its changes
        (so branch edits share the window's one undo stack)."""
        if isinstance(change, BranchChange):
            return await self.apply_branch_change(change)
        return await super().apply_change(change)

    # -- transaction helpers ---------------------------------------------------------

    async def _tx_has_table(self, tx: Tx, name: str) -> bool:
        if name in self._known_tables:
            return True
        got = await tx.fetchall(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n", {"n": name}
        )
        return bool(got)

    async def _ensure_reservations(self, tx: Tx, session_id: str) -> None:
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

    async def _ensure_generation(self, tx: Tx, session_id: str) -> int:
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

    async def _reserve(self, tx: Tx, session_id: str, name: str | None, turn: int) -> str:
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

    async def _max_sequence(self, tx: Tx, session_id: str) -> int:
        row = await tx.fetchall(
            f"SELECT COALESCE(MAX(sequence_number), 0) FROM {STRUCTURE} WHERE session_id = :s",
            {"s": session_id},
        )
        return int(row[0][0])

    async def _session_exists(self, tx: Tx, session_id: str) -> bool:
        for table in (self._S, self._M):
            got = await tx.fetchall(
                f"SELECT 1 FROM {table} WHERE session_id = :s LIMIT 1", {"s": session_id}
            )
            if got:
                return True
        return False

    async def _structure_rows(self, tx: Tx, session_id: str, branch_id: str) -> list[Row]:
        got = await tx.fetchall(
            f"""SELECT {', '.join(_STRUCTURE_ROW)} FROM {STRUCTURE}
                WHERE session_id = :s AND branch_id = :b ORDER BY sequence_number, id""",
            {"s": session_id, "b": branch_id},
        )
        return [dict(zip(_STRUCTURE_ROW, r, strict=True)) for r in got]

    async def _usage_rows(self, tx: Tx, session_id: str, branch_id: str) -> list[Row]:
        got = await tx.fetchall(
            f"""SELECT {', '.join(_USAGE_ROW)} FROM {USAGE}
                WHERE session_id = :s AND branch_id = :b ORDER BY user_turn_number, id""",
            {"s": session_id, "b": branch_id},
        )
        return [dict(zip(_USAGE_ROW, r, strict=True)) for r in got]

    async def _rows_by_id(
        self, tx: Tx, table: str, cols: tuple[str, ...], ids: list[Any]
    ) -> dict[int, Row]:
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


__all__ = [
    "AdvancedStore",
    "BranchChange",
    "BranchError",
    "BranchInfo",
    "BranchNotFound",
    "TurnInfo",
    "TurnUsage",
    "UsageTotals",
]
