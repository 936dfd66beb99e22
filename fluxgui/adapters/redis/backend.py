"""The Redis connection a store reads and writes through, and how its errors read.

:class:`RedisBackend` is the :class:`~fluxgui.adapters.parts.StoreBackend` of a Redis
store; :func:`failing` turns driver errors into one line; :func:`guarded` runs a
MULTI/EXEC to its end even when the caller is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import (
    ConnectionError as RedisConnectionError,
    RedisError,
    TimeoutError as RedisTimeoutError,
)

from fluxgui.core.aio import run_to_end
from fluxgui.core.errors import StoreUnavailable

T = TypeVar("T")


def text_of(value: bytes | str) -> str:
    """A key or a reply as text. Keys may hold any bytes; surrogateescape keeps them
    round-trippable (the client encodes with the same error handler)."""
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def reason(exc: BaseException, password: str | None) -> str:
    """One short line for a driver error, never showing the password."""
    if isinstance(exc, (RedisTimeoutError, asyncio.TimeoutError)):
        text = "timed out"
    elif "refused" in str(exc).lower() or "connect call failed" in str(exc).lower():
        text = "connection refused"
    else:
        text = str(exc) or type(exc).__name__
    if password:
        text = text.replace(password, "***")
    return " ".join(text.split())


class RedisBackend:
    """What a Redis store needs of its back-end (a
    :class:`~fluxgui.adapters.parts.StoreBackend`): the client, ``writable``,
    ``change_token``, ``close``."""

    def __init__(
        self, client: aioredis.Redis, display: str, writable: bool, location: str = ""
    ) -> None:
        self.client = client
        self.display = display
        self.writable = writable
        self._location = location or display

    def location(self) -> str:
        """``redis://host:6379/0`` (``redis+unix:/path.sock?db=0`` for a socket)."""
        return self._location

    async def change_token(self) -> Any:
        """The server's count of writes since its last save, its last save time and the
        database's key count, in one round trip. Every write anywhere on the server moves
        it (as Postgres's transaction id does), so a refresh may find nothing new, but no
        write to the store is missed; the key count catches keys that expire."""
        with failing(self.display):
            pipe = self.client.pipeline(transaction=False)
            pipe.info("persistence")
            pipe.dbsize()
            info, size = await pipe.execute(raise_on_error=False)
        if isinstance(size, BaseException):
            raise StoreUnavailable(f"Redis at {self.display} failed: {reason(size, None)}")
        if isinstance(info, BaseException):  # INFO disabled (managed servers): keys only
            return (size,)
        return (info.get("rdb_changes_since_last_save"), info.get("rdb_last_save_time"), size)

    def local_paths(self) -> list[Path]:
        """None: the store is on a server."""
        return []

    async def close(self) -> None:
        """Close the connection."""
        await self.client.aclose()


@contextlib.contextmanager
def failing(display: str) -> Iterator[None]:
    """Turn Redis driver errors into one-line :class:`StoreUnavailable` errors."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as exc:
        raise StoreUnavailable(f"lost the connection to Redis at {display}: {reason(exc, None)}") from None
    except RedisError as exc:
        raise StoreUnavailable(f"Redis at {display} failed: {reason(exc, None)}") from None


async def guarded(write: Callable[[], Awaitable[T]]) -> T:
    """``write()`` run to its end even when the caller is cancelled (a MULTI/EXEC is
    never cut between sending and reading)."""
    return await run_to_end(write())
