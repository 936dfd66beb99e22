"""When the index file cannot be used: a cache folder that is read-only or full, a file
that is not (or no longer) a database.

The index is a cache. None of these may stop a search: it scans the store instead and
says why (:class:`IndexUnavailable`, one line), and a damaged file is set aside
(``<name>.corrupt``, replacing an older one) and built again. A write that fails (a full
disk) leaves the file as its last transaction did: SQLite rolls the transaction back.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from fluxgui.core.errors import FluxguiError

#: SQLite's answers for a file that is damaged or is no database at all
_DAMAGED = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
#: the files of an index: the database and SQLite's side files
SUFFIXES = ("", "-wal", "-shm", "-journal")


class IndexUnavailable(FluxguiError):
    """The store's index cannot be used (where it is, and why, in one line)."""


def damaged(exc: BaseException) -> bool:
    """Whether ``exc`` says the index file is damaged (or no database)."""
    return isinstance(exc, sqlite3.DatabaseError) and (
        getattr(exc, "sqlite_errorcode", None) in _DAMAGED
        or "malformed" in str(exc) or "not a database" in str(exc)
    )


def reason(exc: BaseException) -> str:
    """What went wrong, in words (no traceback, no errno number)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


def unavailable(path: Path, exc: BaseException) -> IndexUnavailable:
    """The error for an index at ``path`` that failed with ``exc``."""
    return IndexUnavailable(f"the search index {path} cannot be used: {reason(exc)}")


@contextlib.contextmanager
def failing(path: Path) -> Iterator[None]:
    """Within: a failure of the file or the folder as :class:`IndexUnavailable`."""
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        raise unavailable(path, exc) from None


def after_failure(path: Path, exc: BaseException) -> IndexUnavailable:
    """The error to raise for an index that failed with ``exc``, once its file is closed:
    a damaged file is set aside first (the next opening makes a new one)."""
    if damaged(exc):
        with contextlib.suppress(IndexUnavailable):
            set_aside(path)
    return unavailable(path, exc)


def set_aside(path: Path) -> Path:
    """Move a damaged index file out of the way (its side files are removed): the next
    opening makes a new one. Returns where the old one went."""
    aside = path.with_name(path.name + ".corrupt")
    with failing(path):
        path.replace(aside)
        for suffix in SUFFIXES[1:]:
            path.with_name(path.name + suffix).unlink(missing_ok=True)
    return aside


def damaged_note(aside: Path | str) -> str:
    """What to say of a damaged index file set aside (and built anew)."""
    return f"the search index was damaged: set aside as {aside} and built anew"


def remove(path: Path) -> None:
    """Delete an index file and its side files (``index --rebuild``)."""
    with failing(path):
        for suffix in SUFFIXES:
            path.with_name(path.name + suffix).unlink(missing_ok=True)
