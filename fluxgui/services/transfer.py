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
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fluxgui.adapters.registry import conversations_location, open_store
from fluxgui.core.roles import IdTransform, PageTransform, Pages, Store, refuse
from fluxgui.core.errors import TargetError, show_id
from fluxgui.core.imports import ImportSession, read_sessions
from fluxgui.core.model import Message

from .destinations import open_existing, plan_for, writable_store
from .outputs import check_not_source
from .sealed import Sealed, sealed_in_copy, sealed_in_import, without_sealed
from .transfer_common import (
    IdTaken,
    Progress,
    TransferResult,
    held,
    in_thread,
    repeated,
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
    #: each session's encrypted items (beside ``sessions``): envelopes still sealed, and
    #: items an export decrypted
    sealed: list[Sealed] = field(default_factory=list)

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
            sealed = Sealed()
            for page in session.pages:
                n += len(page)
                sealed.count(page)
                if not plan.has_raw_items:
                    plan.has_raw_items = any(isinstance(m.raw, dict) for m in page)
            plan.sessions.append((Path(path), session.id, n))
            plan.sealed.append(sealed)
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
    ``source_prefix``) the same server store, or the same Conversations server (a target
    with no URL in it: its server is the ``base_url`` option), are refused."""
    server = conversations_location(target, options.get("base_url"))
    if server is not None:
        if source.store_key.split("?", 1)[0] == server:  # (its location, see core.storekey)
            raise TargetError(
                f"refusing to copy into {show_id(server)}: it is the server being read; "
                "nothing was written"
            )
        return writable_store(target, fmt=fmt, default=source.format, **options)
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
    if rename or store.traits.names_new_sessions:
        return
    twice = repeated(ids)
    if twice:
        sid = ids[twice[0]]
        raise IdTaken(
            f"session {show_id(sid)} comes twice in what is imported; nothing was written", sid
        )
    for n in await held(store, ids, first=True):
        raise IdTaken(
            f"session {show_id(ids[n])} already exists in {store.target}; nothing was written",
            ids[n],
        )


async def _pages(session: ImportSession) -> AsyncGenerator[list[Message], None]:
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
    drop_unreadable: bool = False,
) -> TransferResult:
    """Import every session of ``files`` as new sessions of ``store``, one transaction
    each. The files are read through first (``plan``, unless given): a corrupt file, an
    id the store holds already (without ``rename``), or encrypted items still sealed in a
    session that would get a new id (see :mod:`.sealed`; with ``drop_unreadable`` they are
    left out when others open) raises before anything is written."""
    files = [Path(f) for f in files]
    if plan is None:
        plan = await in_thread(scan_files, files)
    (store.writer or refuse(store, "writer")).check_importable()
    await check_free_ids(store, [sid for _p, sid, _n in plan.sessions], rename=rename)
    dropping = await sealed_in_import(
        store,
        [(p.name, sid, sealed) for (p, sid, _n), sealed in zip(plan.sessions, plan.sealed)],
        rename=rename, drop=drop_unreadable,
    )
    result = TransferResult()
    total = plan.messages
    position = 0
    for path in files:
        sessions = await in_thread(lambda p=path: iter(read_sessions(p)))
        while True:
            session = await in_thread(next, sessions, None)
            if session is None:
                break
            counted = _Counter(result, progress, total)
            pages = _pages(session)
            if position in dropping:
                pages = without_sealed(pages)
            position += 1
            await write_one(store, session, counted.wrap(pages), result, rename=rename)
    return result


async def write_one(store: Store, session: Any, pages: Pages, result: TransferResult, *, rename: bool) -> None:
    """Write one session (its id and times from ``session``) into ``store``, in one
    transaction, and note it in ``result``."""
    new_id, _n = await (store.writer or refuse(store, "writer")).import_session(
        session.id, pages, created_at=session.created_at, updated_at=session.updated_at,
        rename=rename,
    )
    result.sessions += 1
    result.written.append((session.id, new_id))


class _Counter:
    def __init__(self, result: TransferResult, progress: Progress | None, total: int = 0):
        self.result = result
        self.progress = progress
        self.total = total

    async def wrap(self, pages: AsyncIterator[list[Message]]) -> AsyncGenerator[list[Message], None]:
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
    drop_unreadable: bool = False,
    transform: PageTransform | None = None,
    transform_id: IdTransform | None = None,
) -> TransferResult:
    """Copy sessions (None: all) from ``source`` into ``dest``, converting the format
    where they differ; one transaction per session. The sessions are listed first (an
    unknown id, an id ``dest`` holds already without ``rename``, or encrypted items no key
    opened in a session that would get a new id — see :mod:`.sealed`; with
    ``drop_unreadable`` they are left out when others open — raises before anything is
    written). ``transform`` changes each page before it is written (redaction, which
    leaves sealed items out itself); ``transform_id`` each session's id, the one it is
    written under (redaction: two that come out the same are a taken id, as two ids
    alike are; ``result.written`` holds the ids changed, never the source's)."""
    if session_ids:
        infos = await resolve(source, session_ids)
    else:
        infos = [info async for info in session_infos(source, None)]
    (dest.writer or refuse(dest, "writer")).check_importable()
    written_as = [transform_id(i.id) if transform_id is not None else i.id for i in infos]
    await check_free_ids(dest, written_as, rename=rename)
    dropping = (
        set() if transform is not None
        else await sealed_in_copy(source, dest, infos, rename=rename, drop=drop_unreadable)
    )
    total = sum(i.messages for i in infos)
    result = TransferResult()
    for n, info in enumerate(infos):
        counted = _Counter(result, progress, total)
        pages = source.reader.iter_messages(info.id)
        if transform is not None:
            pages = _changed(pages, transform)
        chosen = without_sealed(pages) if n in dropping else pages
        as_written = replace(info, id=written_as[n]) if written_as[n] != info.id else info
        await write_one(dest, as_written, counted.wrap(chosen), result, rename=rename)
    return result


async def _changed(
    pages: AsyncIterator[list[Message]], transform: PageTransform
) -> AsyncGenerator[list[Message], None]:
    """``pages``, each changed by ``transform`` in a worker thread (empty ones left out)."""
    async for page in pages:
        changed = await in_thread(transform, page)
        if changed:
            yield changed
