"""Compare two sessions (or two branches) turn by turn: the use case behind
``fluxgui diff`` and the window's Compare view.

Reading: both sessions are read whole through :meth:`Store.iter_messages` (keyset pages),
because a turn-by-turn alignment needs every turn of both sides. The two message lists
are held in memory for the comparison, so a session of more than :data:`MAX_MESSAGES`
messages is refused with one clear sentence (:class:`SessionTooLarge`) instead.

Branches and usage are read through optional store methods (duck-typed, so a store
format that keeps branches can offer them without this module changing):

* ``iter_branch_messages(session_id, branch, *, batch)`` — an async iterator of pages of
  one branch's messages in order. Without it, a store with ``current_branch(session_id)``
  and ``async set_branch(session_id, branch)`` (the Agents SDK advanced store) is
  switched to the branch for the read and switched back afterwards; other reads of that
  session on the same store object meanwhile would see the branch, so a store should
  offer ``iter_branch_messages`` where it can. A store with neither refuses a branch
  with a :class:`~fluxgui.core.errors.FluxguiError`.
* ``async turn_usage(session_id)`` — per-turn token usage of the session (its current
  branch), or ``turn_usage(session_id, branch)`` of a branch; rows as
  :func:`fluxgui.core.diff.normalise_usage` takes them (dicts, or objects with
  ``to_dict()``). Without it, or with no rows, usage is unknown (``None``).
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from fluxgui.core.diff import Comparison, TurnDiff, compare_messages
from fluxgui.core.errors import FluxguiError, show_id
from fluxgui.core.model import Message

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
    store: Any, session_id: str, branch: str | None, limit: int
) -> tuple[list[Message], Any, str | None]:
    """All messages of one side (checked against ``limit`` before and while reading), its
    per-turn usage (``None`` when the store does not know it) and the branch read
    (``None`` for a store without branches)."""
    info = await store.require_session(session_id)
    if branch is None:
        if info.messages > limit:
            raise _too_large(session_id, info.messages, limit)
        current = getattr(store, "current_branch", None)
        shown = current(session_id) if callable(current) else None
        messages = await _collect(store.iter_messages(session_id, batch=PAGE), session_id, limit)
        return messages, await _usage(store, session_id, None), shown
    reader = getattr(store, "iter_branch_messages", None)
    if callable(reader):
        messages = await _collect(reader(session_id, branch, batch=PAGE), session_id, limit)
    elif callable(getattr(store, "set_branch", None)) and callable(
        getattr(store, "current_branch", None)
    ):
        previous = store.current_branch(session_id)
        await store.set_branch(session_id, branch)
        try:
            messages = await _collect(store.iter_messages(session_id, batch=PAGE), session_id, limit)
        finally:
            await store.set_branch(session_id, previous)
    else:
        raise FluxguiError(
            f"{getattr(store, 'target', 'this store')} keeps no branches that fluxgui can "
            f"read (asked for branch {show_id(branch)} of session {show_id(session_id)})"
        )
    return messages, await _usage(store, session_id, branch), branch


async def _collect(pages: Any, session_id: str, limit: int) -> list[Message]:
    messages: list[Message] = []
    async for page in pages:
        messages.extend(page)
        # The store may grow while it is read (or a branch's size was not known up front).
        if len(messages) > limit:
            raise _too_large(session_id, len(messages), limit)
    return messages


async def _usage(store: Any, session_id: str, branch: str | None) -> Any:
    method = getattr(store, "turn_usage", None)
    if method is None or not callable(method):
        return None
    result = method(session_id) if branch is None else method(session_id, branch)
    if inspect.isawaitable(result):
        result = await result
    return result


async def compare_sessions(
    store_a: Any,
    session_a: str,
    store_b: Any = None,
    session_b: str | None = None,
    *,
    branch_a: str | None = None,
    branch_b: str | None = None,
    max_messages: int = MAX_MESSAGES,
) -> Comparison:
    """Compare session ``session_a`` of ``store_a`` with ``session_b`` of ``store_b``.

    ``store_b`` defaults to ``store_a`` and ``session_b`` to ``session_a`` (with
    ``branch_a`` / ``branch_b``: two branches of one session; without, a store that
    keeps branches is read on its current branch, and the comparison names it). Both sessions are read
    whole and held in memory while they are compared; a side with more than
    ``max_messages`` messages raises :class:`SessionTooLarge`, an unknown session
    :class:`~fluxgui.core.errors.SessionNotFound`.
    """
    store_b = store_a if store_b is None else store_b
    session_b = session_a if session_b is None else session_b
    # One side after the other: both may be the same store (one connection).
    messages_a, usage_a, shown_a = await _read_side(store_a, session_a, branch_a, max_messages)
    messages_b, usage_b, shown_b = await _read_side(store_b, session_b, branch_b, max_messages)
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
        comparison.a.target = getattr(store_a, "target", None)
        comparison.b.target = getattr(store_b, "target", None)
    return comparison


# --------------------------------------------------------------------------- text


# C0/C1 control characters (an escape sequence in a message must not drive the terminal)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def first_line(text: str, width: int = 100) -> str:
    """The first non-blank line of ``text``, control characters shown as ``?`` and cut to
    ``width`` characters (``…`` when cut); ``""`` for blank text."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = _CONTROLS.sub("?", " ".join(line.split()))
    return line if len(line) <= width else line[: width - 1] + "…"


def _message_line(m: Message, width: int = 100) -> str:
    kind = "" if m.kind == "message" else f" {m.kind.replace('_', ' ')}"
    return f"{first_line(m.role, 20)}{kind}: {first_line(m.text, width) or '(empty)'}"


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
        f"{label}: {first_line(side.label, 120)}{where} — {side.messages} messages, "
        f"{side.turns} turns\n"
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
    summary = f"{len(comparison.turns)} turns: " + ", ".join(parts)
    usage = comparison.usage_dict()
    if usage is not None:
        a = usage["a_total_tokens"]
        b = usage["b_total_tokens"]
        summary += f"; tokens A {'?' if a is None else f'{a:,}'}, B {'?' if b is None else f'{b:,}'}"
        if usage["delta_total_tokens"] is not None:
            summary += f" ({usage['delta_total_tokens']:+,})"
    out.append(summary + "\n")
    return "".join(out)
