"""The SQLAlchemy back-end: any SQLAlchemy async URL (Postgres through asyncpg, …).

SQLAlchemy is imported only when such a URL is opened.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

from fluxgui.core.errors import FluxguiError, StoreUnavailable, TargetError
from fluxgui.core.storekey import server_location

from .backend import Backend, Params, Tx

T = TypeVar("T")

class SqlAlchemyBackend(Backend):
    """Any SQLAlchemy async URL (Postgres through asyncpg, …).

    Read-only opens run every read in a READ ONLY transaction on Postgres, so browsing
    cannot write even by mistake.
    """

    def __init__(self, engine: Any, url: str, writable: bool, utc_times: bool) -> None:
        self._engine = engine
        self.url = url
        self.dialect = engine.dialect.name
        self.writable = writable
        self.utc_times = utc_times
        where = engine.url
        self._location = server_location(
            where.get_backend_name(), where.host, where.port, where.database or ""
        )

    def location(self) -> str:
        return self._location

    @classmethod
    async def open(cls, url: str, display: str, *, writable: bool = False) -> SqlAlchemyBackend:
        from sqlalchemy.ext.asyncio import create_async_engine

        connect_args: dict[str, Any] = {}
        # Read-only on asyncpg: every transaction of the session is READ ONLY from the
        # start (a startup parameter: no SET TRANSACTION round trip per read).
        read_only_session = "+asyncpg" in url and not writable
        if "+asyncpg" in url:
            connect_args["timeout"] = 5
        if read_only_session:
            connect_args["server_settings"] = {"default_transaction_read_only": "on"}
        try:
            engine = create_async_engine(url, connect_args=connect_args, pool_pre_ping=False)
        except Exception as exc:  # bad URL, missing driver
            raise TargetError(f"cannot use {display}: {_driver_problem(exc, url)}") from None
        utc = True
        try:
            async with engine.connect() as conn:
                if engine.dialect.name == "postgresql":
                    tz = await _server_zone(conn)
                    utc = str(tz).upper() in {"UTC", "ETC/UTC", "GMT", "ETC/GMT", "UCT", "ZULU"}
        except Exception as exc:
            await engine.dispose()
            raise StoreUnavailable(f"cannot connect to {display}: {_db_reason(exc)}") from None
        backend = cls(engine, display, writable, utc)
        backend._session_read_only = read_only_session
        return backend

    #: the server makes every transaction READ ONLY (asyncpg's startup parameter)
    _session_read_only = False

    async def _begin_read(self, conn: Any) -> None:
        if self.dialect == "postgresql" and not self.writable and not self._session_read_only:
            from sqlalchemy import text

            await conn.execute(text("SET TRANSACTION READ ONLY"))

    async def fetchall(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        from sqlalchemy import text

        try:
            async with self._engine.connect() as conn:
                if self._session_read_only:
                    # One statement, its own (read-only) transaction: no BEGIN/ROLLBACK.
                    conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
                    result = await conn.execute(text(sql), params or {})
                    return [tuple(r) for r in result.fetchall()]
                await self._begin_read(conn)
                result = await conn.execute(text(sql), params or {})
                rows = [tuple(r) for r in result.fetchall()]
                await conn.rollback()
        except FluxguiError:
            raise
        except Exception as exc:
            raise StoreUnavailable(f"{self.url}: {_db_reason(exc)}") from None
        return rows

    async def stream(
        self, sql: str, params: Params | None = None, batch: int = 500
    ) -> AsyncGenerator[list[tuple[Any, ...]], None]:
        from sqlalchemy import text

        try:
            async with self._engine.connect() as conn:
                await self._begin_read(conn)
                result = await conn.stream(text(sql), params or {})
                async for part in result.partitions(batch):
                    yield [tuple(r) for r in part]
                await conn.rollback()
        except FluxguiError:
            raise
        except Exception as exc:
            raise StoreUnavailable(f"{self.url}: {_db_reason(exc)}") from None

    async def tables(self) -> dict[str, list[str]]:
        # The catalog of the current schema only (information_schema's views check
        # privileges row by row, and no other schema is reflected).
        rows = await self.fetchall(
            "SELECT c.relname, a.attname FROM pg_catalog.pg_class c "
            "JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid "
            "WHERE c.relnamespace = (SELECT oid FROM pg_catalog.pg_namespace "
            "WHERE nspname = current_schema()) "
            "AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND a.attnum > 0 "
            "AND NOT a.attisdropped ORDER BY c.relname, a.attnum"
        ) if self.dialect == "postgresql" else await self._inspect()
        out: dict[str, list[str]] = {}
        for table, column in rows:
            out.setdefault(table, []).append(column)
        return out

    async def _inspect(self) -> list[tuple[str, str]]:
        from sqlalchemy import inspect

        def _run(sync_conn: Any) -> list[tuple[str, str]]:
            insp = inspect(sync_conn)
            return [(t, c["name"]) for t in insp.get_table_names() for c in insp.get_columns(t)]

        async with self._engine.connect() as conn:
            return await conn.run_sync(_run)

    async def change_token(self) -> Any:
        if self.dialect != "postgresql":
            return None
        # The server's next transaction id moves with every transaction that writes
        # (anywhere on the server: a refresh it starts elsewhere costs two small queries).
        row = await self.fetchone("SELECT pg_current_snapshot()::text")
        return row[0] if row else None

    async def _transaction(self, body: Callable[[Tx], Awaitable[T]]) -> T:
        try:
            async with self._engine.begin() as conn:
                return await body(_SaTx(conn, self.dialect))
        except FluxguiError:
            raise
        except Exception as exc:
            raise StoreUnavailable(f"{self.url}: write failed: {_db_reason(exc)}") from None

    async def close(self) -> None:
        await self._engine.dispose()


async def _server_zone(conn: Any) -> str:
    """The server's TimeZone: asyncpg has it from the startup reply (no query)."""
    raw = await conn.get_raw_connection()
    driver = getattr(raw, "driver_connection", None)
    settings = getattr(driver, "get_settings", None)
    if settings is not None:
        zone = getattr(settings(), "TimeZone", None)
        if zone:
            return str(zone)
    from sqlalchemy import text

    return str((await conn.execute(text("SHOW TimeZone"))).scalar())


