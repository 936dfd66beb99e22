"""Where an export, an import or a copy may write — and where it must not.

* Never onto the store being read: an output path that resolves (through symlinks) to
  the store's file, to one of its side files (``-wal``, ``-shm``, ``-journal``) or into
  the JSON session folder being read is refused, and so is a copy whose destination is
  its source.
* Never over another session store by accident: an existing SQLite database or JSON
  session file is replaced only with ``force`` (an earlier export is not a store).
* Never over a device or a FIFO: a character device or a FIFO is written straight
  through (there is nothing to replace atomically); a folder, a socket or a block device
  is refused.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fluxgui.core.errors import TargetError, show_id
from fluxgui.core.redact import split_secrets

SIDE_FILES = ("-wal", "-shm", "-journal")
SQLITE_MAGIC = b"SQLite format 3\x00"
#: how much of an existing JSON file is read to tell a session file from an export
SNIFF_BYTES = 65536


@dataclass(frozen=True)
class Output:
    """A checked output: the path to write (symlinks resolved) and how: ``new`` (nothing
    there yet) or ``file`` (an existing regular file: replaced atomically), or ``stream``
    (a character device or FIFO: written straight through)."""

    path: Path
    kind: Literal["new", "file", "stream"]


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def _is_same_store(real: Path, source: Path) -> str | None:
    """Why writing ``real`` would hit the store at ``source`` (``None``: it would not)."""
    src = _real(source)
    if src.is_dir():
        if real == src or src in real.parents:
            return f"it is inside the session folder being read ({src})"
        return None
    if real == src:
        return "it is the store being read"
    for suffix in SIDE_FILES:
        if real == Path(str(src) + suffix):
            return f"it is the store's {suffix[1:]} file"
    return None


def what_store(path: Path) -> str | None:
    """What session store an existing regular file holds, in words (``None``: none we
    know — an earlier export, a transcript, anything else)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return None
    if head.startswith(SQLITE_MAGIC):
        return "a SQLite database"
    text = head.lstrip()
    if text.startswith(b'{"fluxgui_export"'):
        return None
    if text.startswith(b"{") and b'"history"' in text and (
        b'"saved_at"' in text or b'"agent_config"' in text
    ):
        return "a JSON session file"
    return None


def check_output(path: Path | str, sources: list[Path], *, force: bool = False) -> Output:
    """Check that ``path`` may receive an export of the stores whose files are
    ``sources``; raise a one-line :class:`TargetError` when it may not."""
    shown = show_id(str(path))
    real = _real(path)
    for source in sources:
        reason = _is_same_store(real, source)
        if reason:
            raise TargetError(f"refusing to write {shown}: {reason}; nothing was written")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return Output(real, "new")
    except OSError as exc:
        raise TargetError(f"cannot write {shown}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise TargetError(f"{shown} is a folder: name a file to write to")
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        return Output(real, "stream")
    if not stat.S_ISREG(st.st_mode):
        raise TargetError(f"refusing to write {shown}: it is not a regular file")
    if not force:
        held = what_store(real)
        if held:
            raise TargetError(
                f"refusing to replace {shown}: it holds {held}; pass --force to replace it"
            )
    return Output(real, "file")


def _store_identity(target: str) -> tuple[str, ...]:
    """What names a store for :func:`check_not_source`: a path resolved, or a URL without
    its secrets, its driver name and its letter case where those do not matter."""
    if "://" not in target:
        return ("path", str(_real(target)))
    bare, _secrets = split_secrets(target)
    scheme, _sep, rest = bare.partition("://")
    family = scheme.split("+", 1)[0].lower()
    family = {"postgres": "postgresql", "rediss": "redis"}.get(family, family)
    if family == "sqlite":
        path = rest[1:] if rest.startswith("/") else rest
        return ("path", str(_real(path.split("?", 1)[0])))
    authority, slash, tail = rest.partition("/")
    return ("url", family, authority.lower(), slash + tail)


def check_not_source(dest: str, source: str, *, dest_prefix: str | None = None,
                     source_prefix: str | None = None) -> None:
    """Refuse (one line) a copy whose destination ``dest`` is its ``source`` store, or
    one of the source's side files."""
    if "://" not in dest and "://" not in source:
        reason = _is_same_store(_real(dest), Path(source))
        if reason:
            raise TargetError(
                f"refusing to copy into {show_id(dest)}: {reason}; nothing was written"
            )
        return
    if _store_identity(dest) == _store_identity(source) and (dest_prefix or "") == (
        source_prefix or ""
    ):
        raise TargetError(
            f"refusing to copy into {show_id(split_secrets(dest)[0])}: it is the store being "
            "read; nothing was written"
        )
