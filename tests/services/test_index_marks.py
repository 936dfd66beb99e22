"""A store followed by change markers (Redis) whose marker does not move for a change
(issue 33.12): ``RedisSession.pop_item`` leaves ``updated_at`` alone and ``add_items``
writes whole seconds, so a pop and an add within one second keep count and time. The
index must still see the new text and forget the popped one."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxgui.adapters import open_store
from fluxgui.core.ports import OpenOptions
from fluxgui.services.index import scan, search, update_index


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(tmp_path / "cache"))


def found(result) -> list[tuple[str, int | None]]:
    return sorted((h.session_id, h.message_id) for h in result.hits)


async def test_a_pop_and_an_add_within_one_second_are_seen(redis_prefix: str) -> None:
    import redis.asyncio as aioredis
    from agents.extensions.memory import RedisSession
    from helpers import REDIS_URL

    client = aioredis.from_url(REDIS_URL)
    store = await open_store(REDIS_URL, OpenOptions(key_prefix=redis_prefix))
    same_second = 0
    try:
        for run in range(5):
            agent = RedisSession(f"agent-{run}", redis_client=client, key_prefix=redis_prefix)
            await agent.add_items([{"role": "user", "content": "question"},  # type: ignore[list-item]
                                   {"role": "user", "content": f"draft answer {run}"}])
            await update_index(store)
            assert found(await search(store, f"draft answer {run}", use="index", update=False))
            stamp = await client.hget(f"{redis_prefix}:agent-{run}", "updated_at")
            # the agent takes its last item back and writes another in its place
            await agent.pop_item()
            await agent.add_items([{"role": "user", "content": f"final answer {run}"}])  # type: ignore[list-item]
            same_second += stamp == await client.hget(f"{redis_prefix}:agent-{run}", "updated_at")
            await update_index(store)
            for needle in (f"final answer {run}", f"draft answer {run}", "question"):
                indexed = await search(store, needle, use="index", update=False)
                assert found(indexed) == found(await scan(store, needle)), (run, needle)
            assert found(await search(store, f"final answer {run}", use="index", update=False)) == [
                (f"agent-{run}", 2)]
            assert not (await search(store, f"draft answer {run}", use="index", update=False)).hits
    finally:
        await store.close()
        await client.aclose()
    assert same_second, "no run had its pop and add within one second: the case was not tested"
