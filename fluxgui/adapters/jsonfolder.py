"""A folder of JSON session files, as HelloAgent's ``SessionStore`` keeps them.

Each ``<name>.json`` holds one session: ``{session_id, created_at, saved_at, agent_config,
history: [{role, content, timestamp, metadata}], tool_schema_hash, read_cache, metadata}``
(FORMATS.md). The library makes a new ``session_id`` on every save, so the file name is
the stable session id.

File names. A session id becomes a file name by percent-encoding (``%XX``, upper-case hex
of the character) only what a file name cannot safely hold on any common system: ``%``
itself, ``/ \\ < > : " | ? *``, control characters, a leading ``.`` and a trailing ``.``
or space; the empty id is the name ``%``. A stem that this rule produces is decoded back;
any other stem (a name the library wrote, such as ``50%off``) is the session id as it is.
So every id round-trips and no id names a path outside the folder. An id whose encoded
name does not fit a file name (too long, lone surrogates) is refused with InvalidItem.

Reading keeps only a small index per file (times, message count, stat) refreshed by
``scandir``, re-parsing just the files that changed; one session's history is parsed when
it is paged. A file that is not a session file is listed in :attr:`JsonFolderStore.problems`
and the rest of the folder still opens. Writes re-read the file, change ``history`` and
``saved_at`` only, write ``<file>.<random>.tmp`` (flushed, fsynced) and ``os.replace`` it:
a kill leaves the old file or the new one. All file work runs in worker threads.
"""

from __future__ import annotations

import asyncio
import heapq
import json
import os
import secrets
import stat
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

from fluxgui.core.files import hold, remove_stale, sync_folder
from fluxgui.core.errors import (
    Conflict,
    InvalidItem,
    NotASessionStore,
    ReadOnlyError,
    TargetError,
    show_id,
)
from fluxgui.core.imports import HELLO_ROLES, hello_message, hello_time
from fluxgui.core.model import Message, SessionInfo, item_kind, item_text
from fluxgui.core.undecodable import strip_flag

from .backends import run_to_end
from fluxgui.core.ports import Capabilities

from .base import Direction, Store, check_branch
from .changes import Row, TableEditor

T = TypeVar("T")

_UNSAFE = frozenset('%/\\<>:"|?*\x7f') | frozenset(chr(c) for c in range(32))
_HEX = "0123456789ABCDEF"
#: the longest encoded stem (bytes) that leaves room for ``.json.<8 hex>.tmp`` in 255
MAX_STEM_BYTES = 255 - len(".json.12345678.tmp")
#: the temporaries of :meth:`_Folder._write_document` (the library's own are ``<name>.tmp``)
TMP_PATTERN = r".+\.json\.[0-9a-f]{8}\.tmp"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


# --------------------------------------------------------------------------- file names


def file_stem(session_id: str) -> str:
    """The file name (without ``.json``) for a session id; InvalidItem when none fits."""
    if session_id == "":
        return "%"
    last = len(session_id) - 1
    out = []
    for i, ch in enumerate(session_id):
        if "\ud800" <= ch <= "\udfff":
            raise InvalidItem(f"session id {show_id(session_id)} cannot be a file name")
        if ch in _UNSAFE or (i == 0 and ch == ".") or (i == last and ch in ". "):
            out.append(f"%{ord(ch):02X}")
        else:
            out.append(ch)
    stem = "".join(out)
    if len(stem.encode("utf-8")) > MAX_STEM_BYTES:
        raise InvalidItem(
            f"session id {show_id(session_id[:40])}… is too long for a file name "
            f"(at most {MAX_STEM_BYTES} bytes once encoded)"
        )
    return stem


def session_id_of(stem: str) -> str:
    """The session id of a file stem: decoded when :func:`file_stem` makes that stem, else
    the stem itself (a name HelloAgent wrote)."""
    if stem == "%":
        return ""
    out, i = [], 0
    while i < len(stem):
        ch = stem[i]
        if ch == "%":
            code = stem[i + 1 : i + 3]
            if len(code) != 2 or code[0] not in _HEX or code[1] not in _HEX:
                return stem
            out.append(chr(int(code, 16)))
            i += 3
        else:
            out.append(ch)
            i += 1
    sid = "".join(out)
    try:
        return sid if file_stem(sid) == stem else stem
    except InvalidItem:
        return stem


# --------------------------------------------------------------------------- entries


def _now() -> str:
    """Local time without a zone, as the library writes ``datetime.now().isoformat()``."""
    return datetime.now().isoformat()


def _naive_local(value: str | None) -> str | None:
    """An ISO time as the library writes times (local, no zone); ``None`` if unreadable."""
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (dt.astimezone().replace(tzinfo=None) if dt.tzinfo else dt).isoformat()


