"""Opening a Redis store: connect (PING), then check what the key prefix holds."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING
from pathlib import Path
from urllib.parse import SplitResult, parse_qsl, urlsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, RedisError, ResponseError

from fluxgui.core.errors import StoreUnavailable, TargetError, show_id
from fluxgui.core.storekey import compose, path_location, server_location

from ..handle import OpenStore
from ..parts import Place
from .backend import RedisBackend, failing, reason
from .detect import detect
from .keyspace import EnvelopeKeys, Keyspace
from .store import redis_store
from .url import DEFAULT_PREFIX

if TYPE_CHECKING:
    from ..encryption import ItemCipher


def _open_error(exc: BaseException, display: str, password: str | None, db: str) -> str:
    """The one line shown when connecting (PING) fails."""
    if isinstance(exc, AuthenticationError) and "noauth" in str(exc).lower():
        return f"Redis at {display} needs a password: give it in the URL"
    if isinstance(exc, AuthenticationError):
        return f"Redis at {display} refused the login: wrong user name or password"
    if isinstance(exc, ResponseError) and "db index" in str(exc).lower():
        return f"Redis at {display} has no database {db or 0}"
    if isinstance(exc, ResponseError):
        return f"Redis at {display} refused the connection: {reason(exc, password)}"
    return f"cannot reach Redis at {display}: {reason(exc, password)}"


def _location(parts: SplitResult, db: str) -> str:
    """Where a Redis store is (:mod:`fluxgui.core.storekey`): its server and db number."""
    if parts.scheme.lower() == "unix":
        number = dict(parse_qsl(parts.query)).get("db", "0")
        return compose(path_location("redis+unix", Path(parts.path)), {"db": number})
    return server_location("redis", parts.hostname, parts.port, db or "0")


async def open_redis(
    url: str, display: str, *, writable: bool, prefix: str, cipher: ItemCipher | None
) -> OpenStore:
    """Connect to the Redis server ``url`` (PING) and return the store under ``prefix``."""
    parts = urlsplit(url)
    db = parts.path.strip("/")
    if parts.scheme.lower() in ("redis", "rediss") and db and not db.isdigit():
        raise TargetError(f"bad Redis URL {display}: the database {show_id(db)} is not a number")
    try:
        client = aioredis.from_url(
            url,
            socket_connect_timeout=5,
            socket_timeout=30,
            # No automatic retries: a retried EXEC whose reply was lost would append twice.
            retry=Retry(NoBackoff(), 0),
            encoding_errors="surrogateescape",
        )
    except ValueError as exc:
        raise TargetError(f"bad Redis URL {display}: {reason(exc, parts.password)}") from None
    try:
        await asyncio.wait_for(client.ping(), 10)
    except (RedisError, OSError, asyncio.TimeoutError) as exc:
        await client.aclose()
        raise StoreUnavailable(_open_error(exc, display, parts.password, db)) from None
    target = display if prefix == DEFAULT_PREFIX else f"{display} (key prefix {prefix})"
    backend = RedisBackend(client, display, writable, _location(parts, db))
    space = Keyspace(Place(backend, target), prefix, EnvelopeKeys(cipher))
    try:
        with failing(display):
            await detect(space)
    except BaseException:
        await client.aclose()
        raise
    return redis_store(space)
