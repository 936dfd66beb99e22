"""What the parts of one Conversations store share: the conversations listed, the items
read, the listing's snapshot and the page a count just read.

The reader, the editor and the writer of a store are each given the same :class:`Known`:
a write makes the next listing read the conversations again (:meth:`Known.forget`), a
conversation made or deleted is listed or left out, an edit finds the stored item of a
message the reader showed (:meth:`Known.item`), and the problems the reader met are the
store's report.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

from fluxgui.core.model import Message

from .items import to_message

#: raw items kept for edits and undo, newest read last
KEEP_ITEMS = 20_000
#: a listed conversation: (id, position in the given order, item count, count exact)
Row = tuple[str, int, int, bool]


class Known:
    """The state the parts of one store share (see the module text)."""

    def __init__(self, ids: list[str]) -> None:
        #: the conversation ids listed, in the order they were given
        self.ids = list(dict.fromkeys(ids))
        #: message id → the item as stored, for every item read lately (edits and undo
        #: name messages by number; the item holds its id)
        self._items: OrderedDict[int, dict[str, Any]] = OrderedDict()
        #: the rows of the current listing (read once per listing)
        self.snapshot: list[Row] | None = None
        #: listed id → why the server does not know it
        self._problems: dict[str, str] = {}
        #: the latest items a count just read (task, id, items newest first, more
        #: follow): the first page of the next read from the end in the same task
        self._probe: tuple[asyncio.Task[Any] | None, str, list[dict[str, Any]], bool] | None = None

    # -- items ---------------------------------------------------------------------

    def message(self, item: dict[str, Any]) -> Message:
        """The item as a message; the item kept (the latest :data:`KEEP_ITEMS`)."""
        m = to_message(item)
        self._items[m.id] = item
        self._items.move_to_end(m.id)
        while len(self._items) > KEEP_ITEMS:
            self._items.popitem(last=False)
        return m

    def item(self, message_id: int) -> dict[str, Any] | None:
        """The stored item of a message read lately (``None``: not kept)."""
        return self._items.get(message_id)

    # -- the listing ---------------------------------------------------------------

    def position(self, cid: str) -> int:
        """Where ``cid`` is in the order given (after every listed id when it is not)."""
        try:
            return self.ids.index(cid)
        except ValueError:
            return len(self.ids)

    def listed_first(self, cid: str) -> None:
        """List ``cid`` first (a conversation just made)."""
        self.ids.insert(0, cid)

    def unlisted(self, cid: str) -> None:
        """List ``cid`` no more (a conversation deleted)."""
        self.ids = [i for i in self.ids if i != cid]

    def forget(self) -> None:
        """Read the conversations again at the next listing, and the next page (after a
        write)."""
        self.snapshot = None
        self._probe = None

    # -- what the server does not know ---------------------------------------------

    def lost(self, cid: str, why: str) -> None:
        """The server does not know ``cid``: a problem when it is listed."""
        if cid in self.ids:
            self._problems[cid] = why

    def found(self, cid: str) -> None:
        self._problems.pop(cid, None)

    def problems(self) -> list[str]:
        """The listed ids the server does not know."""
        return list(self._problems.values())

    # -- the page a count just read ------------------------------------------------

    def keep_probe(self, cid: str, items: list[dict[str, Any]], more: bool) -> None:
        """Keep the latest ``items`` of ``cid`` (newest first) for this task's next read."""
        self._probe = (asyncio.current_task(), cid, items, more)

    def take_probe(self, cid: str) -> tuple[list[dict[str, Any]], bool]:
        """The latest items of ``cid`` that a count just read in this task (newest first)
        and whether more follow; ``([], True)`` when there are none. Taken once: ``show
        --limit 50`` and the window's first page read the conversation's end once, not
        twice."""
        probe, self._probe = self._probe, None
        if probe is None or probe[0] is not asyncio.current_task() or probe[1] != cid:
            return [], True
        return list(probe[2]), probe[3]
