"""Reading the Agents SDK ``RedisSession`` layout: the Redis store's reader.

Each session is a HASH ``<prefix>:<id>`` (``session_id``, ``created_at`` and
``updated_at`` as Unix seconds) and a LIST ``<prefix>:<id>:messages`` of compact JSON
items, oldest first (how they are found: :class:`~.keyspace.Keyspace`).

Messages are addressed by their list index (``sort_key = (index,)``, ``id = index + 1``):
the library only appends (RPUSH) and pops from the end (RPOP), so an index stays the same
message for as long as the message exists.

Redis keeps no index to list or order sessions by, so a listing reads every session's hash
fields and list length once (pipelined) and keeps that snapshot until the change token
moves; pages are then cut from the snapshot by keyset.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import Any

from redis.exceptions import ResponseError

from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.times import iso_time

from ..encryption import is_envelope, mark_plaintext, readable, sealed, stored_message
from ..reading import ListingReader, Page, cut_page
from ..textmatch import contains
from .backend import RedisBackend, text_of
from .keyspace import CHUNK, Keyspace

#: Hash fields read for a listing. ``fluxgui_updated_us`` is fluxgui's own (see
#: :mod:`.writing`): ``updated_at`` has one-second resolution and Redis keeps no write
#: order, so sessions written within the same second would otherwise tie. The library
#: never reads the hash, so the extra field is invisible to it.
TIE_FIELD = "fluxgui_updated_us"
FIELDS = ("created_at", "updated_at", TIE_FIELD)
#: a session row: (id, created_at, updated_at, tie-break µs, message count)
SessionRow = tuple[str, int | None, int | None, int, int]


def _int(value: Any) -> int | None:
    """A stored Unix time (``b"1712345678"``) as an int; ``None`` when unreadable."""
    if value is None:
        return None
    try:
        return int(float(text_of(value)))
    except (ValueError, OverflowError):
        return None


class RedisReader(ListingReader[RedisBackend]):
    """Reading the ``RedisSession`` layout under one prefix (the store's reader)."""

    def __init__(self, space: Keyspace) -> None:
        super().__init__(space.place)
        self.space = space
        self._snapshot: tuple[Any, list[SessionRow]] | None = None

    # -- sessions ------------------------------------------------------------------

    async def _rows(self) -> list[SessionRow]:
        """Every session's row, cached until the change token moves."""
        token = await self.backend.change_token()
        if token is not None and self._snapshot is not None and self._snapshot[0] == token:
            return self._snapshot[1]
        found: dict[str, set[str]] = {}
        async for batch in self.space.scan():
            for rest, kind in batch:
                sid, what = self.space.classify(rest, kind)
                if sid is not None and what is not None:
                    found.setdefault(sid, set()).add(what)
        rows: list[SessionRow] = []
        ids = list(found)
        for start in range(0, len(ids), CHUNK):
            pipe = self.space.client.pipeline(transaction=False)
            chunk = ids[start : start + CHUNK]
            for sid in chunk:
                hk, mk, _ck = self.space.session_keys(sid)
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
        with self.space.failing():
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
        with self.space.failing():
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                pipe = self.space.client.pipeline(transaction=False)
                for sid in chunk:
                    hk, mk, _ck = self.space.session_keys(sid)
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
        self.place.check_branch(branch)
        found = await self.sessions_by_ids([session_id])
        return found[0] if found else None

    async def search_session_ids(self, text: str) -> AsyncGenerator[str, None]:
        with self.space.failing():
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
                with self.space.failing():
                    raws = await self.space.lrange(sid, start, start + CHUNK - 1)
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

    def _messages(self, sid: str, start: int, raws: list[bytes | str]) -> list[Message]:
        out = [
            stored_message(
                start + i + 1, raw, None,
                session_id=sid, cipher=self.space.cipher, utc=True, sort_key=(start + i,),
            )
            for i, raw in enumerate(raws)
        ]
        if not self.space.keys.needs_key and any(is_envelope(m.raw) or sealed(m) for m in out):
            self.space.keys.needs_key = True  # the sample on open missed this session's envelopes
        if self.space.keys.needs_key:
            mark_plaintext(out)  # items in clear: EncryptedSession skips them
        return out

    async def read_page(self, session_id: str, page: Page) -> list[Message]:
        """See :meth:`ListingReader.page_messages`; every item is read whole
        (``whole_up_to`` changes nothing)."""
        limit, anchor, direction, branch = page.limit, page.anchor, page.direction, page.branch
        self.place.check_branch(branch)
        if limit <= 0:
            return []
        with self.space.failing():
            if direction == "forward":
                start = int(anchor[0]) + 1 if anchor is not None else 0
                raws = await self.space.lrange(session_id, start, start + limit - 1)
            elif anchor is not None:
                end = int(anchor[0]) - 1
                if end < 0:
                    return []
                start = max(0, end - limit + 1)
                raws = await self.space.lrange(session_id, start, end)
            else:
                # The latest items and the length in one transaction, so the window's
                # first index is exact even while an agent appends.
                pipe = self.space.client.pipeline(transaction=True)
                pipe.llen(self.space.session_keys(session_id)[1])
                pipe.lrange(self.space.session_keys(session_id)[1], -limit, -1)
                n, raws = await pipe.execute(raise_on_error=False)
                if not isinstance(n, int) or not isinstance(raws, list):
                    return []
                start = n - len(raws)
        return self._messages(session_id, start, raws)

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        self.place.check_branch(branch)
        with self.space.failing():
            try:
                return int(await self.space.client.llen(self.space.session_keys(session_id)[1]))
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
            kept = [m for m in collected if readable(m)] if self.space.keys.needs_key else collected
            if len(page) < window or (want is not None and len(kept) >= want):
                break
            anchor, window = page[0].sort_key, window * 2
        kept = kept[-want:] if want is not None else kept
        return [{"role": m.role, "content": m.text} for m in kept]

