"""Postgres at scale, never written: the flux session list walks by id (no GROUP BY over
the table), a missing index is named with the exact CREATE INDEX (never run), and a
``pg_trgm`` GIN index on the text column sends search to the server — with the same hits
as a scan. Stores are written by the real ``SQLAlchemySession`` (Agents SDK) or by
fluxgui's own flux writer (flux has no Postgres writer of its own)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from helpers import cli_env

from fluxgui.adapters import open_store
from fluxgui.adapters.sql import textsearch
from fluxgui.core.ports import OpenOptions
from fluxgui.services.index import full_scan, scan, search

pytestmark = pytest.mark.postgres

TEXTS = ["Order A-1234 refunded", "STRASSE und Straße", "emoji 😀 party", "مرحبا hello",
         "bell \x07 and 'quotes' \"NEAR\"", "plain words only"]


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))


async def pg(url: str, sql: str) -> list[Any]:
    import asyncpg

    conn = await asyncpg.connect(url.replace("+asyncpg", ""))
    try:
        return list(await conn.fetch(sql))
    finally:
        await conn.close()


async def trigram_index(url: str, fmt: str, name: str) -> tuple[str, str]:
    """Create the pg_trgm GIN index a DBA would on the format's text column (its table
    and column)."""
    column = ("agent_messages", "message_data") if fmt == "agents" else ("messages", "content")
    await pg(url, "CREATE EXTENSION IF NOT EXISTS pg_trgm")
    await pg(url, f"CREATE INDEX {name} ON {column[0]} USING gin ({column[1]} gin_trgm_ops)")
    return column


async def snapshot(url: str) -> tuple[Any, ...]:
    """What the database holds: its tables' rows and its indexes."""
    tables = [r[0] for r in await pg(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")]
    rows = [tuple(tuple(r) for r in await pg(url, f'SELECT * FROM "{t}" ORDER BY 1, 2')) for t in tables]
    indexes = await pg(url, "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1")
    return tuple(tables), tuple(rows), tuple(r[0] for r in indexes)


async def write_agents(url: str, sessions: int = 8) -> None:
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    try:
        for i in range(sessions):
            s = SQLAlchemySession(f"s{i}", engine=engine, create_tables=True)
            await s.add_items([{"role": "user", "content": TEXTS[(i + j) % len(TEXTS)]}  # type: ignore[misc]
                               for j in range(3)])
    finally:
        await engine.dispose()


async def write_flux(url: str, sessions: int = 8) -> None:
    store = await open_store(url, OpenOptions(create="flux"))
    try:
        for round_ in range(3):
            for i in range(sessions):
                await store.writer.add_messages(f"f{i}", [{"role": "user", "content": TEXTS[(i + round_) % len(TEXTS)]}])
    finally:
        await store.close()


def hits(result: Any) -> list[tuple[Any, ...]]:
    return sorted((h.session_id, h.message_id or -1, h.snippet, h.start, h.length) for h in result.hits)


async def test_flux_pages_by_activity_and_names_a_missing_index(pg_url: str) -> None:
    await write_flux(pg_url)
    # the last round wrote f0..f7 in order: most recent first is f7..f0
    store = await open_store(pg_url)
    try:
        assert await store.index_advice() == []
        page = await store.reader.list_sessions(limit=3)
        assert [s.id for s in page.sessions] == ["f7", "f6", "f5"]
        assert [s.messages for s in page.sessions] == [3, 3, 3]
        rest = await store.reader.list_sessions(limit=10, cursor=page.cursor)
        assert [s.id for s in rest.sessions] == ["f4", "f3", "f2", "f1", "f0"]
    finally:
        await store.close()
    # the index a hand-made table may lack
    await pg(pg_url, "DROP INDEX idx_session")
    await pg(pg_url, "CREATE INDEX only_sid ON messages (session_id)")
    before = await snapshot(pg_url)
    store = await open_store(pg_url)
    try:
        [advice] = await store.index_advice()
        assert 'CREATE INDEX CONCURRENTLY "messages_session_id_id" ON "messages" ("session_id", "id");' in advice
        assert [s.id for s in (await store.reader.list_sessions(limit=3)).sessions] == ["f7", "f6", "f5"]
    finally:
        await store.close()
    out = subprocess.run([sys.executable, "-m", "fluxgui", "ls", pg_url], capture_output=True,
                         text=True, env={**cli_env(), **{k: os.environ[k] for k in ("FLUXGUI_CACHE_DIR",)}})
    assert out.returncode == 0 and out.stderr.count("CREATE INDEX CONCURRENTLY") == 1
    assert await snapshot(pg_url) == before  # never run, nothing written


@pytest.mark.parametrize("fmt", ["agents", "flux"])
async def test_a_trigram_index_sends_search_to_the_server(pg_url: str, fmt: str) -> None:
    await (write_agents(pg_url) if fmt == "agents" else write_flux(pg_url))
    column = ("agent_messages", "message_data") if fmt == "agents" else ("messages", "content")
    store = await open_store(pg_url)
    try:
        assert await store.server_index.server_text_index() is None
        plain = await search(store, "straße")
        assert plain.path == "scan" and "gin_trgm_ops" in plain.notes[0]
        assert f'ON "{column[0]}" USING gin ("{column[1]}" gin_trgm_ops)' in plain.notes[0]
    finally:
        await store.close()
    await trigram_index(pg_url, fmt, "trgm_19")
    before = await snapshot(pg_url)
    store = await open_store(pg_url)
    try:
        assert await store.server_index.server_text_index() == "trgm_19"
        for needle in ("straße", "STRASSE", "a-1234", "😀 party", "مرحبا", "\"near\"", "nothing here"):
            result = await search(store, needle)
            assert result.path == "server"
            assert result.hits == (await full_scan(store, needle)).hits, needle
        assert len((await search(store, "straße")).hits) >= 4
    finally:
        await store.close()
    out = subprocess.run([sys.executable, "-m", "fluxgui", "search", pg_url, "a-1234", "--json"],
                         capture_output=True, text=True,
                         env={**cli_env(), "FLUXGUI_CACHE_DIR": os.environ["FLUXGUI_CACHE_DIR"]})
    assert out.returncode == 0 and json.loads(out.stdout)["path"] == "server"
    assert await snapshot(pg_url) == before


@pytest.mark.parametrize("fmt", ["agents", "flux"])
async def test_the_windows_search_goes_to_the_servers_index(pg_url: str, fmt: str) -> None:
    # The session list's search (found_session_ids) on a store whose server has a trigram
    # index: the same sessions as the store's own search (a scan), message hits from the
    # server's candidates (with the message to open at), session ids matched too.
    from fluxgui.services.index import found_session_ids

    await (write_agents(pg_url) if fmt == "agents" else write_flux(pg_url))
    store = await open_store(pg_url, OpenOptions(writable=True))
    try:
        await store.writer.add_messages("ticket-9981", [{"role": "user", "content": "plain words only"}])
    finally:
        await store.close()
    await trigram_index(pg_url, fmt, "trgm_19w")
    before = await snapshot(pg_url)
    store = await open_store(pg_url)
    try:
        for needle in ("straße", "STRASSE", "a-1234", "😀 party", "مرحبا", "ticket-99", "9981", "nothing here"):
            hits: dict[str, int] = {}
            found = [sid async for sid in found_session_ids(store, needle, hits)]
            scanned = [sid async for sid in store.reader.search_session_ids(needle)]
            assert sorted(found) == sorted(scanned) and len(found) == len(set(found)), needle
            oldest: dict[str, int] = {}
            for h in (await scan(store, needle)).hits:
                if h.message_id is not None:
                    oldest[h.session_id] = min(h.message_id, oldest.get(h.session_id, h.message_id))
            assert hits == oldest, needle  # each session opens at its first match
        assert "ticket-9981" in [sid async for sid in found_session_ids(store, "ticket-99")]
        # ls --search takes the same road (no local index), in the store's order
        from fluxgui.cli.search import search_sessions

        for needle in ("straße", "ticket-99", "nothing here"):
            ours = [i.id for i in await search_sessions(store, needle, None)]
            assert ours == [i.id for i in await store.reader.search_sessions(needle)], needle
    finally:
        await store.close()
    out = subprocess.run([sys.executable, "-m", "fluxgui", "ls", pg_url, "--search", "straße", "--json"],
                         capture_output=True, text=True,
                         env={**cli_env(), "FLUXGUI_CACHE_DIR": os.environ["FLUXGUI_CACHE_DIR"]})
    assert out.returncode == 0 and "scanning" not in out.stderr and json.loads(out.stdout)["sessions"]
    assert await snapshot(pg_url) == before


async def test_the_local_index_of_a_postgres_store(pg_url: str) -> None:
    await write_agents(pg_url)
    before = await snapshot(pg_url)
    store = await open_store(pg_url)
    try:
        from fluxgui.services.index import update_index

        await update_index(store)
        for needle in ("straße", "😀 party", "a-1234"):
            result = await search(store, needle, use="index", update=False)
            assert result.path == "index"
            assert result.hits == (await full_scan(store, needle)).hits
    finally:
        await store.close()
    assert await snapshot(pg_url) == before
    asyncio.get_running_loop()


@pytest.mark.parametrize("fmt", ["agents", "flux"])
async def test_a_limited_server_search_pages_by_id_and_keeps_the_order(
    pg_url: str, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 360 rows, 120 of them hold "ord" ("Order …", "plain words …"); with small first
    # pages (one candidate per hit wanted) most limits need the rest streamed after it
    await (write_agents(pg_url, 120) if fmt == "agents" else write_flux(pg_url, 120))
    await trigram_index(pg_url, fmt, "trgm_19p")
    store = await open_store(pg_url)
    try:
        full = await search(store, "ORD")
        assert full.path == "server" and len(full.hits) == 120 and not full.truncated
        ids = [h.message_id for h in full.hits]
        assert ids == sorted(ids, reverse=True)  # newest first
        # windows of newest rows read one by one: all rows, a few (the rest through the
        # index's ids), none but the newest
        for small_pages, window in [(p, w) for p in (False, True) for w in (2_000, 40, 1)]:
            monkeypatch.setattr(textsearch, "_MIN_WINDOW", window)
            monkeypatch.setattr(textsearch, "_MAX_WINDOW", window)
            if small_pages:
                monkeypatch.setattr(textsearch, "_FIRST_PAGE_PER_HIT", 1)
                monkeypatch.setattr(textsearch, "_MIN_PAGE", 2)
            for limit in (1, 7, 70, 119, 120, 200):
                part = await search(store, "ORD", limit=limit)
                assert part.path == "server"
                assert [h.message_id for h in part.hits] == ids[:limit], (limit, window)
                assert part.truncated == (limit < 120), (limit, window)
        # candidates the check turns down (the JSON's keys, not its text) are read past
        none = await search(store, "content" if fmt == "agents" else "xyzzy", limit=5)
        assert none.path == "server" and none.hits == [] and not none.truncated
    finally:
        await store.close()
