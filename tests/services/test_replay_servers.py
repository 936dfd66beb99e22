"""Replay and eval datasets on the server stores (issue 38): a session written by the
Agents SDK's ``SQLAlchemySession`` on PostgreSQL and by its ``RedisSession``, replayed
with a scripted loopback model; the fork reads back in the library, the original is
unchanged, and the eval items are the assistant turns."""

from __future__ import annotations

from typing import Any

from doctor_helpers import AlchemySessions
from helpers import REDIS_URL
from replay_helpers import CALLS, SID, ScriptedServer, agents_items, faithful_script

from fluxgui.adapters import open_store
from fluxgui.core.ports import OpenOptions
from fluxgui.services.chat import AgentConfig
from fluxgui.services.evals import collect
from fluxgui.services.replay import ReplayOptions, replay

RECORDED = [out for n in (1, 2) for _c, _name, _a, out in CALLS[n]]


async def _replay_and_check(store: Any, session_of: Any) -> None:
    before = await session_of(SID).get_items()
    with ScriptedServer(faithful_script()) as server:
        config = AgentConfig(provider="openai", model="scripted", base_url=server.base_url, timeout=20)
        report = await replay(store, SID, 2, ReplayOptions(config))
    assert report.to_json()["tool_calls"] == {"matched": 2, "unmatched": 0} and report.stopped is None
    assert await session_of(SID).get_items() == before
    items = await session_of(report.fork).get_items()
    outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
    assert outputs == RECORDED  # turn 1 as recorded, turn 2 answered from the record
    texts = [i["content"][0]["text"] for i in items if i.get("type") == "message"]
    assert texts[-2:] == ["replayed answer 2", "replayed answer 3"]
    got, result = await collect(store, [SID])
    assert result.items == len(got) == 3 and not result.left_out


async def test_replay_on_postgres(pg_url):
    sessions = AlchemySessions(pg_url)
    try:
        await sessions(SID).add_items(agents_items())
        store = await open_store(pg_url, writable=True)
        try:
            await _replay_and_check(store, sessions)
        finally:
            await store.close()
    finally:
        await sessions.dispose()


async def test_replay_on_redis(redis_prefix):
    import redis.asyncio as aioredis
    from agents.extensions.memory import RedisSession

    client = aioredis.from_url(REDIS_URL)

    def session_of(sid: str) -> Any:
        return RedisSession(sid, redis_client=client, key_prefix=redis_prefix)

    try:
        await session_of(SID).add_items(agents_items())  # type: ignore[arg-type]
        store = await open_store(REDIS_URL, OpenOptions(key_prefix=redis_prefix, writable=True))
        try:
            await _replay_and_check(store, session_of)
        finally:
            await store.close()
    finally:
        await client.aclose()
