"""Small file-system helpers shared by the writers that replace files atomically.

Every temporary file or folder fluxgui makes beside a destination is *held*: an exclusive
``flock`` on it for as long as the writer lives. A kill releases the lock, so a later
writer to the same place can tell a leftover (unlocked: removed) from a write in progress
in another process (locked: left alone) — :func:`remove_stale`.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from pathlib import Path

try:  # POSIX; elsewhere leftovers are recognised by age only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: without flock, a temporary older than this is taken for a leftover
STALE_AGE = 3600.0


def sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: not every system can open a
    folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def hold(fd: int) -> None:
    """Take the exclusive lock that marks ``fd``'s file as in use (see the module text)."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass


def hold_path(path: Path) -> int | None:
    """Open ``path`` (a file or a folder) and :func:`hold` it; the descriptor to close
    when done (``None`` when it cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    hold(fd)
    return fd


def release(fd: int | None) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def _is_leftover(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        if fcntl is None:
            return time.time() - os.fstat(fd).st_mtime > STALE_AGE
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # held: a writer is alive
        return True
    finally:
        os.close(fd)


def remove_path(path: Path) -> None:
    """Remove a file (with its SQLite side files) or a folder; errors ignored."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(path, ignore_errors=True)
        return
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(str(path) + suffix)
        except OSError:
            pass


def remove_stale(folder: Path, pattern: str) -> int:
    """Remove the leftovers in ``folder`` whose names match the regular expression
    ``pattern`` (whole name): fluxgui temporaries that no live writer holds. Returns how
    many were removed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    matcher = re.compile(pattern)
    removed = 0
    for name in names:
        if matcher.fullmatch(name) and _is_leftover(folder / name):
            remove_path(folder / name)
            removed += 1
    return removed


def part_pattern(final_name: str) -> str:
    """The names of the temporaries :func:`part_name` makes for ``final_name``."""
    return re.escape(f".{final_name}.") + r"[A-Za-z0-9_]{6,16}\.part"


def part_name(final_name: str) -> str:
    """A fresh temporary name beside ``final_name``: ``.<name>.<random>.part``."""
    import secrets

    return f".{final_name}.{secrets.token_hex(4)}.part"
