"""One session's merged timeline across the stores of a workspace.

Each store's copy of the session is read as whole turns (:mod:`.turns`); the turns are
merged by time, a turn never interleaving with another, each store's own order kept (a
k-way merge of the stores' turn streams, lazy: the first screen needs only the first
turns). A turn another store holds with the same content (a copy: ids and times aside)
is shown once, naming every store that holds it. Where times cannot order two turns
of different stores (the same second), both are marked ``order_uncertain`` rather than
ordered silently.

A session is **split** when no one store holds every turn of the merged timeline: each
replica's agent saw only its own turns. A store holding the whole session while another
holds an older copy is not split.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from fluxgui.core.jsonrecords import RowPage
from fluxgui.core.model import Message
from fluxgui.core.roles import Store
from fluxgui.core.text import plural

from .turns import StoreTurn, store_turns, tie
from .workspace import Workspace


class MergedTurn:
    """A turn of the merged timeline: the first store's copy of it (its items as that
    store holds them, read when first asked for) and every store holding it, with the
    turn's number there."""

    def __init__(self, number: int, source: StoreTurn) -> None:
        self.number = number
        self.source = source
        self.store = source.store
        self.time = source.time
        #: label → the turn's number in that store (the first is ``store``)
        self.store_turns: dict[str, int] = {source.store: source.number}
        self.order_uncertain = False
        self._key: Hashable | None = None

    @property
    def messages(self) -> list[Message]:
        return self.source.messages

    @messages.setter
    def messages(self, value: list[Message]) -> None:
        self.source.messages = value

    @property
    def size(self) -> int:
        """How many items it holds (its items are not read to tell)."""
        return self.source.size

    def key(self) -> Hashable:
        """Its content key (:func:`.turns.turn_key`), made once when first asked."""
        if self._key is None:
            self._key = self.source.key()
        return self._key

    @property
    def stores(self) -> list[str]:
        return list(self.store_turns)


@dataclass
class Placed:
    """A message of the merged timeline and where it is."""

    message: Message
    store: str
    stores: list[str]
    turn: int
    order_uncertain: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = self.message.to_dict()
        out["store"] = self.store
        if len(self.stores) > 1:
            out["stores"] = list(self.stores)
        if self.order_uncertain:
            out["order_uncertain"] = True
        return out


async def merge_turns(
    streams: Sequence[AsyncIterator[StoreTurn]],
) -> AsyncIterator[MergedTurn]:
    """Merge the stores' turn streams (in workspace order) by time; see the module."""
    heads: list[StoreTurn | None] = [await anext(s, None) for s in streams]
    last_time: list[float | None] = [None] * len(streams)
    seen: dict[Hashable, list[MergedTurn]] = {}
    run: list[MergedTurn] = []
    number = 0
    while True:
        best = None
        for i, head in enumerate(heads):
            if head is None:
                continue
            t = head.time if head.time is not None else last_time[i]
            rank = (t is None, t if t is not None else 0.0, i)
            if best is None or rank < best[0]:
                best = (rank, i)
        if best is None:
            break
        i = best[1]
        turn = heads[i]
        assert turn is not None
        heads[i] = await anext(streams[i], None)
        if turn.time is not None:
            last_time[i] = turn.time
        quick = turn.quick()
        candidates = [m for m in seen.get(quick, ()) if turn.store not in m.store_turns]
        copy = None
        if candidates:
            key = turn.key()
            copy = next((m for m in candidates if m.key() == key), None)
        if copy is not None:
            copy.store_turns[turn.store] = turn.number
            continue
        if turn.opens:
            number += 1
        merged = MergedTurn(number, turn)
        seen.setdefault(quick, []).append(merged)
        if run and tie(run[-1].time, merged.time):
            run.append(merged)
            continue
        for done in _flushed(run):
            yield done
        run = [merged]
    for done in _flushed(run):
        yield done


def _flushed(run: list[MergedTurn]) -> list[MergedTurn]:
    """A run of turns whose times tie: uncertain when more than one store made them."""
    if len({t.store for t in run}) > 1:
        for t in run:
            t.order_uncertain = True
    return run


