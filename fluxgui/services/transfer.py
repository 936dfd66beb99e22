"""Export, import and copy: sessions out to files, files into stores, store to store.

* :func:`export_sessions` streams sessions into a temporary file beside the target and
  renames it into place only when everything is written (a failure, a cancellation or a
  kill leaves no file at the target path). :func:`export_to_stream` writes to an open
  text stream instead (standard output).
* :func:`import_files` reads exports and session files into a writable store, one
  transaction per session. Every file is read through once first (:func:`scan_files`), so
  a corrupt file or a session id the store has already stops the import before anything
  is written. :func:`open_import_target` creates a SQLite store for them when the path
  does not exist yet.
* :func:`copy_sessions` copies sessions between stores (any formats), one transaction
  per session, streaming the source's pages into it; :func:`open_copy_target` opens or
  creates the destination.

Each takes an optional ``progress(done, total)`` callback (messages; ``total`` may be 0
when unknown).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from fluxgui.adapters.registry import open_store
from fluxgui.core.ports import SessionStore as Store
from fluxgui.core.aio import run_to_end
from fluxgui.core.files import hold, part_name, part_pattern, remove_stale, sync_folder
from fluxgui.core.errors import Conflict, TargetError, show_id
from fluxgui.core.export import EXPORT_FORMATS, make_writer
from fluxgui.core.imports import ImportSession, read_sessions
from fluxgui.core.model import Message, SessionInfo

from .destinations import open_existing, plan_for, writable_store
from .outputs import check_not_source, check_output

Progress = Callable[[int, int], None]
T = TypeVar("T")


@dataclass
class TransferResult:
    sessions: int = 0
    messages: int = 0
    bytes: int = 0
    #: things the user should know about what was written (one line each)
    notes: list[str] = field(default_factory=list)
    #: (source session id, id written) for imports and copies
    written: list[tuple[str, str]] = field(default_factory=list)

    @property
    def renamed(self) -> list[tuple[str, str]]:
        """The sessions written under another id than their own (``rename``)."""
        return [(old, new) for old, new in self.written if old != new]


class IdTaken(Conflict):
    """A session to import or copy has an id the destination already holds (or that
    comes twice in what is imported); nothing was written."""

    def __init__(self, message: str, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


async def _in_thread(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread. When the caller is cancelled, the thread's work
    is waited for before the cancellation goes on: nothing keeps writing to a file that
    the caller is about to close and remove."""
    return await run_to_end(asyncio.to_thread(fn, *args))


async def _resolve(store: Store, ids: Sequence[str]) -> list[SessionInfo]:
    """The list rows of ``ids`` (each once, in the order given); an unknown id raises
    ``SessionNotFound`` before anything is done."""
    return [await store.require_session(sid) for sid in dict.fromkeys(ids)]


async def _session_infos(store: Store, ids: Sequence[str] | None) -> AsyncIterator[SessionInfo]:
    """The sessions ``ids`` in the order given, or (None) every session, the least
    recently active first: written in that order, a copy or an import of the export lists
    them in the same order as the source does."""
    if ids:
        for info in await _resolve(store, ids):
            yield info
        return
    cursor = None
    while True:
        page = await store.list_sessions(limit=200, cursor=cursor, descending=False)
        for info in page.sessions:
            yield info
        if page.cursor is None:
            return
        cursor = page.cursor


async def count_messages(store: Store, ids: Sequence[str] | None) -> int:
    """The number of messages an export or copy of ``ids`` (None: all) will move."""
    total = 0
    async for info in _session_infos(store, ids):
        total += info.messages
    return total


async def _iter(items: list[SessionInfo]) -> AsyncIterator[SessionInfo]:
    for item in items:
        yield item


# --------------------------------------------------------------------------- export


def format_for_path(path: str | Path) -> str | None:
    """The export format a file name's suffix asks for (``None``: none known)."""
    suffix = Path(path).suffix.lower()
    return {
        ".json": "json",
        ".jsonl": "jsonl",
        ".ndjson": "jsonl",
        ".md": "md",
        ".markdown": "md",
        ".html": "html",
        ".htm": "html",
    }.get(suffix)


