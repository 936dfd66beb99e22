"""Writing the ``RedisSession`` layout, as the library writes it: the store's writer
(:class:`RedisWriter`) and forks (:class:`RedisForks`).

Writes copy ``RedisSession.add_items`` / ``clear_session``: one WATCHed MULTI/EXEC with
the same keys, fields and JSON options, sealed first when the store has a key (what
``EncryptedSession`` hands to the Redis session). Items have no time in Redis: only a
session's hash keeps times. Single messages cannot be edited in place (yet).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from redis.exceptions import WatchError

from fluxgui.core.changes import Change, Row, label_id
from fluxgui.core.errors import Conflict, InvalidItem, KeyNeeded, show_id
from fluxgui.core.items import MESSAGE_ROLES
from fluxgui.core.model import Message, meta_dict, message_to_item
from fluxgui.core.times import unix_time
from fluxgui.core.roles import Pages

from ..encryption import is_envelope, looks_encrypted
from . import sessions
from .backend import guarded
from .keyspace import CHUNK, Keyspace
from .reading import TIE_FIELD


def _seconds(value: str | None) -> int | None:
    """An ISO time (naive: UTC) as Unix seconds."""
    seconds = unix_time(value) if value else None
    return int(seconds) if seconds is not None else None


class RedisWriter:
    """Whole sessions of Agents SDK items written in the ``RedisSession`` layout
    (optionally ``EncryptedSession``): appended, cleared, deleted, imported, and changes
    applied again or undone."""

    def __init__(self, space: Keyspace) -> None:
        self.space = space
        self.place = space.place

    def _dump(self, session_id: str, item: Any) -> str:
        """An item as ``RedisSession._serialize_item`` stores it; sealed first when the
        store has a key (what ``EncryptedSession`` hands to the Redis session)."""
        if self.space.cipher is not None and not is_envelope(item):
            item = self.space.cipher.seal(session_id, item)
        return json.dumps(item, separators=(",", ":"))

    async def _pick_key(self, session_id: str) -> None:
        """With a key ring, find which key opens the session's latest items first, so what
        is appended opens with the same key (a session none opens: the first key)."""
        cipher = self.space.cipher
        if cipher is None or cipher.key_count < 2 or cipher.key_of(session_id) is not None:
            return
        for raw in reversed(await self.space.lrange(session_id, -8, -1)):
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            if looks_encrypted(text) and cipher.open(session_id, json.loads(text)).item is not None:
                return

    async def add_messages(self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None) -> int:
        """Append messages as ``RedisSession.add_items`` does: items (dicts with a ``type``)
        as they are, flux dicts mapped; sealed when the store has a key."""
        self.place.check_branch(branch)
        self.place.check_writable()
        self.space.check_key()
        await self._pick_key(session_id)
        items = []
        for m in messages:
            if not isinstance(m, dict):
                raise InvalidItem(f"an item must be a JSON object, not {type(m).__name__}")
            items.append(message_to_item(m))
        data = [self._dump(session_id, i) for i in items]
        with self.space.failing():
            await guarded(lambda: self._append(session_id, data))
        if data and self.space.cipher is not None:
            self.space.keys.needs_key = True
        return len(items)

    async def _append(self, sid: str, data: list[str]) -> None:
        keys = hk, mk, _ck = self.space.session_keys(sid)
        async with self.space.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(*keys)
                    await self.space.check_types(pipe, sid, keys)
                    if self.space.cipher is None and looks_encrypted(await pipe.lindex(mk, -1)):
                        raise KeyNeeded(
                            f"session {show_id(sid)} in {self.space.target} holds encrypted items "
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
        self.place.check_writable()
        keys = self.space.session_keys(session_id)

        async def clear() -> int:
            async with self.space.client.pipeline(transaction=True) as pipe:
                while True:
                    try:
                        await pipe.watch(*keys)
                        await self.space.check_types(pipe, session_id, keys)
                        n = int(await pipe.llen(keys[1]))
                        pipe.multi()
                        pipe.delete(*keys)
                        await pipe.execute()
                        return n
                    except WatchError:
                        continue

        with self.space.failing():
            return await guarded(clear)

    def _import_item(self, m: Message) -> Any:
        """The item to store for a Message from another store (AgentsStore's mapping)."""
        if isinstance(m.raw, dict):
            return m.raw
        if isinstance(m.raw, str) and m.kind == "other" and m.raw == m.text:
            return _Verbatim(m.raw)  # stored text that is not JSON: kept as it is
        if isinstance(meta_dict(m).get("agents_item"), dict):
            return meta_dict(m)["agents_item"]
        role = m.role
        if role not in MESSAGE_ROLES and role != "tool":
            role = "system" if role == "summary" else "user"
        meta = meta_dict(m)
        return message_to_item(
            {"role": role, "content": m.text, "tool_call_id": meta.get("tool_call_id")}
        )

    def _stored(self, session_id: str, item: Any) -> str:
        if isinstance(item, _Verbatim) and self.space.cipher is None:
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
        self, session_id: str, pages: Pages, *, created_at: str | None = None,
        updated_at: str | None = None, rename: bool = False,
    ) -> tuple[str, int]:
        """A new session of these messages in one MULTI/EXEC (nothing is written when it
        fails). A taken id raises :class:`Conflict`, or with ``rename`` becomes
        ``<id>-2``, ``<id>-3``, … Items have no time in Redis: only the session's
        ``created_at``/``updated_at`` keep times (given, else the first/last message's)."""
        self.place.check_writable()
        self.space.check_key()
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
            async with self.space.client.pipeline(transaction=True) as pipe:
                while True:
                    try:
                        target, n = session_id, 1
                        while True:
                            keys = self.space.session_keys(target)
                            await pipe.watch(*keys)
                            if not await pipe.exists(keys[0], keys[1]):
                                break
                            if not rename:
                                raise Conflict(
                                    f"session {show_id(session_id)} already exists in "
                                    f"{self.space.target}; nothing was written for it"
                                )
                            n += 1
                            target = f"{session_id}-{n}"
                        await self.space.check_types(pipe, target, keys)
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

        with self.space.failing():
            target = await guarded(write)
        if items and self.space.cipher is not None:
            self.space.keys.needs_key = True
        return target, len(items)

    # -- whole sessions, reversibly (see .sessions) ----------------------------------

    async def clear_messages(self, session_id: str) -> Change:
        """Remove the session's items; its hash (and TTL) stays."""
        self.place.check_writable()
        self.space.check_key()
        return await sessions.clear(self.space, session_id, f"Clear session {label_id(session_id)}")

    async def delete_session(self, session_id: str) -> Change:
        """Remove the session's keys, as ``RedisSession.clear_session()`` does."""
        self.place.check_writable()
        self.space.check_key()
        return await sessions.delete(self.space, session_id, f"Delete session {label_id(session_id)}")

    async def created_change(self, session_id: str) -> Change:
        """The session as the change that wrote it, read (for an undo stack)."""
        self.place.check_writable()
        return await sessions.as_written(self.space, session_id, f"Write session {label_id(session_id)}")

    async def apply_change(self, change: Any) -> Any:
        """Write ``change`` again, or its inverse (undo), if the keys still fit it."""
        self.place.check_writable()
        return await sessions.apply(self.space, change)

    def check_importable(self) -> None:
        """New sessions need a writable store, and the key when it holds envelopes."""
        self.place.check_writable()
        self.space.check_key()


class _Verbatim(str):
    """Stored text that is not JSON, to be written back as it is."""


class RedisForks:
    """Sessions forked at a message: a new hash and list under the same prefix (see
    :mod:`.sessions`)."""

    def __init__(self, space: Keyspace) -> None:
        self.space = space
        self.place = space.place

    async def fork_session(
        self, session_id: str, at_message_id: int, new_id: str | None = None, *,
        branch: str | None = None, drop_unreadable: bool = False,
    ) -> Change:
        """A new session with the items up to and including ``at_message_id``; encrypted
        items are sealed again for it (those no key opens refuse the fork, or with
        ``drop_unreadable`` are left out when others open)."""
        self.place.check_branch(branch)
        self.place.check_writable()
        self.space.check_key()
        at = int(at_message_id)
        label = f"Fork session {label_id(session_id)} at message {at}"
        return await sessions.fork(self.space, session_id, at, new_id, label, drop=drop_unreadable)

    async def fork_origin(self, session_id: str) -> dict[str, Any] | None:
        """None: a Redis fork records no origin."""
        return None
