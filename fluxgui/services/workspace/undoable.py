"""A consolidation as one reversible change (the window's Edit › Undo).

:func:`consolidate_undoable` writes the merged sessions into the destination as
:func:`~.into.consolidate_into` does, then takes each session it wrote (only those: a
session skipped as already consolidated, or in conflict, is not part of it) as the
:class:`~fluxgui.core.changes.Change` that made it, read by the destination's writer
(``created_change``: nothing is written), the way a replay's fork joins the undo stack. The window writes with ``consolidate_into`` (its dialog shows the progress and
may cancel) and then puts :func:`consolidation_change` on its undo stack. The
:class:`Consolidated` change writes itself into
its own store (not the window's): its inverse deletes exactly those sessions, the change
again writes them back. The stores merged are never touched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fluxgui.core.changes import Change, label_id
from fluxgui.core.roles import Store, refuse
from fluxgui.core.text import plural

from .consolidate import MergePlan, OnConflict
from .into import consolidate_into, default_format
from .workspace import Workspace


@dataclass(frozen=True)
class Consolidated:
    """The sessions a consolidation wrote into ``target``, as one change of that store:
    ``changes`` are the sessions' own changes (each adds a whole session, or — in the
    inverse — removes it)."""

    target: str
    label: str
    changes: tuple[Change, ...]
    default: str = "agents"

    @property
    def session_id(self) -> str:
        """The first session written (the changes name one session each)."""
        return self.changes[0].session_id if self.changes else ""

    @property
    def session_ids(self) -> list[str]:
        return [c.session_id for c in self.changes]

    def inverse(self) -> Consolidated:
        return Consolidated(self.target, self.label, tuple(c.inverse() for c in reversed(self.changes)), self.default)

    async def write(self) -> Consolidated:
        """Apply every session's change in the destination (one transaction each);
        returns what was written."""
        from fluxgui.services.destinations import writable_store

        async with writable_store(self.target, fmt=None, default=self.default) as dest:
            writer = dest.writer or refuse(dest, "writer")
            done = [await writer.apply_change(c) for c in self.changes]
        return Consolidated(self.target, self.label, tuple(done), self.default)


def consolidation_label(target: str, sessions: int) -> str:
    return f"Consolidate {plural(sessions, 'session')} into {label_id(target)}"


async def consolidation_change(target: str, plan: MergePlan, default: str = "agents") -> Consolidated:
    """The sessions ``plan`` (as done by :func:`~.into.consolidate_into` into ``target``)
    wrote, as one change of ``target`` (see the module); ``default``: the format a new
    destination was made in (:func:`~.into.default_format`)."""
    from fluxgui.services.destinations import writable_store

    written = [s.written_as for s in plan.sessions if s.action in ("write", "rename") and s.written and s.written_as]
    changes: list[Change] = []
    if written:
        async with writable_store(target, fmt=None, default=default) as dest:
            for sid in written:
                writer = dest.writer or refuse(dest, "writer")
                changes.append(await writer.created_change(sid))
    return Consolidated(target, consolidation_label(target, len(changes)), tuple(changes), default)


async def consolidate_undoable(
    workspace: Workspace, target: str, session_ids: Sequence[str] | None = None,
    *, on_conflict: OnConflict = "skip", progress: Callable[[int, int], None] | None = None,
) -> tuple[MergePlan, Consolidated]:
    """Consolidate into ``target`` (:func:`~.into.consolidate_into`) and return the plan
    as done with the change that undoes it (see the module)."""
    plan = await consolidate_into(workspace, target, session_ids, on_conflict=on_conflict, progress=progress)
    return plan, await consolidation_change(target, plan, default_format(workspace))
