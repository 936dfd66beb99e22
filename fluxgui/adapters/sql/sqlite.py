"""The SQLite back-end: a SQLite file through aiosqlite (its own thread; the event loop
never blocks), opened so that reading never changes the files on disk.

Reading a store a live or dead writer left in an odd state: a WAL database without its
``-wal`` opens so SQLite removes what it makes; a ``-wal`` without ``-shm``, or a hot
``-journal`` (a writer died mid-transaction), is read from a private copy (see
:func:`private_copy`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from fluxgui.core.errors import FluxguiError, ReadOnlyError, StoreUnavailable, TargetError

from .backend import Backend, Params, Tx
from .sqlitetext import TextMode, as_stored_bytes, blob_heads

T = TypeVar("T")

SQLITE_MAGIC = b"SQLite format 3\x00"
#: how long a read waits for a writer's lock (seconds; WAL files, as the libraries write
#: them, never make a reader wait)
BUSY_TIMEOUT = 5.0

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
    abs_path = quote(os.fsencode(path.resolve()))
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
    import shutil  # only for a hot journal or a WAL copy: not on every open
    import tempfile

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
        self._uri: str | None = None  # what opened it (the file it reads: ``path`` or the copy)
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
            uri = f"file:{quote(os.fsencode(path.resolve()))}?mode=rwc"
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
                uri = f"file:{quote(os.fsencode(path.resolve()))}?mode=rw"
            elif needs_private_copy(path):
                copy = await asyncio.to_thread(private_copy, path)
        attempts = 3
        while True:
            attempts -= 1
            open_uri = uri or sqlite_read_uri(copy or path)
            try:
                conn = await aiosqlite.connect(open_uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT)
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
                backend._uri = open_uri.replace("mode=rwc", "mode=rw")
                backend._tables = await backend._read_tables()
            except (sqlite3.Error, FluxguiError) as exc:
                await conn.close()
                _drop_copy(copy)
                hot = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_READONLY_ROLLBACK
                if hot and not writable and uri is None and attempts > 0:
                    # Roll the journal back in a copy of our own (opened read-write there).
                    copy = await asyncio.to_thread(private_copy, path, journal=True)
                    if copy is not None:
                        uri = f"file:{quote(os.fsencode(copy))}?mode=rw"
                    continue
                if hot:
                    raise TargetError(
                        f"{path} has a hot journal (a writer died mid-transaction) and "
                        "could not be read: open it writable to roll it back"
                    ) from None
                if _busy(exc):  # readable, but a writer holds it (a rollback-journal file)
                    raise StoreUnavailable(
                        f"{path} is locked by another process (a write in progress): "
                        "try again once it is done"
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
    ) -> AsyncGenerator[list[tuple[Any, ...]], None]:
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
        try:
            rows = await self.fetchall(
                f"SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
                f"WHERE {_TABLES} ORDER BY m.name, p.cid"
            )
        except TargetError:
            # A table whose columns this SQLite cannot read — a virtual table of a module
            # it lacks (sqlite-vec's vec0 beside an agent's sessions, say) — fails the
            # query for all: read them one by one and leave that one out.
            rows = await self._tables_one_by_one()
        out: dict[str, list[str]] = {}
        for table, column in rows:
            out.setdefault(table, []).append(column)
        return out

    async def _tables_one_by_one(self) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for (name,) in await self.fetchall(f"SELECT m.name FROM sqlite_master m WHERE {_TABLES}"):
            try:
                columns = await self.fetchall(
                    "SELECT name FROM pragma_table_info(:t) ORDER BY cid", {"t": name}
                )
            except TargetError:
                continue
            rows += [(name, column) for (column,) in columns]
        return rows

    def local_paths(self) -> list[Path]:
        return [self.path]

    def second_reader(self) -> str | None:
        # The same file as this connection reads, the same way (``query_only`` set by the
        # reader: a writable store's file is read, never written, by it).
        return self._uri

    def location(self) -> str:
        from fluxgui.core.storekey import path_location

        return path_location("sqlite", self.path)

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
        try:
            cur = await self._conn.execute(sql, params or {})
        except UnicodeEncodeError:  # an id read from bytes that are not UTF-8
            cur = await self._conn.execute(*as_stored_bytes(sql, params or {}))
        count = cur.rowcount
        await cur.close()
        return count

    async def executemany(self, sql: str, params: list[Params]) -> int:
        if not params:
            return 0
        # executemany binds and runs set by set: one that cannot bind (an id read from
        # bytes that are not UTF-8) may come after others ran, which the savepoint undoes
        await self._conn.execute("SAVEPOINT fluxgui_many")
        try:
            cur = await self._conn.executemany(sql, params)
        except UnicodeEncodeError:
            await self._conn.execute("ROLLBACK TO fluxgui_many")
            cur = await self._conn.executemany(*as_stored_bytes(sql, params))
        await self._conn.execute("RELEASE fluxgui_many")
        count = cur.rowcount
        await cur.close()
        return count

    async def fetchall(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        return await self._text.fetchall(sql, params)


def _drop_copy(copy: Path | None) -> None:
    if copy is not None:
        import shutil

        shutil.rmtree(copy.parent, ignore_errors=True)


#: the tables of the schema, but SQLite's own
_TABLES = "m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"


def _busy(exc: BaseException) -> bool:
    """Whether SQLite answered "database is locked" (or busy): another connection holds
    the lock it waited for."""
    text = str(exc)
    return "locked" in text or "busy" in text


def _sqlite_error(path: Path, exc: sqlite3.DatabaseError) -> FluxguiError:
    text = str(exc)
    if _busy(exc):
        return StoreUnavailable(f"{path} is locked by another process: {text}")
    if "readonly" in text or "read-only" in text:
        return ReadOnlyError(f"{path} cannot be written: {text}")
    return TargetError(f"{path}: {text}")

