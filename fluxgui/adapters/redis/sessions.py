"""Whole-session edits of a Redis store, as reversible changes: clear, delete, fork — and
applying a change again or its inverse (undo, redo).

In the ``RedisSession`` layout: *delete* removes the session's keys (hash, message list,
legacy counter) as the library's ``clear_session()`` does; *clear* removes the message
list and counter but keeps the hash (its TTL too), so the session stays listed with no
items, as a cleared SQL session keeps its row; a *fork* is a new hash and list under the
same prefix holding the items up to a message, with the origin's remaining TTL (and, in
an ``EncryptedSession`` store, each envelope sealed again for the new id). Each runs in
one WATCHed MULTI/EXEC; a change records the items as rows (``{"id": position,
"data": stored bytes}``) and the hash, counter and TTLs in ``SessionRow.extra``, so undo
puts back exactly what was there. Applying a change first checks that the keys still
hold what it expects; otherwise nothing is written (``Conflict``).
"""

from __future__ import annotations

import json
import time
from typing import Any

from redis.exceptions import WatchError

from fluxgui.core.changes import Change, Row, SessionRow
from fluxgui.core.errors import Conflict, SessionNotFound, show_id

from ..encryption import resealed
from .backend import guarded, text_of
from .keyspace import Keyspace
from .reading import TIE_FIELD


async def _read(space: Keyspace, pipe: Any, sid: str) -> SessionRow | None:
    """The session as its keys hold it now (under WATCH): ``None`` when it has none."""
    hk, mk, ck = space.session_keys(sid)
    fields = await pipe.hgetall(hk)
    items = await pipe.lrange(mk, 0, -1)
    counter = await pipe.get(ck)
    if not fields and not items:
        return None
    decoded = {text_of(k): v for k, v in fields.items()}
    return SessionRow(
        _num(decoded.get("created_at")), _num(decoded.get("updated_at")),
        extra={
            "hash": fields, "items": list(items), "counter": counter,
            "hash_ttl": int(await pipe.pttl(hk)), "list_ttl": int(await pipe.pttl(mk)),
        },
    )


def _num(value: Any) -> int | None:
    try:
        return int(text_of(value)) if value is not None else None
    except ValueError:
        return None


def _public(state: SessionRow | None) -> SessionRow | None:
    """The state as a change keeps it: the items live in the change's rows."""
    if state is None or state.extra is None:
        return state
    extra = {k: v for k, v in state.extra.items() if k != "items"}
    extra["length"] = len(state.extra["items"])
    return SessionRow(state.created_at, state.updated_at, extra=extra)


def _rows(items: list[Any], start: int = 0) -> tuple[Row, ...]:
    return tuple({"id": start + n + 1, "data": d} for n, d in enumerate(items))


def _write(pipe: Any, space: Keyspace, sid: str, state: SessionRow | None, items: list[Any]) -> None:
    """Queue (after MULTI) the commands that leave ``sid``'s keys as ``state`` with
    ``items`` (``None``: no keys)."""
    hk, mk, ck = space.session_keys(sid)
    pipe.delete(hk, mk, ck)
    if state is None or state.extra is None:
        return
    if state.extra["hash"]:
        pipe.hset(hk, mapping=state.extra["hash"])
    for start in range(0, len(items), 1000):
        pipe.rpush(mk, *items[start : start + 1000])
    if state.extra.get("counter") is not None:
        pipe.set(ck, state.extra["counter"])
    for key, ttl in ((hk, state.extra.get("hash_ttl")), (mk, state.extra.get("list_ttl"))):
        if isinstance(ttl, int) and ttl > 0:
            pipe.pexpire(key, ttl)
    if isinstance(state.extra.get("hash_ttl"), int) and state.extra["hash_ttl"] > 0:
        pipe.pexpire(ck, state.extra["hash_ttl"])


async def _transact(space: Keyspace, sid: str, keys: list[str], body: Any) -> Any:
    """Run ``body(pipe)`` under WATCH of ``keys`` until no other writer got in between."""

    async def run() -> Any:
        async with space.client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(*keys)
                    return await body(pipe)
                except WatchError:
                    continue

    with space.failing():
        return await guarded(run)


