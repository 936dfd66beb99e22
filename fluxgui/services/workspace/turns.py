"""One store's copy of a session as whole turns, each with what it holds and when.

A turn is a user message and everything after it up to the next one
(:func:`fluxgui.core.turns.starts_turn`); items before the first user message (a system
prompt) are the store's turn 0. A turn's *content key* is its items' content keys
(:func:`fluxgui.services.doctor.repeats.content_key`: each item without its own id and
time), so the same turn copied into another store (a replica that copied history) has
the same key there. Its time is its first item's that has one.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Hashable
from dataclasses import dataclass, field

from fluxgui.core.model import Message, unix_time
from fluxgui.core.turns import starts_turn
from fluxgui.services.doctor.repeats import content_key


@dataclass
class StoreTurn:
    """A whole turn as one store holds it."""

    #: the label of the store it is in
    store: str
    #: its number in that store (0: the items before the first user message)
    number: int
    messages: list[Message] = field(default_factory=list)
    #: Unix seconds of its first timed item (``None``: the store keeps no times)
    time: float | None = None

    def key(self) -> Hashable:
        """What the turn holds, ids and times aside."""
        return turn_key(self.messages)

    def quick(self) -> Hashable:
        """A cheap stand-in for :meth:`key`: turns with different quick keys hold
        different things (equal ones are compared by :meth:`key`)."""
        return quick_key(self.messages)


def turn_key(messages: list[Message]) -> Hashable:
    """What a turn holds, ids and times aside (its items' content keys)."""
    return tuple(content_key(m) for m in messages)


def quick_key(messages: list[Message]) -> Hashable:
    """Each item's role, kind and text: equal for a copy (the content key, made with
    ``json.dumps``, costs more and is made only when these agree)."""
    return tuple((m.role, m.kind, m.text) for m in messages)


def _time_of(messages: list[Message]) -> float | None:
    for m in messages:
        t = unix_time(m.created_at)
        if t is not None:
            return t
    return None


async def store_turns(label: str, pages: AsyncIterator[list[Message]]) -> AsyncIterator[StoreTurn]:
    """The turns of one store's pages of a session, in stored order, each whole."""
    current: list[Message] = []
    number = 0
    async for page in pages:
        for m in page:
            if starts_turn(m) and current:
                yield StoreTurn(label, number, current, _time_of(current))
                current = []
            if starts_turn(m):
                number += 1
            current.append(m)
    if current:
        yield StoreTurn(label, number, current, _time_of(current))


def resolution(t: float) -> float:
    """The resolution a stored time was kept at: whole seconds (SQLite's
    ``CURRENT_TIMESTAMP``) when it has no fraction, else microseconds."""
    return 1.0 if float(t).is_integer() else 1e-6


def tie(a: float | None, b: float | None) -> bool:
    """Whether two turns' times cannot order them: equal at the coarser of their
    resolutions, or one unknown."""
    if a is None or b is None:
        return True
    res = max(resolution(a), resolution(b))
    return math.floor(a / res) == math.floor(b / res)
