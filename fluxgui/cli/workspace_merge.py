"""``merge``'s destination (opened to plan, or to write: made when it does not exist)
and its report."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TextIO

from fluxgui.core.errors import NotASessionStore
from fluxgui.core.roles import Store
from fluxgui.core.text import plural

from .output import one_line, print_json
from .stores import open_options, option_values

if TYPE_CHECKING:
    from fluxgui.services.workspace import Workspace
    from fluxgui.services.workspace.consolidate import MergePlan


def _default_format(workspace: Workspace) -> str:
    """A new DEST keeps Agents SDK items when any store merged does, else flux rows."""
    return "agents" if any(m.store.traits.items for m in workspace.members) else "flux"


@asynccontextmanager
async def dest_for_plan(args: argparse.Namespace, workspace: Workspace) -> AsyncIterator[Store | None]:
    """DEST opened read-only to plan against, or ``None`` when it does not exist yet (or
    holds no session store): then every session would be written."""
    from fluxgui.adapters.registry import open_store
    from fluxgui.services.destinations import plan_for

    if plan_for(args.dest, args.dest_format, _default_format(workspace)).new is not None:
        yield None
        return
    options = open_options(args, "dest_", format=args.dest_format if args.dest_format != "json" else None)
    try:
        store: Store = await open_store(args.dest, options)
    except NotASessionStore:
        yield None
        return
    try:
        yield store
    finally:
        await store.close()


@asynccontextmanager
async def dest_for_write(args: argparse.Namespace, workspace: Workspace) -> AsyncIterator[Store]:
    """DEST opened writable, or made (whole or not at all, as ``copy`` makes it)."""
    from fluxgui.services.destinations import writable_store

    async with writable_store(
        args.dest, fmt=args.dest_format, default=_default_format(workspace),
        **option_values(open_options(args, "dest_")),
    ) as store:
        yield store


def print_plan(
    out: TextIO, args: argparse.Namespace, plan: MergePlan, *, written: bool,
    shown_id: Callable[[str], str] | None = None,
) -> None:
    """Per session: what is (or would be) done and where its items come from; then the
    counts. ``shown_id``: each session's id as it is shown (``--redact``: redacted, as
    the id it is written under is)."""
    where = plan.dest or args.dest
    if shown_id is not None:
        for s in plan.sessions:
            s.session_id = shown_id(s.session_id)
    if args.json:
        doc = plan.to_dict()
        doc["into"] = where
        doc["dry_run"] = not written
        print_json(out, doc)
        return
    for s in plan.sessions:
        sid = one_line(s.session_id, 120)
        origin = ", ".join(f"{label} {n}" for label, n in s.from_stores.items())
        what = f"{plural(s.messages, 'message')} from {one_line(origin, 300)}"
        what += f", {s.folded} folded" if s.folded else ""
        what += ", split" if s.split else ""
        if s.action == "write":
            out.write(f"write     {sid}: {what}\n")
        elif s.action == "rename":
            new = f" as {one_line(s.written_as, 120)}" if s.written_as else " under a new id"
            out.write(f"rename    {sid}{new}: {what}\n")
        elif s.action == "same":
            held = one_line(s.written_as or s.session_id, 120)
            out.write(f"same      {sid}: already in the destination as {held}\n")
        else:
            out.write(
                f"conflict  {sid}: the destination holds it with other content; skipped "
                "(--on-conflict rename writes it under a new id)\n"
            )
    moved = [s for s in plan.sessions if s.action in ("write", "rename")]
    total = sum(s.written if written else s.messages for s in moved)
    verb = "merged" if written else "would merge"
    out.write(
        f"{verb} {plural(len(moved), 'session')} ({plural(total, 'message')}) into "
        f"{one_line(where, 300)}; {plan.count('same')} already there, "
        f"{plural(plan.count('conflict'), 'conflict')} skipped\n"
    )
    if not written:
        out.write("(dry run: nothing written)\n")
