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
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from fluxgui.adapters import Store, open_store, parse_target
from fluxgui.adapters.backends import run_to_end
from fluxgui.core.files import sync_folder
from fluxgui.core.errors import Conflict, NotASessionStore, TargetError, show_id
from fluxgui.core.export import EXPORT_FORMATS, make_writer
from fluxgui.core.imports import ImportSession, read_sessions
from fluxgui.core.model import Message, SessionInfo

Progress = Callable[[int, int], None]
T = TypeVar("T")


@dataclass
class TransferResult:
    sessions: int = 0
    messages: int = 0
    bytes: int = 0
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
    # writer calls at a time: many small sessions share one hand-off.
    batch: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
    batched = 0

    async def flush() -> None:
        nonlocal batch, batched
        if batch:
            calls, batch, batched = batch, [], 0
            await _in_thread(_run_calls, calls)

    async for info in sessions:
        batch.append((writer.session, (info,)))
        async for page in store.iter_messages(info.id):
            batch.append((writer.messages, (page,)))
            batched += len(page)
            done += len(page)
            if batched >= _EXPORT_BATCH:
                await flush()
            if progress:
                progress(done, max(total, done))
        batch.append((writer.end_session, ()))
        result.sessions += 1
    batch.append((writer.end, ()))
    await flush()
    result.messages = done
    return result


_EXPORT_BATCH = 500


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
) -> TransferResult:
    """Write the sessions ``session_ids`` (None: every session) of ``store`` to ``path``.

    The file appears at ``path`` only complete: it is written to a temporary file
    ``.<name>.<random>.part`` in the same folder, flushed to disk and renamed over
    ``path``. An unknown session id, a missing folder or an unwritable one raise before
    any file is made.
    """
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (use {', '.join(EXPORT_FORMATS)})")
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise TargetError(f"no such folder: {folder}")
    if path.is_dir():
        raise TargetError(f"{path} is a folder: name a file to export to")
    if session_ids:
        session_ids = [i.id for i in await _resolve(store, session_ids)]
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise TargetError(f"cannot write in {folder}: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    try:
        # Stored text may hold lone surrogates: "backslashreplace" writes them as \udXXX,
        # which inside a JSON string is the escape that reads back as the same text.
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n", errors="backslashreplace") as out:
            result = await export_to_stream(
                store, out, fmt, session_ids=session_ids, metadata=metadata,
                progress=progress, title=title,
            )
            await _in_thread(_flush, out)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it private; a new file is not
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise TargetError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    sync_folder(folder)
    result.bytes = path.stat().st_size
    return result


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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


def _is_new_path(target: str) -> bool:
    parsed = parse_target(target)
    return parsed.path is not None and not parsed.path.exists()


async def _open_or_create(
    target: str,
    *,
    fmt: str | None,
    default: str,
    sessions_table: str | None = None,
    messages_table: str | None = None,
    **options: Any,
) -> Store:
    """Open ``target`` writable. A path that does not exist becomes a new SQLite store
    (a new JSON session folder when it ends with a path separator or ``fmt`` is "json"),
    a database without any table gets a new store: in ``fmt`` or else ``default``. A
    database with other tables gets one only when ``fmt`` says which. ``options`` (``key``,
    ``ttl``, ``key_prefix``) go to :func:`open_store`."""
    tables = {"sessions_table": sessions_table, "messages_table": messages_table, **options}
    if fmt is None and "://" not in target and (
        target.endswith(("/", os.sep)) or Path(target).expanduser().is_dir()
    ):
        fmt = "json"
    if fmt == "json" and "://" not in target:
        # A folder is made when missing; an existing one, even empty, takes the sessions.
        return await open_store(target, create="json", **tables)
    if fmt == "json" and "://" in target:
        raise TargetError("a JSON session folder is a folder path, not a URL")
    if _is_new_path(target):
        return await open_store(target, create=fmt or default, **tables)
    try:
        store = await open_store(target, writable=True, format=fmt, **tables)
    except NotASessionStore:
        if fmt is None and not await _is_empty(target):
            raise
        return await open_store(target, writable=True, format=fmt, create=fmt or default, **tables)
    if fmt is not None and store.format != fmt:
        await store.close()
        raise NotASessionStore(
            f"{store.target} is a session store in the {_FORMAT_NAMES[store.format]} format, "
            f"not {_FORMAT_NAMES[fmt]}: leave the format out to write into it in its own"
        )
    return store


_FORMAT_NAMES = {"flux": "flux", "agents": "Agents SDK", "json": "JSON session folder"}


async def _is_empty(target: str) -> bool:
    from fluxgui.adapters.backends import SqlAlchemyBackend, SqliteBackend

    parsed = parse_target(target)
    if parsed.path is not None:
        backend: Any = await SqliteBackend.open(parsed.path)
    else:
        assert parsed.url is not None
        backend = await SqlAlchemyBackend.open(parsed.url, parsed.display)
    try:
        return not await backend.tables()
    finally:
        await backend.close()


async def open_import_target(
    target: str,
    files: Sequence[Path] = (),
    *,
    fmt: str | None = None,
    plan: ImportPlan | None = None,
    sessions_table: str | None = None,
    messages_table: str | None = None,
    **options: Any,
) -> Store:
    """Open ``target`` writable; a path that does not exist (or a database without any
    table) becomes a new store in ``fmt`` (default: Agents SDK format when the files carry
    raw items, else flux). Corrupt files raise before anything is created. ``options``
    (``key``, ``ttl``, ``key_prefix``) go to :func:`open_store`."""
    if plan is None:
        plan = await _in_thread(scan_files, list(files))
    return await _open_or_create(
        target,
        fmt=fmt,
        default="agents" if plan.has_raw_items else "flux",
        sessions_table=sessions_table,
        messages_table=messages_table,
        **options,
    )


async def open_copy_target(
    target: str,
    source: Store,
    *,
    fmt: str | None = None,
    sessions_table: str | None = None,
    messages_table: str | None = None,
    **options: Any,
) -> Store:
    """Open ``target`` writable for a copy from ``source``; a new one is made in ``fmt``
    (default: the source's format). ``options`` (``key``, ``ttl``, ``key_prefix``) go to
    :func:`open_store`."""
    return await _open_or_create(
        target,
        fmt=fmt,
        default=source.format,
        sessions_table=sessions_table,
        messages_table=messages_table,
        **options,
    )


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