def _touched(sid: str, before: SessionRow, items: list[Any]) -> SessionRow:
    """``before`` with ``updated_at`` (and fluxgui's tie-break) now and these items (a
    session that had only a list gets the hash the library would have made)."""
    assert before.extra is not None
    now_ns = time.time_ns()
    fields = dict(before.extra["hash"]) or {
        b"session_id": sid.encode("utf-8", "surrogateescape"),
        b"created_at": str(now_ns // 1_000_000_000).encode(),
    }
    fields.update({b"updated_at": str(now_ns // 1_000_000_000).encode(), TIE_FIELD.encode(): str(now_ns // 1000).encode()})
    extra = dict(before.extra, hash=fields, items=items, counter=None)
    if extra["hash_ttl"] in (-1, -2) and extra["list_ttl"] > 0:
        extra["hash_ttl"] = extra["list_ttl"]  # a hash made now takes the list's time
    return SessionRow(before.created_at, now_ns // 1_000_000_000, extra=extra)


async def _empty(space: Keyspace, sid: str, label: str, *, keep_hash: bool) -> Change:
    """Remove the session's items; with ``keep_hash`` its hash stays (touched, its TTL
    kept), else every key of it goes."""

    async def body(pipe: Any) -> Change:
        await space.check_types(pipe, sid, space.session_keys(sid))
        before = await _read(space, pipe, sid)
        if before is None or before.extra is None:
            raise SessionNotFound(f"unknown session id {show_id(sid)} in {space.target}")
        after = _touched(sid, before, []) if keep_hash else None
        pipe.multi()
        _write(pipe, space, sid, after, [])
        await pipe.execute()
        return Change(sid, label, _rows(before.extra["items"]), (), _public(before), _public(after))

    return await _transact(space, sid, list(space.session_keys(sid)), body)


async def clear(space: Keyspace, sid: str, label: str) -> Change:
    """Remove the session's items (the hash stays, with its TTL)."""
    return await _empty(space, sid, label, keep_hash=True)


async def delete(space: Keyspace, sid: str, label: str) -> Change:
    """Remove the session's keys, as ``RedisSession.clear_session()`` does."""
    return await _empty(space, sid, label, keep_hash=False)


async def as_written(space: Keyspace, sid: str, label: str) -> Change:
    """The session as the change that wrote it (no keys before, its keys after): read
    under WATCH, nothing written."""

    async def body(pipe: Any) -> Change:
        await space.check_types(pipe, sid, space.session_keys(sid))
        now = await _read(space, pipe, sid)
        if now is None or now.extra is None:
            raise SessionNotFound(f"unknown session id {show_id(sid)} in {space.target}")
        return Change(sid, label, (), _rows(now.extra["items"]), None, _public(now))

    return await _transact(space, sid, list(space.session_keys(sid)), body)


def _resealed(
    space: Keyspace, origin: str, target: str, items: list[Any], drop: bool
) -> list[Any]:
    """Items of ``origin`` for ``target``: envelopes sealed again (the session id is the
    key's salt), keeping their encryption time; plain items as they are. An envelope no
    key opens refuses the fork (``UnreadableItems``), or with ``drop`` is left out."""
    return [
        raw if again is None else json.dumps(again, separators=(",", ":"))
        for raw, again in resealed(
            space.cipher, origin, target, items, text_of, drop=drop, where=space.target
        )
    ]


async def fork(
    space: Keyspace, sid: str, at_id: int, new_id: str | None, label: str, *, drop: bool = False
) -> Change:
    """A new session holding ``sid``'s items up to and including position ``at_id``;
    ``new_id`` taken → ``Conflict``, ``None`` → the first free ``<sid>-fork…``; envelopes
    no key opens refuse it, or with ``drop`` are left out (see :func:`_resealed`)."""

    async def body(pipe: Any) -> Change:
        origin = await _read(space, pipe, sid)
        if origin is None or origin.extra is None:
            raise SessionNotFound(f"unknown session id {show_id(sid)} in {space.target}")
        if not 1 <= at_id <= len(origin.extra["items"]):
            raise SessionNotFound(f"message {at_id} is not in session {show_id(sid)}")
        target, n = new_id or f"{sid}-fork", 1
        while await pipe.exists(*space.session_keys(target)[:2]):
            if new_id is not None:
                raise Conflict(f"session {show_id(new_id)} already exists in {space.target}")
            n += 1
            target = f"{sid}-fork-{n}"
        await pipe.watch(*space.session_keys(target))
        items = _resealed(space, sid, target, origin.extra["items"][:at_id], drop)
        now_ns = time.time_ns()
        now = str(now_ns // 1_000_000_000).encode()
        ttl = max(origin.extra["hash_ttl"], origin.extra["list_ttl"])
        after = SessionRow(int(now), int(now), extra={
            "hash": {b"session_id": target.encode("utf-8", "surrogateescape"), b"created_at": now,
                     b"updated_at": now, TIE_FIELD.encode(): str(now_ns // 1000).encode()},
            "items": items, "counter": None, "hash_ttl": ttl, "list_ttl": ttl,
        })
        pipe.multi()
        _write(pipe, space, target, after, items)
        await pipe.execute()
        return Change(target, label, (), _rows(items), None, _public(after))

    return await _transact(space, sid, list(space.session_keys(sid)), body)


async def apply(space: Keyspace, change: Change) -> Change:
    """Write ``change`` (a redo, or an ``inverse()`` for an undo) if the keys still hold
    what it expects; returns it."""
    sid = change.session_id
    expected, after = change.session_before, change.session_after

    async def body(pipe: Any) -> Change:
        await space.check_types(pipe, sid, space.session_keys(sid))
        now = await _read(space, pipe, sid)
        items: list[Any] = [] if now is None or now.extra is None else list(now.extra["items"])
        if (now is None) != (expected is None) or (
            now is not None and expected is not None and expected.extra is not None and now.extra is not None
            and (now.extra["hash"] != expected.extra["hash"] or len(items) != expected.extra["length"])
        ) or any(r["id"] > len(items) or items[r["id"] - 1] != r["data"] for r in change.removed):
            raise Conflict(
                f"session {show_id(sid)} in {space.target} changed since: nothing was "
                "written; the view shows what the store holds now"
            )
        for r in sorted(change.removed, key=lambda r: r["id"], reverse=True):
            del items[r["id"] - 1]
        for r in sorted(change.added, key=lambda r: r["id"]):
            items.insert(r["id"] - 1, r["data"])
        pipe.multi()
        _write(pipe, space, sid, after, items)
        await pipe.execute()
        return change

    return await _transact(space, sid, list(space.session_keys(sid)), body)
