"""Turns: a conversation grouped as a person reads it.

A turn is a user message and everything after it up to the next user message (the
agent's reasoning, tool calls, outputs and answers). Items before the first user message
(a system prompt, say) form turn 0.

A compaction item (``OpenAIResponsesCompactionSession``) stands for the history it
replaced: the turns after it are numbered from it (it is turn 0 again, the next user
message turn 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from .model import Message, is_compaction


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


def _running(messages: Iterable[Message], start: int) -> Iterator[int]:
    """The turn number at each message (a compaction item restarts them at 0)."""
    n = start
    for m in messages:
        if is_compaction(m):
            n = 0
        elif starts_turn(m):
            n += 1
        yield n


def turn_numbers(messages: Iterable[Message], start: int = 0) -> list[int]:
    """The turn number of each message; ``start`` is the number of user messages that
    come before the first one given since the session's beginning or its last compaction
    item (see :func:`turns_before`)."""
    return list(_running(messages, start))


def turns_before(messages: Iterable[Message], start: int = 0) -> int:
    """The turn count after ``messages`` (``start``: the count before them): user messages
    since the last compaction item, or all of them when there is none."""
    n = start
    for n in _running(messages, start):
        pass
    return n


def group_turns(messages: Iterable[Message], start: int = 0) -> list[Turn]:
    """The messages grouped into turns, in order, numbered through (a compaction item
    does not restart them here: comparisons align turns by their numbers)."""
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