def _content_text(value: Any) -> str:
    """HelloAgent content is text (its Message model refuses anything else)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


def entry_from_flux(message: Any, timestamp: str) -> dict[str, Any]:
    """A history entry (``Message.to_dict`` order: role, content, timestamp, metadata) for
    a flux message dict, or for an Agents SDK item (a dict with a ``type``), which is kept
    whole in ``metadata["agents_item"]`` with its text as content."""
    if not isinstance(message, dict):
        raise InvalidItem(f"a message must be a JSON object, not {type(message).__name__}")
    metadata = message.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidItem('"metadata" must be a JSON object or null')
    meta = dict(metadata or {})
    if "type" in message:
        kind = item_kind(message)
        role = message.get("role")
        if kind == "tool_output":
            role = "tool"
        elif role == "developer":
            role = "system"
        elif kind != "message" or role not in HELLO_ROLES:
            role = "assistant"
        content = item_text(message, kind)
        meta["agents_item"] = message
    else:
        role = message.get("role") or "user"
        if role == "developer":
            role = "system"
        if role not in HELLO_ROLES:
            raise InvalidItem(
                f"role {show_id(str(role))} is not one a JSON session file keeps "
                f"({', '.join(HELLO_ROLES)})"
            )
        content = _content_text(message.get("content"))
    return {"role": role, "content": content, "timestamp": timestamp, "metadata": meta}


def _plain(item: dict[str, Any], text: str) -> bool:
    """An item a role + content entry holds entirely."""
    return set(item) <= {"role", "content"} and item.get("content") == text


def entry_from_message(m: Message, timestamp: str | None) -> dict[str, Any]:
    """A history entry for a Message from another store or an export; an Agents SDK item
    that role + content cannot hold rides along in ``metadata["agents_item"]``."""
    role = m.role
    if role not in HELLO_ROLES:
        if role == "developer":
            role = "system"
        elif m.kind == "tool_output":
            role = "tool"
        elif m.kind in ("tool_call", "reasoning"):
            role = "assistant"
        else:
            role = "user"
    meta = dict(m.metadata) if m.metadata else {}
    strip_flag(m, meta)  # a reader's flag (fluxgui.core.undecodable), not the message's
    if isinstance(m.raw, dict) and not _plain(m.raw, m.text):
        meta["agents_item"] = m.raw
    return {"role": role, "content": m.text, "timestamp": timestamp, "metadata": meta}


def _new_document(sid: str, created: str, saved: str, history: list[Any]) -> dict[str, Any]:
    """A session file as ``SessionStore.save`` lays it out. ``metadata.created_at`` is
    where the agent keeps the creation time, so a later save by the library keeps it."""
    return {
        "session_id": sid,
        "created_at": created,
        "saved_at": saved,
        "agent_config": {},
        "history": history,
        "tool_schema_hash": None,
        "read_cache": {},
        "metadata": {"created_at": created},
    }


# --------------------------------------------------------------------------- the folder


@dataclass(frozen=True)
class _Entry:
    """What the index keeps of one session file (never its history)."""

    name: str
    sid: str
    mtime_ns: int
    size: int
    count: int
    created: str | None
    saved: str | None
    #: microseconds since the epoch of ``saved_at`` (of the file's mtime when unreadable)
    activity: int

    @property
    def key(self) -> tuple[int, int, str]:
        return (self.activity, self.mtime_ns, self.sid)


def _problem_of(name: str, data: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The parsed document, or the one-line reason this file is not a session file."""
    try:
        doc = json.loads(data)
    except UnicodeDecodeError:
        return None, f"{name}: not UTF-8 text"
    except json.JSONDecodeError as exc:
        return None, f"{name}: not valid JSON (line {exc.lineno} column {exc.colno})"
    except RecursionError:
        return None, f"{name}: nested too deeply to read as JSON"
    except ValueError:
        return None, f"{name}: not valid JSON"
    if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        return None, f'{name}: not a JSON session file (no "history" list)'
    return doc, None


