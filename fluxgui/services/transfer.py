"""Import and copy: files into stores, store to store.

* :func:`import_files` reads exports and session files into a writable store, one
  transaction per session. Every file is read through once first (:func:`scan_files`), so
  a corrupt file or a session id the store has already stops the import before anything
  is written. :func:`import_destination` opens the store, or builds a new one beside its
  path and moves it there once everything is written.
* :func:`copy_sessions` copies sessions between stores (any formats), one transaction
  per session, streaming the source's pages into it; :func:`copy_destination` opens or
  creates the destination, never the source itself.

Each takes an optional ``progress(done, total)`` callback (messages; ``total`` may be 0
when unknown). Export is :mod:`fluxgui.services.export`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgui.adapters.registry import open_store
from fluxgui.core.errors import TargetError, show_id
from fluxgui.core.imports import ImportSession, read_sessions
from fluxgui.core.model import Message
from fluxgui.core.ports import SessionStore as Store

from .destinations import open_existing, plan_for, writable_store
from .outputs import check_not_source
from .transfer_common import (
    IdTaken,
    Progress,
    TransferResult,
    in_thread,
    resolve,
    session_infos,
)

__all__ = [
    "IdTaken",
    "ImportPlan",
    "TransferResult",
    "check_free_ids",
    "copy_destination",
    "copy_sessions",
    "import_destination",
    "import_files",
    "open_copy_target",
    "open_import_target",
    "scan_files",
]


# --------------------------------------------------------------------------- import


@dataclass
class ImportPlan:
    """What a set of files holds, found by reading each through once."""

    #: (file, session id, number of messages) in file order
    sessions: list[tuple[Path, str, int]] = field(default_factory=list)
    #: whether any message carries an Agents SDK item
    has_raw_items: bool = False

    @property
    def messages(self) -> int:
        return sum(n for _p, _s, n in self.sessions)


def scan_files(paths: Sequence[Path]) -> ImportPlan:
    """Read every file through (a page at a time), checking all of it: raises the first
    problem (``InvalidItem``/``TargetError`` naming the file and where) before anything
    is written. Blocking: run it in a thread."""
    plan = ImportPlan()
    for path in paths:
        for session in read_sessions(Path(path)):
            n = 0
            for page in session.pages:
                n += len(page)
                if not plan.has_raw_items:
                    plan.has_raw_items = any(isinstance(m.raw, dict) for m in page)
            plan.sessions.append((Path(path), session.id, n))
    return plan


async def _open_or_create(target: str, *, fmt: str | None, default: str, **options: Any) -> Store:
    """Open ``target`` writable, or make it (not atomically: see :func:`import_destination`
    and :func:`copy_destination`, which build a new store beside its path)."""
    plan = plan_for(target, fmt, default)
    if plan.new is not None:
        assert plan.create is not None
        return await open_store(target, create=plan.create, **options)
    return await open_existing(target, fmt=fmt, default=default, create=plan.create, **options)


async def open_import_target(
    target: str,
    files: Sequence[Path] = (),
    *,
    fmt: str | None = None,
    plan: ImportPlan | None = None,
    **options: Any,
) -> Store:
    """Open ``target`` writable; a path that does not exist (or a database without any
    table) becomes a new store in ``fmt`` (default: Agents SDK format when the files carry
    raw items, else flux). Corrupt files raise before anything is created. ``options``
    (``sessions_table``, ``messages_table``, ``key``, ``ttl``, ``key_prefix``) go to
    :func:`open_store`."""
    if plan is None:
        plan = await in_thread(scan_files, list(files))
    return await _open_or_create(target, fmt=fmt, default=_import_default(plan), **options)


def _import_default(plan: ImportPlan) -> str:
    return "agents" if plan.has_raw_items else "flux"


def _refuse_import_into_files(target: str, files: Sequence[Path]) -> None:
    for f in files:
        if "://" not in target and os.path.realpath(target) == os.path.realpath(f):
            raise TargetError(
                f"refusing to import {show_id(str(f))} into itself; nothing was written"
            )


def import_destination(
    target: str,
    plan: ImportPlan,
    files: Sequence[Path] = (),
    *,
    fmt: str | None = None,
    **options: Any,
) -> AbstractAsyncContextManager[Store]:
    """The store to import into, as :func:`fluxgui.services.destinations.writable_store`
    gives it: a new one appears only once every session was written."""
    _refuse_import_into_files(target, files)
    return writable_store(target, fmt=fmt, default=_import_default(plan), **options)


async def open_copy_target(
    target: str, source: Store, *, fmt: str | None = None, **options: Any
) -> Store:
    """Open ``target`` writable for a copy from ``source``; a new one is made in ``fmt``
    (default: the source's format). ``options`` (``sessions_table``, ``messages_table``,
    ``key``, ``ttl``, ``key_prefix``) go to :func:`open_store`."""
    return await _open_or_create(target, fmt=fmt, default=source.format, **options)


def copy_destination(
    target: str,
    source: Store,
    *,
    fmt: str | None = None,
    source_target: str | None = None,
    source_prefix: str | None = None,
    **options: Any,
) -> AbstractAsyncContextManager[Store]:
    """The store to copy ``source``'s sessions into, as
    :func:`fluxgui.services.destinations.writable_store` gives it. Never ``source``
    itself: its files, or (``source_target``, the URL it was opened with, and its Redis
    ``source_prefix``) the same server store, are refused."""
    for path in source.local_paths():
        check_not_source(target, str(path))
    if source_target is not None and not source.local_paths():
        check_not_source(
            target, source_target,
            dest_prefix=options.get("key_prefix") or None, source_prefix=source_prefix or None,
        )
    return writable_store(target, fmt=fmt, default=source.format, **options)


async def check_free_ids(store: Store, ids: Sequence[str], *, rename: bool) -> None:
    """Raise :class:`IdTaken` for the first id ``store`` already holds or that comes
    twice in ``ids`` (nothing to check with ``rename``, or in a store that names new
    sessions itself)."""
    if rename or store.capabilities.names_new_sessions:
        return
    seen: set[str] = set()
    for sid in ids:
        if sid in seen:
            raise IdTaken(
                f"session {show_id(sid)} comes twice in what is imported; nothing was written",
                sid,
            )
        seen.add(sid)
    for start in range(0, len(ids), 500):
        chunk = list(dict.fromkeys(ids[start : start + 500]))
        found = {i.id for i in await store.sessions_by_ids(chunk)}
        for sid in chunk:
            # (Agents SDK items whose session row is missing are only found one by one.)
            if sid in found or (store.format != "flux" and await store.session_info(sid)):
                raise IdTaken(
                    f"session {show_id(sid)} already exists in {store.target}; nothing was written",
                    sid,
                )


async def _pages(session: ImportSession) -> AsyncIterator[list[Message]]:
    """The session's pages, parsed in a worker thread."""
    it: Iterator[list[Message]] = session.pages
    while True:
        page = await in_thread(next, it, None)
        if page is None:
            return
        yield page


