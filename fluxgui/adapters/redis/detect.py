"""What a key prefix holds, checked when a Redis store opens: sessions in the
``RedisSession`` layout (or nothing yet), and whether their items are ``EncryptedSession``
envelopes that the key given opens."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from fluxgui.core.errors import NotASessionStore, show_id

from ..encryption import looks_encrypted
from .backend import text_of
from .keyspace import Keyspace

#: message lists sampled on open to find EncryptedSession envelopes
SAMPLE_LISTS = 20


async def detect(space: Keyspace) -> None:
    """Sample a few message lists for ``EncryptedSession`` envelopes (``needs_key``;
    with a key, check it opens one), and refuse a prefix that holds only keys the
    library never writes. Stops scanning once it has enough lists."""
    lists: list[str] = []
    sessions = 0
    foreign: tuple[str, str] | None = None
    async with contextlib.aclosing(space.scan()) as scan:
        async for batch in scan:
            for rest, kind in batch:
                sid, what = space.classify(rest, kind)
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
            f"{space.target} is not a RedisSession store: key "
            f"{show_id(space.prefix + ':' + foreign[0])} is a {foreign[1]} (expected "
            f"session hashes {space.prefix}:<id> and lists {space.prefix}:<id>:messages)"
        )
    pipe = space.client.pipeline(transaction=False)
    for sid in lists:
        pipe.lrange(space.session_keys(sid)[1], 0, 4)
    cipher = space.cipher
    first: tuple[str, Any] | None = None  # the first envelope read, to name a wrong key
    for sid, raws in zip(lists, await pipe.execute(raise_on_error=False) if lists else []):
        for raw in raws if isinstance(raws, list) else []:
            if looks_encrypted(raw):
                space.keys.needs_key = True
                if cipher is None:
                    return
                envelope = json.loads(text_of(raw))
                # a key that opens any sampled session will do (the others may be
                # another key's, as in SQL stores): wrong only when none opens
                if cipher.open(sid, envelope).state != "unreadable":
                    return
                first = first or (sid, envelope)
                break
    if first is not None and cipher is not None:
        cipher.check(*first, space.target)