class _Folder:
    """The back-end of a :class:`JsonFolderStore`: the index and the blocking file work
    (every method here runs in a worker thread). It offers what :class:`Store` uses of a
    back-end: ``writable``, ``change_token()``, ``close()``."""

    dialect = "json"
    utc_times = False

    def __init__(self, path: Path, display: str, writable: bool) -> None:
        self.path = path
        self.display = display
        self.writable = writable
        self.problems: list[str] = []
        self._files: dict[str, _Entry] = {}  # by file name
        self._ids: dict[str, _Entry] = {}  # by session id
        self._broken: dict[str, tuple[int, int, str]] = {}  # name -> (mtime, size, problem)
        self._index_lock = threading.Lock()
        # One read-modify-write at a time from this process, so two writes of ours never
        # lose each other's messages.
        self._write_lock = threading.Lock()
        self._cache: tuple[str, int, int, list[Any]] | None = None  # one parsed history

    # -- opening and the index ---------------------------------------------------------

    def open(self, create: bool) -> None:
        if create:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
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

    def _listing(self) -> list[tuple[str, int, int]]:
        """(name, mtime_ns, size) of each ``*.json`` file; ``*.tmp`` and others are not
        sessions."""
        out = []
        try:
            with os.scandir(self.path) as it:
                for d in it:
                    if not d.name.endswith(".json"):
                        continue
                    try:
                        if not d.is_file():
                            continue
                        st = d.stat()
                    except OSError:
                        continue  # gone since it was listed
                    out.append((d.name, st.st_mtime_ns, st.st_size))
        except OSError as exc:
            raise TargetError(f"cannot read the folder {self.display}: {exc.strerror or exc}") from None
        return out

    def _load(self, name: str) -> tuple[dict[str, Any] | None, str | None, os.stat_result]:
        """One file read whole: its document (``None`` when it is not a session file),
        the problem with it, and its stat from the same open (raises ``OSError``)."""
        with open(self.path / name, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
        doc, problem = _problem_of(name, data)
        return doc, problem, st

    def _parse(self, name: str) -> _Entry | tuple[int, int, str] | None:
        """The index entry of one file, else (mtime, size, its problem); ``None``: gone."""
        try:
            doc, problem, st = self._load(name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return (0, -1, f"{name}: cannot be read ({exc.strerror or exc})")  # retried
        if doc is None:
            return (st.st_mtime_ns, st.st_size, problem or name)
        return self._entry(name, doc, st)

    @staticmethod
    def _entry(name: str, doc: dict[str, Any], st: os.stat_result) -> _Entry:
        saved = hello_time(doc.get("saved_at"))
        if saved is None:  # no readable saved_at: the file's own time says when it was saved
            saved = datetime.fromtimestamp(st.st_mtime_ns / 1e9).astimezone().isoformat()
        activity = (datetime.fromisoformat(saved) - _EPOCH) // timedelta(microseconds=1)
        return _Entry(
            name, session_id_of(name[: -len(".json")]), st.st_mtime_ns, st.st_size,
            len(doc["history"]), hello_time(doc.get("created_at")), saved, activity,
        )

    def scan(self) -> None:
        """Bring the index up to date with the folder (parsing only changed files)."""
        listing = self._listing()
        with self._index_lock:
            files: dict[str, _Entry] = {}
            broken = {}
            for name, mtime, size in listing:
                old = self._files.get(name)
                if old is not None and (old.mtime_ns, old.size) == (mtime, size):
                    files[name] = old
                    continue
                bad = self._broken.get(name)
                got = bad if bad is not None and bad[:2] == (mtime, size) else self._parse(name)
                if isinstance(got, _Entry):
                    files[name] = got
                elif got is not None:
                    broken[name] = got
            self._files, self._broken = files, broken
            self._ids = {}
            problems = [p for _m, _s, p in broken.values()]
            # A decoded name wins over a literal one that reads as the same id.
            for e in sorted(files.values(), key=lambda e: file_stem_or_none(e.sid) != e.name[:-5]):
                if e.sid in self._ids:
                    problems.append(
                        f"{e.name}: names the same session as {self._ids[e.sid].name}; left out"
                    )
                else:
                    self._ids[e.sid] = e
            self.problems = sorted(problems)

    def locate(self, sid: str) -> _Entry | None:
        """The index entry of a session, checked against its file (one ``stat`` when
        nothing changed; a scan otherwise)."""
        with self._index_lock:
            e = self._ids.get(sid)
        if e is not None:
            try:
                st = os.stat(self.path / e.name)
            except OSError:
                st = None
            if st is not None and (st.st_mtime_ns, st.st_size) == (e.mtime_ns, e.size):
                return e
        self.scan()
        with self._index_lock:
            return self._ids.get(sid)

    def entries(self) -> list[_Entry]:
        self.scan()
        with self._index_lock:
            return list(self._ids.values())

    def page(
        self, order: str, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[_Entry]:
        key: Callable[[_Entry], tuple[Any, ...]] = {
            "activity": lambda e: e.key,
            "id": lambda e: (e.sid,),
            "messages": lambda e: (e.count, e.sid),
        }[order]
        rows = self.entries()
        if cursor is not None:
            c = tuple(cursor)
            rows = [e for e in rows if (key(e) < c if descending else key(e) > c)]
        pick = heapq.nlargest if descending else heapq.nsmallest
        return pick(limit, rows, key=key)

    def by_ids(self, ids: list[str]) -> list[_Entry]:
        self.scan()
        with self._index_lock:
            return [self._ids[i] for i in dict.fromkeys(ids) if i in self._ids]

    # -- one session's history -----------------------------------------------------------

    def history(self, sid: str) -> list[Any]:
        """The history list of a session (``[]`` when unknown or unreadable); the last one
        read is kept for the next page."""
        e = self.locate(sid)
        if e is None:
            return []
        cached = self._cache
        if cached is not None and cached[:3] == (e.name, e.mtime_ns, e.size):
            return cached[3]
        history = self._read_history(e.name)
        return history if history is not None else []

    def _read_history(self, name: str, *, keep: bool = True) -> list[Any] | None:
        try:
            doc, _problem, st = self._load(name)  # the next scan reports the problem
        except OSError:
            return None
        if doc is None:
            return None
        if keep:
            self._cache = (name, st.st_mtime_ns, st.st_size, doc["history"])
        return doc["history"]

    def grep(self, entries: list[_Entry], needle: str) -> list[str]:
        """Ids of these sessions with a message whose text holds ``needle`` (casefolded)."""
        hits = []
        for e in entries:
            history = self._read_history(e.name, keep=False) or []
            if any(needle in hello_message(n, x, strict_content=True).text.casefold()
                   for n, x in enumerate(history, 1)):
                hits.append(e.sid)
        return hits

    # -- writing -------------------------------------------------------------------------

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
                now = _now()
                if current is None:
                    doc = _new_document(sid, now, now, list(entries))
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
                doc["saved_at"] = _now()
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
                    doc = _new_document(target, created, saved, history)
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


def file_stem_or_none(sid: str) -> str | None:
    try:
        return file_stem(sid)
    except InvalidItem:
        return None


async def _write(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread, waited for even when the caller is cancelled: a
    write, once begun, completes (and what reads next sees it) before the cancellation
    goes on."""
    return await run_to_end(asyncio.to_thread(fn, *args))


# --------------------------------------------------------------------------- the store


class JsonFolderStore(Store):
    """A folder of HelloAgent JSON session files. Sessions are the ``*.json`` files (an
    empty history still is a session); ids are file names (see the module docstring)."""

    format = "json"
    #: clearing empties the file's history and keeps the file, so the session stays listed
    CAPABILITIES = Capabilities(append=True, problems=True, keeps_cleared_sessions=True)

    def __init__(self, folder: _Folder, target: str) -> None:
        super().__init__(folder, target)  # type: ignore[arg-type]  # a back-end in duck type
        self._folder = folder

    def local_paths(self) -> list[Path]:
        return [self._folder.path]

    @property
    def problems(self) -> list[str]:
        """One line per ``*.json`` file that is not a session file, as of the last scan."""
        return list(self._folder.problems)

    # -- sessions ------------------------------------------------------------------

    @staticmethod
    def _info(e: _Entry) -> SessionInfo:
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

    async def search_session_ids(self, text: str) -> AsyncIterator[str]:  # type: ignore[override]
        needle = text.casefold()
        pending = []
        for e in await asyncio.to_thread(self._folder.entries):
            if needle in e.sid.casefold():
                yield e.sid
            else:
                pending.append(e)
        # A few files per hand-off: hits show up as they are found, the loop stays free.
        for start in range(0, len(pending), 16):
            for sid in await asyncio.to_thread(self._folder.grep, pending[start : start + 16], needle):
                yield sid

    async def fork_origin(self, session_id: str) -> dict[str, Any] | None:
        return None  # forks are an edit, and these files cannot be edited in place yet

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
        now = _now()
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

    def _not_editable(self) -> ReadOnlyError:
        return ReadOnlyError(
            f"{self.target}: editing JSON session folders in place is not supported yet"
        )

    def check_editable(self) -> None:
        self._check_writable()
        raise self._not_editable()

    def check_importable(self) -> None:
        self._check_writable()

    def editor(self) -> TableEditor:
        raise self._not_editable()

    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> Row:
        raise self._not_editable()

    def import_row(self, message: Message) -> Row:
        """The history entry for a Message (its time as the library writes times)."""
        return entry_from_message(message, _naive_local(message.created_at))

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
        now = _now()
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
        created = _naive_local(created_at) or (history[0]["timestamp"] if history else now)
        saved = _naive_local(updated_at) or (history[-1]["timestamp"] if history else now)
        sid = await _write(self._folder.create, session_id, history, created, saved, rename)
        return sid, len(history)


async def open_folder(path: Path, display: str, *, writable: bool, create: bool) -> JsonFolderStore:
    """Open (``create``: make) a folder of JSON session files."""
    folder = _Folder(Path(path), display, writable or create)
    await asyncio.to_thread(folder.open, create)
    return JsonFolderStore(folder, display)
