"""Compare two sessions (or two branches) turn by turn: the use case behind
``fluxgui diff`` and the window's Compare view.

Reading: both sessions are read whole through :meth:`Store.iter_messages` (keyset pages),
because a turn-by-turn alignment needs every turn of both sides. The two message lists
are held in memory for the comparison, so a session of more than :data:`MAX_MESSAGES`
messages is refused with one clear sentence (:class:`SessionTooLarge`) instead.

Branches and usage are read where the store's capabilities say it keeps them
(``branches``, ``usage``): each side names its branch (``main`` by default) and is read
with ``branch=`` — no shared store is switched to read another branch. A branch asked of
a store without branches is refused with one sentence. A store that keeps no usage table
gives the usage its messages note in ``metadata.usage`` (a replay's answers do), summed
per turn, where any does.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fluxgui.core.roles import PageTransform, Store, refuse
from fluxgui.core.diff import Comparison, TurnDiff, compare_messages
from fluxgui.core.display import kind_label
from fluxgui.core.errors import BranchNotFound, FluxguiError, show_id
from fluxgui.core.model import Message
from fluxgui.core.ports import MAIN
from fluxgui.core.text import plural
from fluxgui.core.visible import visible

__all__ = ["MAX_MESSAGES", "SessionTooLarge", "compare_sessions", "format_diff_text"]

#: the most messages one side may have (both sides are held in memory to compare them)
MAX_MESSAGES = 50_000
#: messages per page read
PAGE = 500


class SessionTooLarge(FluxguiError):
    """A session is too big to compare in memory."""


def _too_large(session_id: str, count: int, limit: int) -> SessionTooLarge:
    return SessionTooLarge(
        f"session {show_id(session_id)} has {count:,} messages; comparing is limited to "
        f"{limit:,} messages per side"
    )


async def _read_side(
    store: Store, session_id: str, branch: str | None, limit: int
) -> tuple[list[Message], Any, str | None]:
    """All messages of one side (checked against ``limit`` before and while reading), its
    per-turn usage (``None`` when the store does not record it) and the branch read
    (``None`` for a store without branches)."""
    info = await store.reader.require_session(session_id)
    if store.branches is not None:
        branch = branch or MAIN
        if not await (store.branches or refuse(store, "branches")).branch_exists(session_id, branch):
            raise BranchNotFound(
                f"branch {show_id(branch)} does not exist in session {show_id(session_id)}"
            )
    elif branch is not None:
        raise FluxguiError(
            f"{store.target} keeps no branches that fluxgui can read (asked for branch "
            f"{show_id(branch)} of session {show_id(session_id)})"
        )
    elif info.messages > limit:
        raise _too_large(session_id, info.messages, limit)
    pages = store.reader.iter_messages(session_id, batch=PAGE, branch=branch)
    messages = await _collect(pages, session_id, limit)
    usage: Any = (
        await store.usage.turn_usage(session_id, branch) if store.usage is not None
        else noted_usage(messages)
    )
    return messages, usage, branch


def noted_usage(messages: list[Message]) -> dict[int, dict[str, int]] | None:
    """Per-turn usage summed from the messages' ``metadata.usage`` (``requests``,
    ``input_tokens``, ``output_tokens``, ``total_tokens``; turns numbered as the
    comparison numbers them), or ``None`` when no message notes any."""
    from fluxgui.core.model import meta_dict
    from fluxgui.core.turns import group_turns

    out: dict[int, dict[str, int]] = {}
    for turn in group_turns(messages):
        for m in turn.messages:
            noted = meta_dict(m).get("usage")
            if not isinstance(noted, dict):
                continue
            row = out.setdefault(turn.number, {})
            for name in ("requests", "input_tokens", "output_tokens", "total_tokens"):
                value = noted.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    row[name] = row.get(name, 0) + value
    return {n: row for n, row in out.items() if row} or None


async def _collect(pages: Any, session_id: str, limit: int) -> list[Message]:
    messages: list[Message] = []
    async for page in pages:
        messages.extend(page)
        # The store may grow while it is read (or a branch's size was not known up front).
        if len(messages) > limit:
            raise _too_large(session_id, len(messages), limit)
    return messages


async def compare_sessions(
    store_a: Store, session_a: str, store_b: Store | None = None, session_b: str | None = None,
    *, branch_a: str | None = None, branch_b: str | None = None, max_messages: int = MAX_MESSAGES,
    transform: PageTransform | None = None,
) -> Comparison:
    """Compare session ``session_a`` of ``store_a`` with ``session_b`` of ``store_b``.

    ``store_b`` defaults to ``store_a`` and ``session_b`` to ``session_a`` (with
    ``branch_a`` / ``branch_b``: two branches of one session; a store that keeps
    branches is read on ``main`` where none is named, and the comparison names it). Both sessions are read
    whole and held in memory while they are compared; a side with more than
    ``max_messages`` messages raises :class:`SessionTooLarge`, an unknown session
    :class:`~fluxgui.core.errors.SessionNotFound`. ``transform`` changes both sides'
    messages before they are compared (in a worker thread; the window's View › Redact).
    """
    store_b = store_a if store_b is None else store_b
    session_b = session_a if session_b is None else session_b
    # One side after the other: both may be the same store (one connection).
    messages_a, usage_a, shown_a = await _read_side(store_a, session_a, branch_a, max_messages)
    messages_b, usage_b, shown_b = await _read_side(store_b, session_b, branch_b, max_messages)
    if transform is not None:
        messages_a, messages_b = await asyncio.to_thread(lambda: (transform(messages_a), transform(messages_b)))
    comparison = compare_messages(
        messages_a,
        messages_b,
        session_a=session_a,
        session_b=session_b,
        branch_a=shown_a,
        branch_b=shown_b,
        usage_a=usage_a,
        usage_b=usage_b,
    )
    if store_b is not store_a:
        comparison.a.target = store_a.target
        comparison.b.target = store_b.target
    return comparison


# --------------------------------------------------------------------------- text


def first_line(text: str, width: int = 100) -> str:
    """The first non-blank line of ``text``, hidden characters shown as markers (an
    escape sequence in a message must not drive the terminal) and cut to ``width``
    characters (``…`` when cut); ``""`` for blank text."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = visible(" ".join(line.split()), keep_layout=False)
    return line if len(line) <= width else line[: width - 1] + "…"


def _message_line(m: Message, width: int = 100) -> str:
    role = first_line(m.role, 20)
    kind = "" if m.kind == "message" else kind_label(m.kind)
    # "tool output", not "tool tool output": the kind already says who
    who = kind if kind.startswith(role + " ") else f"{role} {kind}".strip()
    return f"{who}: {first_line(m.text, width) or '(empty)'}"


def _tokens(t: TurnDiff) -> str:
    if t.tokens_a is None and t.tokens_b is None:
        return ""
    a = "?" if t.tokens_a is None else f"{t.tokens_a:,}"
    b = "?" if t.tokens_b is None else f"{t.tokens_b:,}"
    delta = t.token_delta
    shown = f"  [tokens A {a}, B {b}"
    if delta is not None:
        shown += f", {delta:+,}"
    return shown + "]"


def _side(label: str, side: Any) -> str:
    where = f" in {side.target}" if side.target else ""
    return (
        f"{label}: {first_line(side.label, 120)}{where} — {plural(side.messages, 'message')}, "
        f"{plural(side.turns, 'turn')}\n"
    )


def _gist(t: TurnDiff) -> str:
    # the user's words; in turn 0 (before any user message) its first message
    turn = t.a or t.b
    if turn is None or not turn.messages:
        return ""
    return first_line(turn.user_text or turn.messages[0].text, 80)


def format_diff_text(comparison: Comparison) -> str:
    """A readable turn-by-turn summary for the terminal.

    Each aligned turn is one line: ``=`` same, ``≠`` differs (followed by the differing
    messages: ``~`` changed, ``-`` only in A, ``+`` only in B, each with its first line),
    ``-`` the turn is only in A, ``+`` only in B. Token totals follow where known.
    """
    out = [_side("A", comparison.a), _side("B", comparison.b)]
    first = comparison.first_difference
    out.append(
        "identical: every turn is the same\n"
        if first is None
        else f"first difference: turn {first}\n"
    )
    for t in comparison.turns:
        title = _gist(t)
        title = f"  {title}" if title else ""
        status = t.status
        if status == "same":
            out.append(f"= turn {t.number}{title}{_tokens(t)}\n")
        elif status == "only_a":
            out.append(f"- turn {t.number} only in A{title}{_tokens(t)}\n")
            for m in t.messages_a:
                out.append(f"    - {_message_line(m)}\n")
        elif status == "only_b":
            out.append(f"+ turn {t.number} only in B{title}{_tokens(t)}\n")
            for m in t.messages_b:
                out.append(f"    + {_message_line(m)}\n")
        else:
            out.append(f"≠ turn {t.number} differs{title}{_tokens(t)}\n")
            for c in t.changes:
                if c.op == "changed":
                    assert c.a is not None and c.b is not None
                    out.append(f"    ~ A {_message_line(t.messages_a[c.a])}\n")
                    out.append(f"      B {_message_line(t.messages_b[c.b])}\n")
                elif c.op == "removed":
                    assert c.a is not None
                    out.append(f"    - A {_message_line(t.messages_a[c.a])}\n")
                else:
                    assert c.b is not None
                    out.append(f"    + B {_message_line(t.messages_b[c.b])}\n")
    counts = comparison.counts
    parts = [f"{counts['same']} same", f"{counts['differs']} differ"]
    if counts["only_a"]:
        parts.append(f"{counts['only_a']} only in A")
    if counts["only_b"]:
        parts.append(f"{counts['only_b']} only in B")
    summary = f"{plural(len(comparison.turns), 'turn')}: " + ", ".join(parts)
    usage = comparison.usage_dict()
    if usage is not None:
        a = usage["a_total_tokens"]
        b = usage["b_total_tokens"]
        summary += f"; tokens A {'?' if a is None else f'{a:,}'}, B {'?' if b is None else f'{b:,}'}"
        if usage["delta_total_tokens"] is not None:
            summary += f" ({usage['delta_total_tokens']:+,})"
    out.append(summary + "\n")
    return "".join(out)
