"""Agents SDK branches, turns and token usage as plain records (``AdvancedSQLiteSession``
stores; see :mod:`fluxgui.adapters.advanced`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .changes import Row, SessionRow

#: The branch every session has, and the one a fresh reader is on.
MAIN = "main"


@dataclass(frozen=True)
class BranchInfo:
    """One branch of a session, as ``AdvancedSQLiteSession.list_branches()`` lists it.

    ``created_at`` is the stored text of the branch's first structure row (SQLite
    ``CURRENT_TIMESTAMP``, UTC, ``YYYY-MM-DD HH:MM:SS``), as the library returns it.
    """

    branch_id: str
    message_count: int
    user_turns: int
    created_at: Any
    is_current: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The library's dict: branch_id, message_count, user_turns, is_current, created_at."""
        return {
            "branch_id": self.branch_id,
            "message_count": self.message_count,
            "user_turns": self.user_turns,
            "is_current": self.is_current,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class TurnInfo:
    """A user turn of a branch, as ``get_conversation_turns()`` gives it: the branch turn
    number, the user message's content (``content`` cut to 100 characters + "..."), and
    the stored time of its structure row."""

    turn: int
    content: str
    full_content: Any
    timestamp: Any

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "can_branch": True}


@dataclass(frozen=True)
class TurnUsage:
    """One ``turn_usage`` row, as ``get_turn_usage()`` gives it (details parsed)."""

    user_turn_number: int
    requests: int | None
    input_tokens: int | None
    output_tokens: int | None
    total_tokens: int | None
    input_tokens_details: Any = None
    output_tokens_details: Any = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class UsageTotals:
    """Summed usage, as ``get_session_usage()`` gives it."""

    requests: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    total_turns: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class BranchChange:
    """What a branch edit wrote, reversible: rows removed and added per table
    (``"messages"``, ``"structure"``, ``"usage"``), each a stored row with its id.

    ``store.apply_branch_change(change.inverse())`` undoes it (the rows come back with
    their own ids); applying ``change`` again redoes it. Branch ids stay reserved either
    way, as the library keeps them.
    """

    session_id: str
    branch_id: str
    label: str
    removed: dict[str, tuple[Row, ...]] = field(default_factory=dict)
    added: dict[str, tuple[Row, ...]] = field(default_factory=dict)
    #: the session's row before and after (a fork makes one); ``None``: left alone
    sessions: tuple[SessionRow | None, SessionRow | None] | None = None

    def inverse(self) -> BranchChange:
        sessions = (self.sessions[1], self.sessions[0]) if self.sessions else None
        return BranchChange(
            self.session_id, self.branch_id, self.label, self.added, self.removed, sessions
        )

    def count(self, table: str, *, added: bool) -> int:
        return len((self.added if added else self.removed).get(table, ()))
