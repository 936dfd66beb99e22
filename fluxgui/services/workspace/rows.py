"""The window's all-stores session list (issue 36): the merged listing a page at a time
(a page costs about what each store's page costs); then, for the rows held by several
stores, :func:`split_of` reads the merged timeline once to say whether the session is
split (no one store holds every turn) or only copied, and its count with copies once;
and a search over every store that says which store each hit is in.
"""

from __future__ import annotations

from collections.abc import Callable

import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

from fluxgui.core.text import plural
from fluxgui.services.search import search_batches

from .listing import WorkspaceSession, merged_sessions, rows_for
from .timeline import timeline
from .workspace import Workspace


@dataclass
class ListedSession:
    """One row of the all-stores list."""

    row: WorkspaceSession
    #: whether its turns are spread over its stores (``False`` for one store or a copy;
    #: ``None``: not known yet, see :func:`split_of`)
    split: bool | None = False
    #: the stores whose search found it (a search's rows only)
    hits: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def labels(self) -> list[str]:
        return self.row.labels

    def badge(self) -> str | None:
        """What the Store column says of a session in several stores."""
        n = len(self.row.stores)
        if n < 2:
            return None
        return f"split across {n} stores" if self.split else f"in {n} stores"

    def where(self, shown: Callable[[str], str] = str) -> str:
        """Its stores named ("in 3 stores: a, b, c"), and the search's hits; each label
        as ``shown`` gives it (the window's: redacted while View › Redact is on)."""
        text = f"in {plural(len(self.labels), 'store')}: {', '.join(map(shown, self.labels))}"
        if self.hits:
            text += f"; found in {', '.join(map(shown, self.hits))}"
        return text


async def split_of(workspace: Workspace, item: ListedSession) -> ListedSession:
    """``item`` with its split flag and merged count (its timeline read once)."""
    if item.row.several:
        line = await timeline(workspace, item.id, read=False)
        item.row.merged, item.split = line.total, line.split
    return item


async def _listed(
    workspace: Workspace, rows: list[WorkspaceSession], exact: bool
) -> list[ListedSession]:
    out = []
    for row in rows:
        item = ListedSession(row, None if row.several else False)
        out.append(await split_of(workspace, item) if exact else item)
    return out


async def listed_pages(
    workspace: Workspace, *, page: int = 50, exact: bool = True,
) -> AsyncGenerator[list[ListedSession], None]:
    """Every session of the workspace, most recently active first, ``page`` rows at a
    time (each store's list read lazily, see :mod:`.listing`); ``exact``: each row in
    several stores with its split flag (else ``None``: :func:`split_of` tells)."""
    batch: list[WorkspaceSession] = []
    async with contextlib.aclosing(merged_sessions(workspace, page=page, exact=False)) as rows:
        async for row in rows:
            batch.append(row)
            if len(batch) >= page:
                yield await _listed(workspace, batch, exact)
                batch = []
    if batch:
        yield await _listed(workspace, batch, exact)


async def search_pages(
    workspace: Workspace, text: str,
) -> AsyncGenerator[list[ListedSession], None]:
    """The sessions whose id or message text contains ``text`` in any store, store by
    store, each row naming the stores whose search found it (a session found again in a
    later store is yielded again with that store added); split flags are left to
    :func:`split_of`."""
    found: dict[str, ListedSession] = {}
    for member in workspace.members:
        async with contextlib.aclosing(search_batches(member.store, text)) as batches:
            async for got in batches:
                new = [sid for sid in got.ids if sid not in found]
                again = [found[sid] for sid in got.ids if sid in found]
                for item in again:
                    if member.label not in item.hits:
                        item.hits.append(member.label)
                rows = await _listed(workspace, await rows_for(workspace, new, exact=False), False)
                for item in rows:
                    item.hits.append(member.label)
                    found[item.id] = item
                if rows or again:
                    yield rows + again