async def export_to_stream(
    store: Store,
    out: TextIO,
    fmt: str,
    *,
    session_ids: Sequence[str] | None = None,
    metadata: bool = True,
    progress: Progress | None = None,
    title: str = "",
) -> TransferResult:
    """Write the sessions ``session_ids`` (None: every session) of ``store`` to ``out``
    (not atomic: see :func:`export_sessions` for files)."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (use {', '.join(EXPORT_FORMATS)})")
    infos = await _resolve(store, session_ids) if session_ids else None
    total = 0
    if progress:
        total = sum(i.messages for i in infos) if infos is not None else await count_messages(store, None)
    result = TransferResult()
    writer = make_writer(fmt, out, metadata=metadata)
    writer.begin(store.format, title or f"Sessions from {store.target}")
    done = 0
    sessions = _iter(infos) if infos is not None else _session_infos(store, None)
    # Encoding and writing run in a worker thread (the loop stays free), a batch of
    # writer calls at a time: many small sessions share one hand-off, and a batch is cut
    # by size too, so big messages are not held many at a time.
    batch: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
    batched = batched_chars = 0

    async def flush() -> None:
        nonlocal batch, batched, batched_chars
        if batch:
            calls, batch, batched, batched_chars = batch, [], 0, 0
            await _in_thread(_run_calls, calls)

    async for info in sessions:
        batch.append((writer.session, (info,)))
        async for page in store.iter_messages(info.id):
            batch.append((writer.messages, (page,)))
            batched += len(page)
            batched_chars += sum(len(m.text) for m in page)
            done += len(page)
            if batched >= _EXPORT_BATCH or batched_chars >= _EXPORT_BATCH_CHARS:
                await flush()
            if progress:
                progress(done, max(total, done))
        batch.append((writer.end_session, ()))
        result.sessions += 1
    batch.append((writer.end, ()))
    await flush()
    result.messages = done
    if writer.replaced_non_finite:
        n = writer.replaced_non_finite
        result.notes.append(
            f"{n:,} number{'' if n == 1 else 's'} that JSON cannot hold (NaN, Infinity) "
            f"written as the string{'' if n == 1 else 's'} \"NaN\", \"Infinity\" or \"-Infinity\""
        )
    return result


_EXPORT_BATCH = 500
_EXPORT_BATCH_CHARS = 8_000_000


def _run_calls(calls: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> None:
    for fn, args in calls:
        fn(*args)


async def export_sessions(
    store: Store,
    path: Path,
    fmt: str,
    *,
    session_ids: Sequence[str] | None = None,
    metadata: bool = True,
    progress: Progress | None = None,
    title: str = "",
    force: bool = False,
) -> TransferResult:
    """Write the sessions ``session_ids`` (None: every session) of ``store`` to ``path``.

    The file appears at ``path`` only complete: it is written to a temporary file
    ``.<name>.<random>.part`` in the same folder, flushed to disk and renamed over
    ``path`` (a symlink is followed: the file it names is replaced). A character device
    or a FIFO is written straight through instead. ``path`` must not be the store being
    read or one of its side files, nor (without ``force``) another session store: see
    :func:`fluxgui.services.outputs.check_output`. An unknown session id, a missing
    folder or an unwritable one raise before any file is made. Leftover temporaries of
    an export to the same path that was killed are removed first.
    """
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (use {', '.join(EXPORT_FORMATS)})")
    output = check_output(path, store.local_paths(), force=force)
    if session_ids:
        session_ids = [i.id for i in await _resolve(store, session_ids)]
    if output.kind == "stream":
        return await _export_through(store, output.path, fmt, session_ids, metadata, progress, title)
    real = output.path
    folder = real.parent
    if not folder.is_dir():
        raise TargetError(f"no such folder: {folder}")
    await asyncio.to_thread(remove_stale, folder, part_pattern(real.name))
    tmp = folder / part_name(real.name)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise TargetError(f"cannot write in {folder}: {exc.strerror or exc}") from None
    hold(fd)  # marks it as ours and alive; a kill releases it (see core.files)
    try:
        # Stored text may hold lone surrogates: "backslashreplace" writes them as \udXXX,
        # which inside a JSON string is the escape that reads back as the same text.
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n", errors="backslashreplace") as out:
            result = await export_to_stream(
                store, out, fmt, session_ids=session_ids, metadata=metadata,
                progress=progress, title=title,
            )
            await _in_thread(_flush, out)
            if output.kind == "file":  # replacing a file: keep its permissions
                os.chmod(tmp, stat.S_IMODE(os.stat(real).st_mode))
            os.replace(tmp, real)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise TargetError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    sync_folder(folder)
    result.bytes = real.stat().st_size
    return result


async def _export_through(
    store: Store,
    path: Path,
    fmt: str,
    session_ids: Sequence[str] | None,
    metadata: bool,
    progress: Progress | None,
    title: str,
) -> TransferResult:
    """Export into a character device or a FIFO: written as it goes (not atomic: there
    is no file to replace), the node itself left as it is."""
    try:
        out = await asyncio.to_thread(
            open, path, "w", encoding="utf-8", newline="\n", errors="backslashreplace"
        )
    except OSError as exc:
        raise TargetError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        result = await export_to_stream(
            store, out, fmt, session_ids=session_ids, metadata=metadata,
            progress=progress, title=title,
        )
        await _in_thread(out.flush)
    except OSError as exc:
        raise TargetError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            out.close()
    return result


def _flush(out: Any) -> None:
    out.flush()
    os.fsync(out.fileno())


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
        plan = await _in_thread(scan_files, list(files))
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
    twice in ``ids`` (nothing to check with ``rename``)."""
    if rename:
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
        page = await _in_thread(next, it, None)
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
        plan = await _in_thread(scan_files, files)
    store.check_importable()
    await check_free_ids(store, [sid for _p, sid, _n in plan.sessions], rename=rename)
    result = TransferResult()
    total = plan.messages
    for path in files:
        sessions = await _in_thread(lambda p=path: iter(read_sessions(p)))
        while True:
            session = await _in_thread(next, sessions, None)
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
        infos = await _resolve(source, session_ids)
    else:
        infos = [info async for info in _session_infos(source, None)]
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
