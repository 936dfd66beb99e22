"""Whole-session edits of a JSON session folder, as reversible changes: clear (the file
stays, its history empty), delete (the file goes), fork (a new file with the history up
to a message) — and applying a change again or its inverse (undo, redo).

These are the natural forms of those edits in HelloAgent's layout: only ``history`` and
``saved_at`` change on a clear, every other key of the document stays; a fork copies the
document's other keys (agent configuration, tool schema hash, metadata) into a new file
named after the new session. A :class:`~fluxgui.core.changes.Change` here holds history
entries as rows (``{"id": position, "entry": …}``, positions 1-based as the store's
message ids) and the document without its history in ``SessionRow.extra`` (``None``: no
file). Applying a change first checks that the file still holds what the change
expects; if another program saved it meanwhile, nothing is written (``Conflict``).

Everything here blocks (file I/O) and runs in a worker thread under the folder's write
lock.
"""

from __future__ import annotations

import os
from contextlib import suppress
from typing import Any

from fluxgui.core.changes import Change, Row, SessionRow
from fluxgui.core.errors import Conflict, SessionNotFound, TargetError, show_id
from fluxgui.core.files import sync_folder

from .entries import local_now
from .folder import Folder
from .names import file_stem

#: the keys of a session document that are not its history
Document = dict[str, Any]


def _state(name: str, doc: Document) -> SessionRow:
    """The session's record in a change: its times, and the document without history."""
    rest = {k: v for k, v in doc.items() if k != "history"}
    return SessionRow(
        doc.get("created_at"), doc.get("saved_at"),
        extra={"file": name, "document": rest, "length": len(doc["history"])},
    )


def _rows(history: list[Any], start: int = 0) -> tuple[Row, ...]:
    return tuple({"id": start + n + 1, "entry": e} for n, e in enumerate(history))


def _current(folder: Folder, sid: str) -> tuple[str, Document, os.stat_result]:
    e = folder.locate(sid)
    found = folder._read_document(e.name) if e is not None else None
    if e is None or found is None:
        raise SessionNotFound(f"unknown session id {show_id(sid)} in {folder.display}")
    doc, st = found
    return e.name, doc, st


def clear(folder: Folder, sid: str, label: str) -> Change:
    """Empty the session's history; the file and its other keys stay."""
    with folder._write_lock:
        name, doc, st = _current(folder, sid)
        before = _state(name, doc)
        removed = _rows(doc["history"])
        if removed:
            doc["history"] = []
            doc["saved_at"] = local_now()
            folder._write_document(name, doc, st, exclusive=False)
        return Change(sid, label, removed, (), before, _state(name, doc))


def delete(folder: Folder, sid: str, label: str) -> Change:
    """Remove the session's file."""
    with folder._write_lock:
        name, doc, _st = _current(folder, sid)
        before = _state(name, doc)
        _remove(folder, name)
        return Change(sid, label, _rows(doc["history"]), (), before, None)


def as_written(folder: Folder, sid: str, label: str) -> Change:
    """The session as the change that wrote it (no file before, its file after): read."""
    with folder._write_lock:
        name, doc, _st = _current(folder, sid)
        return Change(sid, label, (), _rows(doc["history"]), None, _state(name, doc))


def fork(folder: Folder, sid: str, at_id: int, new_id: str | None, label: str) -> Change:
    """A new file holding the history up to and including message ``at_id``, with the
    origin document's other keys; ``new_id`` taken → ``Conflict``, ``None`` → the first
    free ``<sid>-fork``, ``<sid>-fork-2``, …"""
    with folder._write_lock:
        folder.scan()
        _name, doc, _st = _current(folder, sid)
        if not 1 <= at_id <= len(doc["history"]):
            raise SessionNotFound(f"message {at_id} is not in session {show_id(sid)}")
        if new_id is not None and folder.locate(new_id) is not None:
            raise Conflict(f"session {show_id(new_id)} already exists in {folder.display}")
        target, n = new_id or f"{sid}-fork", 1
        while True:
            name = file_stem(target) + ".json"
            now = local_now()
            new = dict(doc, session_id=target, created_at=now, saved_at=now,
                       history=list(doc["history"][:at_id]))
            if folder.locate(target) is None and folder._write_document(name, new, None, exclusive=True):
                return Change(target, label, (), _rows(new["history"]), None, _state(name, new))
            if new_id is not None:
                raise Conflict(f"session {show_id(new_id)} already exists in {folder.display}")
            n += 1
            target = f"{sid}-fork-{n}"


def apply(folder: Folder, change: Change) -> Change:
    """Write ``change`` (a redo, or an ``inverse()`` for an undo) if the session's file
    still holds what it expects; returns it."""
    with folder._write_lock:
        folder.scan()
        sid, before, after = change.session_id, change.session_before, change.session_after
        e = folder.locate(sid)
        found = folder._read_document(e.name) if e is not None else None
        if before is None:
            if found is not None:
                raise _conflict(folder, sid, "it exists again")
            history: list[Any] = []
        else:
            if found is None or e is None:
                raise _conflict(folder, sid, "its file is gone")
            doc, _st = found
            history = list(doc["history"])
            if _state(e.name, doc) != before or any(
                r["id"] > len(history) or history[r["id"] - 1] != r["entry"] for r in change.removed
            ):
                raise _conflict(folder, sid, "it was saved since")
            for r in sorted(change.removed, key=lambda r: r["id"], reverse=True):
                del history[r["id"] - 1]
        for r in sorted(change.added, key=lambda r: r["id"]):
            if r["id"] > len(history) + 1:
                raise _conflict(folder, sid, "its history is shorter than expected")
            history.insert(r["id"] - 1, r["entry"])
        if after is None:
            _remove(folder, e.name if e is not None else str(before and (before.extra or {})["file"]))
            return change
        assert after.extra is not None
        name = str(after.extra["file"])
        new = dict(after.extra["document"], history=history)
        old = None if found is None else found[1]
        if not folder._write_document(name, new, old, exclusive=found is None):
            raise _conflict(folder, sid, "another file took its name")
        return change


def _conflict(folder: Folder, sid: str, why: str) -> Conflict:
    return Conflict(
        f"session {show_id(sid)} in {folder.display} changed since ({why}): nothing was "
        "written; the view shows what the folder holds now"
    )


def _remove(folder: Folder, name: str) -> None:
    """Delete a session file and forget it in the index."""
    path = folder.path / name
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise TargetError(f"cannot delete {path}: {exc.strerror or exc}") from None
    with suppress(OSError):
        sync_folder(folder.path)
    folder.forget(name)
