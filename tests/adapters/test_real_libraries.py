"""fluxgui against the real writers: flux-agents and the OpenAI Agents SDK.

Stores are written by the libraries; what fluxgui shows is compared message by message with
what the library itself reads back. Then the other way: fluxgui writes, the library reads.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import asyncpg
import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages, all_sessions, sqlite_rows
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseFunctionWebSearch,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary

from fluxgui.adapters import open_store
from fluxgui.services.edits import insert_message


def _dump(model) -> dict:
    return model.model_dump(exclude_unset=True)


#: A conversation as the Agents SDK stores it (output items dumped as the SDK does).
AGENT_ITEMS: list[dict] = [
    {"role": "system", "content": "Be terse."},
    {"role": "user", "content": "Wie ist das Wetter in Zürich? ☀️ \"quoted\" 'single'"},
    _dump(
        ResponseReasoningItem(
            id="rs_1",
            type="reasoning",
            summary=[Summary(type="summary_text", text="Need the weather tool.")],
        )
    ),
    _dump(
        ResponseFunctionToolCall(
            type="function_call",
            call_id="call_1",
            name="get_weather",
            arguments=json.dumps({"city": "Zürich"}),
            id="fc_1",
            status="completed",
        )
    ),
    {"type": "function_call_output", "call_id": "call_1", "output": "22 °C, sunny"},
    _dump(
        ResponseFunctionWebSearch(
            id="ws_1", type="web_search_call", status="completed", action={"type": "search", "query": "Zürich"}
        )
    ),
    _dump(
        ResponseOutputMessage(
            id="msg_1",
            type="message",
            role="assistant",
            status="completed",
            content=[
                ResponseOutputText(type="output_text", text="It is 22 °C. 🌤", annotations=[]),
                ResponseOutputRefusal(type="refusal", refusal="No forecast beyond today."),
            ],
        )
    ),
    {"role": "user", "content": [{"type": "input_text", "text": "Danke! 日本語も"}]},
    {"type": "some_future_item", "payload": {"nested": [1, 2, {"x": None}]}},
]


async def assert_search_agrees_with_shown_text(store, queries: list[str]) -> None:
    """A session is found exactly when its id or the text shown for one of its messages
    contains the query, ignoring case."""
    shown = {
        s.id: [m.text for m in await all_messages(store, s.id)] for s in await all_sessions(store)
    }
    for query in queries:
        q = query.casefold()
        expected = {sid for sid, texts in shown.items() if q in sid.casefold() or any(q in t.casefold() for t in texts)}
        assert expected, f"the query {query!r} should find something in this data"
        found = [s.id for s in await store.reader.search_sessions(query)]
        assert sorted(found) == sorted(expected), query


# --------------------------------------------------------------------------- flux writes, fluxgui reads


FLUX_MESSAGES: dict[str, list[dict]] = {
    "flux-a": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Hallo, wie geht's? 👋"},
        {"role": "assistant", "content": "Gut!", "metadata": {"model": "m1", "tokens": 12, "ü": [1, 2]}},
        {"role": "tool", "content": "{\"temp\": 22}", "tool_call_id": "call_9", "name": "weather"},
        {"content": "no role given"},
        {"role": "assistant", "content": 42},
        {"role": "user", "content": "empty metadata", "metadata": {}},
    ],
    "flux-b": [
        {"role": "user", "content": "'; DROP TABLE messages; --"},
        {"role": "assistant", "content": "line one\nline two", "metadata": {"nested": {"deep": True}}},
    ],
    "flux-null": [
        {"role": "user", "content": "before"},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "after"},
    ],
}


async def write_flux(path: Path, messages: dict[str, list[dict]]) -> None:
    for sid, msgs in messages.items():
        await FluxSQLiteSession(str(path), session_id=sid).add_messages(msgs)


async def test_flux_sqlite_file_reads_as_flux_reads_it(tmp_path):
    path = tmp_path / "flux.db"
    await write_flux(path, FLUX_MESSAGES)
    async with await open_store(str(path)) as store:
        assert store.format == "flux"
        listed = await all_sessions(store)
        assert {s.id for s in listed} == set(FLUX_MESSAGES)
        for sid in FLUX_MESSAGES:
            theirs = await FluxSQLiteSession(str(path), session_id=sid).get_messages()
            ours = await all_messages(store, sid)
            assert len(ours) == len(theirs)
            assert {s.id: s.messages for s in listed}[sid] == len(theirs)
            for mine, ref in zip(ours, theirs):
                assert mine.role == ref["role"]
                assert mine.text == ("" if ref["content"] is None else ref["content"])
                assert mine.metadata == ref.get("metadata")
                assert mine.kind == ("tool_output" if ref["role"] == "tool" else "message")
            assert len({m.id for m in ours}) == len(ours)


async def test_flux_session_view_matches_flux_get_messages(tmp_path):
    path = tmp_path / "flux.db"
    await write_flux(path, FLUX_MESSAGES)
    async with await open_store(str(path)) as store:
        for sid in ("flux-a", "flux-b"):
            theirs = await FluxSQLiteSession(str(path), session_id=sid).get_messages()
            assert await store.session(sid).get_messages() == theirs
            # flux documents limit=N as the most recent N (its 0.2.0 SQLiteSession gives the
            # oldest N; fluxgui follows the documentation).
            for n in (1, 2, len(theirs)):
                assert await store.session(sid).get_messages(limit=n) == theirs[-n:]


async def test_flux_session_view_keeps_null_content(tmp_path):
    path = tmp_path / "flux.db"
    await write_flux(path, FLUX_MESSAGES)
    theirs = await FluxSQLiteSession(str(path), session_id="flux-null").get_messages()
    async with await open_store(str(path)) as store:
        assert await store.session("flux-null").get_messages() == theirs


async def test_flux_row_with_corrupt_metadata_is_kept(tmp_path):
    path = tmp_path / "flux.db"
    await write_flux(path, {"s": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]})
    # Corruption (hand SQL is the point here): metadata that is not JSON.
    conn = sqlite3.connect(path)
    conn.execute("UPDATE messages SET metadata = '{broken' WHERE content = 'b'")
    conn.commit()
    conn.close()
    with pytest.raises(json.JSONDecodeError):  # flux itself cannot read the session any more
        await FluxSQLiteSession(str(path), session_id="s").get_messages()
    async with await open_store(str(path)) as store:
        got = await all_messages(store, "s")
    assert [m.text for m in got] == ["a", "b"]
    assert [m.kind for m in got] == ["message", "other"]
    assert got[1].raw == "{broken"


# --------------------------------------------------------------------------- Agents SDK SQLiteSession


async def write_agents_sqlite(path: Path, sid: str, batches: list[list[dict]], **tables) -> list[dict]:
    session = AgentsSQLiteSession(sid, str(path), **tables)
    try:
        for batch in batches:
            await session.add_items(batch)
        return await session.get_items()
    finally:
        session.close()


async def agents_items(path: Path, sid: str, limit: int | None = None, **tables) -> list[dict]:
    session = AgentsSQLiteSession(sid, str(path), **tables)
    try:
        return await session.get_items(limit)
    finally:
        session.close()


async def test_agents_sqlite_file_raw_items_equal_get_items(tmp_path):
    path = tmp_path / "agents.db"
    refs = {
        "conv-1": await write_agents_sqlite(path, "conv-1", [AGENT_ITEMS[:4], AGENT_ITEMS[4:]]),
        "conv-2": await write_agents_sqlite(path, "conv-2", [AGENT_ITEMS[1:2]]),
        "conv-1-again": await write_agents_sqlite(path, "conv-1-again", [AGENT_ITEMS[::-1]]),
    }
    async with await open_store(str(path)) as store:
        assert store.format == "agents"
        listed = {s.id: s.messages for s in await all_sessions(store)}
        assert listed == {sid: len(items) for sid, items in refs.items()}
        for sid, items in refs.items():
            ours = await all_messages(store, sid, batch=3)
            assert [m.raw for m in ours] == items
            for n in (1, 3, len(items)):
                latest = await store.reader.latest_messages(sid, n)
                assert [m.raw for m in latest] == await agents_items(path, sid, n)
        await assert_search_agrees_with_shown_text(
            store, ["zürich", "ZÜRICH", "get_weather", "NO FORECAST", "日本語", "conv-1"]
        )
    # Kinds follow the SDK item types.
    expected_kind = {"function_call": "tool_call", "web_search_call": "tool_call",
                     "function_call_output": "tool_output", "reasoning": "reasoning",
                     "message": "message", "some_future_item": "other"}
    for m in ours:
        assert m.kind == expected_kind.get(m.raw.get("type"), "message"), m.raw


@pytest.mark.parametrize("detect", ["options", "auto"])
async def test_agents_sqlite_renamed_tables(tmp_path, detect):
    path = tmp_path / "renamed.db"
    tables = {"sessions_table": "conv_sessions", "messages_table": "conv_items"}
    ref = await write_agents_sqlite(path, "renamed", [AGENT_ITEMS[:5], AGENT_ITEMS[5:]], **tables)
    assert {r[0] for r in sqlite_rows(path, "SELECT name FROM sqlite_master WHERE type='table'")} >= {
        "conv_sessions",
        "conv_items",
    }
    options = tables if detect == "options" else {}
    async with await open_store(str(path), **options) as store:
        assert store.format == "agents"
        assert [s.id for s in await all_sessions(store)] == ["renamed"]
        assert [m.raw for m in await all_messages(store, "renamed")] == ref


async def test_agents_sqlite_default_and_renamed_tables_in_one_file(tmp_path):
    path = tmp_path / "both.db"
    tables = {"sessions_table": "team_sessions", "messages_table": "team_messages"}
    ref_default = await write_agents_sqlite(path, "in-default", [AGENT_ITEMS[:2]])
    ref_renamed = await write_agents_sqlite(path, "in-renamed", [AGENT_ITEMS[2:6]], **tables)
    async with await open_store(str(path)) as store:
        assert [s.id for s in await all_sessions(store)] == ["in-default"]
        assert [m.raw for m in await all_messages(store, "in-default")] == ref_default
    async with await open_store(str(path), **tables) as store:
        assert [s.id for s in await all_sessions(store)] == ["in-renamed"]
        assert [m.raw for m in await all_messages(store, "in-renamed")] == ref_renamed


@pytest.mark.parametrize("fmt", ["flux", "agents"])
async def test_a_virtual_table_this_sqlite_cannot_load_does_not_hide_the_store(tmp_path, fmt):
    # An agent that keeps embeddings beside its sessions (sqlite-vec's vec0 virtual
    # table): the libraries read their own tables and never touch it; this SQLite has no
    # vec0 module, so the table's columns cannot be read — the store must open all the
    # same. The schema row is the one sqlite-vec writes (its module cannot load here).
    path = tmp_path / "with-vectors.db"
    if fmt == "flux":
        await write_flux(path, {"s1": [{"role": "user", "content": "hello"}]})
        ref = await FluxSQLiteSession(str(path), session_id="s1").get_messages()
        expected = [(m["role"], m["content"]) for m in ref]
    else:
        ref = await write_agents_sqlite(path, "s1", [AGENT_ITEMS[:3]])
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute("INSERT INTO sqlite_master VALUES ('table', 'memories', 'memories', 0, "
                     "'CREATE VIRTUAL TABLE memories USING vec0(embedding float[4])')")
    conn.close()
    with sqlite3.connect(path) as conn, pytest.raises(sqlite3.OperationalError, match="vec0"):
        conn.execute("SELECT * FROM pragma_table_info('memories')").fetchall()
    conn.close()
    before = path.read_bytes()
    async with await open_store(str(path)) as store:
        assert store.format == fmt
        assert [s.id for s in await all_sessions(store)] == ["s1"]
        ours = await all_messages(store, "s1")
        if fmt == "flux":
            assert [(m.role, m.text) for m in ours] == expected
        else:
            assert [m.raw for m in ours] == ref
    assert path.read_bytes() == before


async def test_a_file_a_writer_holds_says_so_and_opens_once_it_is_done(tmp_path, monkeypatch):
    # A rollback-journal file (WAL, as the libraries write, never makes a reader wait)
    # while another process writes: "locked", not "not a readable SQLite database".
    from fluxgui.adapters.sql import sqlite as sqlite_backend
    from fluxgui.core.errors import StoreUnavailable

    path = tmp_path / "journal.db"
    ref = await write_agents_sqlite(path, "s1", [AGENT_ITEMS[:2]])
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    conn.close()
    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT", 0.2)
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StoreUnavailable) as caught:
            await open_store(str(path))
        assert "locked by another process" in str(caught.value) and "not a readable" not in str(caught.value)
        writer.execute("ROLLBACK")
    finally:
        writer.close()
    async with await open_store(str(path)) as store:
        assert [m.raw for m in await all_messages(store, "s1")] == ref


async def test_agents_pop_to_empty_session_is_listed_with_zero_messages(tmp_path):
    path = tmp_path / "pop.db"
    session = AgentsSQLiteSession("popped", str(path))
    try:
        await session.add_items(AGENT_ITEMS[:1])
        assert await session.pop_item() == AGENT_ITEMS[0]
        assert await session.get_items() == []
    finally:
        session.close()
    await write_agents_sqlite(path, "kept", [AGENT_ITEMS[:2]])
    async with await open_store(str(path)) as store:
        listed = {s.id: s.messages for s in await all_sessions(store)}
        assert listed == {"popped": 0, "kept": 2}
        info = await store.reader.require_session("popped")
        assert info.messages == 0
        assert await all_messages(store, "popped") == []
        assert await store.reader.page_messages("popped") == []


async def test_agents_row_with_invalid_json_is_kept_while_the_sdk_skips_it(tmp_path):
    path = tmp_path / "corrupt.db"
    await write_agents_sqlite(path, "c", [AGENT_ITEMS[:3]])
    bad = '{"role": "user", "content": "cut off'
    # Corruption (hand SQL is the point here): a row the SDK cannot parse, between good ones.
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)", ("c", bad))
    conn.commit()
    conn.close()
    ref = await write_agents_sqlite(path, "c", [AGENT_ITEMS[3:5]])
    assert len(ref) == 5  # the SDK skips the bad row
    async with await open_store(str(path)) as store:
        ours = await all_messages(store, "c")
        assert len(ours) == 6
        assert (await store.reader.require_session("c")).messages == 6
        odd = [m for m in ours if m.raw == bad]
        assert len(odd) == 1 and odd[0].kind == "other" and odd[0].text == bad
        assert ours.index(odd[0]) == 3
        assert [m.raw for m in ours if m.raw != bad] == ref


# --------------------------------------------------------------------------- SQLAlchemySession


@pytest.fixture(params=["postgres", "sqlite+aiosqlite"])
def sa_url(request, tmp_path) -> str:
    if request.param == "postgres":
        return request.getfixturevalue("pg_url")
    return f"sqlite+aiosqlite:///{tmp_path / 'sa.db'}"


async def sa_write(url: str, sid: str, batches: list[list[dict]], **kwargs) -> list[dict]:
    session = SQLAlchemySession.from_url(sid, url=url, create_tables=True, **kwargs)
    try:
        for batch in batches:
            await session.add_items(batch)
        return await session.get_items()
    finally:
        await session.engine.dispose()


async def sa_read(url: str, sid: str, limit: int | None = None) -> list[dict]:
    session = SQLAlchemySession.from_url(sid, url=url)
    try:
        return await session.get_items(limit)
    finally:
        await session.engine.dispose()


async def test_sqlalchemy_session_raw_items_equal_get_items(sa_url):
    refs = {
        "sa-1": await sa_write(sa_url, "sa-1", [AGENT_ITEMS[:3], AGENT_ITEMS[3:6]]),
        "sa-2": await sa_write(sa_url, "sa-2", [AGENT_ITEMS[6:]]),
        "sa-unicode": await sa_write(sa_url, "sa-unicode", [AGENT_ITEMS], ensure_ascii=False),
    }
    refs["sa-1"] = await sa_write(sa_url, "sa-1", [AGENT_ITEMS[6:]])
    async with await open_store(sa_url) as store:
        assert store.format == "agents"
        listed = await all_sessions(store, page_size=2)
        assert {s.id: s.messages for s in listed} == {sid: len(v) for sid, v in refs.items()}
        # sa-1 was written last (on SQLite its updated_at may tie with the others').
        assert listed[0].id == "sa-1"
        for sid, items in refs.items():
            assert [m.raw for m in await all_messages(store, sid, batch=2)] == items
            for n in (1, 4):
                latest = await store.reader.latest_messages(sid, n)
                assert [m.raw for m in latest] == await sa_read(sa_url, sid, n)
        await assert_search_agrees_with_shown_text(store, ["日本語", "ZÜRICH", "zürich", "22 °c", "FORECAST"])


async def test_sqlalchemy_session_rows_read_by_id_whatever_their_times(sa_url):
    """``SQLAlchemySession`` reads a session by ``id`` (openai-agents 0.25; 0.24 read it
    by ``(created_at, id)``): rows whose times disagree with their ids (a clock set back,
    a transaction that began first and committed last) read in the library's order,
    in pages and from the end, and an edit keeps that order."""
    from datetime import datetime

    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    items = await sa_write(sa_url, "clock", [AGENT_ITEMS[:3], AGENT_ITEMS[3:]])
    engine = create_async_engine(sa_url)
    try:
        async with engine.begin() as conn:
            # the first three rows stored a day later than the rest
            await conn.execute(text(
                "UPDATE agent_messages SET created_at = :t WHERE id IN "
                "(SELECT id FROM agent_messages ORDER BY id LIMIT 3)"), {"t": datetime(2099, 1, 2)})
    finally:
        await engine.dispose()
    assert await sa_read(sa_url, "clock") == items
    async with await open_store(sa_url, writable=True) as store:
        assert [m.raw for m in await all_messages(store, "clock", batch=2)] == items
        for n in (2, 5):
            latest = await store.reader.latest_messages("clock", n)
            assert [m.raw for m in latest] == await sa_read(sa_url, "clock", n) == items[-n:]
        second = (await all_messages(store, "clock"))[1]
        note = {"role": "user", "content": "put in after the second item"}
        await insert_message(store, "clock", note, anchor=second.id)
    assert await sa_read(sa_url, "clock") == [*items[:2], note, *items[2:]]


# --------------------------------------------------------------------------- fluxgui writes, libraries read


async def test_fluxgui_writes_flux_sqlite_as_flux_does(tmp_path):
    ours_path, ref_path = tmp_path / "ours.db", tmp_path / "reference.db"
    async with await open_store(str(ours_path), create="flux") as store:
        for sid, msgs in FLUX_MESSAGES.items():
            await store.session(sid).add_messages(msgs[:2])
            await store.writer.add_messages(sid, msgs[2:])
    await write_flux(ref_path, FLUX_MESSAGES)
    for sid in FLUX_MESSAGES:
        ours = await FluxSQLiteSession(str(ours_path), session_id=sid).get_messages()
        ref = await FluxSQLiteSession(str(ref_path), session_id=sid).get_messages()
        assert ours == ref
    # The rows themselves, not just flux's reading of them.
    query = "SELECT session_id, role, content, metadata FROM messages ORDER BY id"
    assert sqlite_rows(ours_path, query) == sqlite_rows(ref_path, query)


async def test_fluxgui_writes_agents_sqlite_as_the_sdk_does(tmp_path):
    ours_path, ref_path = tmp_path / "ours.db", tmp_path / "reference.db"
    async with await open_store(str(ours_path), create="agents") as store:
        await store.writer.add_messages("w", AGENT_ITEMS[:4])
        await store.session("w").add_messages(AGENT_ITEMS[4:])
    assert await agents_items(ours_path, "w") == AGENT_ITEMS
    await write_agents_sqlite(ref_path, "w", [AGENT_ITEMS])
    query = "SELECT session_id, message_data FROM agent_messages ORDER BY id"
    assert sqlite_rows(ours_path, query) == sqlite_rows(ref_path, query)
    # The SDK keeps writing into the store fluxgui made, and fluxgui reads it all in order.
    extra = [{"role": "user", "content": "from the SDK"}]
    ref = await write_agents_sqlite(ours_path, "w", [extra])
    assert ref == AGENT_ITEMS + extra
    async with await open_store(str(ours_path)) as store:
        assert [m.raw for m in await all_messages(store, "w")] == ref


async def test_fluxgui_flux_style_dicts_become_sdk_items(tmp_path):
    path = tmp_path / "mapped.db"
    msgs = [
        {"role": "user", "content": "plain user text"},
        {"role": "assistant", "content": "plain assistant text"},
        {"role": "tool", "content": "tool result", "tool_call_id": "call_7"},
    ]
    async with await open_store(str(path), create="agents") as store:
        await store.session("m").add_messages(msgs)
        view = await store.session("m").get_messages()
    items = await agents_items(path, "m")
    assert items[:2] == msgs[:2]
    assert items[2]["type"] == "function_call_output"
    assert items[2]["call_id"] == "call_7"
    assert items[2]["output"] == "tool result"
    assert [d["content"] for d in view] == [m["content"] for m in msgs]


async def test_fluxgui_makes_the_indexes_sqlalchemy_session_makes(pg_url):
    """The tables fluxgui makes on Postgres (``create="agents"``) carry the indexes the
    installed ``SQLAlchemySession`` makes on its own (0.25: ``(session_id, id)``)."""
    async with await open_store(pg_url, create="agents") as store:
        await store.writer.add_messages("pg", AGENT_ITEMS[:1])
    session = SQLAlchemySession.from_url(
        "pg", url=pg_url, create_tables=True, sessions_table="sdk_sessions", messages_table="sdk_messages"
    )
    try:
        await session.add_items(AGENT_ITEMS[:1])
    finally:
        await session.engine.dispose()
    conn = await asyncpg.connect(pg_url.replace("+asyncpg", ""))
    try:
        rows = await conn.fetch("SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = 'public'")
    finally:
        await conn.close()

    def made(prefix: str) -> set[str]:
        return {
            r["indexdef"].replace(f"{prefix}_", "T_") for r in rows if r["tablename"].startswith(f"{prefix}_")
        }

    assert made("agent") == made("sdk")
    assert any("(session_id, id)" in d for d in made("sdk"))


async def test_fluxgui_writes_agents_postgres_as_sqlalchemy_session_reads(pg_url):
    async with await open_store(pg_url, create="agents") as store:
        await store.writer.add_messages("pg", AGENT_ITEMS[:5])
        await store.session("pg").add_messages(AGENT_ITEMS[5:])
        await store.writer.add_messages("pg-other", AGENT_ITEMS[:1])
    assert await sa_read(pg_url, "pg") == AGENT_ITEMS
    assert await sa_read(pg_url, "pg-other") == AGENT_ITEMS[:1]
    # Mixed writers: the SDK appends and pops on fluxgui's tables; fluxgui follows.
    session = SQLAlchemySession.from_url("pg", url=pg_url)
    try:
        await session.add_items([{"role": "user", "content": "sdk 1"}, {"role": "user", "content": "sdk 2"}])
        assert await session.pop_item() == {"role": "user", "content": "sdk 2"}
        ref = await session.get_items()
    finally:
        await session.engine.dispose()
    async with await open_store(pg_url, writable=True) as store:
        assert [m.raw for m in await all_messages(store, "pg")] == ref
        await store.writer.add_messages("pg", [{"role": "assistant", "content": "fluxgui again"}])
    assert await sa_read(pg_url, "pg") == ref + [{"role": "assistant", "content": "fluxgui again"}]
    # Stored bytes match the SDK's (compact JSON, ASCII-escaped).
    conn = await asyncpg.connect(pg_url.replace("+asyncpg", ""))
    try:
        rows = await conn.fetch("SELECT message_data FROM agent_messages WHERE session_id = 'pg' ORDER BY id")
    finally:
        await conn.close()
    session = SQLAlchemySession.from_url("bytes", url=pg_url)
    try:
        expected = [await session._serialize_item(item) for item in AGENT_ITEMS]
    finally:
        await session.engine.dispose()
    assert [r[0] for r in rows][: len(AGENT_ITEMS)] == expected


async def test_fluxgui_writes_flux_postgres_as_flux_reads_sqlite(pg_url, tmp_path):
    """No flux writer exists for Postgres: the reference is flux's own reading of the same
    messages written by flux to SQLite."""
    ref_path = tmp_path / "reference.db"
    messages = FLUX_MESSAGES
    await write_flux(ref_path, messages)
    async with await open_store(pg_url, create="flux") as store:
        for sid, msgs in messages.items():
            await store.writer.add_messages(sid, msgs)
    async with await open_store(pg_url) as store:
        assert store.format == "flux"
        for sid in FLUX_MESSAGES:
            ref = await FluxSQLiteSession(str(ref_path), session_id=sid).get_messages()
            assert await store.session(sid).get_messages() == ref
            got = await all_messages(store, sid)
            assert [(m.role, m.text) for m in got] == [(d["role"], d["content"] or "") for d in ref]


async def test_flux_postgres_numeric_content_is_stored_as_text(pg_url, tmp_path):
    msgs = [{"role": "assistant", "content": 42}, {"role": "assistant", "content": 2.5}]
    ref_path = tmp_path / "reference.db"
    await FluxSQLiteSession(str(ref_path), session_id="n").add_messages(msgs)
    ref = await FluxSQLiteSession(str(ref_path), session_id="n").get_messages()
    async with await open_store(pg_url, create="flux") as store:
        await store.writer.add_messages("n", msgs)
        assert await store.session("n").get_messages() == ref
