"""Consolidation (issue 36): replicas' sessions merged into SQLite, Postgres and Redis,
read back by the owning library in the true order; a second run writes nothing; a
conflicting destination session is never overwritten; the replicas are never changed;
an agent resumed on the consolidated session is sent the purchase order."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import REDIS_URL, FixedModel, snapshot
from workspace_helpers import PO, agents_add, agents_items, agents_replicas, flux_replicas, minute, user_texts

from fluxgui.adapters.registry import open_store
from fluxgui.core.errors import TargetError
from fluxgui.core.ports import OpenOptions
from fluxgui.services.workspace import Entry, Workspace
from fluxgui.services.workspace.consolidate import plan_merge, write_merge


async def _open(paths: list[Path]) -> Workspace:
    return await Workspace.open([Entry(str(p)) for p in paths], keyring=False)


async def _merge_twice(ws: Workspace, dest_target: str, options: OpenOptions) -> None:
    """Merge every session into the destination, then again: the second plan finds
    every session already there and writes nothing."""
    dest = await open_store(dest_target, options)
    try:
        plan = await plan_merge(ws, dest)
        assert {s.action for s in plan.sessions} == {"write"}
        told: list[tuple[int, int]] = []
        done = await write_merge(ws, dest, plan, progress=lambda n, total: told.append((n, total)))
        assert all(s.written == s.messages for s in done.sessions)
        assert told == [(n, len(plan.sessions)) for n in range(1, len(plan.sessions) + 1)]
        again = await write_merge(ws, dest, await plan_merge(ws, dest))
        assert {s.action for s in again.sessions} == {"same"}
        assert sum(s.written for s in again.sessions) == 0
    finally:
        await dest.close()


async def test_merged_into_sqlite_the_library_reads_the_true_order(tmp_path):
    reps = await agents_replicas(tmp_path)
    before = [snapshot(p) for p in reps.paths]
    dest = tmp_path / "merged.db"
    ws = await _open(reps.paths)
    try:
        await _merge_twice(ws, str(dest), OpenOptions(create="agents"))
    finally:
        await ws.close()
    for sid in reps.routes:
        assert user_texts(await agents_items(dest, sid)) == reps.texts(sid), sid
    assert [snapshot(p) for p in reps.paths] == before


@pytest.mark.postgres
async def test_merged_into_postgres_sqlalchemy_session_reads_it(tmp_path, pg_url):
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    reps = await agents_replicas(tmp_path, sessions=3)
    ws = await _open(reps.paths)
    try:
        await _merge_twice(ws, pg_url, OpenOptions(create="agents"))
    finally:
        await ws.close()
    for sid in reps.routes:
        session = SQLAlchemySession.from_url(sid, url=pg_url)
        try:
            assert user_texts(await session.get_items()) == reps.texts(sid), sid
        finally:
            await session.engine.dispose()


@pytest.mark.redis
async def test_merged_into_redis_redis_session_reads_it(tmp_path, redis_prefix):
    import redis.asyncio as aioredis
    from agents.extensions.memory import RedisSession

    reps = await agents_replicas(tmp_path, sessions=3)
    ws = await _open(reps.paths)
    try:
        await _merge_twice(ws, REDIS_URL, OpenOptions(writable=True, key_prefix=redis_prefix))
    finally:
        await ws.close()
    client = aioredis.from_url(REDIS_URL)
    try:
        for sid in reps.routes:
            session = RedisSession(sid, redis_client=client, key_prefix=redis_prefix)
            assert user_texts(await session.get_items()) == reps.texts(sid), sid
    finally:
        await client.aclose()


async def test_flux_replicas_merged_flux_reads_them_and_its_agent_sees_the_order(tmp_path):
    from flux import Agent as FluxAgent
    from flux import Runner as FluxRunner
    from flux.sessions import SQLiteSession as FluxSession

    reps = await flux_replicas(tmp_path)
    before = [snapshot(p) for p in reps.paths]
    dest = tmp_path / "merged.db"
    ws = await _open(reps.paths)
    try:
        await _merge_twice(ws, str(dest), OpenOptions(create="flux"))
    finally:
        await ws.close()
    for sid in reps.routes:
        held = await FluxSession(str(dest), session_id=sid).get_messages()
        assert user_texts(held) == reps.texts(sid), sid
    assert [snapshot(p) for p in reps.paths] == before
    # The replica that served turn 4 (c) never saw the PO; the consolidated session does.
    for path, sees in ((reps.paths[2], False), (dest, True)):
        model = FixedModel("ok")
        await FluxRunner.run(FluxAgent(name="a", instructions="x"), "what's the total?",
                             session=FluxSession(str(path), session_id="user_123"), model=model)
        sent = " ".join(m.content or "" for m in model.requests[0].messages)
        assert (PO in sent) is sees


async def test_the_agents_sdk_resumed_on_the_consolidated_session_is_sent_the_po(tmp_path):
    from agents import Agent, Runner, SQLiteSession
    from responses_server import ResponsesServer, sdk_model

    reps = await agents_replicas(tmp_path, sessions=1)
    dest = tmp_path / "merged.db"
    ws = await _open(reps.paths)
    try:
        await _merge_twice(ws, str(dest), OpenOptions(create="agents"))
    finally:
        await ws.close()
    for path, sees in ((reps.paths[2], False), (dest, True)):
        session = SQLiteSession("user_123", str(path))
        try:
            with ResponsesServer() as server:
                async with sdk_model(server) as model:
                    await Runner.run(Agent(name="a", instructions="x", model=model),
                                     "what's the total?", session=session)
                sent = str(server.requests[0]["input"])
        finally:
            session.close()
        assert (PO in sent) is sees, path


async def test_a_conflicting_destination_session_is_never_overwritten(tmp_path):
    reps = await agents_replicas(tmp_path, sessions=1)
    dest = tmp_path / "merged.db"
    await agents_add(dest, "user_123", [{"role": "user", "content": "someone else's"}], minute(99))
    ws = await _open(reps.paths)
    try:
        store = await open_store(str(dest), writable=True)
        try:
            skipped = await write_merge(ws, store, await plan_merge(ws, store, ["user_123"]))
            assert [(s.action, s.written) for s in skipped.sessions] == [("conflict", 0)]
            assert user_texts(await agents_items(dest, "user_123")) == ["someone else's"]
            renamed = await write_merge(
                ws, store, await plan_merge(ws, store, ["user_123"], on_conflict="rename"),
                on_conflict="rename",
            )
            assert [(s.action, s.written_as) for s in renamed.sessions] == [("rename", "user_123-2")]
            again = await plan_merge(ws, store, ["user_123"], on_conflict="rename")
            assert [(s.action, s.written_as) for s in again.sessions] == [("same", "user_123-2")]
        finally:
            await store.close()
    finally:
        await ws.close()
    assert user_texts(await agents_items(dest, "user_123")) == ["someone else's"]
    assert user_texts(await agents_items(dest, "user_123-2")) == reps.texts("user_123")


async def test_a_replica_is_never_the_destination(tmp_path):
    reps = await agents_replicas(tmp_path, sessions=1)
    before = snapshot(reps.paths[0])
    ws = await _open(reps.paths)
    try:
        store = await open_store(str(reps.paths[0]), writable=True)
        try:
            with pytest.raises(TargetError, match="one of the stores merged"):
                await plan_merge(ws, store)
        finally:
            await store.close()
    finally:
        await ws.close()
    assert snapshot(reps.paths[0]) == before


async def test_a_flux_store_and_an_agents_store_merge_into_one_format(tmp_path):
    """A team moved from flux's SQLite file to the Agents SDK and kept the old file: the
    session's first turns are flux rows, the later ones items; the merge converts them
    as ``copy`` does."""
    from workspace_helpers import flux_add

    old, new = tmp_path / "old" / "flux.db", tmp_path / "new" / "agents.db"
    old.parent.mkdir()
    new.parent.mkdir()
    await flux_add(old, "user_123", [{"role": "user", "content": f"order {PO}"},
                                     {"role": "assistant", "content": "noted"}], minute(1))
    await agents_add(new, "user_123", [{"role": "user", "content": "the total?"}], minute(2))
    dest = tmp_path / "merged.db"
    ws = await _open([old, new])
    try:
        await _merge_twice(ws, str(dest), OpenOptions(create="agents"))
    finally:
        await ws.close()
    items = await agents_items(dest, "user_123")
    assert user_texts(items) == [f"order {PO}", "the total?"]
    assert len(items) == 3


async def test_encrypted_replicas_merge_sealed_again_for_the_destination(tmp_path):
    """EncryptedSession replicas read with their key and written into a destination
    opened with it: the library reads the consolidated session through its key."""
    from agents import SQLiteSession
    from agents.extensions.memory import EncryptedSession

    key = "replica key 36"

    async def add(path: Path, text: str, when: str) -> None:
        inner = SQLiteSession("u", str(path))
        try:
            await EncryptedSession(session_id="u", underlying_session=inner, encryption_key=key,
                                   ttl=10**9).add_items([{"role": "user", "content": text}])
        finally:
            inner.close()
        import sqlite3

        conn = sqlite3.connect(str(path))
        conn.execute("UPDATE agent_messages SET created_at = ? WHERE id = (SELECT max(id) FROM agent_messages)", (when,))
        conn.commit()
        conn.close()

    a, b, dest = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "merged.db"
    await add(a, f"order {PO}", minute(1))
    await add(b, "ship it", minute(2))
    await add(a, "the total?", minute(3))
    ws = await Workspace.open([Entry(str(a)), Entry(str(b))], OpenOptions(key=key, ttl=10**9), keyring=False)
    try:
        await _merge_twice(ws, str(dest), OpenOptions(create="agents", key=key, ttl=10**9))
    finally:
        await ws.close()
    inner = SQLiteSession("u", str(dest))
    try:
        read = await EncryptedSession(session_id="u", underlying_session=inner, encryption_key=key,
                                      ttl=10**9).get_items()
        assert user_texts(list(read)) == [f"order {PO}", "ship it", "the total?"]
        assert PO not in str(await inner.get_items())  # sealed, not in the clear
    finally:
        inner.close()
