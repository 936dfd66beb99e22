"""What the window uses around a replay (``services/replay/support.py``): the turn of a
message, a replay that a stop event cancels (it ends once the turn being written is
written, the fork keeping whole turns), and the fork as one undoable change — its undo
deletes the whole fork, its redo writes it back — on stores written by the libraries:
Agents SDK on PostgreSQL and Redis, a JSON session folder."""

from __future__ import annotations

import asyncio
from typing import Any

from doctor_helpers import AlchemySessions
from helpers import REDIS_URL
from json_helpers import hello_entry, hello_history, hello_load, hello_save
from replay_helpers import CALLS, SID, USERS, ScriptedServer, agents_items, faithful_script, flux_messages

from fluxgui.adapters import open_store
from fluxgui.core.ports import OpenOptions
from fluxgui.services import edits
from fluxgui.services.chat import AgentConfig
from fluxgui.services.doctor.reading import read_messages
from fluxgui.services.replay import ReplayEvent, ReplayOptions
from fluxgui.services.replay.support import fork_as_change, replay_label, replay_until, turns_from


def _openai(server: ScriptedServer) -> ReplayOptions:
    return ReplayOptions(AgentConfig(provider="openai", model="scripted", base_url=server.base_url, timeout=20))


async def _undoable_fork(store: Any, read: Any) -> None:
    """Replay from turn 2, the fork as a change; undo deletes it whole, redo restores it."""
    with ScriptedServer(faithful_script()) as server:
        outcome = await replay_until(asyncio.Event(), store, SID, 2, _openai(server), lambda e: None)
    assert outcome.report is not None and outcome.report.replayed_turns == 2
    fork = outcome.fork
    assert fork is not None
    made = await read(fork)
    change = await fork_as_change(store, fork, replay_label(SID, 2, fork))
    assert change.label == f'Replay "{SID}" from turn 2 into "{fork}"'
    assert await read(fork) == made  # written back exactly
    await edits.undo(store, change)
    assert await read(fork) == []
    await edits.redo(store, change)
    assert await read(fork) == made


async def test_the_turn_of_a_message_and_a_cancel_that_keeps_whole_turns(tmp_path):
    folder = tmp_path / "sessions"
    hello_save(folder, SID, [hello_entry(m["role"], m["content"], metadata=m.get("metadata")) for m in flux_messages()])
    store = await open_store(f"{folder}/", writable=True)
    try:
        msgs = await read_messages(store, SID)
        users = [m for m in msgs if m.role == "user"]
        assert await turns_from(store, SID, users[1].id) == (2, 2)
        assert await turns_from(store, SID, msgs[0].id) == (None, 0)  # the system message
        stop = asyncio.Event()
        seen: list[ReplayEvent] = []

        def on_event(event: ReplayEvent) -> None:
            seen.append(event)
            if event.kind == "turn_done":
                stop.set()  # cancel once turn 1 is written: turn 2 is under way then

        with ScriptedServer(faithful_script()) as server:
            outcome = await replay_until(stop, store, SID, 1, _openai(server), on_event)
    finally:
        await store.close()
    assert outcome.cancelled and outcome.report is None and outcome.error is None
    assert outcome.replayed_turns == 1 and outcome.fork == f"{SID}-fork"
    fork = hello_history(hello_load(folder / f"{SID}-fork.json"))
    assert [m.content for m in fork if m.role == "user"] == USERS[:1]
    assert [m.content for m in fork if m.role == "tool"] == [CALLS[1][0][3]]


async def test_a_failure_is_an_outcome_and_an_empty_fork_is_not_kept(tmp_path):
    folder = tmp_path / "sessions"
    hello_save(folder, SID, [hello_entry(m["role"], m["content"], metadata=m.get("metadata")) for m in flux_messages()])
    store = await open_store(f"{folder}/", writable=True)
    try:
        with ScriptedServer({USERS[0]: ["!fail"]}) as server:
            outcome = await replay_until(asyncio.Event(), store, SID, 1, _openai(server), lambda e: None)
    finally:
        await store.close()
    assert outcome.error is not None and "no fork was kept" in str(outcome.error)
    assert outcome.fork is None and not (folder / f"{SID}-fork.json").exists()


async def test_the_fork_as_one_change_on_a_json_folder(tmp_path):
    folder = tmp_path / "sessions"
    hello_save(folder, SID, [hello_entry(m["role"], m["content"], metadata=m.get("metadata")) for m in flux_messages()])
    store = await open_store(f"{folder}/", writable=True)

    async def read(sid: str) -> list[Any]:
        path = folder / f"{sid}.json"
        return [(m.role, m.content) for m in hello_history(hello_load(path))] if path.exists() else []

    try:
        await _undoable_fork(store, read)
    finally:
        await store.close()


async def test_the_fork_as_one_change_on_postgres(pg_url):
    sessions = AlchemySessions(pg_url)
    try:
        await sessions(SID).add_items(agents_items())
        store = await open_store(pg_url, writable=True)
        try:
            await _undoable_fork(store, lambda sid: sessions(sid).get_items())
        finally:
            await store.close()
    finally:
        await sessions.dispose()


async def test_the_fork_as_one_change_on_redis(redis_prefix):
    import redis.asyncio as aioredis
    from agents.extensions.memory import RedisSession

    client = aioredis.from_url(REDIS_URL)

    async def read(sid: str) -> list[Any]:
        return list(await RedisSession(sid, redis_client=client, key_prefix=redis_prefix).get_items())

    try:
        await RedisSession(SID, redis_client=client, key_prefix=redis_prefix).add_items(agents_items())  # type: ignore[arg-type]
        store = await open_store(REDIS_URL, OpenOptions(key_prefix=redis_prefix, writable=True))
        try:
            await _undoable_fork(store, read)
        finally:
            await store.close()
    finally:
        await client.aclose()


async def test_a_stop_before_the_fork_is_made_still_names_the_fork(tmp_path):
    folder = tmp_path / "sessions"
    hello_save(folder, SID, [hello_entry(m["role"], m["content"], metadata=m.get("metadata")) for m in flux_messages()])
    store = await open_store(f"{folder}/", writable=True)
    try:
        stop = asyncio.Event()
        stop.set()  # Cancel pressed at once: the fork is still made, and known
        with ScriptedServer(faithful_script()) as server:
            outcome = await replay_until(stop, store, SID, 2, _openai(server), lambda e: None)
    finally:
        await store.close()
    assert outcome.cancelled and outcome.fork == f"{SID}-fork" and outcome.replayed_turns == 0
    fork = hello_history(hello_load(folder / f"{SID}-fork.json"))
    assert [m.content for m in fork if m.role == "user"] == USERS[:2]  # up to turn 2's user message
