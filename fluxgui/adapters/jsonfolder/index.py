"""The index of a folder of JSON session files, and reading them.

Reading keeps only a small index per file (times, message count, stat) refreshed by
``scandir``, re-parsing just the files that changed; one session's history is parsed when
it is paged. A file that is not a session file is listed in :attr:`FolderIndex.problems`
and the rest of the folder still opens. Every method here blocks: the store runs them in
worker threads.
"""

from __future__ import annotations

import heapq
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from fluxgui.core.errors import TargetError
from fluxgui.core.hits import fold
from fluxgui.core.imports import hello_message, hello_time

from .names import file_stem_or_none, session_id_of

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Entry:
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



class FolderIndex:
    """The index of one folder's session files, and their reading (the first layer of
    :class:`~.folder.Folder`)."""

    def __init__(self, path: Path, display: str, writable: bool) -> None:
        self.path = path
        self.display = display
        self.writable = writable
        self.problems: list[str] = []
        self._files: dict[str, Entry] = {}  # by file name
        self._ids: dict[str, Entry] = {}  # by session id
        self._broken: dict[str, tuple[int, int, str]] = {}  # name -> (mtime, size, problem)
        self._index_lock = threading.Lock()
        # One read-modify-write at a time from this process, so two writes of ours never
        # lose each other's messages.
        self._write_lock = threading.Lock()
        self._cache: tuple[str, int, int, list[Any]] | None = None  # one parsed history

    # -- opening and the index ---------------------------------------------------------

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

    def _parse(self, name: str) -> Entry | tuple[int, int, str] | None:
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
    def _entry(name: str, doc: dict[str, Any], st: os.stat_result) -> Entry:
        saved = hello_time(doc.get("saved_at"))
        if saved is None:  # no readable saved_at: the file's own time says when it was saved
            saved = datetime.fromtimestamp(st.st_mtime_ns / 1e9).astimezone().isoformat()
        activity = (datetime.fromisoformat(saved) - _EPOCH) // timedelta(microseconds=1)
        return Entry(
            name, session_id_of(name[: -len(".json")]), st.st_mtime_ns, st.st_size,
            len(doc["history"]), hello_time(doc.get("created_at")), saved, activity,
        )

    def scan(self) -> None:
        """Bring the index up to date with the folder (parsing only changed files)."""
        listing = self._listing()
        with self._index_lock:
            files: dict[str, Entry] = {}
            broken = {}
            for name, mtime, size in listing:
                old = self._files.get(name)
                if old is not None and (old.mtime_ns, old.size) == (mtime, size):
                    files[name] = old
                    continue
                bad = self._broken.get(name)
                got = bad if bad is not None and bad[:2] == (mtime, size) else self._parse(name)
                if isinstance(got, Entry):
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

    def forget(self, name: str) -> None:
        """Drop a file we deleted from the index."""
        with self._index_lock:
            e = self._files.pop(name, None)
            if e is not None and self._ids.get(e.sid) is e:
                del self._ids[e.sid]

    def locate(self, sid: str) -> Entry | None:
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

    def entries(self) -> list[Entry]:
        self.scan()
        with self._index_lock:
            return list(self._ids.values())

    def page(
        self, order: str, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[Entry]:
        key: Callable[[Entry], tuple[Any, ...]] = {
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

    def by_ids(self, ids: list[str]) -> list[Entry]:
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

    def grep(self, entries: list[Entry], needle: str) -> list[str]:
        """Ids of these sessions with a message whose text holds ``needle`` (folded:
        :func:`fluxgui.core.hits.fold`)."""
        hits = []
        for e in entries:
            history = self._read_history(e.name, keep=False) or []
            if any(needle in fold(hello_message(n, x, strict_content=True).text)
                   for n, x in enumerate(history, 1)):
                hits.append(e.sid)
        return hits
