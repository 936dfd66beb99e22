"""What the window's branch bar shows of an ``AdvancedSQLiteSession`` session, read and
worded without Qt: the branches as the library lists them, the current branch's token
usage, and each turn's total tokens (the conversation's message headers show them).

:func:`load_branch_state` reads it all for one branch of one session (every read names
its branch: the store keeps no current branch). The ``*_text`` helpers are the words the
bar and the headers use.
"""

from __future__ import annotations

from dataclasses import dataclass

from fluxgui.core.roles import Store, refuse
from fluxgui.core.branches import MAIN, BranchInfo, TurnUsage, UsageTotals
from fluxgui.core.text import plural


@dataclass(frozen=True)
class BranchState:
    """What the branch bar shows for one session."""

    session_id: str
    #: the branch shown (``main`` when the one asked for is gone)
    current: str
    branches: tuple[BranchInfo, ...]
    #: the current branch's usage
    usage: UsageTotals | None
    #: every branch's usage together
    session_usage: UsageTotals | None
    turn_usage: tuple[TurnUsage, ...]

    def info(self, branch_id: str) -> BranchInfo | None:
        return next((b for b in self.branches if b.branch_id == branch_id), None)

    def rows(self) -> list[BranchInfo]:
        """The branches to list: the library's, plus the current one when it has no rows
        yet (a branch made from turn 1: the library does not list it, but the session is
        on it)."""
        rows = list(self.branches)
        if not any(b.branch_id == self.current for b in rows):
            rows.append(BranchInfo(self.current, 0, 0, None, True))
        return rows


async def load_branch_state(
    store: Store, session_id: str, want: str = MAIN, *, made: str | None = None
) -> BranchState:
    """The branches of ``session_id`` with ``want`` as the current branch.

    A branch gone meanwhile (deleted, the session cleared) leaves ``main``; ``made``, the
    branch an edit just made, counts as there even before it has rows (a branch from
    turn 1 has none)."""
    current = want
    if want != MAIN and want != made and not await (store.branches or refuse(store, "branches")).branch_exists(session_id, want):
        current = MAIN
    branches = await (store.branches or refuse(store, "branches")).list_branches(session_id, current=current)
    return BranchState(
        session_id,
        current,
        tuple(branches),
        await (store.usage or refuse(store, "usage")).branch_usage(session_id, current),
        await (store.usage or refuse(store, "usage")).session_usage(session_id),
        tuple(await (store.usage or refuse(store, "usage")).turn_usage(session_id, current)),
    )


# --------------------------------------------------------------------------- words


def branch_text(info: BranchInfo) -> str:
    """A branch's line in the list: ``main — 12 messages, 3 turns``."""
    return (
        f"{info.branch_id} — {plural(info.message_count, 'message')}, "
        f"{plural(info.user_turns, 'turn')}"
    )


def usage_text(usage: UsageTotals | None) -> str:
    """``tokens: 1,234 in / 567 out / 1,801 total · 4 requests`` (empty when unknown)."""
    if usage is None:
        return ""
    return (
        f"tokens: {usage.input_tokens:,} in / {usage.output_tokens:,} out / "
        f"{usage.total_tokens:,} total · {plural(usage.requests, 'request')}"
    )


def short_tokens(n: int) -> str:
    """``950 tokens``, ``1.2k tokens``, ``3.4M tokens`` (a message header's note)."""
    if n < 1000:
        return f"{n:,} tokens"
    if n < 1_000_000:
        value, unit = n / 1000, "k"
    else:
        value, unit = n / 1_000_000, "M"
    number = f"{value:.1f}".rstrip("0").rstrip(".") if value < 100 else f"{value:.0f}"
    return f"{number}{unit} tokens"


def turn_tokens(usage: list[TurnUsage] | tuple[TurnUsage, ...]) -> dict[int, int]:
    """Turn number → total tokens, for the turns whose total is known."""
    return {
        int(u.user_turn_number): int(u.total_tokens)
        for u in usage
        if u.total_tokens is not None and u.user_turn_number is not None
    }


def delete_question(session_id: str, info: BranchInfo) -> str:
    """What Delete Branch… asks before it deletes ``info``."""
    return (
        f"Delete branch “{info.branch_id}” of session “{session_id}” "
        f"({plural(info.message_count, 'message')}, {plural(info.user_turns, 'turn')})?\n\n"
        "Items no other branch holds are deleted with it; its usage rows too. "
        "The session goes back to main. Edit › Undo brings it back."
    )
