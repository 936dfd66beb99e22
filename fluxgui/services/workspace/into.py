"""Consolidation into a destination named by its target (the window's dialog): planned
against the destination as it is (read-only; a path that does not exist yet, or holds no
session store, would take every session), then written — a new file made whole or not
at all, as ``copy`` makes it. A destination that is one of the stores merged is refused
before anything is read from it (they are never changed).
"""

from __future__ import annotations

import contextlib

from collections.abc import Callable, Sequence
from pathlib import Path

from fluxgui.core.errors import NotASessionStore, TargetError, show_id
from fluxgui.core.ports import OpenOptions

from .consolidate import MergePlan, OnConflict, plan_merge, write_merge
from .workspace import Workspace


def default_format(workspace: Workspace) -> str:
    """A new destination keeps Agents SDK items when any store merged does, else flux rows."""
    return "agents" if any(m.store.traits.items for m in workspace.members) else "flux"


def refuse_member(workspace: Workspace, target: str) -> None:
    """Refuse ``target`` when it is one of the workspace's stores (by target or file)."""
    path = None if "://" in target else Path(target).expanduser().resolve()
    for m in workspace.members:
        same = m.target == target or (path is not None and path in {p.resolve() for p in m.store.local_paths()})
        if same:
            raise TargetError(
                f"refusing to consolidate into {show_id(target)}: it is {m.label}, one of the "
                "stores merged (they are never changed); choose a new file or another store"
            )


async def preview_into(
    workspace: Workspace, target: str, session_ids: Sequence[str] | None = None,
    *, on_conflict: OnConflict = "skip",
) -> MergePlan:
    """The plan of consolidating into ``target`` (nothing is written)."""
    from fluxgui.adapters.registry import open_store
    from fluxgui.services.destinations import plan_for

    refuse_member(workspace, target)
    dest = None  # a new store, or a database holding none yet: every session is written
    if plan_for(target, None, default_format(workspace)).new is None:
        with contextlib.suppress(NotASessionStore):
            dest = await open_store(target, OpenOptions())
    try:
        plan = await plan_merge(workspace, dest, session_ids, on_conflict=on_conflict)
    finally:
        if dest is not None:
            await dest.close()
    if dest is None:
        plan.dest = target
    return plan


async def consolidate_into(
    workspace: Workspace, target: str, session_ids: Sequence[str] | None = None,
    *, on_conflict: OnConflict = "skip", progress: Callable[[int, int], None] | None = None,
) -> MergePlan:
    """Write the merged sessions into ``target`` (made when it does not exist)."""
    from fluxgui.services.destinations import writable_store

    refuse_member(workspace, target)
    async with writable_store(target, fmt=None, default=default_format(workspace)) as dest:
        return await write_merge(workspace, dest, session_ids, on_conflict=on_conflict, progress=progress)
