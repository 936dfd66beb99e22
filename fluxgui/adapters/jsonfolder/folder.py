"""Opening a folder of JSON session files, and writing them atomically.

Writes re-read the file, change ``history`` and ``saved_at`` only, write
``<file>.<random>.tmp`` (flushed, fsynced) and ``os.replace`` it: a kill leaves the old
file or the new one. Every method here but :meth:`Folder.change_token` and
:meth:`Folder.close` blocks: the store runs them in worker threads.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import stat
from contextlib import suppress
from pathlib import Path
from typing import Any

from fluxgui.core.errors import Conflict, NotASessionStore, TargetError, show_id
from fluxgui.core.files import hold, remove_stale, sync_folder
from fluxgui.core.paths import private_dir
from fluxgui.core.storekey import path_location

from .entries import local_now, new_document
from .index import FolderIndex
from .names import file_stem

#: the temporaries of :meth:`Folder._write_document` (the library's own are ``<name>.tmp``)
TMP_PATTERN = r".+\.json\.[0-9a-f]{8}\.tmp"


class Folder(FolderIndex):
    """The back-end of a JSON session folder store (a
    :class:`~fluxgui.adapters.parts.StoreBackend`): the index, and the blocking file work."""

    def open(self, create: bool) -> None:
        """Check (``create``: make) the folder, drop our stale temporaries, index it."""
        if create:
            try:
                private_dir(self.path)  # (a new folder of conversations: 0700)
            except FileExistsError:
                raise TargetError(f"{self.display} is a file, not a folder") from None
            except OSError as exc:
                raise TargetError(f"cannot make {self.display}: {exc.strerror or exc}") from None
        if not self.path.exists():
            raise TargetError(f"no such folder: {self.display}")
        if not self.path.is_dir():
            raise TargetError(f"{self.display} is not a folder")
        if self.writable:
            # Temporaries of ours that a killed write left (no live writer holds them).
            remove_stale(self.path, TMP_PATTERN)
        if not create and not self._listing():
            # Any folder is a path; one without a single session file is most likely
            # not what was meant (copy and import into it pass create).
            raise NotASessionStore(
                f"{self.display} is a folder with no JSON session files (*.json) in it"
            )
        self.scan()

    def _read_document(self, name: str) -> tuple[dict[str, Any], os.stat_result] | None:
        """The current document of a file about to be rewritten (``None``: no file)."""
        try:
            doc, problem, st = self._load(name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise TargetError(f"cannot read {name}: {exc.strerror or exc}") from None
        if doc is None:
            raise TargetError(f"{problem}: not changed (fix or remove the file first)")
        return doc, st

    def _write_document(
        self, name: str, doc: dict[str, Any], old: os.stat_result | None, *, exclusive: bool
    ) -> bool:
        """Write ``doc`` to ``name`` atomically; with ``exclusive`` only when no such file
        exists (``False``: one appeared meanwhile, nothing written)."""
        path = self.path / name
        # A lone surrogate can only be inside a JSON string: \\udXXX is its JSON escape.
        data = json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8", "backslashreplace")
        tmp = self.path / f"{name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            hold(fd)  # ours and alive: a later open must not take it for a leftover
            try:
                with os.fdopen(fd, "wb") as fh:
                    if old is not None:  # keep the file's permissions
                        os.fchmod(fh.fileno(), stat.S_IMODE(old.st_mode))
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                    written = os.fstat(fh.fileno())  # what the index keeps: this version
                if exclusive:
                    try:
                        os.link(tmp, path)  # fails when the name is taken: no clobbering
                    except FileExistsError:
                        return False
                    except OSError:  # no hard links here: check, then rename
                        if path.exists():
                            return False
                        os.replace(tmp, path)
                else:
                    os.replace(tmp, path)
            finally:
                with suppress(OSError):
                    os.unlink(tmp)
        except OSError as exc:
            raise TargetError(f"cannot write {self.path / name}: {exc.strerror or exc}") from None
        sync_folder(self.path)
        with self._index_lock:
            e = self._entry(name, doc, written)
            self._files[name] = e
            self._ids[e.sid] = e
        return True

    def _name_for(self, sid: str) -> str:
        e = self.locate(sid)
        return e.name if e is not None else file_stem(sid) + ".json"

    def append(self, sid: str, entries: list[dict[str, Any]]) -> int:
        """Append history entries, re-reading the file first; a new session gets a new
        file in the library's layout."""
        with self._write_lock:
            name = self._name_for(sid)
            while True:
                current = self._read_document(name)
                now = local_now()
                if current is None:
                    doc = new_document(sid, now, now, list(entries))
                    if self._write_document(name, doc, None, exclusive=True):
                        return len(entries)
                    continue  # another writer made the file just now: append to it
                doc, st = current
                doc["history"] = doc["history"] + entries
                doc["saved_at"] = now
                self._write_document(name, doc, st, exclusive=False)
                return len(entries)

    def clear(self, sid: str) -> int:
        """Empty a session's history; the file and its other keys stay."""
        with self._write_lock:
            e = self.locate(sid)
            current = self._read_document(e.name) if e is not None else None
            if e is None or current is None:
                return 0
            doc, st = current
            removed = len(doc["history"])
            if removed:
                doc["history"] = []
                doc["saved_at"] = local_now()
                self._write_document(e.name, doc, st, exclusive=False)
            return removed

    def create(
        self, sid: str, history: list[dict[str, Any]], created: str, saved: str, rename: bool
    ) -> str:
        """Write a new session file; an id in use is refused or, with ``rename``, becomes
        ``<id>-2``, ``<id>-3``, …"""
        with self._write_lock:
            self.scan()
            target, n = sid, 1
            while True:
                if target not in self._ids:
                    name = file_stem(target) + ".json"
                    doc = new_document(target, created, saved, history)
                    if self._write_document(name, doc, None, exclusive=True):
                        return target
                if not rename:
                    raise Conflict(
                        f"session {show_id(sid)} already exists in {self.display}; "
                        "nothing was written for it"
                    )
                n += 1
                target = f"{sid}-{n}"

    def token(self) -> Any:
        return tuple(sorted(self._listing()))

    async def change_token(self) -> Any:
        return await asyncio.to_thread(self.token)

    async def close(self) -> None:
        self._cache = None

    def local_paths(self) -> list[Path]:
        """The folder."""
        return [self.path]

    def location(self) -> str:
        """``folder:/absolute/path``."""
        return path_location("folder", self.path)