class _SaTx(Tx):
    def __init__(self, conn: Any, dialect: str) -> None:
        self._conn = conn
        self.dialect = dialect

    async def execute(self, sql: str, params: Params | None = None) -> int:
        from sqlalchemy import text

        return (await self._conn.execute(text(sql), params or {})).rowcount

    async def executemany(self, sql: str, params: list[Params]) -> int:
        from sqlalchemy import text

        if not params:
            return 0
        return (await self._conn.execute(text(sql), params)).rowcount

    async def fetchall(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        from sqlalchemy import text

        return [tuple(r) for r in (await self._conn.execute(text(sql), params or {})).fetchall()]


#: a driver module → the package that installs it
_DRIVER_PACKAGES = {"psycopg": "psycopg", "psycopg2": "psycopg2-binary", "MySQLdb": "mysqlclient",
                    "pymysql": "pymysql", "aiomysql": "aiomysql", "asyncmy": "asyncmy",
                    "pyodbc": "pyodbc", "aioodbc": "aioodbc", "oracledb": "oracledb"}


def _driver_problem(exc: BaseException, url: str) -> str:
    """Why SQLAlchemy cannot make an engine for ``url``, said so that the user knows what
    to do: a driver to install, a database kind it does not know, a driver that is not
    async."""
    scheme = url.split("://", 1)[0]
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        package = _DRIVER_PACKAGES.get(exc.name.split(".")[0], exc.name.split(".")[0])
        hint = " (or use postgresql+asyncpg://, which fluxgui ships with)" if scheme.startswith("postgres") else ""
        return f"its driver {exc.name} is not installed: pip install {package}{hint}"
    text = _first_line(exc)
    if "Can't load plugin" in text:
        return (
            f"unknown database kind {scheme!r} (fluxgui opens SQLite files, postgresql:// "
            "and any SQLAlchemy URL with an async driver)"
        )
    if "asyncio extension requires an async driver" in text:
        return f"{scheme} is not an async driver; name an async one (postgresql+asyncpg://, mysql+aiomysql://, …)"
    return text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _db_reason(exc: BaseException) -> str:
    """A short reason for a database/driver error (SQLAlchemy wraps the driver's)."""
    orig = getattr(exc, "orig", None) or exc.__cause__ or exc
    name = type(orig).__name__
    text = _first_line(orig)
    if isinstance(orig, (ConnectionRefusedError, OSError)) and not isinstance(orig, TimeoutError):
        return f"server unreachable ({text})"
    if isinstance(orig, (TimeoutError, asyncio.TimeoutError)):
        return "connection timed out"
    if "password" in text.lower() or "authentication" in text.lower():
        return f"login refused ({text})"
    if name.endswith("InvalidCatalogNameError") or "does not exist" in text:
        return text
    return f"{name}: {text}" if name not in text else text
