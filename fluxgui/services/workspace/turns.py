"""One store's copy of a session as whole turns, each with what it holds and when.

A turn is a user message and everything after it up to the next one
(:func:`fluxgui.core.turns.starts_turn`); items before the first user message (a system
prompt) are the store's turn 0. A turn's *content key* is its items' content keys
(:func:`fluxgui.core.contentkey.content_key`: each item without its own id and time), so
the same turn copied into another store (a replica that copied history) has the same key
there. Its time is its first item's that has one.

A store that hands out its stored rows (``store.rows``: the SQL formats) is read as
rows, and a row is read as a Message only where it is needed: where it may open a turn
(:meth:`~fluxgui.core.jsonrecords.RowPage.surely_not_user` cannot rule it out), a
turn's first item, and every item of a turn whose content is compared or shown. A
merged count (how many items a timeline holds, copies once) so reads a fraction of the
items it counts.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from typing import Any

from fluxgui.core.contentkey import content_key
from fluxgui.core.jsonrecords import RowPage
from fluxgui.core.model import Message
from fluxgui.core.times import unix_time
from fluxgui.core.turns import starts_turn

#: an item of a turn: a Message, or a stored row with the store's reading of it
Entry = Message | tuple[Callable[[Any], Message], Any]


def _read(entry: Entry) -> Message:
    return entry if isinstance(entry, Message) else entry[0](entry[1])


class StoreTurn:
    """A whole turn as one store holds it: its ``size`` items, the first read, the
    others read when :attr:`messages` is first asked for."""

    __slots__ = ("store", "number", "size", "head", "time", "_entries", "_messages")

    def __init__(self, store: str, number: int, entries: list[Entry]) -> None:
        #: the label of the store it is in
        self.store = store
        #: its number in that store (0: the items before the first user message)
        self.number = number
        self.size = len(entries)
        first = _read(entries[0])
        entries[0] = first
        #: its first item
        self.head: Message = first
        self._entries: list[Entry] | None = entries
        self._messages: list[Message] | None = None
        #: Unix seconds of its first timed item (``None``: the store keeps no times)
        self.time: float | None = self._first_time()

    def _first_time(self) -> float | None:
        t = unix_time(self.head.created_at)
        if t is not None or self.size == 1:
            return t
        for m in self.messages[1:]:
            if (t := unix_time(m.created_at)) is not None:
                return t
        return None

    @property
    def opens(self) -> bool:
        """Whether its first item opens a turn (a user message; not so for turn 0)."""
        return starts_turn(self.head)

    @property
    def messages(self) -> list[Message]:
        """Its items as Messages (read once, when first asked for)."""
        if self._messages is None:
            assert self._entries is not None
            self._messages = [_read(e) for e in self._entries]
            self._entries = None
        return self._messages

    @messages.setter
    def messages(self, value: list[Message]) -> None:
        self._messages, self._entries = value, None
        if value:
            self.head = value[0]

    def key(self) -> Hashable:
        """What the turn holds, ids and times aside."""
        return turn_key(self.messages)

    def quick(self) -> Hashable:
        """A cheap stand-in for :meth:`key`: turns with different quick keys hold
        different things (equal ones are compared by :meth:`key`)."""
        return quick_key(self.size, self.head)


def turn_key(messages: list[Message]) -> Hashable:
    """What a turn holds, ids and times aside (its items' content keys)."""
    return tuple(content_key(m) for m in messages)


def quick_key(size: int, head: Message) -> Hashable:
    """How many items a turn holds and its first one's role, kind and text: equal for a
    copy (the content key, made with ``json.dumps`` from every item, costs more and is
    made only when these agree)."""
    return (size, head.role, head.kind, head.text)


def _entries(page: list[Message] | RowPage) -> Iterator[Entry]:
    """A page's items: Messages, or rows left unread where they cannot open a turn."""
    if not isinstance(page, RowPage):
        yield from page
        return
    read, skip = page.read, page.surely_not_user
    for row in page.rows:
        yield (read, row) if skip(row) else read(row)


async def store_turns(
    label: str, pages: AsyncIterator[list[Message] | RowPage]
) -> AsyncIterator[StoreTurn]:
    """The turns of one store's pages of a session (Messages, or rows), in stored
    order, each whole."""
    current: list[Entry] = []
    number = 0
    async for page in pages:
        for entry in _entries(page):
            if isinstance(entry, Message) and starts_turn(entry):
                if current:
                    yield StoreTurn(label, number, current)
                    current = []
                number += 1
            current.append(entry)
    if current:
        yield StoreTurn(label, number, current)


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
