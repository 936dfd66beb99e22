"""Compaction items (``{"type": "compaction", "encrypted_content": …}``) in the stores that
hold them: written by the Agents SDK itself — ``OpenAIResponsesCompactionSession`` against
a loopback ``responses.compact`` (tests/conversations_server.py), and ``add_items`` of the
real sessions on SQLite, Postgres, Redis and AdvancedSQLiteSession — then read as kind
``compaction``, their turns numbered from them, and kept unchanged through export, import
and copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from agents.extensions.memory import AdvancedSQLiteSession
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from agents.memory.openai_responses_compaction_session import (
    OpenAIResponsesCompactionSession,
    select_compaction_candidate_items,
)
from conversations_server import API_KEY, conv_server  # noqa: F401 - a fixture
from helpers import all_messages

from fluxgui.adapters import open_store
from fluxgui.core.items import compaction_candidates, is_compaction_item
from fluxgui.core.model import is_compaction
from fluxgui.core.turns import turn_numbers
from fluxgui.services.export import export_sessions
from fluxgui.services.transfer import copy_sessions, import_files, open_copy_target, open_import_target

SID = "compacted"
COMPACTION = {
    "id": "cmp_0123", "type": "compaction", "created_by": "resp_abc",
    "encrypted_content": "gAAAAABn" + "Q" * 1200,
}
ITEMS: list[dict[str, Any]] = [
    {"role": "user", "content": "first question"},
    {"type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "first answer", "annotations": []}]},
    {"role": "user", "content": "second question"},
    COMPACTION,
    {"role": "user", "content": "after the compaction"},
    {"type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "fine", "annotations": []}]},
    {"role": "user", "content": "and again"},
]


def test_the_predicate_is_the_sdks():
    assert is_compaction_item(COMPACTION)
    assert not is_compaction_item({"type": "message", "role": "user", "content": "compaction"})
    assert not is_compaction_item("compaction")
    assert compaction_candidates(ITEMS) == select_compaction_candidate_items(ITEMS)
    assert COMPACTION not in compaction_candidates(ITEMS)


async def test_what_the_compaction_session_writes_is_a_compaction(conv_server, tmp_path):
    from openai import AsyncOpenAI

    path = tmp_path / "agents.db"
    client = AsyncOpenAI(base_url=conv_server.base_url, api_key=API_KEY)
    underlying = SQLiteSession(SID, str(path))
    try:
        session = OpenAIResponsesCompactionSession(SID, underlying, client=client)
        await session.add_items(ITEMS[:3])
        await session.run_compaction({"force": True})
        await session.add_items([{"role": "user", "content": "new turn"}])
        stored = await session.get_items()
    finally:
        underlying.close()
        await client.close()
    assert [i.get("type") for i in stored] == ["message", "message", "compaction", None]
    async with await open_store(str(path)) as store:
        got = await all_messages(store, SID)
        assert [m.raw for m in got] == stored
        compaction = got[2]
        assert (compaction.kind, compaction.role, compaction.text) == ("compaction", "compaction", "")
        # Turns after it are numbered from it.
        assert turn_numbers(got) == [1, 2, 0, 1]
        assert await store.reader.count_turns_before(SID, got[3].sort_key) == 0
        assert await store.reader.count_turns_before(SID, got[2].sort_key) == 2


async def _sqlite(tmp_path: Path) -> str:
    path = tmp_path / "agents.db"
    session = SQLiteSession(SID, str(path))
    try:
        await session.add_items(ITEMS)
    finally:
        session.close()
    return str(path)


async def _postgres(url: str) -> str:
    session = SQLAlchemySession.from_url(SID, url=url, create_tables=True)
    try:
        await session.add_items(ITEMS)
    finally:
        await session.engine.dispose()
    return url


async def _advanced(tmp_path: Path) -> str:
    path = tmp_path / "advanced.db"
    session = AdvancedSQLiteSession(session_id=SID, db_path=str(path), create_tables=True)
    try:
        await session.add_items(ITEMS)
    finally:
        session.close()
    return str(path)


@pytest.fixture(params=["sqlite", "postgres", "advanced"])
async def written(request, tmp_path) -> str:
    if request.param == "postgres":
        return await _postgres(request.getfixturevalue("pg_url"))
    if request.param == "advanced":
        return await _advanced(tmp_path)
    return await _sqlite(tmp_path)


async def test_add_items_compactions_read_as_such(written):
    async with await open_store(written) as store:
        got = await all_messages(store, SID)
        assert [m.raw for m in got] == ITEMS
        assert [m.kind for m in got].count("compaction") == 1
        assert [m.id for m in got if is_compaction(m)] == [got[3].id]
        # The store counts the turns before a message from the last compaction on.
        assert await store.reader.count_turns_before(SID, got[3].sort_key) == 2
        assert await store.reader.count_turns_before(SID, got[4].sort_key) == 0
        assert await store.reader.count_turns_before(SID, got[6].sort_key) == 1
        assert turn_numbers(got) == [1, 1, 2, 0, 1, 1, 2]


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
async def test_export_and_import_keep_it_unchanged(tmp_path, fmt):
    source = await _sqlite(tmp_path)
    async with await open_store(source) as store:
        out = tmp_path / f"out.{fmt}"
        await export_sessions(store, out, fmt)
    assert COMPACTION["encrypted_content"] in out.read_text(encoding="utf-8")
    new = tmp_path / "imported.db"
    async with await open_import_target(str(new), [out]) as dest:
        await import_files(dest, [out])
    session = SQLiteSession(SID, str(new))
    try:
        assert await session.get_items() == ITEMS
    finally:
        session.close()


async def test_copies_keep_it_unchanged(tmp_path, pg_url, redis_prefix):
    from agents.extensions.memory.redis_session import RedisSession
    from helpers import REDIS_URL

    source = await _sqlite(tmp_path)
    async with await open_store(source) as src:
        async with await open_copy_target(pg_url, src) as pg:
            await copy_sessions(src, pg)
        async with await open_copy_target(REDIS_URL, src, key_prefix=redis_prefix) as redis:
            await copy_sessions(src, redis)
    back = tmp_path / "back.db"
    async with await open_store(pg_url) as pg:
        async with await open_copy_target(str(back), pg) as dest:
            await copy_sessions(pg, dest)
    session = SQLiteSession(SID, str(back))
    try:
        assert await session.get_items() == ITEMS
    finally:
        session.close()
    lib = RedisSession.from_url(SID, url=REDIS_URL, key_prefix=redis_prefix)
    try:
        assert await lib.get_items() == ITEMS
    finally:
        await lib.close()


async def test_transcripts_say_what_it_is_and_never_show_its_content(tmp_path):
    source = await _sqlite(tmp_path)
    async with await open_store(source) as store:
        # (Markdown escapes the "_" of the id.)
        for fmt, by in (("md", "resp\\_abc"), ("html", "resp_abc")):
            out = tmp_path / f"out.{fmt}"
            await export_sessions(store, out, fmt)
            text = out.read_text(encoding="utf-8")
            assert f"Compacted history: 1.2 kB of encrypted content · created by {by} (opaque)" in text
            assert COMPACTION["encrypted_content"] not in text
            assert json.dumps(COMPACTION["encrypted_content"]) not in text