@dataclass
class Timeline:
    """A session's merged timeline (see the module)."""

    session_id: str
    #: the labels of the stores holding it, in workspace order
    stores: list[str]
    turns: list[MergedTurn]
    #: label → how many items that store holds of it
    counts: dict[str, int]

    def placed(self) -> list[Placed]:
        """Every message in merged order, with its store."""
        return [
            Placed(m, t.store, t.stores, t.number, t.order_uncertain)
            for t in self.turns for m in t.messages
        ]

    def messages(self) -> list[Message]:
        return [m for t in self.turns for m in t.messages]

    @property
    def total(self) -> int:
        """How many items the merged timeline holds (copies once)."""
        return sum(t.size for t in self.turns)

    @property
    def folded(self) -> int:
        """How many items were copies of items shown once."""
        return sum(self.counts.values()) - self.total

    def from_store(self) -> dict[str, int]:
        """label → how many of the merged timeline's items are read from it."""
        out = dict.fromkeys(self.stores, 0)
        for t in self.turns:
            out[t.store] += t.size
        return out

    @property
    def uncertain(self) -> bool:
        return any(t.order_uncertain for t in self.turns)

    @property
    def split(self) -> bool:
        """Whether no one store holds every turn (see the module)."""
        if len(self.stores) < 2 or not self.turns:
            return False
        return not any(all(s in t.store_turns for t in self.turns) for s in self.stores)

    def split_finding(self) -> dict[str, Any] | None:
        """The ``split_session`` problem (``code``, ``message_ids`` as ``LABEL:ID``,
        ``detail``), or ``None`` when the session is not split."""
        if not self.split:
            return None
        parts = []
        for s in self.stores:
            held = [t for t in self.turns if s in t.store_turns]
            if not held:
                continue
            own = [t.store_turns[s] for t in held]
            parts.append(
                f"{_turns_text([t.number for t in held])} {'is' if len(held) == 1 else 'are'} "
                f"in {s} (its {_turns_text(own)})"
            )
        detail = (
            f"this session is split across {plural(len(self.stores), 'store')}: "
            + "; ".join(parts)
            + ": each store's agent saw only its own turns (merge them into one store)"
        )
        ids = [f"{t.store}:{t.source.head.id}" for t in self.turns]
        return {"code": "split_session", "message_ids": ids, "detail": detail}

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "session": self.session_id,
            "stores": [{"store": s, "messages": self.counts[s]} for s in self.stores],
            "messages": self.total,
            "folded": self.folded,
            "split": self.split,
        }
        return doc


def _turns_text(numbers: list[int]) -> str:
    shown = [str(n) for n in numbers]
    joined = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return f"turn{'s' if len(shown) > 1 else ''} {joined}"


def _pages(store: Store, session_id: str, batch: int) -> AsyncIterator[list[Message] | RowPage]:
    """The session's items a page at a time: its stored rows where the store hands them
    out (read as Messages only where needed: :mod:`.turns`), else its Messages."""
    if store.rows is not None:
        return store.rows.iter_row_pages(session_id, batch=batch)
    return store.reader.iter_messages(session_id, batch=batch)


async def merged_turns(
    workspace: Workspace, session_id: str, *, batch: int = 500,
    labels: Sequence[str] | None = None,
) -> AsyncGenerator[MergedTurn, None]:
    """The merged turns of ``session_id`` over the stores holding it (``labels``:
    these stores; default: every store that holds it), lazily."""
    if labels is None:
        labels = [m.label for m, _info in await workspace.holders(session_id)]
    streams = [store_turns(label, _pages(workspace.member(label).store, session_id, batch)) for label in labels]
    async for turn in merge_turns(streams):
        yield turn


async def timeline(workspace: Workspace, session_id: str, *, read: bool = True) -> Timeline:
    """``session_id``'s whole merged timeline; an id no store holds raises (the first
    store's one-line error). Its items are read as Messages here, a few hundred at a time
    between the event loop's other work (a window's loop waits for none of it long);
    ``read=False``: only where its counts, copies and split need them (the rest is read
    when first asked for, at once)."""
    holders = await workspace.holders(session_id)
    if not holders:
        await workspace.members[0].store.reader.require_session(session_id)
    labels = [m.label for m, _info in holders]
    counts = dict.fromkeys(labels, 0)
    turns = [t async for t in merged_turns(workspace, session_id, labels=labels)]
    # each store's own count: the turns it holds (a copy holds as many items)
    for t in turns:
        for s in t.store_turns:
            counts[s] += t.size
    if read:
        await _read_items(turns)
    return Timeline(session_id, labels, turns, counts)


async def _read_items(turns: list[MergedTurn], step: int = 500) -> None:
    """Every turn's items as Messages, the loop let through every ``step`` of them."""
    done = 0
    for t in turns:
        done += len(t.messages)
        if done >= step:
            done = 0
            await asyncio.sleep(0)


async def merged_count(workspace: Workspace, session_id: str, labels: Sequence[str]) -> int:
    """How many items ``session_id``'s merged timeline over the stores ``labels``
    holds (copies once): its :attr:`Timeline.total`, told more cheaply. Each store's
    turns are read side by side (their rows read as Messages only where :mod:`.turns`
    must); where no store holds a turn with the quick key of another store's, none is a
    copy, and the count is their sum without a merge."""

    async def turns_of(label: str) -> list[StoreTurn]:
        pages = _pages(workspace.member(label).store, session_id, 500)
        return [t async for t in store_turns(label, pages)]

    held = await asyncio.gather(*(turns_of(label) for label in labels))
    first: dict[Hashable, str] = {}
    if all(first.setdefault(t.quick(), t.store) == t.store for turns in held for t in turns):
        return sum(t.size for turns in held for t in turns)
    return sum([t.size async for t in merge_turns([_replay(turns) for turns in held])])


async def _replay(turns: list[StoreTurn]) -> AsyncIterator[StoreTurn]:
    for t in turns:
        yield t
