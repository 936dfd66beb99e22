"""A session read as the change that wrote it (``Writer.created_change``): what an undo
stack keeps for a session written in several steps (a replay's fork, a consolidated
session). Reading it writes nothing — a kill at any moment loses nothing — and its
undo deletes the session as its library reads it, its redo writes it back exactly.

Every store is written by its own library: the Agents SDK's ``SQLiteSession``, flux's
``SQLiteSession``, ``SQLAlchemySession`` on PostgreSQL, ``RedisSession``, a JSON session
folder, a conversation of the loopback Conversations API; "nothing written" is the
store's own witness of writes (the files' bytes, the rows' ``xmin``, Redis's count of
write commands, the API's requests)."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from conversations_server import API_KEY, conv_server, sdk_items, sdk_write, texts  # noqa: F401 - a fixture
from doctor_helpers import AlchemySessions, add_agents, add_flux
from helpers import REDIS_URL
from json_helpers import hello_entry, hello_history, hello_load, hello_save
from replay_helpers import SID, agents_items, flux_messages

from fluxgui.adapters import open_store
from fluxgui.core.errors import SessionNotFound
from fluxgui.core.ports import OpenOptions
from fluxgui.services import edits

Read = Callable[[], Awaitable[list[Any]]]
Stamp = Callable[[], Awaitable[Any]]


def _files(*paths: Path) -> Stamp:
    async def stamp() -> Any:
        return [(p.name, p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
                for p in paths if p.exists()]
    return stamp


async def _read_as_change_then_undo_and_redo(store: Any, read: Read, stamp: Stamp) -> None:
    before, witness = await read(), await stamp()
    assert before
    change = await store.writer.created_change(SID)
    assert await stamp() == witness  # nothing written
    assert change.removed == () and len(change.added) == len(before)
    assert change.label == f'Write session "{SID}"'
    await edits.undo(store, change)
    assert await read() == []
    await edits.redo(store, change)
    assert await read() == before
    with pytest.raises(SessionNotFound):
        await store.writer.created_change("no such session")


async def test_agents_sqlite(tmp_path):
    path = tmp_path / "agents.db"
    await add_agents(path, {SID: agents_items()})
    from agents import SQLiteSession

    async def read() -> list[Any]:
        session = SQLiteSession(SID, str(path))
        try:
            return await session.get_items()
        finally:
            session.close()

    async with await open_store(str(path), writable=True) as store:
        stamp = _files(path, Path(f"{path}-wal"))
        await _read_as_change_then_undo_and_redo(store, read, stamp)


async def test_flux_sqlite(tmp_path):
    path = tmp_path / "flux.db"
    await add_flux(path, {SID: flux_messages()})
    from flux.sessions import SQLiteSession

    async def read() -> list[Any]:
        return list(await SQLiteSession(str(path), session_id=SID).get_messages())

    async with await open_store(str(path), writable=True) as store:
        await _read_as_change_then_undo_and_redo(store, read, _files(path, Path(f"{path}-wal")))


async def test_sqlalchemy_on_postgres(pg_url):
    sessions = AlchemySessions(pg_url)
    plain = pg_url.replace("postgresql+asyncpg://", "postgresql://", 1)

    async def stamp() -> Any:
        conn = await asyncpg.connect(plain)
        try:
            rows = await conn.fetch("SELECT id, xmin::text FROM agent_messages ORDER BY id")
            session = await conn.fetch("SELECT xmin::text FROM agent_sessions")
            return [tuple(r) for r in rows], [tuple(r) for r in session]
        finally:
            await conn.close()

    try:
        await sessions(SID).add_items(agents_items())
        async with await open_store(pg_url, writable=True) as store:
            await _read_as_change_then_undo_and_redo(store, lambda: sessions(SID).get_items(), stamp)
    finally:
        await sessions.dispose()


async def test_redis(redis_prefix):
    import redis.asyncio as aioredis
    from agents.extensions.memory import RedisSession

    client = aioredis.from_url(REDIS_URL)
    session = RedisSession(SID, redis_client=client, key_prefix=redis_prefix)
    writes = ("cmdstat_del", "cmdstat_rpush", "cmdstat_hset", "cmdstat_set", "cmdstat_pexpire")

    async def stamp() -> Any:
        stats = await client.info("commandstats")
        return {k: stats.get(k, {}).get("calls", 0) for k in writes}, await client.pttl(
            f"{redis_prefix}:{SID}")

    async def read() -> list[Any]:
        return list(await session.get_items())

    try:
        await session.add_items(agents_items())  # type: ignore[arg-type]
        async with await open_store(REDIS_URL, OpenOptions(key_prefix=redis_prefix, writable=True)) as store:
            await _read_as_change_then_undo_and_redo(store, read, stamp)
    finally:
        await client.aclose()


async def test_json_folder(tmp_path):
    folder = tmp_path / "sessions"
    hello_save(folder, SID, [hello_entry(m["role"], m["content"]) for m in flux_messages()])
    path = folder / f"{SID}.json"

    async def read() -> list[Any]:
        return [(m.role, m.content) for m in hello_history(hello_load(path))] if path.exists() else []

    async with await open_store(f"{folder}/", writable=True) as store:
        await _read_as_change_then_undo_and_redo(store, read, _files(path))


async def test_conversations(conv_server):
    """A conversation read as the change that made it (nothing sent but reads); undone it
    is deleted, redone it is made again (a new conversation id: the API gives ids) with
    the same items."""
    cid = await sdk_write(conv_server, texts(4))
    before = [bare(i) for i in await sdk_items(conv_server, cid)]

    def writes() -> list[tuple[str, str]]:
        return [(r["method"], r["path"]) for r in conv_server.requests if r["method"] != "GET"]

    async with await open_store(
        "openai-conversations:", base_url=conv_server.base_url, api_key=API_KEY,
        conversations=(cid,), writable=True,
    ) as store:
        sent = writes()
        change = await store.writer.created_change(cid)
        assert writes() == sent  # nothing written
        assert change.removed == () and len(change.added) == 4
        await edits.undo(store, change)
        assert cid not in conv_server.conversations
        again = await edits.redo(store, change)
        assert again.session_id != cid
        assert [bare(i) for i in await sdk_items(conv_server, again.session_id)] == before


def bare(item: dict[str, Any]) -> dict[str, Any]:
    """An item without its server-given id."""
    return {k: v for k, v in item.items() if k != "id"}
