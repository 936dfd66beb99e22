"""Export: sessions out to a JSON, JSONL, Markdown or HTML file, or a stream.

:func:`export_sessions` streams sessions into a temporary file beside the target and
renames it into place only when everything is written (a failure, a cancellation or a
kill leaves no file at the target path); the target is checked first (never the store
being read, see :mod:`.outputs`). :func:`export_to_stream` writes to an open text stream
instead (standard output). Both take an optional ``progress(done, total)`` callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from fluxgui.core.errors import TargetError
from fluxgui.core.export import EXPORT_FORMATS, ExportWriter, make_writer
from fluxgui.core.files import hold, part_name, part_pattern, remove_stale, sync_folder
from fluxgui.core.jsonrecords import RowPage
from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.ports import SessionPage
from fluxgui.core.roles import IdTransform, PageTransform, Store

from .outputs import check_output

#: a session's review, by session id: the lines a transcript shows under its title, and
#: the record JSON and JSONL carry (``None``: none)
Annotate = Callable[[str], Awaitable[tuple[list[str], dict[str, Any] | None]]]
#: for each stored row of a page (its text columns), whether ``transform`` leaves it as it
#: is (such rows keep the fast path straight from the rows; the others are read as
#: Messages)
Unchanged = Callable[[Sequence[Sequence[Any]]], list[bool]]
from .transfer_common import (
    Progress,
    TransferResult,
    count_messages,
    in_thread,
    iter_infos,
    resolve,
)


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
    annotate: Annotate | None = None,
    transform: PageTransform | None = None,
    unchanged: Unchanged | None = None,
    transform_id: IdTransform | None = None,
) -> TransferResult:
    """Write the sessions ``session_ids`` (None: every session) of ``store`` to ``out``
    (not atomic: see :func:`export_sessions` for files). ``annotate(session_id)`` gives
    each session's review results, when asked for: the lines the Markdown and HTML
    transcripts show under its title, the record JSON and JSONL carry. ``transform``
    changes each page before it is written (redaction: in the writer's thread, and it may
    leave messages out); ``unchanged(rows)`` tells the stored rows it would leave as they
    are; ``transform_id`` changes each session's id wherever it is written (its header,
    each JSONL record's ``session_id``, a transcript's title: redaction, in the writer's
    thread too, just before the session's pages)."""
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (use {', '.join(EXPORT_FORMATS)})")
    infos = await resolve(store, session_ids) if session_ids else None
    total = 0
    if progress:
        total = sum(i.messages for i in infos) if infos is not None else await count_messages(store, None)
    result = TransferResult()
    writer = make_writer(fmt, out, metadata=metadata)
    writer.begin(store.format, title or f"Sessions from {store.target}", columns=store.traits.columns)
    listing = _SessionList(store) if infos is None else None
    sessions = listing() if listing is not None else iter_infos(infos or [])
    # Encoding and writing run in a worker thread (the loop stays free), a batch of
    # writer calls at a time: many small sessions share one hand-off, and a batch is cut
    # by size too, so big messages are not held many at a time. Reading and writing take
    # turns (see _Pipeline): memory stays within a batch.
    # SQL stores hand over their rows unread (RowPage): the worker makes the JSON records
    # straight from them, or reads them as Messages. Small sessions are read a group at
    # a time (one query for many), which keeps the round trips to the database few.
    run = _Run(store, writer, progress, total, annotate, listing.read_ahead if listing else None)
    run.transform, run.unchanged, run.transform_id = transform, unchanged, transform_id
    try:
        async with contextlib.aclosing(sessions) as listed:
            async for info in listed:
                await run.add(info)
        await run.flush_group()
        run.pipe.add(writer.end)
        await run.pipe.flush()
        await run.pipe.drain(raise_errors=True)
    finally:
        await run.pipe.drain()
    result.sessions, result.messages = run.sessions_done, run.done
    if writer.replaced_non_finite:
        n = writer.replaced_non_finite
        result.notes.append(
            f"{n:,} number{'' if n == 1 else 's'} that JSON cannot hold (NaN, Infinity) "
            f"written as the string{'' if n == 1 else 's'} \"NaN\", \"Infinity\" or \"-Infinity\""
        )
    return result


