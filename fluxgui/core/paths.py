"""Where fluxgui keeps data of its own (reviews, the search index), the same for the
window and the command line, and never inside an agent's store.

The locations are Qt's ``QStandardPaths`` for an application named ``fluxgui`` (no
organisation), computed here without Qt so that the command line need not load it:
``AppDataLocation`` for data (``$XDG_DATA_HOME/fluxgui``, default
``~/.local/share/fluxgui``; ``~/Library/Application Support/fluxgui`` on macOS,
``%APPDATA%\\fluxgui`` on Windows) and ``CacheLocation`` for caches
(``$XDG_CACHE_HOME/fluxgui``, default ``~/.cache/fluxgui``). ``tests/qt`` checks that
they equal what Qt answers.

``FLUXGUI_DATA_DIR`` and ``FLUXGUI_CACHE_DIR`` override them (tests, portable setups).
Folders are made mode 0700 and files we write there 0600 (:func:`private_file`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = "fluxgui"


def _home() -> Path:
    return Path(os.path.expanduser("~"))


def _xdg(variable: str, default: str) -> Path:
    value = os.environ.get(variable, "")
    # XDG: a relative value is invalid and ignored
    return Path(value) if value and os.path.isabs(value) else _home() / default


def data_dir() -> Path:
    """The folder of fluxgui's own data (``QStandardPaths.AppDataLocation``)."""
    override = os.environ.get("FLUXGUI_DATA_DIR")
    if override:
        return Path(override).expanduser()
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support" / APP
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or _home() / "AppData" / "Roaming") / APP
    return _xdg("XDG_DATA_HOME", ".local/share") / APP


def cache_dir() -> Path:
    """The folder of fluxgui's caches (``QStandardPaths.CacheLocation``)."""
    override = os.environ.get("FLUXGUI_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    if sys.platform == "darwin":
        return _home() / "Library" / "Caches" / APP
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or _home() / "AppData" / "Local") / APP / "cache"
    return _xdg("XDG_CACHE_HOME", ".cache") / APP


def private_dir(path: Path) -> Path:
    """``path`` made (with its parents) if missing; every folder we make, a parent too,
    is mode 0700 (``mkdir(parents=True)`` would make the parents by the umask: 0755).
    A folder that exists is left as it is."""
    missing: list[Path] = []
    at = path
    while not at.is_dir() and at != at.parent:
        missing.append(at)
        at = at.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile (another process), or a file: see below
            if not folder.is_dir():
                raise
            continue
        os.chmod(folder, 0o700)  # (mkdir's mode is narrowed by the umask, never widened)
    return path


def private_file(path: Path) -> Path:
    """``path`` in a private folder, the file itself made mode 0600 if it does not exist
    yet (an existing file is narrowed to 0600 too): for databases of our own that SQLite
    then opens."""
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    os.chmod(path, 0o600)
    return path
