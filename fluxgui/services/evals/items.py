"""Eval items from one session: one per assistant turn.

An item is the input the model had — the history before the turn and the turn's user
message, as chat messages with every call paired with its output (:mod:`fluxgui.services.
replay.chatform`) — and the recorded answer as the reference, with what the turn did on
the way (its calls and their outputs). An *assistant turn* is a turn (from 1, numbered as
:func:`fluxgui.core.turns.group_turns` numbers them) holding anything after its user
message. A turn is left out, and counted with the reason, when:

* the history up to the end of the turn fails the doctor's checks (an orphan call or
  output, dangling or misordered reasoning: the request would be refused);
* it holds no answer (no assistant text);
* it holds encrypted items that expired (the Agents SDK skips them when it reads), or
  the history holds items no key opens (not checkable).

Expired items of earlier turns are left out of the history, as the SDK reads it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fluxgui.core.display import encryption_state
from fluxgui.core.model import Message
from fluxgui.core.turns import group_turns, starts_turn

from ..doctor.checks import check_messages
from ..doctor.problems import LABELS
from ..replay.chatform import chat_messages

#: the doctor's problems that make an item's history unusable
BLOCKING = ("orphan_call", "orphan_output", "dangling_reasoning", "misordered_reasoning")
#: what the SDK skips when it reads an encrypted session
SKIPPED_STATES = ("expired", "plaintext")
LOCKED_STATES = ("locked", "unreadable")


@dataclass
class EvalItem:
    """One assistant turn as an eval case."""

    session_id: str
    turn: int
    #: the chat messages the model had (history, then the turn's user message)
    input: list[dict[str, Any]]
    #: the turn's recorded messages after the user's, up to the answer (calls, outputs)
    steps: list[dict[str, Any]]
    #: the recorded answer's text
    answer: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def expected(self) -> dict[str, Any]:
        """The reference: the answer, with the turn's calls and outputs when it made any."""
        doc: dict[str, Any] = {"role": "assistant", "content": self.answer}
        calls = [c for d in self.steps for c in d.get("tool_calls") or []]
        if calls:
            outputs = {d.get("tool_call_id"): d.get("content") for d in self.steps if d["role"] == "tool"}
            doc["tool_calls"] = [
                {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"],
                 "output": outputs.get(c["id"])} for c in calls
            ]
        return doc


@dataclass
class SessionItems:
    """A session's items and the turns left out (reason → how many)."""

    items: list[EvalItem] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)
    assistant_turns: int = 0


def _answer(steps: list[dict[str, Any]]) -> int | None:
    """The index of the last assistant message with text (the answer)."""
    for i in range(len(steps) - 1, -1, -1):
        d = steps[i]
        if d["role"] == "assistant" and d.get("content"):
            return i
    return None


def session_items(
    session_id: str, messages: Sequence[Message], *, items: bool, metadata: dict[str, Any] | None = None,
) -> SessionItems:
    """The eval items of one session's messages (stored order); ``items``: the store
    keeps Agents SDK items (the doctor reads rows as the owning library does)."""
    out = SessionItems()
    done: list[Message] = []  # the messages before the turn, as the SDK reads them
    locked = False
    for turn in group_turns(messages):
        states = [encryption_state(m) for m in turn.messages]
        readable = [m for m, s in zip(turn.messages, states) if s not in SKIPPED_STATES]
        first = turn.messages[0]
        if turn.number < 1 or not starts_turn(first) or len(turn.messages) < 2:
            done += readable
            locked = locked or any(s in LOCKED_STATES for s in states)
            continue
        out.assistant_turns += 1
        locked = locked or any(s in LOCKED_STATES for s in states)
        reason = _why_not(session_id, done, readable, states, locked, items=items)
        chat = chat_messages(readable)
        steps = chat[1:] if chat and chat[0]["role"] == "user" else chat
        end = _answer(steps)
        if reason is None and end is None:
            reason = "no recorded answer"
        if reason is not None:
            out.left_out[reason] += 1
        else:
            assert end is not None
            history = chat_messages(done) + chat[: len(chat) - len(steps)]
            meta = {"session_id": session_id, "turn": turn.number, **(metadata or {})}
            out.items.append(EvalItem(
                session_id, turn.number, history, steps[: end + 1], str(steps[end]["content"]), meta,
            ))
        done += readable
    return out


def _why_not(
    session_id: str, done: list[Message], turn: list[Message], states: list[str | None],
    locked: bool, *, items: bool,
) -> str | None:
    if any(s in ("expired",) for s in states):
        return "expired items (the Agents SDK skips them)"
    if locked:
        return "encrypted items no key opens"
    report = check_messages(session_id, [*done, *turn], items=items)
    for p in report.problems:
        if p.code in BLOCKING:
            return LABELS[p.code]
    return None
