"""Writing a folder of JSON session files: appending, clearing (the file stays), deleting,
importing and forking whole sessions, each reversibly (:mod:`.sessions`: the window's
undo stack and the CLI's clear/rm/branch run these). Writes re-read the file and go
through a temporary file and a rename (:class:`~.folder.Folder`); single messages are not
edited in place (the folder offers no editor)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from fluxgui.core.aio import run_to_end
from fluxgui.core.changes import Change, label_id
from fluxgui.core.model import Message
from fluxgui.core.roles import Pages

from ..parts import Place
from .sessions import apply, as_written, clear, delete, fork
from .entries import entry_from_flux, entry_from_message, local_now, naive_local
from .folder import Folder
from .names import file_stem

T = TypeVar("T")


async def _write(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread, waited for even when the caller is cancelled: a
    write, once begun, completes (and what reads next sees it) before the cancellation
    goes on."""
    return await run_to_end(asyncio.to_thread(fn, *args))


class FolderWriter:
    """Whole sessions of a folder written (see the module text)."""

    def __init__(self, place: Place[Folder]) -> None:
        self.place = place
        self._folder = place.backend

    def check_importable(self) -> None:
        """New session files need only a writable folder."""
        self.place.check_writable()

    async def add_messages(self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None) -> int:
        self.place.check_branch(branch)
        self.place.check_writable()
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
        self.place.check_writable()
        return await _write(self._folder.clear, session_id)

    async def clear_messages(self, session_id: str) -> Change:
        """Empty the session's history (the file and its other keys stay)."""
        self.place.check_writable()
        label = f"Clear session {label_id(session_id)}"
        return await _write(clear, self._folder, session_id, label)

    async def delete_session(self, session_id: str) -> Change:
        """Remove the session's file."""
        self.place.check_writable()
        label = f"Delete session {label_id(session_id)}"
        return await _write(delete, self._folder, session_id, label)

    async def created_change(self, session_id: str) -> Change:
        """The session as the change that wrote it, read (for an undo stack)."""
        self.place.check_writable()
        return await _write(as_written, self._folder, session_id, f"Write session {label_id(session_id)}")

    async def apply_change(self, change: Any) -> Any:
        """Write ``change`` again, or its inverse (undo), if the file still fits it."""
        self.place.check_writable()
        return await _write(apply, self._folder, change)

    async def import_session(
        self, session_id: str, pages: Pages, *, created_at: str | None = None,
        updated_at: str | None = None, rename: bool = False,
    ) -> tuple[str, int]:
        """Write a new session file holding these messages (with their times); an id in
        use is refused (``Conflict``) or, with ``rename``, becomes ``<id>-2``, …"""
        self.place.check_writable()
        file_stem(session_id)  # a bad id fails before the pages are read
        now = local_now()
        history: list[dict[str, Any]] = []

        def add(page: list[Message]) -> None:
            for m in page:
                # the history entry, its time as the library writes times
                entry = entry_from_message(m, naive_local(m.created_at))
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


class FolderForks:
    """Forks of a folder's sessions: a new file with the history up to a message and the
    origin's other keys."""

    def __init__(self, place: Place[Folder]) -> None:
        self.place = place

    async def fork_session(
        self, session_id: str, at_message_id: int, new_id: str | None = None, *,
        branch: str | None = None, drop_unreadable: bool = False,
    ) -> Change:
        """A new session file with the history up to and including ``at_message_id``
        (nothing is encrypted here: ``drop_unreadable`` changes nothing)."""
        self.place.check_branch(branch)
        self.place.check_writable()
        if new_id is not None:
            file_stem(new_id)  # a name no file can have fails before anything is read
        label = f"Fork session {label_id(session_id)} at message {at_message_id}"
        return await _write(
            fork, self.place.backend, session_id, int(at_message_id), new_id, label
        )

    async def fork_origin(self, session_id: str) -> dict[str, Any] | None:
        return None  # the folder has no room for fluxgui's note of where a fork came from
