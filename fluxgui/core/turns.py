"""Turns: a conversation grouped as a person reads it.

A turn is a user message and everything after it up to the next user message (the
agent's reasoning, tool calls, outputs and answers). Items before the first user message
(a system prompt, say) form turn 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .model import Message


def starts_turn(m: Message) -> bool:
    """Whether ``m`` opens a turn: a user message (not a tool output)."""
    return m.role == "user" and m.kind == "message"


@dataclass
class Turn:
    number: int
    messages: list[Message] = field(default_factory=list)

    @property
    def user_text(self) -> str:
        first = self.messages[0] if self.messages else None
        return first.text if first is not None and starts_turn(first) else ""


def turn_numbers(messages: Iterable[Message], start: int = 0) -> list[int]:
    """The turn number of each message; ``start`` is the number of user messages that
    come before the first one given (0 from a session's beginning)."""
    out: list[int] = []
    n = start
    for m in messages:
        if starts_turn(m):
            n += 1
        out.append(n)
    return out


def group_turns(messages: Iterable[Message], start: int = 0) -> list[Turn]:
    """The messages grouped into turns, in order."""
    turns: list[Turn] = []
    n = start
    for m in messages:
        if starts_turn(m):
            n += 1
            turns.append(Turn(n, [m]))
        elif turns and turns[-1].number == n:
            turns[-1].messages.append(m)
        else:
            turns.append(Turn(n, [m]))
    return turns
