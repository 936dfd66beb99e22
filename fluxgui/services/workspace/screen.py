"""The first screen of a merged timeline: its first items in merged order, read lazily
(only the first turns of each store's copy), so a long session split across stores
shows at once while its whole timeline (counts, split, folded copies) is read after.
"""

from __future__ import annotations

from contextlib import aclosing

from .timeline import Placed, merged_turns
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
