"""One order of hits on every search path (README, *Search and the index*): hits on session
ids first, by session id; then messages newest first — by id where ids grow store-wide
(the SQL stores), elsewhere by session, most recently active first, each one's newest
first. So ``--limit N`` keeps the same hits whether the local index, the server's trigram
index or a scan answers (or reading every message, the baseline).

Stores are written by the real libraries (``flux.sessions.SQLiteSession``,
``agents.SQLiteSession``, ``SQLAlchemySession`` on Postgres, HelloAgent's session files).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from helpers import cli_env, write_agents, write_flux
from json_helpers import hello_entry, hello_save

from fluxgui.adapters import open_store
from fluxgui.services.index import full_scan, scan, search, update_index

# sessions written in this order, then a second round appended in reverse: the most
# recently active session is not the one holding the newest hit of every needle
SESSIONS = ["sess-b", "order-sess-a", "sess-c", "x-order"]
NEEDLES = ["order", "sess", "refund", "ORDER 1", "zz-none"]
LIMITS = [None, 1, 2, 3, 5, 8]


def _round(sid: str, r: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Order {r}{k} of {sid}: refund asked"} for k in range(2)] + [
        {"role": "assistant", "content": f"order {r} refund done ({sid})"},
    ]


async def write(kind: str, target: Path | str) -> None:
    rounds = [{sid: _round(sid, r) for sid in order} for r, order in enumerate([SESSIONS, SESSIONS[::-1]])]
    if kind in ("flux", "agents"):
        for data in rounds:
            await asyncio.to_thread(write_flux if kind == "flux" else write_agents, Path(target), data)
    elif kind == "json":  # a HelloAgent session folder: each save writes the whole history
        history: dict[str, list[dict[str, str]]] = {}
        for data in rounds:
            for sid, items in data.items():
                history.setdefault(sid, []).extend(items)
                hello_save(Path(target), sid, [hello_entry(m["role"], m["content"]) for m in history[sid]])
    else:
        from sqlalchemy.ext.asyncio import create_async_engine

        engine = create_async_engine(str(target))
        try:
            for data in rounds:
                for sid, items in data.items():
                    await SQLAlchemySession(sid, engine=engine, create_tables=True).add_items(items)  # type: ignore[arg-type]
        finally:
            await engine.dispose()


def listed(result: Any) -> list[tuple[Any, ...]]:
    return [(h.session_id, h.message_id, h.snippet, h.start, h.length) for h in result.hits]


def assert_the_order(result: Any, by_id: bool) -> None:
    on_ids = [h.session_id for h in result.hits if h.message_id is None]
    messages = [h for h in result.hits if h.message_id is not None]
    assert result.hits[: len(on_ids)] == [h for h in result.hits if h.message_id is None]
    assert on_ids == sorted(on_ids)
    if by_id:
        ids = [h.message_id for h in messages]
        assert ids == sorted(ids, reverse=True)
    else:  # by session (as listed), each newest first
        sessions = list(dict.fromkeys(h.session_id for h in messages))
        for sid in sessions:
            ids = [h.message_id for h in messages if h.session_id == sid]
            assert ids == sorted(ids, reverse=True)
            assert len(ids) == sum(1 for _ in ids)
        spans = [[i for i, h in enumerate(messages) if h.session_id == sid] for sid in sessions]
        assert all(s == list(range(s[0], s[-1] + 1)) for s in spans)  # each session together


async def assert_paths_agree(store: Any, paths: dict[str, Any]) -> None:
    by_id = store.feed is not None
    for needle in NEEDLES:
        every = await full_scan(store, needle)
        assert_the_order(every, by_id)
        if needle != "zz-none":
            assert any(h.message_id is None for h in every.hits) == (needle in ("order", "sess"))
            assert sum(h.message_id is not None for h in every.hits) > 3
        for limit in LIMITS:
            want = listed(every)[:limit]
            for name, run in paths.items():
                result = await run(needle, limit)
                assert result.path == name, (name, needle)
                assert listed(result) == want, (name, needle, limit)
                assert result.truncated == (limit is not None and len(every.hits) > limit)


@pytest.mark.parametrize("kind", ["flux", "agents", "json"])
async def test_index_and_scan_give_the_same_hits_for_every_limit(kind: str, tmp_path: Path) -> None:
    target = tmp_path / ("folder" if kind == "json" else "store.db")
    if kind == "json":
        target.mkdir()
    await write(kind, target)
    store = await open_store(str(target))
    try:
        await update_index(store)
        await assert_paths_agree(store, {
            "index": lambda n, lim: search(store, n, limit=lim, use="index", update=False),
            "scan": lambda n, lim: scan(store, n, limit=lim),
        })
    finally:
        await store.close()


@pytest.mark.postgres
async def test_index_server_and_scan_give_the_same_hits_for_every_limit(pg_url: str) -> None:
    await write("pg", pg_url)
    import asyncpg

    conn = await asyncpg.connect(pg_url.replace("+asyncpg", ""))
    try:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        await conn.execute("CREATE INDEX trgm_order ON agent_messages USING gin (message_data gin_trgm_ops)")
    finally:
        await conn.close()
    store = await open_store(pg_url)
    try:
        await update_index(store)
        await assert_paths_agree(store, {
            "index": lambda n, lim: search(store, n, limit=lim, use="index", update=False),
            "server": lambda n, lim: search(store, n, limit=lim),
            "scan": lambda n, lim: scan(store, n, limit=lim),
        })
    finally:
        await store.close()


def test_the_command_gives_the_same_hits_with_and_without_the_index(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    asyncio.run(write("flux", db))
    env = {**cli_env(), "FLUXGUI_CACHE_DIR": str(tmp_path / "cache"), "FLUXGUI_DATA_DIR": str(tmp_path / "data")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "fluxgui", *args], capture_output=True,
                              text=True, env=env, timeout=120)

    scanned = run("search", str(db), "order", "--limit", "5", "--json")
    # the scan is said on stderr, in one line, with --json too (it is in "notes" as well)
    assert scanned.returncode == 0
    assert scanned.stderr == "fluxgui: searched by scanning: no index yet (fluxgui index TARGET builds one)\n"
    assert run("index", str(db)).returncode == 0
    indexed = run("search", str(db), "order", "--limit", "5", "--json")
    assert indexed.returncode == 0 and indexed.stderr == ""
    a, b = json.loads(scanned.stdout), json.loads(indexed.stdout)
    assert (a["path"], b["path"]) == ("scan", "index")
    assert a["hits"] == b["hits"] and len(a["hits"]) == 5 and a["truncated"] and b["truncated"]
