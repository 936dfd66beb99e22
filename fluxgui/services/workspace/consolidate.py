"""Consolidation: the merged timelines of a workspace's sessions written into one store.

First a plan (:func:`plan_merge`): per session, how many items come from each store,
the copies folded, and what happens in the destination — ``write`` (a new session),
``same`` (the destination already holds this merged timeline: nothing is written, so a
second run writes nothing more), ``conflict`` (it holds the id with other content: never
overwritten; skipped) or ``rename`` (written under ``<id>-2``, ``<id>-3``, … with
``on_conflict="rename"``). Then the write (:func:`write_merge`): one transaction per
session through the destination's writer (``import_session``), in merged order,
converting formats as ``copy`` does. The stores merged are only read.

Content is compared ids and times aside; across formats (a flux row written into an
Agents SDK store becomes an item) by role, kind and text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fluxgui.core.errors import TargetError, show_id
from fluxgui.core.model import Message
from fluxgui.core.roles import IdTransform, PageTransform, Store, refuse
from fluxgui.core.contentkey import content_key

from .listing import session_rows
from .timeline import Timeline, timeline
from .workspace import Workspace

OnConflict = Literal["skip", "rename"]
#: how many ``<id>-N`` names are looked at for an earlier renamed consolidation
RENAME_LOOKS = 20
#: items per page written
PAGE = 500


@dataclass
class SessionMerge:
    """What consolidating one session does (see the module)."""

    session_id: str
    stores: list[str]
    #: label → how many of the merged items are read from it
    from_stores: dict[str, int]
    messages: int
    folded: int
    split: bool
    action: Literal["write", "same", "conflict", "rename"] = "write"
    #: the id it is (or was) written under in the destination
    written_as: str | None = None
    #: items written by :func:`write_merge`
    written: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.session_id,
            "action": self.action,
            "written_as": self.written_as,
            "messages": self.messages,
            "folded": self.folded,
            "split": self.split,
            "stores": [{"store": s, "messages": n} for s, n in self.from_stores.items()],
            "written": self.written,
        }


@dataclass
class MergePlan:
    """The plan of a consolidation into ``dest`` (its target as it may be shown)."""

    dest: str
    sessions: list[SessionMerge] = field(default_factory=list)

    def count(self, action: str) -> int:
        return sum(1 for s in self.sessions if s.action == action)

    def to_dict(self) -> dict[str, Any]:
        return {"into": self.dest, "sessions": [s.to_dict() for s in self.sessions]}


def _strict(messages: Sequence[Message]) -> list[Hashable]:
    return [content_key(m) for m in messages]


def _loose(messages: Sequence[Message]) -> list[Hashable]:
    return [(m.role, m.kind, m.text) for m in messages]


async def _read_all(store: Store, session_id: str) -> list[Message]:
    out: list[Message] = []
    async for page in store.reader.iter_messages(session_id):
        out.extend(page)
    return out


async def _same(dest: Store, session_id: str, merged: list[Message]) -> bool:
    held = await _read_all(dest, session_id)
    if len(held) != len(merged):
        return False
    return _strict(held) == _strict(merged) or _loose(held) == _loose(merged)


def check_not_member(workspace: Workspace, dest: Store) -> None:
    """Refuse a destination that is one of the stores merged (they are only read)."""
    paths = {p.resolve() for p in dest.local_paths()}
    for m in workspace.members:
        if m.store.store_key == dest.store_key or paths & {p.resolve() for p in m.store.local_paths()}:
            raise TargetError(
                f"refusing to merge into {show_id(dest.target)}: it is {m.label}, one of the "
                "stores merged (they are never changed); nothing was written"
            )


async def _renamed_copy(dest: Store, session_id: str, merged: list[Message]) -> str | None:
    """An earlier ``rename`` consolidation of the same timeline (``<id>-N``), if any."""
    names = [f"{session_id}-{n}" for n in range(2, RENAME_LOOKS + 2)]
    held = {i.id for i in await dest.reader.sessions_by_ids(names)}
    for name in names:
        if name in held and await _same(dest, name, merged):
            return name
    return None


async def plan_session(
    workspace: Workspace, dest: Store | None, session_id: str, on_conflict: OnConflict,
    transform_id: IdTransform | None = None,
) -> tuple[SessionMerge, Timeline]:
    """The plan of one session, and its merged timeline. ``transform_id`` gives the id
    it is written under (redaction), the one looked for in ``dest``."""
    line = await timeline(workspace, session_id)
    dest_id = transform_id(session_id) if transform_id is not None else session_id
    plan = SessionMerge(
        session_id, line.stores, line.from_store(), line.total, line.folded, line.split,
        written_as=dest_id,
    )
    if dest is None:
        return plan, line
    if not await dest.reader.sessions_by_ids([dest_id]):
        return plan, line
    merged = line.messages()
    if await _same(dest, dest_id, merged):
        plan.action = "same"
        return plan, line
    if on_conflict == "rename":
        earlier = await _renamed_copy(dest, dest_id, merged)
        plan.action, plan.written_as = ("same", earlier) if earlier else ("rename", None)
    else:
        plan.action, plan.written_as = "conflict", None
    return plan, line


async def plan_merge(
    workspace: Workspace, dest: Store | None, session_ids: Sequence[str] | None = None,
    *, on_conflict: OnConflict = "skip", transform_id: IdTransform | None = None,
) -> MergePlan:
    """The plan of consolidating ``session_ids`` (default: every session of the
    workspace) into ``dest`` (``None``: a store not made yet, everything is written);
    ``transform_id``: see :func:`write_merge`."""
    if dest is not None:
        check_not_member(workspace, dest)
    plan = MergePlan(dest.target if dest is not None else "")
    for sid in await _ids(workspace, session_ids):
        item, _line = await plan_session(workspace, dest, sid, on_conflict, transform_id)
        plan.sessions.append(item)
    return plan


async def _ids(workspace: Workspace, session_ids: Sequence[str] | None) -> list[str]:
    """The ids named (an id no store holds raises), or every session's."""
    if not session_ids:
        return [row.id for row in await session_rows(workspace, exact=False)]
    ids = list(dict.fromkeys(session_ids))
    for sid in ids:
        if not await workspace.holders(sid):
            await workspace.members[0].store.reader.require_session(sid)
    return ids


