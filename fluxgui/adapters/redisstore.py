"""The Agents SDK ``RedisSession`` layout on a Redis server.

``RedisSession`` keeps each session in two keys under a prefix (default
``agents:session``): a HASH ``<prefix>:<id>`` (``session_id``, ``created_at`` and
``updated_at`` as Unix seconds) and a LIST ``<prefix>:<id>:messages`` of compact JSON items,
oldest first. ``<prefix>:<id>:counter`` (a legacy string) belongs to the session too: the
library deletes it on clear. Session ids may contain ``:``, so a session is found from its
keys' *types*: every hash under the prefix is a session, and so is every list whose name
ends in ``:messages`` (the library reads the list alone, so a list without its hash counts).

Messages are addressed by their list index (``sort_key = (index,)``, ``id = index + 1``):
the library only appends (RPUSH) and pops from the end (RPOP), so an index stays the same
message for as long as the message exists. Writes copy ``RedisSession.add_items`` /
``clear_session``: one WATCHed MULTI/EXEC with the same keys, fields and JSON options.

Redis keeps no index to list or order sessions by, so a listing reads every session's hash
fields and list length once (pipelined) and keeps that snapshot until the change token
moves; pages are then cut from the snapshot by keyset.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from pathlib import Path
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import (
    AuthenticationError,
    ConnectionError as RedisConnectionError,
    RedisError,
    ResponseError,
    TimeoutError as RedisTimeoutError,
    WatchError,
)

from fluxgui.core.errors import (
    Conflict,
    InvalidItem,
    KeyNeeded,
    NotASessionStore,
    ReadOnlyError,
    StoreUnavailable,
    TargetError,
    show_id,
)
from fluxgui.core.items import MESSAGE_ROLES
from fluxgui.core.model import Message, SessionInfo, iso_time, message_to_item, unix_time

from .backends import run_to_end
from fluxgui.core.ports import Capabilities

from .base import Direction, Store, check_branch
from .changes import Row, TableEditor
from .encryption import ItemCipher, is_envelope, looks_encrypted, readable, stored_message
from .redisurl import DEFAULT_PREFIX
from .sqlstore import contains

T = TypeVar("T")

#: Hash fields read for a listing. ``fluxgui_updated_us`` is fluxgui's own (see
#: ``_append``): ``updated_at`` has one-second resolution and Redis keeps no write order,
#: so sessions written within the same second would otherwise tie. The library never
#: reads the hash, so the extra field is invisible to it.
TIE_FIELD = "fluxgui_updated_us"
FIELDS = ("created_at", "updated_at", TIE_FIELD)
#: items per LRANGE / RPUSH when a whole session is read or written
CHUNK = 1000
#: message lists sampled on open to find EncryptedSession envelopes
SAMPLE_LISTS = 20
#: a session row: (id, created_at, updated_at, tie-break µs, message count)
SessionRow = tuple[str, int | None, int | None, int, int]


def glob_escape(text: str) -> str:
    """``text`` as a literal in a Redis glob pattern (SCAN MATCH)."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def _text(value: bytes | str) -> str:
    # Keys may hold any bytes; surrogateescape keeps them round-trippable (the client
    # encodes with the same error handler).
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def _int(value: Any) -> int | None:
    """A stored Unix time (``b"1712345678"``) as an int; ``None`` when unreadable."""
    if value is None:
        return None
    try:
        return int(float(_text(value)))
    except (ValueError, OverflowError):
        return None


def _seconds(value: str | None) -> int | None:
    """An ISO time (naive: UTC) as Unix seconds."""
    seconds = unix_time(value) if value else None
    return int(seconds) if seconds is not None else None


def _reason(exc: BaseException, password: str | None) -> str:
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


def _open_error(exc: BaseException, display: str, password: str | None, db: str) -> str:
    """The one line shown when connecting (PING) fails."""
    if isinstance(exc, AuthenticationError) and "noauth" in str(exc).lower():
        return f"Redis at {display} needs a password: give it in the URL"
    if isinstance(exc, AuthenticationError):
        return f"Redis at {display} refused the login: wrong user name or password"
    if isinstance(exc, ResponseError) and "db index" in str(exc).lower():
        return f"Redis at {display} has no database {db or 0}"
    if isinstance(exc, ResponseError):
        return f"Redis at {display} refused the connection: {_reason(exc, password)}"
    return f"cannot reach Redis at {display}: {_reason(exc, password)}"


