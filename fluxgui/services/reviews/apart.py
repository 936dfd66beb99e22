"""The review database is never a store being reviewed.

Pointed at the agent's own file (``--reviews store.db``), fluxgui would add its tables
to it and narrow its mode to 0600: the agent's store written by a browser. So the review
database is checked against every store it files reviews for — the one store a command
opens, the store of the window, and later every store of a workspace (the checks take a
collection):

* a SQLite review file (:func:`check_file`, before anything is created or its mode
  changed) is refused when it is a store's file — the same path once symlinks are
  resolved, or the same file by device and inode (a hard link; every ``sqlite:///``
  spelling ends there) — one of its side files, or inside a JSON session folder;
* a PostgreSQL review database (:func:`check_schema`, in the transaction that would make
  the review tables) is refused when it is a store's database (its server location, as
  the store key names it) and its schema holds tables of anyone else (the store's):
  reviews there need a schema of their own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fluxgui.core.storekey import url_location
from fluxgui.core.roles import Store

from .model import ReviewError

#: the files SQLite keeps beside a database
SIDE_FILES = ("-wal", "-shm", "-journal")
#: the tables of the review database (every other table in its schema is someone else's)
OWN_PREFIX = "fluxgui_review"


@dataclass(frozen=True)
class Place:
    """Where a store is: its key's location (``postgresql://host:5432/db``,
    ``sqlite:/path``…) and its files on this machine."""

    key: str
    paths: tuple[Path, ...]

    @property
    def location(self) -> str:
        return self.key.split("?", 1)[0]


def places(stores: Iterable[Store | Place]) -> list[Place]:
    """The places of ``stores`` (taken while they are open; a place stays as it is)."""
    return [s if isinstance(s, Place) else Place(s.store_key, tuple(s.local_paths())) for s in stores]


def sqlite_file(url: str) -> Path | None:
    """The file of a path or a SQLite URL (``None``: in memory, or not SQLite)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return Path(url).expanduser()
    if scheme.split("+", 1)[0].lower() != "sqlite":
        return None
    path_text = (rest[1:] if rest.startswith("/") else rest).split("?", 1)[0]
    return Path(path_text).expanduser() if path_text and path_text != ":memory:" else None


def target_place(target: str) -> Place:
    """Where a store not opened yet is, from its target (a path, a SQLite URL, a server
    URL): for a window that opens its review database while its store is opening."""
    path = sqlite_file(target)
    if path is not None or target.lower().startswith("sqlite"):
        return Place("", (path,) if path is not None else ())
    try:
        return Place(url_location(target), ())
    except ValueError:  # (a port that is not a number: the store will not open either)
        return Place("", ())


def _real(path: Path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def _same_file(a: Path, b: Path) -> bool:
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _clash(review: Path, store: Path) -> str | None:
    """Why the review file ``review`` would be (in) the store at ``store``."""
    real, src = _real(review), _real(store)
    if src.is_dir():
        if real == src or src in real.parents:
            return f"it is inside the session folder being reviewed ({src})"
        return None
    if real == src or _same_file(real, src):
        return f"it is the store being reviewed ({src})"
    for suffix in SIDE_FILES:
        if real == Path(str(src) + suffix):
            return f"it is the {suffix[1:]} file of the store being reviewed ({src})"
    return None


def check_file(path: Path, where: str, stores: Iterable[Place]) -> None:
    """Refuse the SQLite review file ``path`` when it is one of ``stores``' files."""
    for place in stores:
        for store_path in place.paths:
            reason = _clash(path, store_path)
            if reason:
                raise ReviewError(
                    f"refusing the review database {where}: {reason}; reviews never go into "
                    "an agent's store: name another file"
                )


def check_schema(sync_conn: Any, url: str, where: str, stores: Iterable[Place]) -> None:
    """Refuse the PostgreSQL review database of ``sync_conn`` (reached by ``url``) when
    its database is a store's and its schema holds tables other than the review tables."""
    location = url_location(url)
    if not any(place.location == location for place in stores):
        return
    from sqlalchemy import text

    schema = sync_conn.execute(text("SELECT current_schema()")).scalar()
    if schema is None:
        return  # no schema to write to: making the tables fails on its own
    others = sync_conn.execute(text(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = :schema AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
        "AND left(c.relname, :n) <> :own ORDER BY 1 LIMIT 3"
    ), {"schema": schema, "n": len(OWN_PREFIX), "own": OWN_PREFIX}).scalars().all()
    if others:
        raise ReviewError(
            f"refusing the review database {where}: it is the database of the store being "
            f"reviewed, and its schema {schema} holds the store's tables ({', '.join(others)}); "
            "reviews never go into an agent's store: name another database, or give the "
            "review role a schema of its own"
        )