async def _pages(
    messages: list[Message], transform: PageTransform | None = None
) -> AsyncIterator[list[Message]]:
    for start in range(0, len(messages), PAGE):
        page = messages[start : start + PAGE]
        yield page if transform is None else transform(page)


def _times(line: Timeline) -> tuple[str | None, str | None]:
    """The session's first and last times: its first and last timed items in merged
    order (which is by time)."""
    messages = line.messages()
    first = next((m.created_at for m in messages if m.created_at), None)
    last = next((m.created_at for m in reversed(messages) if m.created_at), None)
    return first, last


async def write_merge(
    workspace: Workspace, dest: Store, plan: MergePlan | Sequence[str] | None = None,
    *, on_conflict: OnConflict = "skip", progress: Callable[[int, int], None] | None = None,
    transform: PageTransform | None = None, transform_id: IdTransform | None = None,
) -> MergePlan:
    """Consolidate the sessions of ``plan`` (a plan previewed, or session ids; ``None``:
    every session) into ``dest``, one transaction per session. Each session is planned
    again against the destination as it is now (another run may have written it since),
    from the one read of its timeline that is written: nothing is written twice. Returns
    the plan as done. ``progress(done, total)`` is told after each session.
    ``transform`` changes each page before it is written (redaction); ``transform_id``
    each session's id, the one it is written under and looked for in ``dest`` (an id
    held there already, or written before in this run, is a conflict as any is)."""
    writer = dest.writer or refuse(dest, "writer")
    writer.check_importable()
    check_not_member(workspace, dest)
    if isinstance(plan, MergePlan):
        ids = [s.session_id for s in plan.sessions]
    else:
        ids = await _ids(workspace, plan)
    done = MergePlan(dest.target)
    for sid in ids:
        item, line = await plan_session(workspace, dest, sid, on_conflict, transform_id)
        if item.action in ("write", "rename") and line.total:
            first, last = _times(line)
            dest_id = transform_id(sid) if transform_id is not None else item.session_id
            new_id, n = await writer.import_session(
                dest_id, _pages(line.messages(), transform), created_at=first, updated_at=last,
                rename=item.action == "rename",
            )
            item.written_as, item.written = new_id, n
        done.sessions.append(item)
        if progress is not None:
            progress(len(done.sessions), len(ids))
    return done
