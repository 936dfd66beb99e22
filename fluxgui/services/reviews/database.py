"""Where the review database is and how it is opened.

``--reviews URL`` (the window's settings), else ``FLUXGUI_REVIEWS``, else
``reviews.db`` in :func:`fluxgui.core.paths.data_dir` (a file of mode 0600). A URL is a
SQLAlchemy URL: ``sqlite:///…`` or a path, ``postgresql://…`` (asyncpg, which fluxgui
ships). Opening creates or upgrades the schema (:mod:`.schema`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fluxgui.core.errors import StoreUnavailable
from fluxgui.core.paths import data_dir, private_file
from fluxgui.core.redact import redact_url
from fluxgui.core.walmode import use_wal

from .model import ReviewError

ENV = "FLUXGUI_REVIEWS"
FILE_NAME = "reviews.db"


def default_path() -> Path:
    return data_dir() / FILE_NAME


def resolve(url: str | None) -> str:
    """The review database's SQLAlchemy async URL."""
    given = (url or os.environ.get(ENV) or "").strip()
    if not given:
        return "sqlite+aiosqlite:///" + str(private_file(default_path()))
    scheme, sep, rest = given.partition("://")
    if not sep:
        path = Path(given).expanduser().resolve()
        return "sqlite+aiosqlite:///" + str(private_file(path))
    family = scheme.split("+", 1)[0].lower()
    if family in ("postgresql", "postgres"):
        return "postgresql+asyncpg://" + rest
    if family == "sqlite":
        path_text = rest[1:] if rest.startswith("/") else rest
        if path_text and path_text != ":memory:":
            private_file(Path(path_text).expanduser())
        return "sqlite+aiosqlite://" + rest
    raise ReviewError(
        f"the review database must be SQLite or PostgreSQL, not {redact_url(given)}"
    )


def shown(url: str) -> str:
    """The URL as it may be shown (password hidden)."""
    return redact_url(url.replace("+aiosqlite", "").replace("+asyncpg", ""))


def make_engine(url: str, *, writer: bool = True) -> Any:
    """An async engine. On SQLite the file runs in WAL mode and a ``writer`` engine's
    transactions start ``BEGIN IMMEDIATE`` (a second writer waits instead of failing
    half-way); reads go through a reader engine, whose transactions take no lock a
    writer waits for."""
    from sqlalchemy import event
    from sqlalchemy.ext.asyncio import create_async_engine

    if url.startswith("sqlite"):
        engine = create_async_engine(url, connect_args={"timeout": 30})

        @event.listens_for(engine.sync_engine, "connect")
        def _connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA busy_timeout=30000")
            use_wal(cursor.execute)  # (another opener may be switching the new file)
            # WAL + NORMAL: a killed process loses nothing committed (a power cut may
            # lose the last changes), and a change does not wait for an fsync
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine.sync_engine, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if writer else "BEGIN")

        return engine
    return create_async_engine(url, pool_size=2, max_overflow=2)


def unreachable(url: str, exc: BaseException) -> StoreUnavailable:
    # the driver's own error (SQLAlchemy's wrapper adds the SQL statement)
    cause = getattr(exc, "orig", None) or exc
    reason = " ".join(str(cause).split()) or type(cause).__name__
    return StoreUnavailable(f"cannot open the review database {shown(url)}: {reason[:300]}")
