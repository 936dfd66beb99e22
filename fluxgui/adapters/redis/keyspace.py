"""What every part of a Redis store shares: the ``RedisSession`` keys under one prefix on
one server (:class:`Keyspace`), and the store's ``EncryptedSession`` keys
(:class:`EnvelopeKeys`).

``RedisSession`` keeps each session in two keys under a prefix (default
``agents:session``): a HASH ``<prefix>:<id>`` and a LIST ``<prefix>:<id>:messages``;
``<prefix>:<id>:counter`` (a legacy string) belongs to the session too. Session ids may
contain ``:``, so a session is found from its keys' *types* (see :meth:`Keyspace.classify`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncGenerator
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from fluxgui.core.errors import Conflict, KeyNeeded, show_id

from ..encryption import ItemCipher
from ..parts import Place
from .backend import RedisBackend, failing, text_of

#: items per LRANGE / RPUSH / SCAN when a whole session or the prefix is read or written
CHUNK = 1000


def glob_escape(text: str) -> str:
    """``text`` as a literal in a Redis glob pattern (SCAN MATCH)."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


class EnvelopeKeys:
    """The store's ``EncryptedSession`` keys (a :class:`~fluxgui.adapters.parts.Keys`): the
    cipher given, if any, and whether the store holds envelopes (found on open, when a
    read meets one, or once sealed items are written)."""

    def __init__(self, cipher: ItemCipher | None) -> None:
        self.cipher = cipher
        self.needs_key = False

    @property
    def has_key(self) -> bool:
        """Whether a key for ``EncryptedSession`` items was given."""
        return self.cipher is not None


class Keyspace:
    """The sessions under one key prefix of one Redis server, as the parts of its store
    (reader, writer, forks) address them."""

    def __init__(self, place: Place[RedisBackend], prefix: str, keys: EnvelopeKeys) -> None:
        self.place = place
        self.prefix = prefix
        self.keys = keys

    @property
    def backend(self) -> RedisBackend:
        return self.place.backend

    @property
    def client(self) -> Redis:
        return self.place.backend.client

    @property
    def target(self) -> str:
        """The store as it may be shown (its key prefix named when not the default)."""
        return self.place.target

    @property
    def cipher(self) -> ItemCipher | None:
        return self.keys.cipher

    def failing(self) -> contextlib.AbstractContextManager[None]:
        """Driver errors as one-line :class:`~fluxgui.core.errors.StoreUnavailable`."""
        return failing(self.backend.display)

    def session_keys(self, sid: str) -> tuple[str, str, str]:
        """The session's hash, messages list and legacy counter, as the library names them."""
        hk = f"{self.prefix}:{sid}"
        return hk, f"{hk}:messages", f"{hk}:counter"

    def check_key(self) -> None:
        """Refuse a write to a store of envelopes when no key was given."""
        if self.keys.cipher is None and self.keys.needs_key:
            raise KeyNeeded(
                f"{self.target} holds encrypted items (EncryptedSession): give its key to write to it"
            )

    async def check_types(self, pipe: Any, sid: str, keys: tuple[str, str, str]) -> None:
        """The library's checks under WATCH: each key absent or of its own type."""
        hk, mk, ck = keys
        for key, want in ((hk, "hash"), (mk, "list"), (ck, "string")):
            kind = text_of(await pipe.type(key))
            if kind not in ("none", want):
                raise Conflict(
                    f"session {show_id(sid)} cannot be written in {self.target}: its key "
                    f"{show_id(key)} is a {kind}, not a {want} (it belongs to something else)"
                )

    async def scan(self) -> AsyncGenerator[list[tuple[str, str]], None]:
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
    def classify(rest: str, kind: str) -> tuple[str | None, str | None]:
        """``(session id, "hash"|"list")`` for a session key, ``(None, None)`` otherwise:
        every hash under the prefix is a session, and so is every list whose name ends in
        ``:messages`` (the library reads the list alone, so a list without its hash counts)."""
        if kind == "hash":
            return rest, "hash"
        if kind == "list" and rest.endswith(":messages"):
            return rest[: -len(":messages")], "list"
        return None, None

    async def lrange(self, sid: str, start: int, end: int) -> list[bytes | str]:
        """Items ``start``..``end`` of the session's list (none when the name is some
        other key)."""
        try:
            return await self.client.lrange(self.session_keys(sid)[1], start, end)
        except ResponseError as exc:
            if "WRONGTYPE" in str(exc):  # the name is some other key, not a message list
                return []
            raise