class RedisBackend:
    """What :class:`Store` needs of a back-end: ``writable``, ``change_token``, ``close``."""

    dialect = "redis"
    utc_times = True

    def __init__(self, client: aioredis.Redis, display: str, writable: bool) -> None:
        self.client = client
        self.display = display
        self.writable = writable

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
            raise StoreUnavailable(f"Redis at {self.display} failed: {_reason(size, None)}")
        if isinstance(info, BaseException):  # INFO disabled (managed servers): keys only
            return (size,)
        return (info.get("rdb_changes_since_last_save"), info.get("rdb_last_save_time"), size)

    async def close(self) -> None:
        await self.client.aclose()


@contextlib.contextmanager
def failing(display: str) -> Iterator[None]:
    """Turn Redis driver errors into one-line :class:`StoreUnavailable` errors."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as exc:
        raise StoreUnavailable(f"lost the connection to Redis at {display}: {_reason(exc, None)}") from None
    except RedisError as exc:
        raise StoreUnavailable(f"Redis at {display} failed: {_reason(exc, None)}") from None


async def _guarded(write: Callable[[], Awaitable[T]]) -> T:
    """``write()`` run to its end even when the caller is cancelled (a MULTI/EXEC is
    never cut between sending and reading)."""
    return await run_to_end(write())


async def open_redis(
    url: str, display: str, *, writable: bool, prefix: str, cipher: ItemCipher | None
) -> Store:
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
        raise TargetError(f"bad Redis URL {display}: {_reason(exc, parts.password)}") from None
    try:
        await asyncio.wait_for(client.ping(), 10)
    except (RedisError, OSError, asyncio.TimeoutError) as exc:
        await client.aclose()
        raise StoreUnavailable(_open_error(exc, display, parts.password, db)) from None
    target = display if prefix == DEFAULT_PREFIX else f"{display} (key prefix {prefix})"
    store = RedisStore(RedisBackend(client, display, writable), target, prefix=prefix, cipher=cipher)
    try:
        with failing(display):
            await store.detect()
    except BaseException:
        await client.aclose()
        raise
    return store


class RedisStore(Store):
    """Agents SDK items in the ``RedisSession`` layout (optionally ``EncryptedSession``)."""

    format = "agents"
    backend_name = "redis"
    CAPABILITIES = Capabilities(append=True, encryption=True)

    @property
    def has_key(self) -> bool:
        return self.cipher is not None

    def local_paths(self) -> list[Path]:
        return []  # a server

    def __init__(
        self, backend: RedisBackend, target: str, *, prefix: str, cipher: ItemCipher | None
    ) -> None:
        super().__init__(backend, target)  # type: ignore[arg-type]  # duck-typed backend
        self.redis = backend
        self.client = backend.client
        self.prefix = prefix
        self.cipher = cipher
        self._snapshot: tuple[Any, list[SessionRow]] | None = None

    # -- keys ----------------------------------------------------------------------

    def _keys(self, sid: str) -> tuple[str, str, str]:
        """The session's hash, messages list and legacy counter, as the library names them."""
        hk = f"{self.prefix}:{sid}"
        return hk, f"{hk}:messages", f"{hk}:counter"

    async def _scan(self) -> AsyncIterator[list[tuple[str, str]]]:
        """Batches of ``(session id part, type)`` for every key under the prefix."""
        cut = len(self.prefix) + 1
        cursor: int = 0
        while True:
            cursor, keys = await self.client.scan(
                cursor, match=glob_escape(self.prefix) + ":*", count=CHUNK
            )
            if keys:
                pipe = self.client.pipeline(transaction=False)
                for k in keys:
                    pipe.type(k)
                types = await pipe.execute()
                yield [(_text(k)[cut:], _text(t)) for k, t in zip(keys, types)]
            if not cursor:
                return

    @staticmethod
    def _classify(rest: str, kind: str) -> tuple[str | None, str | None]:
        """``(session id, "hash"|"list")`` for a session key, ``(None, None)`` otherwise."""
        if kind == "hash":
            return rest, "hash"
        if kind == "list" and rest.endswith(":messages"):
            return rest[: -len(":messages")], "list"
        return None, None

    async def detect(self) -> None:
        """Sample a few message lists for ``EncryptedSession`` envelopes (``needs_key``;
        with a key, check it opens one), and refuse a prefix that holds only keys the
        library never writes. Stops scanning once it has enough lists."""
        lists: list[str] = []
        sessions = 0
        foreign: tuple[str, str] | None = None
        async with contextlib.aclosing(self._scan()) as scan:
            async for batch in scan:
                for rest, kind in batch:
                    sid, what = self._classify(rest, kind)
                    if what == "list":
                        lists.append(sid or "")
                    if what:
                        sessions += 1
                    elif not (kind == "string" and rest.endswith(":counter")):
                        foreign = foreign or (rest, kind)
                if len(lists) >= SAMPLE_LISTS:
                    break
        if not sessions and foreign is not None:
            raise NotASessionStore(
                f"{self.target} is not a RedisSession store: key "
                f"{show_id(self.prefix + ':' + foreign[0])} is a {foreign[1]} (expected "
                f"session hashes {self.prefix}:<id> and lists {self.prefix}:<id>:messages)"
            )
        pipe = self.client.pipeline(transaction=False)
        for sid in lists:
            pipe.lrange(self._keys(sid)[1], 0, 4)
        for sid, raws in zip(lists, await pipe.execute(raise_on_error=False) if lists else []):
            for raw in raws if isinstance(raws, list) else []:
                if looks_encrypted(raw):
                    self.needs_key = True
                    if self.cipher is not None:
                        self.cipher.check(sid, json.loads(_text(raw)), self.target)
                    return

    # -- sessions ------------------------------------------------------------------

    async def _rows(self) -> list[SessionRow]:
        """Every session's row, cached until the change token moves."""
        token = await self.backend.change_token()
        if token is not None and self._snapshot is not None and self._snapshot[0] == token:
            return self._snapshot[1]
        found: dict[str, set[str]] = {}
        async for batch in self._scan():
            for rest, kind in batch:
                sid, what = self._classify(rest, kind)
                if sid is not None and what is not None:
                    found.setdefault(sid, set()).add(what)
        rows: list[SessionRow] = []
        ids = list(found)
        for start in range(0, len(ids), CHUNK):
            pipe = self.client.pipeline(transaction=False)
            chunk = ids[start : start + CHUNK]
            for sid in chunk:
                hk, mk, _ck = self._keys(sid)
                pipe.hmget(hk, FIELDS)
                pipe.llen(mk)
            res = await pipe.execute(raise_on_error=False)
            for i, sid in enumerate(chunk):
                fields = res[2 * i] if "hash" in found[sid] else None
                count = res[2 * i + 1] if "list" in found[sid] else 0
                rows.append(self._row(sid, fields, count))
        self._snapshot = (token, rows)
        return rows

    @staticmethod
    def _row(sid: str, fields: Any, count: Any) -> SessionRow:
        if not isinstance(fields, list):
            fields = [None, None, None]
        created, updated, tie = (_int(f) for f in fields)
        # The tie-break counts only while it belongs to the current updated_at (the library
        # may have written since, leaving fluxgui's field behind).
        if tie is None or updated is None or tie // 1_000_000 != updated:
            tie = 0
        return (sid, created, updated, tie, count if isinstance(count, int) else 0)

    def _row_info(self, row: tuple[Any, ...]) -> SessionInfo:
        sid, created, updated, tie, count = row
        return SessionInfo(
            id=sid,
            messages=count,
            created_at=iso_time(created, utc=True),
            updated_at=iso_time(updated, utc=True),
            sort_key=(updated or 0, tie, sid),
        )

    async def _page(
        self,
        key: Callable[[SessionRow], tuple[Any, ...]],
        limit: int,
        cursor: tuple[Any, ...] | None,
        descending: bool,
    ) -> list[tuple[Any, ...]]:
        with failing(self.redis.display):
            rows = await self._rows()
        if cursor is not None:
            after = tuple(cursor)
            rows = [r for r in rows if (key(r) < after if descending else key(r) > after)]
        return sorted(rows, key=key, reverse=descending)[:limit]

    async def _page_by_activity(self, limit: int, cursor: tuple[Any, ...] | None, descending: bool):
        return await self._page(lambda r: (r[2] or 0, r[3], r[0]), limit, cursor, descending)

    async def _page_by_id(self, limit: int, cursor: tuple[Any, ...] | None, descending: bool):
        return await self._page(lambda r: (r[0],), limit, cursor, descending)

    async def _page_by_count(self, limit: int, cursor: tuple[Any, ...] | None, descending: bool):
        return await self._page(lambda r: (r[4], r[0]), limit, cursor, descending)

    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]:
        out: list[SessionInfo] = []
        ids = list(dict.fromkeys(ids))
        with failing(self.redis.display):
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                pipe = self.client.pipeline(transaction=False)
                for sid in chunk:
                    hk, mk, _ck = self._keys(sid)
                    pipe.type(hk)
                    pipe.hmget(hk, FIELDS)
                    pipe.llen(mk)
                res = await pipe.execute(raise_on_error=False)
                for i, sid in enumerate(chunk):
                    kind, fields, count = res[3 * i : 3 * i + 3]
                    is_hash = _text(kind) == "hash"
                    has_items = isinstance(count, int) and count > 0
                    if is_hash or has_items:
                        out.append(self._row_info(self._row(sid, fields if is_hash else None, count)))
        return out

    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None:
        check_branch(self, branch)
        found = await self.sessions_by_ids([session_id])
        return found[0] if found else None

    async def search_session_ids(self, text: str) -> AsyncIterator[str]:  # type: ignore[override]
        with failing(self.redis.display):
            ids = sorted(r[0] for r in await self._rows())
        rest = []
        for sid in ids:
            if contains(sid, text):
                yield sid
            else:
                rest.append(sid)
        for sid in rest:
            start = 0
            while True:
                with failing(self.redis.display):
                    raws = await self._lrange(sid, start, start + CHUNK - 1)
                if not raws:
                    break
                # Parsing (and decrypting) a big chunk goes to a thread: the UI thread
                # runs this loop.
                texts = (
                    await asyncio.to_thread(self._texts, sid, start, raws)
                    if len(raws) > 100
                    else self._texts(sid, start, raws)
                )
                if any(contains(t, text) for t in texts):
                    yield sid
                    break
                if len(raws) < CHUNK:
                    break
                start += CHUNK

    def _texts(self, sid: str, start: int, raws: list[bytes]) -> list[str]:
        return [m.text for m in self._messages(sid, start, raws)]

    # -- messages ------------------------------------------------------------------

    async def _lrange(self, sid: str, start: int, end: int) -> list[bytes]:
        try:
            return await self.client.lrange(self._keys(sid)[1], start, end)
        except ResponseError as exc:
            if "WRONGTYPE" in str(exc):  # the name is some other key, not a message list
                return []
            raise

    def _messages(self, sid: str, start: int, raws: list[bytes]) -> list[Message]:
        out = [
            stored_message(
                start + i + 1, raw, None,
                session_id=sid, cipher=self.cipher, utc=True, sort_key=(start + i,),
            )
            for i, raw in enumerate(raws)
        ]
        if not self.needs_key and any(is_envelope(m.raw) or "encryption" in (m.metadata or {}) for m in out):
            self.needs_key = True  # the sample on open missed this session's envelopes
        return out

    async def page_messages(
        self,
        session_id: str,
        *,
        limit: int = 100,
        anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward",
        branch: str | None = None,
    ) -> list[Message]:
        check_branch(self, branch)
        if limit <= 0:
            return []
        with failing(self.redis.display):
            if direction == "forward":
                start = int(anchor[0]) + 1 if anchor is not None else 0
                raws = await self._lrange(session_id, start, start + limit - 1)
            elif anchor is not None:
                end = int(anchor[0]) - 1
                if end < 0:
                    return []
                start = max(0, end - limit + 1)
                raws = await self._lrange(session_id, start, end)
            else:
                # The latest items and the length in one transaction, so the window's
                # first index is exact even while an agent appends.
                pipe = self.client.pipeline(transaction=True)
                pipe.llen(self._keys(session_id)[1])
                pipe.lrange(self._keys(session_id)[1], -limit, -1)
                n, raws = await pipe.execute(raise_on_error=False)
                if not isinstance(n, int) or not isinstance(raws, list):
                    return []
                start = n - len(raws)
        return self._messages(session_id, start, raws)

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        check_branch(self, branch)
        with failing(self.redis.display):
            try:
                return int(await self.client.llen(self._keys(session_id)[1]))
            except ResponseError:
                return 0

    async def flux_messages(self, session_id: str, limit: int | None, *, branch: str | None = None) -> list[dict[str, Any]]:
        """The latest ``limit`` items (0/None: all) as flux dicts; in a store holding
        envelopes only decrypted, unexpired ones, as ``EncryptedSession.get_items``."""
        want = limit or None
        window = want or 500
        anchor: tuple[Any, ...] | None = None
        collected: list[Message] = []
        while True:
            page = await self.page_messages(session_id, limit=window, anchor=anchor, branch=branch)
            collected[:0] = page
            kept = [m for m in collected if readable(m)] if self.needs_key else collected
            if len(page) < window or (want is not None and len(kept) >= want):
                break
            anchor, window = page[0].sort_key, window * 2
        kept = kept[-want:] if want is not None else kept
        return [{"role": m.role, "content": m.text} for m in kept]

    # -- writing -------------------------------------------------------------------

    def _dump(self, session_id: str, item: Any) -> str:
        """An item as ``RedisSession._serialize_item`` stores it; sealed first when the
        store has a key (what ``EncryptedSession`` hands to the Redis session)."""
        if self.cipher is not None and not is_envelope(item):
            item = self.cipher.seal(session_id, item)
        return json.dumps(item, separators=(",", ":"))

    def _need_key(self) -> None:
        if self.cipher is None and self.needs_key:
            raise KeyNeeded(
                f"{self.target} holds encrypted items (EncryptedSession): give its key to write to it"
            )

    async def add_messages(self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None) -> int:
        """Append messages as ``RedisSession.add_items`` does: items (dicts with a ``type``)
        as they are, flux dicts mapped; sealed when the store has a key."""
        check_branch(self, branch)
        self._check_writable()
        self._need_key()
        items = []
        for m in messages:
            if not isinstance(m, dict):
                raise InvalidItem(f"an item must be a JSON object, not {type(m).__name__}")
            items.append(message_to_item(m))
        data = [self._dump(session_id, i) for i in items]
        with failing(self.redis.display):
            await _guarded(lambda: self._append(session_id, data))
        if data and self.cipher is not None:
            self.needs_key = True
        return len(items)

    async def _check_types(self, pipe: Any, sid: str, keys: tuple[str, str, str]) -> None:
        """The library's checks under WATCH: each key absent or of its own type."""
        hk, mk, ck = keys
        for key, want in ((hk, "hash"), (mk, "list"), (ck, "string")):
            kind = _text(await pipe.type(key))
            if kind not in ("none", want):
                raise Conflict(
                    f"session {show_id(sid)} cannot be written in {self.target}: its key "
                    f"{show_id(key)} is a {kind}, not a {want} (it belongs to something else)"
                )

    async def _append(self, sid: str, data: list[str]) -> None:
        keys = hk, mk, _ck = self._keys(sid)
        async with self.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(*keys)
                    await self._check_types(pipe, sid, keys)
                    if self.cipher is None and looks_encrypted(await pipe.lindex(mk, -1)):
                        raise KeyNeeded(
                            f"session {show_id(sid)} in {self.target} holds encrypted items "
                            "(EncryptedSession): give its key to write to it"
                        )
                    if not data:
                        return
                    # A session's keys share one expiry (RedisSession's ttl): a key made
                    # now takes the other key's remaining time; existing TTLs are kept, as
                    # the library's HSET/RPUSH keep them.
                    h_ttl, m_ttl = await pipe.pttl(hk), await pipe.pttl(mk)
                    now_ns = time.time_ns()
                    now = str(now_ns // 1_000_000_000)
                    pipe.multi()
                    pipe.hset(hk, "session_id", sid)
                    pipe.hsetnx(hk, "created_at", now)
                    for start in range(0, len(data), CHUNK):
                        pipe.rpush(mk, *data[start : start + CHUNK])
                    pipe.hset(hk, mapping={"updated_at": now, TIE_FIELD: str(now_ns // 1000)})
                    if h_ttl == -2 and m_ttl > 0:
                        pipe.pexpire(hk, m_ttl)
                    if m_ttl == -2 and h_ttl > 0:
                        pipe.pexpire(mk, h_ttl)
                    await pipe.execute()
                    return
                except WatchError:
                    continue  # someone wrote the session meanwhile: check again

    async def clear_session(self, session_id: str) -> int:
        """Delete the session's keys (hash, list, counter), as ``clear_session()`` does;
        the session vanishes. Returns how many items it held."""
        self._check_writable()
        keys = self._keys(session_id)

        async def clear() -> int:
            async with self.client.pipeline(transaction=True) as pipe:
                while True:
                    try:
                        await pipe.watch(*keys)
                        await self._check_types(pipe, session_id, keys)
                        n = int(await pipe.llen(keys[1]))
                        pipe.multi()
                        pipe.delete(*keys)
                        await pipe.execute()
                        return n
                    except WatchError:
                        continue

        with failing(self.redis.display):
            return await _guarded(clear)

    def _import_item(self, m: Message) -> Any:
        """The item to store for a Message from another store (AgentsStore's mapping)."""
        if isinstance(m.raw, dict):
            return m.raw
        if isinstance(m.raw, str) and m.kind == "other" and m.raw == m.text:
            return _Verbatim(m.raw)  # stored text that is not JSON: kept as it is
        if m.metadata and isinstance(m.metadata.get("agents_item"), dict):
            return m.metadata["agents_item"]
        role = m.role
        if role not in MESSAGE_ROLES and role != "tool":
            role = "system" if role == "summary" else "user"
        meta = m.metadata or {}
        return message_to_item(
            {"role": role, "content": m.text, "tool_call_id": meta.get("tool_call_id")}
        )

    def _stored(self, session_id: str, item: Any) -> str:
        if isinstance(item, _Verbatim) and self.cipher is None:
            return str(item)
        return self._dump(session_id, str(item) if isinstance(item, _Verbatim) else item)

    def import_row(self, message: Message) -> Row:
        """The item text to store for ``message`` (before any sealing: the key of a
        sealed item depends on the session it is written to)."""
        item = self._import_item(message)
        if isinstance(item, _Verbatim):
            return {"message_data": str(item)}
        return {"message_data": json.dumps(item, separators=(",", ":"))}

    async def import_session(
        self,
        session_id: str,
        pages: AsyncIterator[list[Message]] | Iterator[list[Message]],
        *,
        created_at: str | None = None,
        updated_at: str | None = None,
        rename: bool = False,
    ) -> tuple[str, int]:
        """A new session of these messages in one MULTI/EXEC (nothing is written when it
        fails). A taken id raises :class:`Conflict`, or with ``rename`` becomes
        ``<id>-2``, ``<id>-3``, … Items have no time in Redis: only the session's
        ``created_at``/``updated_at`` keep times (given, else the first/last message's)."""
        self._check_writable()
        self._need_key()
        items: list[Any] = []
        first = last = None
        if isinstance(pages, AsyncIterator):
            batches = [page async for page in pages]
        else:
            batches = list(pages)
        for page in batches:
            for m in page:
                items.append(self._import_item(m))
                first = first if first is not None else _seconds(m.created_at)
                last = _seconds(m.created_at) or last
        now = int(time.time())
        created = _seconds(created_at) or first or now
        updated = _seconds(updated_at) or last or now

        async def write() -> str:
            async with self.client.pipeline(transaction=True) as pipe:
                while True:
                    try:
                        target, n = session_id, 1
                        while True:
                            keys = self._keys(target)
                            await pipe.watch(*keys)
                            if not await pipe.exists(keys[0], keys[1]):
                                break
                            if not rename:
                                raise Conflict(
                                    f"session {show_id(session_id)} already exists in "
                                    f"{self.target}; nothing was written for it"
                                )
                            n += 1
                            target = f"{session_id}-{n}"
                        await self._check_types(pipe, target, keys)
                        data = [self._stored(target, i) for i in items]
                        pipe.multi()
                        pipe.hset(
                            keys[0],
                            mapping={
                                "session_id": target,
                                "created_at": str(created),
                                "updated_at": str(updated),
                            },
                        )
                        for start in range(0, len(data), CHUNK):
                            pipe.rpush(keys[1], *data[start : start + CHUNK])
                        await pipe.execute()
                        return target
                    except WatchError:
                        continue

        with failing(self.redis.display):
            target = await _guarded(write)
        if items and self.cipher is not None:
            self.needs_key = True
        return target, len(items)

    # -- what the SQL stores have and Redis does not (yet) --------------------------

    def _not_editable(self) -> ReadOnlyError:
        return ReadOnlyError(f"{self.target}: editing Redis sessions in place is not supported yet")

    def check_editable(self) -> None:
        self._check_writable()
        raise self._not_editable()

    def check_importable(self) -> None:
        self._check_writable()
        self._need_key()

    def editor(self) -> TableEditor:
        raise self._not_editable()

    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> Row:
        raise self._not_editable()

    async def fork_origin(self, session_id: str) -> dict[str, Any] | None:
        return None  # forks are an edit: none are made here, so none are recorded


class _Verbatim(str):
    """Stored text that is not JSON, to be written back as it is."""
