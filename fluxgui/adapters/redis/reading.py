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
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from redis.exceptions import ResponseError

from fluxgui.core.errors import Conflict, NotASessionStore, show_id
from fluxgui.core.model import Message, SessionInfo, iso_time
from fluxgui.core.roles import Traits
from fluxgui.core.ports import Capabilities, Direction

from ..base import Store, check_branch, cut_page
from ..encryption import (
    ItemCipher,
    is_envelope,
    looks_encrypted,
    mark_plaintext,
    readable,
    sealed,
    stored_message,
)
from ..textmatch import contains
from .backend import RedisBackend, failing, text_of

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


def _int(value: Any) -> int | None:
    """A stored Unix time (``b"1712345678"``) as an int; ``None`` when unreadable."""
    if value is None:
        return None
    try:
        return int(float(text_of(value)))
    except (ValueError, OverflowError):
        return None


class RedisReader(Store[RedisBackend]):
    """Reading the ``RedisSession`` layout (the first layer of
    :class:`~.writing.RedisStore`)."""

    format = "agents"
    TRAITS = Traits(items=True, rowless_sessions=True, encryption=True, why_not={
        "editor": ": single items of Redis sessions cannot be edited in place "
        "(clear, delete and fork whole sessions instead)",
    })
    #: clear keeps the session's hash (the flux protocol's clear() removes it all, as the
    #: library does); delete removes its keys as
    #: ``clear_session()`` does; a fork is a new hash and list (all undoable)
    CAPABILITIES = Capabilities(
        append=True, clear=True, fork=True, encryption=True
    )

    @property
    def has_key(self) -> bool:
        """Whether a key for ``EncryptedSession`` items was given."""
        return self.cipher is not None

    def __init__(
        self, backend: RedisBackend, target: str, *, prefix: str, cipher: ItemCipher | None
    ) -> None:
        super().__init__(backend, target)
        self.client = backend.client
        self.prefix = prefix
        self.cipher = cipher
        self._snapshot: tuple[Any, list[SessionRow]] | None = None

    def key_parts(self) -> dict[str, str | None]:
        """The key prefix (one server may hold several stores)."""
        return {"prefix": self.prefix}

    # -- keys ----------------------------------------------------------------------

    def _keys(self, sid: str) -> tuple[str, str, str]:
        """The session's hash, messages list and legacy counter, as the library names them."""
        hk = f"{self.prefix}:{sid}"
        return hk, f"{hk}:messages", f"{hk}:counter"

    async def _check_types(self, pipe: Any, sid: str, keys: tuple[str, str, str]) -> None:
        """The library's checks under WATCH: each key absent or of its own type."""
        hk, mk, ck = keys
        for key, want in ((hk, "hash"), (mk, "list"), (ck, "string")):
            kind = text_of(await pipe.type(key))
            if kind not in ("none", want):
                raise Conflict(
                    f"session {show_id(sid)} cannot be written in {self.target}: its key "
                    f"{show_id(key)} is a {kind}, not a {want} (it belongs to something else)"
                )

    async def _scan(self) -> AsyncGenerator[list[tuple[str, str]], None]:
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
                yield [(text_of(k)[cut:], text_of(t)) for k, t in zip(keys, types)]
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
        first: tuple[str, Any] | None = None  # the first envelope read, to name a wrong key
        for sid, raws in zip(lists, await pipe.execute(raise_on_error=False) if lists else []):
            for raw in raws if isinstance(raws, list) else []:
                if looks_encrypted(raw):
                    self.needs_key = True
                    if self.cipher is None:
                        return
                    envelope = json.loads(text_of(raw))
                    # a key that opens any sampled session will do (the others may be
                    # another key's, as in SQL stores): wrong only when none opens
                    if self.cipher.open(sid, envelope).state != "unreadable":
                        return
                    first = first or (sid, envelope)
                    break
        if first is not None and self.cipher is not None:
            self.cipher.check(*first, self.target)

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
        with failing(self.backend.display):
            rows = await self._rows()
        return cut_page(rows, key, limit, cursor, descending)

    async def _page_by_activity(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]:
        return await self._page(lambda r: (r[2] or 0, r[3], r[0]), limit, cursor, descending)

    async def _page_by_id(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]:
        return await self._page(lambda r: (r[0],), limit, cursor, descending)

    async def _page_by_count(
        self, limit: int, cursor: tuple[Any, ...] | None, descending: bool
    ) -> list[tuple[Any, ...]]:
        return await self._page(lambda r: (r[4], r[0]), limit, cursor, descending)

    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]:
        out: list[SessionInfo] = []
        ids = list(dict.fromkeys(ids))
        with failing(self.backend.display):
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
                    is_hash = text_of(kind) == "hash"
                    has_items = isinstance(count, int) and count > 0
                    if is_hash or has_items:
                        out.append(self._row_info(self._row(sid, fields if is_hash else None, count)))
        return out

    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None:
        check_branch(self, branch)
        found = await self.sessions_by_ids([session_id])
        return found[0] if found else None

    async def search_session_ids(self, text: str) -> AsyncIterator[str]:
        with failing(self.backend.display):
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
                with failing(self.backend.display):
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

    def _texts(self, sid: str, start: int, raws: list[bytes | str]) -> list[str]:
        return [m.text for m in self._messages(sid, start, raws)]

    # -- messages ------------------------------------------------------------------

    async def _lrange(self, sid: str, start: int, end: int) -> list[bytes | str]:
        try:
            return await self.client.lrange(self._keys(sid)[1], start, end)
        except ResponseError as exc:
            if "WRONGTYPE" in str(exc):  # the name is some other key, not a message list
                return []
            raise

    def _messages(self, sid: str, start: int, raws: list[bytes | str]) -> list[Message]:
        out = [
            stored_message(
                start + i + 1, raw, None,
                session_id=sid, cipher=self.cipher, utc=True, sort_key=(start + i,),
            )
            for i, raw in enumerate(raws)
        ]
        if not self.needs_key and any(is_envelope(m.raw) or sealed(m) for m in out):
            self.needs_key = True  # the sample on open missed this session's envelopes
        if self.needs_key:
            mark_plaintext(out)  # items in clear: EncryptedSession skips them
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
        with failing(self.backend.display):
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
        with failing(self.backend.display):
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

