"""Where the review database is, how it is opened, and its errors in one line.

``--reviews URL`` (the window's settings), else ``FLUXGUI_REVIEWS``, else
``reviews.db`` in :func:`fluxgui.core.paths.data_dir` (a file of mode 0600). A URL is a
SQLAlchemy URL: ``sqlite:///…`` or a path, ``postgresql://…`` (asyncpg, which fluxgui
ships). Opening creates or upgrades the schema (:mod:`.schema`); a review database that
is a store being reviewed is refused first (:mod:`.apart`).

Every error of the driver (a damaged file, a lock another process holds, a server gone)
becomes one line naming the database (:func:`failure`, raised by the engine's
``handle_error`` event), never SQLAlchemy's statement dump. A writer waits
:data:`BUSY_SECONDS` for another one's lock, then says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fluxgui.core.errors import FluxguiError, StoreUnavailable
from fluxgui.core.paths import data_dir, private_file
from fluxgui.core.redact import redact_url
from fluxgui.core.walmode import use_wal

from .apart import Place, check_file, sqlite_file
from .model import ReviewError

ENV = "FLUXGUI_REVIEWS"
FILE_NAME = "reviews.db"
#: how long a change waits for another writer's lock (seconds): changes last
#: milliseconds, so a lock held this long is another process's long write (or a hold)
BUSY_SECONDS = 10.0
#: how long each try of the switch to WAL waits for a lock (milliseconds): a file another
#: process holds (a rollback-journal file under ``BEGIN EXCLUSIVE``) is said in seconds
SWITCH_BUSY_MS = 100


def default_path() -> Path:
    return data_dir() / FILE_NAME


def resolve(url: str | None, stores: Iterable[Place] = ()) -> str:
    """The review database's SQLAlchemy async URL. A file is checked against ``stores``
    (never one of them) before it is made, or narrowed to mode 0600."""
    given = (url or os.environ.get(ENV) or "").strip()
    if not given:
        path = default_path()
        check_file(path, str(path), stores)
        return "sqlite+aiosqlite:///" + str(private_file(path))
    scheme, sep, rest = given.partition("://")
    if not sep:
        path = Path(given).expanduser().resolve()
        check_file(path, given, stores)
        return "sqlite+aiosqlite:///" + str(private_file(path))
    family = scheme.split("+", 1)[0].lower()
    if family in ("postgresql", "postgres"):
        return "postgresql+asyncpg://" + rest
    if family == "sqlite":
        file = sqlite_file(given)
        if file is not None:
            check_file(file, str(file), stores)
            private_file(file)
        return "sqlite+aiosqlite://" + rest
    raise ReviewError(
        f"the review database must be SQLite or PostgreSQL, not {redact_url(given)}"
    )


def shown(url: str) -> str:
    """The review database as it may be shown: a file's path, a server's URL (password
    hidden)."""
    path = sqlite_file(url)
    if path is not None:
        return str(path)
    return redact_url(url.replace("+aiosqlite", "").replace("+asyncpg", ""))


def failure(url: str, exc: BaseException) -> FluxguiError:
    """A driver's error as one line naming the review database."""
    cause = getattr(exc, "orig", None) or exc  # (SQLAlchemy's wrapper adds the statement)
    reason = " ".join(str(cause).split()) or type(cause).__name__
    where = shown(url)
    lowered = reason.lower()
    if "locked" in lowered or "busy" in lowered:
        return StoreUnavailable(f"the review database {where} is locked by another process; try again")
    if "malformed" in lowered or "not a database" in lowered or "corrupt" in lowered:
        return StoreUnavailable(
            f"the review database {where} is damaged ({reason[:200]}): restore it from a backup "
            "or name another one"
        )
    return StoreUnavailable(f"the review database {where} failed: {reason[:300]}")


def make_engine(url: str, *, writer: bool = True) -> Any:
    """An async engine. On SQLite the file runs in WAL mode and a ``writer`` engine's
    transactions start ``BEGIN IMMEDIATE`` (a second writer waits instead of failing
    half-way); reads go through a reader engine, whose transactions take no lock a
    writer waits for. Every driver error is raised as :func:`failure`."""
    from sqlalchemy import event
    from sqlalchemy.ext.asyncio import create_async_engine

    if url.startswith("sqlite"):
        engine = create_async_engine(url, connect_args={"timeout": BUSY_SECONDS})

        @event.listens_for(engine.sync_engine, "connect")
        def _connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            # (another opener may be switching the new file: tried again a while; a
            # lock held for long is another process's, said once the tries are done)
            cursor.execute(f"PRAGMA busy_timeout={SWITCH_BUSY_MS}")
            use_wal(cursor.execute)
            cursor.execute(f"PRAGMA busy_timeout={int(BUSY_SECONDS * 1000)}")
            # WAL + NORMAL: a killed process loses nothing committed (a power cut may
            # lose the last changes), and a change does not wait for an fsync
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine.sync_engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if writer else "BEGIN")
    else:
        engine = create_async_engine(url, pool_size=2, max_overflow=2)

    @event.listens_for(engine.sync_engine, "handle_error")
    def _failed(context: Any) -> None:
        raise failure(url, context.original_exception) from None

    return engine


def unreachable(url: str, exc: BaseException) -> FluxguiError:
    """An error opening the review database, in one line."""
    if isinstance(exc, FluxguiError):
        return exc
    cause = getattr(exc, "orig", None) or exc
    reason = " ".join(str(cause).split()) or type(cause).__name__
    return StoreUnavailable(f"cannot open the review database {shown(url)}: {reason[:300]}")
