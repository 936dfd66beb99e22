"""The JSON session folder store: sessions are the ``*.json`` files (an empty history
still is a session); ids are file names (see :mod:`.names`).

All file work runs in worker threads (:class:`~.folder.Folder` blocks). Sessions can be
appended to, cleared (the file stays) and imported; single messages cannot be edited in
place (yet).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from fluxgui.core.aio import run_to_end
from fluxgui.core.changes import Change, label_id
from fluxgui.core.errors import FluxguiError, ReadOnlyError
from fluxgui.core.hits import fold
from fluxgui.core.imports import hello_message
from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.roles import Traits
from fluxgui.core.ports import Capabilities, Direction

from ..base import Store, check_branch
from . import sessions
from .entries import entry_from_flux, entry_from_message, local_now, naive_local
from .folder import Folder
from .index import Entry
from .names import file_stem

T = TypeVar("T")


async def _write(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread, waited for even when the caller is cancelled: a
    write, once begun, completes (and what reads next sees it) before the cancellation
    goes on."""
    return await run_to_end(asyncio.to_thread(fn, *args))


class JsonFolderStore(Store[Folder]):
    """A folder of HelloAgent JSON session files. Sessions are the ``*.json`` files (an
    empty history still is a session); ids are file names (see the module docstring)."""

    format = "json"
    TRAITS = Traits(keeps_cleared_sessions=True, reports_problems=True, why_not={
        "editor": ": single messages of JSON session files cannot be edited in place "
        "(clear, delete and fork whole sessions instead)",
    })
    #: clearing empties the file's history and keeps the file, so the session stays
    #: listed; deleting removes the file; a fork is a new file (all undoable)
    CAPABILITIES = Capabilities(
        append=True, clear=True, fork=True, problems=True, keeps_cleared_sessions=True
    )

    def __init__(self, folder: Folder, target: str) -> None:
        super().__init__(folder, target)
        self._folder = folder

    @property
    def problems(self) -> list[str]:
        """One line per ``*.json`` file that is not a session file, as of the last scan."""
        return list(self._folder.problems)

    # -- sessions ------------------------------------------------------------------

    @staticmethod
    def _info(e: Entry) -> SessionInfo:
        return SessionInfo(e.sid, e.count, e.created, e.saved, sort_key=e.key)

    def _row_info(self, row: tuple[Any, ...]) -> SessionInfo:
        return self._info(row[0])

    async def _rows(self, order: str, limit: int, cursor: Any, descending: bool) -> list[tuple[Any, ...]]:
        found = await asyncio.to_thread(self._folder.page, order, limit, cursor, descending)
        return [(e,) for e in found]

    async def _page_by_activity(self, limit: int, cursor: Any, descending: bool) -> list[tuple[Any, ...]]:
        return await self._rows("activity", limit, cursor, descending)

    async def _page_by_id(self, limit: int, cursor: Any, descending: bool) -> list[tuple[Any, ...]]:
        return await self._rows("id", limit, cursor, descending)

    async def _page_by_count(self, limit: int, cursor: Any, descending: bool) -> list[tuple[Any, ...]]:
        return await self._rows("messages", limit, cursor, descending)

    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None:
        check_branch(self, branch)
        e = await asyncio.to_thread(self._folder.locate, session_id)
        return self._info(e) if e is not None else None

    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]:
        return [self._info(e) for e in await asyncio.to_thread(self._folder.by_ids, ids)]

    async def search_session_ids(self, text: str) -> AsyncIterator[str]:
        needle = fold(text)
        pending = []
        for e in await asyncio.to_thread(self._folder.entries):
            if needle in fold(e.sid):
                yield e.sid
            else:
                pending.append(e)
        # A few files per hand-off: hits show up as they are found, the loop stays free.
        for start in range(0, len(pending), 16):
            for sid in await asyncio.to_thread(self._folder.grep, pending[start : start + 16], needle):
                yield sid

    async def fork_origin(self, session_id: str) -> dict[str, Any] | None:
        return None  # the folder has no room for fluxgui's note of where a fork came from

    # -- messages ------------------------------------------------------------------

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 100,
        anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward",
        branch: str | None = None,
    ) -> list[Message]:
        check_branch(self, branch)
        def read() -> list[Message]:
            history = self._folder.history(session_id)
            if direction == "backward":
                end = min(len(history), int(anchor[0]) - 1) if anchor else len(history)
                start = max(0, end - limit)
            else:
                start = max(0, int(anchor[0])) if anchor else 0
                end = min(len(history), start + limit)
            # Positions are ids (1-based): the file has no other stable key.
            return [
                hello_message(n + 1, history[n], strict_content=True)
                for n in range(start, max(start, end))
            ]

        return await asyncio.to_thread(read) if limit > 0 else []

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        check_branch(self, branch)
        e = await asyncio.to_thread(self._folder.locate, session_id)
        return e.count if e is not None else 0

    async def flux_messages(self, session_id: str, limit: int | None, *, branch: str | None = None) -> list[dict[str, Any]]:
        check_branch(self, branch)
        def read() -> list[dict[str, Any]]:
            history = self._folder.history(session_id)
            first = len(history) - limit if limit and limit > 0 else 0  # 0: all, as flux
            out = []
            for n in range(max(0, first), len(history)):
                m = hello_message(n + 1, history[n], strict_content=True)
                d: dict[str, Any] = {"role": m.role, "content": m.text}
                if m.metadata:
                    d["metadata"] = m.metadata
                out.append(d)
            return out

        return await asyncio.to_thread(read)

    # -- writing -------------------------------------------------------------------

    async def add_messages(self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None) -> int:
        check_branch(self, branch)
        self._check_writable()
        now = local_now()
        entries = [entry_from_flux(m, now) for m in messages]
        if not entries:
            # Nothing to add, but say now whether this id could be written at all.
            if await asyncio.to_thread(self._folder.locate, session_id) is None:
                file_stem(session_id)
            return 0
        return await _write(self._folder.append, session_id, entries)

    async def clear_session(self, session_id: str) -> int:
        """Empty the session's history; its file (and every other key) stays."""
        self._check_writable()
        return await _write(self._folder.clear, session_id)

    # Whole sessions, reversibly (see .sessions): the window's undo stack and the CLI's
    # clear/rm/branch run these.

    async def clear_messages(self, session_id: str) -> Change:
        """Empty the session's history (the file and its other keys stay)."""
        self._check_writable()
        label = f"Clear session {label_id(session_id)}"
        return await _write(sessions.clear, self._folder, session_id, label)

    async def delete_session(self, session_id: str) -> Change:
        """Remove the session's file."""
        self._check_writable()
        label = f"Delete session {label_id(session_id)}"
        return await _write(sessions.delete, self._folder, session_id, label)

    async def fork_session(
        self, session_id: str, at_message_id: int, new_id: str | None = None, *,
        branch: str | None = None, drop_unreadable: bool = False,
    ) -> Change:
        """A new session file with the history up to and including ``at_message_id``
        (nothing is encrypted here: ``drop_unreadable`` changes nothing)."""
        check_branch(self, branch)
        self._check_writable()
        if new_id is not None:
            file_stem(new_id)  # a name no file can have fails before anything is read
        label = f"Fork session {label_id(session_id)} at message {at_message_id}"
        return await _write(sessions.fork, self._folder, session_id, int(at_message_id), new_id, label)

    async def apply_change(self, change: Any) -> Any:
        """Write ``change`` again, or its inverse (undo), if the file still fits it."""
        self._check_writable()
        return await _write(sessions.apply, self._folder, change)

    def _not_editable(self) -> FluxguiError:
        return ReadOnlyError(
            f"{self.target}: single messages of JSON session files cannot be edited in "
            "place (clear, delete and fork whole sessions instead)"
        )

    def check_importable(self) -> None:
        """New session files need only a writable folder."""
        self._check_writable()

    def import_row(self, message: Message) -> dict[str, Any]:
        """The history entry for a Message (its time as the library writes times)."""
        return entry_from_message(message, naive_local(message.created_at))

    async def import_session(
        self,
        session_id: str,
        pages: AsyncIterator[list[Message]] | Iterator[list[Message]],
        *,
        created_at: str | None = None,
        updated_at: str | None = None,
        rename: bool = False,
    ) -> tuple[str, int]:
        """Write a new session file holding these messages (with their times); an id in
        use is refused (``Conflict``) or, with ``rename``, becomes ``<id>-2``, …"""
        self._check_writable()
        file_stem(session_id)  # a bad id fails before the pages are read
        now = local_now()
        history: list[dict[str, Any]] = []

        def add(page: list[Message]) -> None:
            for m in page:
                entry = self.import_row(m)
                entry["timestamp"] = entry["timestamp"] or now  # the library needs a time
                history.append(entry)

        if isinstance(pages, AsyncIterator):
            async for page in pages:
                add(page)
        else:
            for page in pages:
                add(page)
        created = naive_local(created_at) or (history[0]["timestamp"] if history else now)
        saved = naive_local(updated_at) or (history[-1]["timestamp"] if history else now)
        sid = await _write(self._folder.create, session_id, history, created, saved, rename)
        return sid, len(history)


async def open_folder(path: Path, display: str, *, writable: bool, create: bool) -> JsonFolderStore:
    """Open (``create``: make) a folder of JSON session files."""
    folder = Folder(Path(path), display, writable or create)
    await asyncio.to_thread(folder.open, create)
    return JsonFolderStore(folder, display)