_EXPORT_BATCH = 8000
_EXPORT_BATCH_CHARS = 8_000_000
#: small sessions are read together, a group of them in one query: at most this many
#: rows in all at first (a page: what one read of a session holds at most), then as
#: many as hold about _EXPORT_BATCH_CHARS of text at the size of the rows read so far,
#: up to _GROUP_MAX (fewer reads, each a round trip to the database's thread)
_GROUP_ROWS = 500
_GROUP_MAX = 4000


class _SessionList:
    """Every session in :func:`~.transfer_common.session_infos`' order (the least
    recently active first). :meth:`read_ahead` has the next page of the list read now:
    called as the worker starts a batch, the database lists while the worker writes."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._cursor: tuple[Any, ...] | None = None
        self._ended = False
        self._ahead: asyncio.Future[SessionPage] | None = None

    def read_ahead(self) -> None:
        if self._ahead is None and not self._ended:
            self._ahead = asyncio.ensure_future(
                self.store.reader.list_sessions(limit=_LIST_PAGE, cursor=self._cursor, descending=False)
            )

    async def __call__(self) -> AsyncGenerator[SessionInfo, None]:
        try:
            while not self._ended:
                self.read_ahead()
                assert self._ahead is not None
                ahead, self._ahead = self._ahead, None
                page = await ahead
                self._cursor, self._ended = page.cursor, page.cursor is None
                for info in page.sessions:
                    yield info
        finally:
            if self._ahead is not None:
                self._ahead.cancel()
                await asyncio.wait({self._ahead})


_LIST_PAGE = 200


class _Run:
    """One export's reading loop: sessions read (a group of small ones at once), their
    pages queued to the writer, batches handed to the worker thread."""

    def __init__(
        self, store: Store, writer: ExportWriter, progress: Progress | None, total: int,
        annotate: Annotate | None, beside: Callable[[], None] | None,
    ) -> None:
        self.store, self.writer, self.progress, self.total = store, writer, progress, total
        self.annotate, self.beside = annotate, beside  # beside: called as a batch starts
        self.pipe = _Pipeline()
        self.done = self.sessions_done = 0
        self._batched = self._batched_chars = 0
        self._rows = self._chars = 0  # read so far
        self._group: list[SessionInfo] = []
        self._grouped = 0
        self.transform: PageTransform | None = None
        self.unchanged: Unchanged | None = None
        self.transform_id: IdTransform | None = None

    async def add(self, info: SessionInfo) -> None:
        """Export the session ``info`` (next in order): with the group of small ones
        gathered, or (a big one, or one of unknown size) on its own."""
        limit = self._group_limit()
        if not info.count_exact or info.messages > limit:
            await self.flush_group()
            await self._sessions([info], {})
            return
        if self._grouped + info.messages > limit:
            await self.flush_group()
        self._group.append(info)
        self._grouped += info.messages

    async def flush_group(self) -> None:
        """Export the small sessions gathered (one read for all of them)."""
        group, grouped = self._group, self._grouped
        self._group, self._grouped = [], 0
        rows = self.store.rows
        if len(group) > 1 and rows is not None:  # (a session cut short is read alone)
            found = await rows.row_pages_of([i.id for i in group], limit=grouped)
            await self._sessions(group, found)
        elif group:
            await self._sessions(group, {})

    def _group_limit(self) -> int:
        if not self._rows:
            return _GROUP_ROWS
        per_row = max(1, self._chars // self._rows)
        return max(_GROUP_ROWS, min(_GROUP_MAX, _EXPORT_BATCH_CHARS // per_row))

    async def _sessions(self, infos: list[SessionInfo], found: dict[str, list[Message] | RowPage]) -> None:
        """Write these sessions, in this order (their pages in ``found``, or read now)."""
        for info in infos:
            if self.transform_id is not None:
                self.pipe.add(_session, self.writer, self.transform_id, info)
            else:
                self.pipe.add(self.writer.session, info)
            if self.annotate is not None:
                self.pipe.add(self.writer.notes, *await self.annotate(info.id))
            if info.id in found:
                await self._page(found.pop(info.id))
            else:
                async for page in self._pages(info.id):
                    await self._page(page)
            self.pipe.add(self.writer.end_session)
            self.sessions_done += 1

    def _pages(self, session_id: str) -> AsyncIterator[list[Message] | RowPage]:
        """A session's pages: of plain rows where the store reads them, else Messages."""
        rows = self.store.rows
        if rows is not None:
            return rows.iter_row_pages(session_id)
        return self.store.reader.iter_messages(session_id)

    async def _page(self, page: list[Message] | RowPage) -> None:
        if not len(page):
            return
        if self.transform is not None:  # (rows read as Messages in the worker thread)
            self.pipe.add(_transformed, self.writer, self.transform, self.unchanged, page)
            chars = page.chars() if isinstance(page, RowPage) else sum(len(m.text) for m in page)
        elif isinstance(page, RowPage):  # rows, read in the worker thread
            self.pipe.add(self.writer.rows, page)
            chars = page.chars()
        else:
            self.pipe.add(self.writer.messages, page)
            chars = sum(len(m.text) for m in page)
        self._batched += len(page)
        self._batched_chars += chars
        self.done += len(page)
        self._rows += len(page)
        self._chars += chars
        if self._batched >= _EXPORT_BATCH or self._batched_chars >= _EXPORT_BATCH_CHARS:
            if self.beside is not None:
                self.beside()
            await self.pipe.flush()
            self._batched = self._batched_chars = 0
        if self.progress:
            self.progress(self.done, max(self.total, self.done))


