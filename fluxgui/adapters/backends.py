"""SQL back-ends: one small async interface over aiosqlite and SQLAlchemy async.

Store formats write their SQL once, with ``:name`` parameters, and run it through a
:class:`Backend`. Reads stream in pages; each write is one transaction that a cancelled
caller cannot tear (the transaction runs in its own task and is shielded).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import tempfile
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from fluxgui.core.errors import FluxguiError, ReadOnlyError, StoreUnavailable, TargetError

from .sqlitetext import TextMode, blob_heads

Params = dict[str, Any]
WriteOp = tuple[str, "Params | Sequence[Params]"]
T = TypeVar("T")

SQLITE_MAGIC = b"SQLite format 3\x00"


def quote_ident(name: str) -> str:
    """Quote an SQL identifier (table names are user options)."""
    return '"' + name.replace('"', '""') + '"'


async def run_to_end(work: Awaitable[T]) -> T:
    """Await ``work`` in its own task; a caller cancelled meanwhile waits for it to end
    and then sees the cancellation, so a write once begun is never cut in two."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        if not task.cancelled():
            task.exception()  # retrieved: superseded by the cancellation
        raise asyncio.CancelledError
    return task.result()


class Tx(ABC):
    """One open write transaction (see :meth:`Backend.transaction`)."""

    dialect: str

    @abstractmethod
    async def execute(self, sql: str, params: Params | None = None) -> int:
        """Run one statement; return its ``rowcount``."""

    @abstractmethod
    async def executemany(self, sql: str, params: list[Params]) -> int:
        """Run one statement once per parameter set; return the total ``rowcount``."""

    @abstractmethod
    async def fetchall(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        """Run a read inside the transaction."""


class Backend(ABC):
    """What a store format needs from a database connection."""

    dialect: str
    writable: bool
    #: naive timestamps written by ``CURRENT_TIMESTAMP`` are UTC on this backend
    utc_times: bool = True

    @abstractmethod
    async def fetchall(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        """Run a read and return all rows (use LIMIT: callers page)."""

    async def fetchone(self, sql: str, params: Params | None = None) -> tuple[Any, ...] | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    @abstractmethod
    def stream(
        self, sql: str, params: Params | None = None, batch: int = 500
    ) -> AsyncIterator[list[tuple[Any, ...]]]:
        """Run a read and yield its rows in batches without holding them all."""

    @abstractmethod
    async def tables(self) -> dict[str, list[str]]:
        """Table name → column names, for format detection."""

    async def text_heads(
        self, table: str, column: str, ids: list[int], size: int
    ) -> dict[int, tuple[str, int]]:
        """Row id → (the first ``size`` characters of ``column``, its length in bytes) for
        the rows ``ids`` of ``table`` (keyed by an integer ``id``), without reading whole
        values: a look at a few leading characters must not cost a 200 MB item."""
        if not ids:
            return {}
        params: Params = {"n": size, **{f"i{k}": v for k, v in enumerate(ids)}}
        col, length = quote_ident(column), "length" if self.dialect == "sqlite" else "octet_length"
        rows = await self.fetchall(
            f"SELECT id, substr({col}, 1, :n), {length}({col}) FROM {quote_ident(table)} "
            f"WHERE id IN ({', '.join(f':i{k}' for k in range(len(ids)))})",
            params,
        )
        return {int(r[0]): (str(r[1] or ""), int(r[2] or 0)) for r in rows}

    async def write(self, ops: Sequence[WriteOp]) -> list[int]:
        """Run ``ops`` in one transaction; return each op's ``rowcount``.

        An op whose params are a list runs as ``executemany``.
        """

        async def body(tx: Tx) -> list[int]:
            counts = []
            for sql, params in ops:
                if isinstance(params, dict):
                    counts.append(await tx.execute(sql, params))
                else:
                    counts.append(await tx.executemany(sql, list(params)))
            return counts

        return await self.transaction(body)

    async def transaction(self, body: Callable[[Tx], Awaitable[T]]) -> T:
        """Run ``body(tx)`` in one write transaction and return what it returns.

        It commits when ``body`` returns and rolls back when it raises. The transaction
        runs in its own task, so cancelling the caller cannot leave it half done: the
        caller sees the cancellation only once the transaction has ended.
        """
        if not self.writable:
            raise ReadOnlyError("the store is open read-only; open it writable to change it")
        return await run_to_end(self._transaction(body))

    @abstractmethod
    async def _transaction(self, body: Callable[[Tx], Awaitable[T]]) -> T: ...

    async def change_token(self) -> Any:
        """A cheap value that changes when another connection commits (``None``: unknown)."""
        return None

    def local_paths(self) -> list[Path]:
        """The local files that hold the database (none for a server)."""
        return []

    @abstractmethod
    async def close(self) -> None: ...


# --------------------------------------------------------------------------- SQLite


def _sqlite_header(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(100)


def sqlite_read_uri(path: Path) -> str:
    """The URI that opens ``path`` for reading without changing the files on disk.

    * A WAL database with a ``-wal`` beside it (a live writer, or one that died) opens
      ``mode=ro`` so its committed rows in ``-wal`` are seen and nothing is checkpointed.
    * A WAL database without ``-wal`` would make a read-only connection create ``-wal`` and
      ``-shm`` and leave them behind; it opens read-write (we set ``query_only``) so that
      SQLite removes them again on close, or ``immutable=1`` where we may not write.
    * A ``-wal`` without ``-shm`` (files copied from elsewhere, no writer alive) would make
      SQLite create ``-shm`` beside them: :func:`private_copy` is read instead.
    * Anything else opens ``mode=ro``.
    """
    header = _sqlite_header(path)
    abs_path = quote(str(path.resolve()))
    is_wal = len(header) >= 20 and (header[18] == 2 or header[19] == 2)
    wal = Path(str(path) + "-wal")
    if is_wal and not wal.exists():
        if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
            return f"file:{abs_path}?mode=rw"
        return f"file:{abs_path}?mode=ro&immutable=1"
    return f"file:{abs_path}?mode=ro"


def needs_private_copy(path: Path) -> bool:
    """A ``-wal`` with no ``-shm``: reading in place would leave a new ``-shm`` behind.

    (A hot ``-journal`` also needs a private copy, but only SQLite can tell a hot journal
    from a live writer's: :meth:`SqliteBackend.open` asks it, see there.)
    """
    return Path(str(path) + "-wal").exists() and not Path(str(path) + "-shm").exists()


def private_copy(path: Path, *, journal: bool = False) -> Path | None:
    """Copy ``path`` and its ``-wal`` (``journal``: its hot ``-journal``) into a new
    temporary folder; return the copy's path.

    A hot journal holds the pages a writer that died had changed, as they were before; the
    copy is opened read-write so that SQLite rolls them back there, in the copy. The journal
    is copied first and must still be there, unchanged, once the database is copied:
    another process that rolls the journal back meanwhile only writes those same pages
    back. ``None`` when the journal went away meanwhile (someone recovered the store: read
    it in place again).

    Blocking (it copies the whole file): run it in a thread.
    """
    folder = Path(tempfile.mkdtemp(prefix="fluxgui-"))
    try:
        copy = folder / path.name
        if journal:
            side = Path(str(path) + "-journal")
            try:
                before = side.stat()
                shutil.copyfile(side, str(copy) + "-journal")
                shutil.copyfile(path, copy)
                after = side.stat()
            except FileNotFoundError:
                shutil.rmtree(folder, ignore_errors=True)
                return None
            if (before.st_size, before.st_mtime_ns, before.st_ino) != (
                after.st_size,
                after.st_mtime_ns,
                after.st_ino,
            ) or before.st_size == 0:
                shutil.rmtree(folder, ignore_errors=True)
                return None
        else:
            shutil.copyfile(path, copy)
            shutil.copyfile(str(path) + "-wal", str(copy) + "-wal")
    except OSError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise TargetError(f"cannot read {path}: {exc.strerror or exc}") from None
    return copy


def check_sqlite_file(path: Path) -> None:
    """Raise a one-line :class:`TargetError` unless ``path`` is a non-empty SQLite file."""
    if not path.exists():
        raise TargetError(f"no such file: {path}")
    if path.is_dir():
        raise TargetError(f"{path} is a folder, not a SQLite file")
    try:
        size = path.stat().st_size
        header = _sqlite_header(path)
    except OSError as exc:
        raise TargetError(f"cannot read {path}: {exc.strerror or exc}") from None
    if size == 0:
        raise TargetError(f"{path} is an empty file, not a session store")
    if not header.startswith(SQLITE_MAGIC):
        raise TargetError(f"{path} is not a SQLite database (corrupt or another kind of file)")
    page_size = int.from_bytes(header[16:18], "big") if len(header) >= 18 else 0
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1) or size % page_size:
        raise TargetError(f"{path} is damaged: its size is not a whole number of database pages (truncated?)")


class SqliteBackend(Backend):
    """A SQLite file through aiosqlite (its own thread; the event loop never blocks)."""

    dialect = "sqlite"

    def __init__(self, conn: Any, path: Path, writable: bool) -> None:
        self._conn = conn
        self.path = path
        self.writable = writable
        self._tables: dict[str, list[str]] | None = None
        self._copy: Path | None = None  # a private copy being read instead of ``path``
        self._text = TextMode(conn)

    @classmethod
    async def open(cls, path: Path, *, writable: bool = False, create: bool = False) -> SqliteBackend:
        """Open ``path``; read-only opens never change the files on disk.

        A hot ``-journal`` (a rollback-journal writer died mid-transaction, having already
        written some of its changes into the database file) makes SQLite refuse a read-only
        connection, since reading needs the journal rolled back first: then a private
        copy of the database and the journal is read instead, rolled back in the copy.
        """
        import aiosqlite

        copy: Path | None = None
        uri: str | None = None
        if create and not path.exists():
            if not path.parent.is_dir():
                raise TargetError(f"no such folder: {path.parent}")
            uri = f"file:{quote(str(path.resolve()))}?mode=rwc"
        else:
            check_sqlite_file(path)
            if writable:
                # (SQLite would open it read-only without a word and fail at the write.)
                if not os.access(path, os.W_OK):
                    raise ReadOnlyError(f"{path} is read-only: no permission to write it")
                if not os.access(path.parent, os.W_OK | os.X_OK):
                    raise ReadOnlyError(
                        f"{path} cannot be written: its folder is read-only "
                        "(SQLite keeps its journal beside the file)"
                    )
                uri = f"file:{quote(str(path.resolve()))}?mode=rw"
            elif needs_private_copy(path):
                copy = await asyncio.to_thread(private_copy, path)
        attempts = 3
        while True:
            attempts -= 1
            open_uri = uri or sqlite_read_uri(copy or path)
            try:
                conn = await aiosqlite.connect(open_uri, uri=True, isolation_level=None, timeout=5.0)
            except sqlite3.Error as exc:
                _drop_copy(copy)
                raise TargetError(f"cannot open {path}: {exc}") from None
            try:
                if not writable:
                    await conn.execute("PRAGMA query_only=ON")
                # The first read: SQLite looks for a hot journal here.
                await conn.execute_fetchall("SELECT 1 FROM sqlite_master LIMIT 1")
                # Reading the schema proves the file is a database and not encrypted/corrupt.
                backend = cls(conn, path, writable)
                backend._copy = copy
                backend._tables = await backend._read_tables()
            except (sqlite3.Error, FluxguiError) as exc:
                await conn.close()
                _drop_copy(copy)
                hot = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_READONLY_ROLLBACK
                if hot and not writable and uri is None and attempts > 0:
                    # Roll the journal back in a copy of our own (opened read-write there).
                    copy = await asyncio.to_thread(private_copy, path, journal=True)
                    if copy is not None:
                        uri = f"file:{quote(str(copy))}?mode=rw"
                    continue
                if hot:
                    raise TargetError(
                        f"{path} has a hot journal (a writer died mid-transaction) and "
                        "could not be read: open it writable to roll it back"
                    ) from None
                raise TargetError(f"{path} is not a readable SQLite database: {exc}") from None
            return backend

    # Reads go through TextMode: a value that is not UTF-8 is read as an Undecodable.
    async def fetchall(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        try:
            return await self._text.fetchall(sql, params)
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(self.path, exc) from None

    async def stream(
        self, sql: str, params: Params | None = None, batch: int = 500
    ) -> AsyncIterator[list[tuple[Any, ...]]]:
        try:
            async with contextlib.aclosing(self._text.stream(sql, params, batch)) as rows:
                async for part in rows:
                    yield part
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(self.path, exc) from None

    async def text_heads(
        self, table: str, column: str, ids: list[int], size: int
    ) -> dict[int, tuple[str, int]]:
        try:
            heads = await blob_heads(self._conn, table, column, ids, size)
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(self.path, exc) from None
        return heads if heads is not None else await super().text_heads(table, column, ids, size)

    async def tables(self) -> dict[str, list[str]]:
        # The first call gets the schema read while opening; later calls read it again.
        cached, self._tables = self._tables, None
        return cached if cached is not None else await self._read_tables()

    async def _read_tables(self) -> dict[str, list[str]]:
        rows = await self.fetchall(
            "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
            "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
            "ORDER BY m.name, p.cid"
        )
        out: dict[str, list[str]] = {}
        for table, column in rows:
            out.setdefault(table, []).append(column)
        return out

    def local_paths(self) -> list[Path]:
        return [self.path]

    async def change_token(self) -> Any:
        # Changes whenever another connection commits to the file (not for our own).
        row = await self.fetchone("PRAGMA data_version")
        return row[0] if row else None

    async def _transaction(self, body: Callable[[Tx], Awaitable[T]]) -> T:
        try:
            await self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(self.path, exc) from None
        try:
            result = await body(_SqliteTx(self._conn, self._text))
            await self._conn.execute("COMMIT")
        except BaseException as exc:
            try:
                await self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if isinstance(exc, sqlite3.DatabaseError):
                raise _sqlite_error(self.path, exc) from None
            raise
        return result

    async def close(self) -> None:
        await self._conn.close()
        _drop_copy(self._copy)


class _SqliteTx(Tx):
    dialect = "sqlite"

    def __init__(self, conn: Any, text: TextMode) -> None:
        self._conn = conn
        self._text = text

    async def execute(self, sql: str, params: Params | None = None) -> int:
        cur = await self._conn.execute(sql, params or {})
        count = cur.rowcount
        await cur.close()
        return count

    async def executemany(self, sql: str, params: list[Params]) -> int:
        if not params:
            return 0
        cur = await self._conn.executemany(sql, params)
        count = cur.rowcount
        await cur.close()
        return count

    async def fetchall(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        return await self._text.fetchall(sql, params)


def _drop_copy(copy: Path | None) -> None:
    if copy is not None:
        shutil.rmtree(copy.parent, ignore_errors=True)


def _sqlite_error(path: Path, exc: sqlite3.DatabaseError) -> FluxguiError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreUnavailable(f"{path} is locked by another process: {text}")
    if "readonly" in text or "read-only" in text:
        return ReadOnlyError(f"{path} cannot be written: {text}")
    return TargetError(f"{path}: {text}")


# --------------------------------------------------------------------------- SQLAlchemy


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

    @classmethod
    async def open(cls, url: str, display: str, *, writable: bool = False) -> SqlAlchemyBackend:
        from sqlalchemy.ext.asyncio import create_async_engine

        connect_args: dict[str, Any] = {}
        if "+asyncpg" in url:
            connect_args["timeout"] = 5
        try:
            engine = create_async_engine(url, connect_args=connect_args, pool_pre_ping=False)
        except Exception as exc:  # bad URL, missing driver
            raise TargetError(f"cannot use {display}: {_first_line(exc)}") from None
        utc = True
        try:
            async with engine.connect() as conn:
                if engine.dialect.name == "postgresql":
                    from sqlalchemy import text

                    tz = (await conn.execute(text("SHOW TimeZone"))).scalar()
                    utc = str(tz).upper() in {"UTC", "ETC/UTC", "GMT", "ETC/GMT", "UCT", "ZULU"}
        except Exception as exc:
            await engine.dispose()
            raise StoreUnavailable(f"cannot connect to {display}: {_db_reason(exc)}") from None
        return cls(engine, display, writable, utc)

    async def _begin_read(self, conn: Any) -> None:
        if self.dialect == "postgresql" and not self.writable:
            from sqlalchemy import text

            await conn.execute(text("SET TRANSACTION READ ONLY"))

    async def fetchall(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        from sqlalchemy import text

        try:
            async with self._engine.connect() as conn:
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
    ) -> AsyncIterator[list[tuple[Any, ...]]]:
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
        rows = await self.fetchall(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
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
