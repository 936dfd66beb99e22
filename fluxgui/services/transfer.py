"""Export, import and copy: sessions out to files, files into stores, store to store.

* :func:`export_sessions` streams sessions into a temporary file beside the target and
  renames it into place only when everything is written (a failure, a cancellation or a
  kill leaves no file at the target path).
* :func:`import_files` reads exports and session files into a writable store, one
  transaction per session; :func:`open_import_target` creates a SQLite store for them
  when the path does not exist yet.
* :func:`copy_sessions` copies sessions between stores (any formats), one transaction
  per session, streaming the source's pages into it.

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

from fluxgui.adapters import Store, open_store
from fluxgui.core.errors import TargetError
from fluxgui.core.export import make_writer
from fluxgui.core.imports import ImportSession, read_sessions
from fluxgui.core.model import Message, SessionInfo

from .browse import iter_session_pages

Progress = Callable[[int, int], None]


@dataclass
class TransferResult:
    sessions: int = 0
    messages: int = 0
    bytes: int = 0
    #: (source session id, id written) for imports and copies
    written: list[tuple[str, str]] = field(default_factory=list)


async def _session_infos(store: Store, ids: Sequence[str] | None) -> AsyncIterator[SessionInfo]:
    if ids:
        for sid in ids:
            yield await store.require_session(sid)
        return
    async for page in iter_session_pages(store):
        for info in page:
            yield info


async def count_messages(store: Store, ids: Sequence[str] | None) -> int:
    """The number of messages an export or copy of ``ids`` (None: all) will move."""
    total = 0
    async for info in _session_infos(store, ids):
        total += info.messages
    return total


# --------------------------------------------------------------------------- export


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

    The file appears at ``path`` only complete: it is written to a temporary file in the
    same folder, flushed to disk and renamed over ``path``.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise TargetError(f"no such folder: {folder}")
    total = await count_messages(store, session_ids) if progress else 0
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise TargetError(f"cannot write in {folder}: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    result = TransferResult()
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            writer = make_writer(fmt, out, metadata=metadata)
            writer.begin(store.format, title or f"Sessions from {store.target}")
            done = 0
            async for info in _session_infos(store, session_ids):
                writer.session(info)
                async for page in store.iter_messages(info.id):
                    # Encoding and writing run in a worker thread: the loop stays free.
                    await asyncio.to_thread(writer.messages, page)
                    done += len(page)
                    if progress:
                        progress(done, max(total, done))
                writer.end_session()
                result.sessions += 1
            writer.end()
            result.messages = done
            await asyncio.to_thread(_flush, out)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp made it private; a new file is not
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    result.bytes = path.stat().st_size
    return result


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _flush(out: object) -> None:
    out.flush()  # type: ignore[attr-defined]
    os.fsync(out.fileno())  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- import


def _has_raw_items(paths: Sequence[Path]) -> bool:
    """Whether the first messages of the files carry Agents SDK items."""
    for path in paths:
        for session in read_sessions(path):
            for page in session.pages:
                return any(isinstance(m.raw, dict) for m in page)
    return False


async def open_import_target(
    target: str, files: Sequence[Path], *, fmt: str | None = None
) -> Store:
    """Open ``target`` writable; a path that does not exist becomes a new SQLite store in
    ``fmt`` (default: Agents SDK format when the files carry raw items, else flux)."""
    looks_like_path = "://" not in target
    if looks_like_path and not Path(target).exists():
        if fmt is None:
            fmt = "agents" if await asyncio.to_thread(_has_raw_items, list(files)) else "flux"
        return await open_store(target, create=fmt)
    return await open_store(target, writable=True, format=fmt, create=fmt)


async def _pages(session: ImportSession) -> AsyncIterator[list[Message]]:
    """The session's pages, parsed in a worker thread."""
    it: Iterator[list[Message]] = session.pages
    while True:
        page = await asyncio.to_thread(next, it, None)
        if page is None:
            return
        yield page


async def import_files(
    store: Store,
    files: Sequence[Path],
    *,
    rename: bool = False,
    progress: Progress | None = None,
) -> TransferResult:
    """Import every session of ``files`` as new sessions of ``store``."""
    result = TransferResult()
    for path in files:
        sessions = await asyncio.to_thread(lambda p=Path(path): iter(read_sessions(p)))
        while True:
            session = await asyncio.to_thread(next, sessions, None)
            if session is None:
                break
            counted = _Counter(result, progress)
            new_id, n = await store.import_session(
                session.id,
                counted.wrap(_pages(session)),
                created_at=session.created_at,
                updated_at=session.updated_at,
                rename=rename,
            )
            result.sessions += 1
            result.written.append((session.id, new_id))
            del n
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
    where they differ; one transaction per session."""
    total = await count_messages(source, session_ids) if progress else 0
    result = TransferResult()
    infos = [info async for info in _session_infos(source, session_ids)] if session_ids else None
    async for info in _iter(infos) if infos is not None else _session_infos(source, None):
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


async def _iter(items: list[SessionInfo]) -> AsyncIterator[SessionInfo]:
    for item in items:
        yield item
