"""The first screen of a merged timeline: its first items in merged order, read lazily
(only the first turns of each store's copy), so a long session split across stores
shows at once while its whole timeline (counts, split, folded copies) is read after.
Either can be shown redacted (:func:`redacted_placed`, :func:`redacted_timeline`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from contextlib import aclosing
from dataclasses import replace

from fluxgui.core.roles import PageTransform

from .timeline import Placed, Timeline, merged_turns
from .workspace import Workspace

#: items on a first screen
FIRST_SCREEN = 200


async def first_placed(workspace: Workspace, session_id: str, limit: int = FIRST_SCREEN) -> list[Placed]:
    """The first whole turns of ``session_id``'s merged timeline, at least ``limit``
    items when it holds as many (the last turn is kept whole)."""
    out: list[Placed] = []
    async with aclosing(merged_turns(workspace, session_id)) as turns:
        async for t in turns:
            out += [Placed(m, t.store, t.stores, t.number, t.order_uncertain) for m in t.messages]
            if len(out) >= limit:
                break
    return out



async def redacted_placed(placed: Awaitable[list[Placed]], transform: PageTransform | None) -> list[Placed]:
    """The first screen's items, their messages through ``transform`` (View › Redact; in a
    worker thread) when one is given."""
    out = await placed
    if transform is None or not out:
        return out
    messages = await asyncio.to_thread(transform, [p.message for p in out])
    return [replace(p, message=m) for p, m in zip(out, messages)]


async def redacted_timeline(line: Awaitable[Timeline], transform: PageTransform | None) -> Timeline:
    """A whole merged timeline, every turn's messages through ``transform`` (one
    redaction: a value has one placeholder all through) when one is given."""
    done = await line
    if transform is None:
        return done

    def run() -> None:
        for turn in done.turns:
            turn.messages = transform(turn.messages)

    await asyncio.to_thread(run)
    return done