class _Pipeline:
    """Writer calls queued on the event loop and run in a worker thread, a batch at a
    time: the next batch is read once the last one is written. (Reading alongside would
    gain nothing and cost much: both are Python work, which runs one thread at a time,
    and a SQLite read in its thread would wait for the interpreter at each row. The list
    of sessions, mostly the database's own work, is still read ahead.)"""

    def __init__(self) -> None:
        self.calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self.writing: asyncio.Future[None] | None = None

    def add(self, fn: Callable[..., Any], *args: Any) -> None:
        self.calls.append((fn, args))

    async def flush(self) -> None:
        """Run the calls gathered in the worker thread and wait for them (their error is
        raised here)."""
        await self.drain(raise_errors=True)
        if self.calls:
            calls, self.calls = self.calls, []
            self.writing = asyncio.ensure_future(in_thread(_run_calls, calls))
            await self.drain(raise_errors=True)

    async def drain(self, *, raise_errors: bool = False) -> None:
        """Wait for the batch in flight: nothing keeps writing to a file being closed."""
        writing, self.writing = self.writing, None
        if writing is None:
            return
        if raise_errors:
            await writing
        else:  # already failing: wait, and let the first error be the one raised
            await asyncio.wait({writing})
            if not writing.cancelled():
                writing.exception()


def _session(writer: ExportWriter, transform_id: IdTransform, info: SessionInfo) -> None:
    """The session's header, its id through ``transform_id`` (every place the writer
    writes it, the rows' fast path too, takes it from here)."""
    writer.session(replace(info, id=transform_id(info.id)))


def _transformed(
    writer: ExportWriter, transform: PageTransform, unchanged: Unchanged | None, page: list[Message] | RowPage
) -> None:
    if not isinstance(page, RowPage):
        writer.messages(transform(page))
        return
    if unchanged is None:
        writer.messages(transform(page.messages()))
        return
    kept: list[Any] = []
    read: list[Any] = []
    same = unchanged(page.texts())
    for row, keep in zip(page.rows, same):
        if keep:
            if read:
                writer.messages(transform([page.read(r) for r in read]))
                read = []
            kept.append(row)
        else:
            if kept:
                writer.rows(RowPage(page.layout, kept, page.read, page.utc))
                kept = []
            read.append(row)
    if kept:
        writer.rows(RowPage(page.layout, kept, page.read, page.utc))
    if read:
        writer.messages(transform([page.read(r) for r in read]))


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
    annotate: Annotate | None = None,
    transform: PageTransform | None = None,
    unchanged: Unchanged | None = None,
    transform_id: IdTransform | None = None,
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
        session_ids = [i.id for i in await resolve(store, session_ids)]
    if output.kind == "stream":
        return await _export_through(
            store, output.path, fmt, session_ids, metadata, progress, title, annotate, transform,
            unchanged, transform_id,
        )
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
                progress=progress, title=title, annotate=annotate, transform=transform,
                unchanged=unchanged, transform_id=transform_id,
            )
            await in_thread(_flush, out)
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
    annotate: Annotate | None = None,
    transform: PageTransform | None = None,
    unchanged: Unchanged | None = None,
    transform_id: IdTransform | None = None,
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
            progress=progress, title=title, annotate=annotate, transform=transform,
            unchanged=unchanged, transform_id=transform_id,
        )
        await in_thread(out.flush)
    except OSError as exc:
        raise TargetError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            out.close()
    return result


def _flush(out: Any) -> None:
    out.flush()
    os.fsync(out.fileno())
