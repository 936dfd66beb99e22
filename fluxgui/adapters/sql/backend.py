"""The SQL back-end interface: one small async API over aiosqlite and SQLAlchemy async.

Store formats write their SQL once, with ``:name`` parameters, and run it through a
:class:`Backend`. Reads stream in pages; each write is one transaction that a cancelled
caller cannot tear (the transaction runs in its own task and is shielded). The
implementations are :class:`~.sqlite.SqliteBackend` and
:class:`~.alchemy.SqlAlchemyBackend`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from fluxgui.core.errors import ReadOnlyError

Params = dict[str, Any]
WriteOp = tuple[str, "Params | Sequence[Params]"]
T = TypeVar("T")


def quote_ident(name: str) -> str:
    """Quote an SQL identifier (table names are user options)."""
    return '"' + name.replace('"', '""') + '"'


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
    """What a SQL store format needs from a database connection (it is also the
    :class:`~fluxgui.adapters.parts.StoreBackend` of its store)."""

    dialect: str
    writable: bool
    #: naive timestamps written by ``CURRENT_TIMESTAMP`` are UTC on this backend
    utc_times: bool = True

    @abstractmethod
    async def fetchall(self, sql: str, params: Params | None = None) -> list[tuple[Any, ...]]:
        """Run a read and return all rows (use LIMIT: callers page)."""

    async def fetchone(self, sql: str, params: Params | None = None) -> tuple[Any, ...] | None:
        """The first row of a read (``None``: no row)."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    @abstractmethod
    def stream(
        self, sql: str, params: Params | None = None, batch: int = 500
    ) -> AsyncGenerator[list[tuple[Any, ...]], None]:
        """Run a read and yield its rows in batches without holding them all."""

    @abstractmethod
    def location(self) -> str:
        """Where the database is (:mod:`fluxgui.core.storekey`; no user, no password)."""

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
        from fluxgui.core.aio import run_to_end

        return await run_to_end(self._transaction(body))

    @abstractmethod
    async def _transaction(self, body: Callable[[Tx], Awaitable[T]]) -> T: ...

    async def change_token(self) -> Any:
        """A cheap value that changes when another connection commits (``None``: unknown)."""
        return None

    def local_paths(self) -> list[Path]:
        """The local files that hold the database (none for a server)."""
        return []

    def second_reader(self) -> str | None:
        """A URI another ``sqlite3`` connection reads this database by, read-only (SQLite
        files; ``None``: none can be had, as on a server)."""
        return None

    @abstractmethod
    async def close(self) -> None: ...