async def import_files(
    store: Store,
    files: Sequence[Path],
    *,
    rename: bool = False,
    progress: Progress | None = None,
    plan: ImportPlan | None = None,
) -> TransferResult:
    """Import every session of ``files`` as new sessions of ``store``, one transaction
    each. The files are read through first (``plan``, unless given): a corrupt file, or an
    id the store holds already (without ``rename``), raises before anything is written."""
    files = [Path(f) for f in files]
    if plan is None:
        plan = await in_thread(scan_files, files)
    store.check_importable()
    await check_free_ids(store, [sid for _p, sid, _n in plan.sessions], rename=rename)
    result = TransferResult()
    total = plan.messages
    for path in files:
        sessions = await in_thread(lambda p=path: iter(read_sessions(p)))
        while True:
            session = await in_thread(next, sessions, None)
            if session is None:
                break
            counted = _Counter(result, progress, total)
            new_id, _n = await store.import_session(
                session.id,
                counted.wrap(_pages(session)),
                created_at=session.created_at,
                updated_at=session.updated_at,
                rename=rename,
            )
            result.sessions += 1
            result.written.append((session.id, new_id))
    return result


class _Counter:
    def __init__(self, result: TransferResult, progress: Progress | None, total: int = 0):
        self.result = result
        self.progress = progress
        self.total = total

    async def wrap(self, pages: AsyncIterator[list[Message]]) -> AsyncIterator[list[Message]]:
        async for page in pages:
            yield page
            self.result.messages += len(page)
            if self.progress:
                self.progress(self.result.messages, max(self.total, self.result.messages))


# --------------------------------------------------------------------------- copy


async def copy_sessions(
    source: Store,
    dest: Store,
    session_ids: Sequence[str] | None = None,
    *,
    rename: bool = False,
    progress: Progress | None = None,
) -> TransferResult:
    """Copy sessions (None: all) from ``source`` into ``dest``, converting the format
    where they differ; one transaction per session. The sessions are listed first (an
    unknown id, or an id ``dest`` holds already without ``rename``, raises before
    anything is written)."""
    if session_ids:
        infos = await resolve(source, session_ids)
    else:
        infos = [info async for info in session_infos(source, None)]
    dest.check_importable()
    await check_free_ids(dest, [i.id for i in infos], rename=rename)
    total = sum(i.messages for i in infos)
    result = TransferResult()
    for info in infos:
        counted = _Counter(result, progress, total)
        new_id, _n = await dest.import_session(
            info.id,
            counted.wrap(source.iter_messages(info.id)),
            created_at=info.created_at,
            updated_at=info.updated_at,
            rename=rename,
        )
        result.sessions += 1
        result.written.append((info.id, new_id))
    return result
