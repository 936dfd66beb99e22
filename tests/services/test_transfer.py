"""Export, import and copy (fluxgui.services.transfer) on stores the real libraries wrote.

Round trips: export → import → the same Messages (role, kind, text, metadata, created_at,
raw; ids differ) for JSON and JSONL, from flux and Agents SDK stores on SQLite and
Postgres. Copies SQLite → Postgres → SQLite and across formats, read back by the
libraries themselves. Cancelling an export leaves neither the file nor a temporary file.
"""

from __future__ import annotations

import asyncio
import copy
import json
import sqlite3
from pathlib import Path

import asyncpg
import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages, all_sessions, snapshot

from fluxgui.adapters import open_store
from fluxgui.core.errors import InvalidItem, NotASessionStore, SessionNotFound
from fluxgui.services.export import export_sessions
from fluxgui.services.transfer import (
    IdTaken,
    copy_sessions,
    import_files,
    open_copy_target,
    open_import_target,
    scan_files,
)

# --------------------------------------------------------------------------- data

FLUX = {
    "chat": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Wie spät ist es? ⏰ <b>bold</b>"},
        {"role": "assistant", "content": "Zwölf.", "metadata": {"model": "m1", "usage": {"in": 3, "out": 1}}},
        {"role": "tool", "content": '{"temp": 22}'},
        {"role": "assistant", "content": "multi\nline\n\n```code```"},
    ],
    "second": [{"role": "user", "content": "another"}, {"role": "assistant", "content": "", "metadata": {"empty": ""}}],
}

AGENTS = {
    "weather": [
        {"role": "user", "content": "Weather in Zürich?"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Need the tool."}]},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Zürich"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "22 °C"},
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "22 °C and sunny.", "annotations": []}],
        },
        {"role": "user", "content": [{"type": "input_text", "text": "Thanks ✓"}]},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "x"}},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "refusal", "refusal": "No."}],
        },
    ],
    "short": [{"role": "developer", "content": "be brief"}, {"role": "user", "content": "hi \ud83d lone surrogate"}],
}


def key(m) -> tuple:
    """What a round trip must keep of a Message (ids differ)."""
    return (m.role, m.kind, m.text, m.metadata, m.created_at, m.raw)


async def write_flux(path: Path, data: dict) -> None:
    for sid, msgs in data.items():
        await FluxSQLiteSession(str(path), session_id=sid).add_messages(copy.deepcopy(msgs))


async def flux_read(path: Path, sid: str) -> list[dict]:
    return await FluxSQLiteSession(str(path), session_id=sid).get_messages()


async def write_agents(path: Path, data: dict) -> None:
    for sid, items in data.items():
        session = AgentsSQLiteSession(sid, str(path))
        try:
            await session.add_items(copy.deepcopy(items))
        finally:
            session.close()


async def agents_read(path: Path, sid: str) -> list[dict]:
    session = AgentsSQLiteSession(sid, str(path))
    try:
        return await session.get_items()
    finally:
        session.close()


async def sa_write(url: str, data: dict) -> None:
    for sid, items in data.items():
        session = SQLAlchemySession.from_url(sid, url=url, create_tables=True)
        try:
            await session.add_items(copy.deepcopy(items))
        finally:
            await session.engine.dispose()


async def sa_read(url: str, sid: str) -> list[dict]:
    session = SQLAlchemySession.from_url(sid, url=url)
    try:
        return await session.get_items()
    finally:
        await session.engine.dispose()


async def contents(target: str) -> dict[str, tuple]:
    """Every session of a store: (its list row's times, its Messages' keys), by id."""
    async with await open_store(target) as store:
        out = {}
        for info in await all_sessions(store):
            msgs = await all_messages(store, info.id)
            out[info.id] = (info.created_at, info.updated_at, [key(m) for m in msgs])
        return out


async def listed_ids(target: str) -> list[str]:
    async with await open_store(target) as store:
        return [s.id for s in await all_sessions(store)]


async def store_format(target: str) -> str:
    async with await open_store(target) as store:
        return store.format


async def flux_sqlite(tmp_path: Path) -> str:
    path = tmp_path / "flux.db"
    await write_flux(path, FLUX)
    # A row another writer left: metadata that is not a JSON object (kept as it is).
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO messages (session_id, role, content, metadata) VALUES ('chat', 'user', 'odd', '[1, 2')"
    )
    conn.commit()
    conn.close()
    return str(path)


async def agents_sqlite(tmp_path: Path) -> str:
    path = tmp_path / "agents.db"
    await write_agents(path, AGENTS)
    # A session with no items left (pop_item keeps its row).
    session = AgentsSQLiteSession("emptied", str(path))
    try:
        await session.add_items([{"role": "user", "content": "gone"}])
        await session.pop_item()
    finally:
        session.close()
    return str(path)


async def agents_postgres(pg_url: str) -> str:
    await sa_write(pg_url, AGENTS)
    return pg_url


SOURCES = ["flux-sqlite", "agents-sqlite", "agents-postgres"]


async def make_source(name: str, tmp_path: Path, request) -> str:
    if name == "flux-sqlite":
        return await flux_sqlite(tmp_path)
    if name == "agents-sqlite":
        return await agents_sqlite(tmp_path)
    return await agents_postgres(request.getfixturevalue("pg_url"))


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
@pytest.mark.parametrize("source", SOURCES)
async def test_export_import_round_trip(tmp_path, request, source, fmt):
    target = await make_source(source, tmp_path, request)
    before = await contents(target)
    assert sum(len(v[2]) for v in before.values()) >= 8
    out = tmp_path / f"export.{fmt}"
    async with await open_store(target) as store:
        result = await export_sessions(store, out, fmt)
    assert result.sessions == len(before)
    assert result.messages == sum(len(v[2]) for v in before.values())
    assert result.bytes == out.stat().st_size > 0

    new = tmp_path / "imported.db"
    store = await open_import_target(str(new), [out])
    try:
        assert store.format == ("flux" if source.startswith("flux") else "agents")
        imported = await import_files(store, [out])
    finally:
        await store.close()
    after = await contents(str(new))
    if fmt == "jsonl":
        # A JSONL line is a message: a session without messages has no line.
        before = {sid: v for sid, v in before.items() if v[2]}
    assert imported.sessions == len(before)
    assert {sid: v[2] for sid, v in after.items()} == {sid: v[2] for sid, v in before.items()}
    if fmt == "json" and source.startswith("agents"):
        # The sessions table's times travel with a JSON export.
        assert {sid: v[:2] for sid, v in after.items()} == {sid: v[:2] for sid, v in before.items()}
    # The same order of sessions (least recently active first when exported).
    assert await listed_ids(str(new)) == [s for s in await listed_ids(target) if s in before]


async def test_round_trip_is_read_back_by_the_libraries(tmp_path):
    # (flux's reader fails on a row whose metadata is not JSON: the plain store here.)
    flux_db, agents_db = Path(await write_flux_plain(tmp_path)), Path(await agents_sqlite(tmp_path))
    for source, reader, data in ((flux_db, flux_read, FLUX), (agents_db, agents_read, AGENTS)):
        out = tmp_path / f"{source.stem}.json"
        async with await open_store(str(source)) as store:
            await export_sessions(store, out, "json")
        new = tmp_path / f"{source.stem}-imported.db"
        async with await open_import_target(str(new), [out]) as store:
            await import_files(store, [out])
        for sid in data:
            assert await reader(new, sid) == await reader(source, sid)
        if reader is agents_read:
            assert await reader(new, "short") == AGENTS["short"]  # the lone surrogate too


async def test_export_import_into_postgres(tmp_path, pg_url):
    agents_db = await agents_sqlite(tmp_path)
    out = tmp_path / "export.json"
    async with await open_store(agents_db) as store:
        await export_sessions(store, out, "json")
    # An empty database becomes a store of the files' kind.
    async with await open_import_target(pg_url, [out]) as store:
        assert store.format == "agents"
        await import_files(store, [out])
    assert await contents(pg_url) == await contents(agents_db)
    for sid, items in AGENTS.items():
        assert await sa_read(pg_url, sid) == items


async def test_flux_export_into_postgres_is_flux(tmp_path, pg_url):
    flux_db = await flux_sqlite(tmp_path)
    out = tmp_path / "export.jsonl"
    async with await open_store(flux_db) as store:
        await export_sessions(store, out, "jsonl")
    async with await open_import_target(pg_url, [out]) as store:
        assert store.format == "flux"
        await import_files(store, [out])
    assert await contents(pg_url) == await contents(flux_db)


async def test_export_of_chosen_sessions_in_the_order_given(tmp_path):
    agents_db = await agents_sqlite(tmp_path)
    out = tmp_path / "two.json"
    async with await open_store(agents_db) as store:
        result = await export_sessions(store, out, "json", session_ids=["short", "weather", "short"])
    assert (result.sessions, result.messages) == (2, len(AGENTS["short"]) + len(AGENTS["weather"]))
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["fluxgui_export"] == 1 and data["format"] == "agents"
    assert [s["id"] for s in data["sessions"]] == ["short", "weather"]
    assert [m["raw"] for m in data["sessions"][1]["messages"]] == AGENTS["weather"]


async def test_no_metadata_leaves_metadata_out(tmp_path):
    flux_db = await flux_sqlite(tmp_path)
    async with await open_store(flux_db) as store:
        for fmt in ("json", "jsonl", "md", "html"):
            with_meta, without = tmp_path / f"with.{fmt}", tmp_path / f"without.{fmt}"
            await export_sessions(store, with_meta, fmt)
            await export_sessions(store, without, fmt, metadata=False)
            for needle in ("usage", "[1, 2"):  # an object's key; a row's non-object metadata
                assert needle in with_meta.read_text(encoding="utf-8"), (fmt, needle)
                assert needle not in without.read_text(encoding="utf-8"), (fmt, needle)
            assert "Zwölf." in without.read_text(encoding="utf-8")
    # Imported, the messages are there without their metadata.
    new = tmp_path / "imported.db"
    async with await open_import_target(str(new), [tmp_path / "without.json"]) as store:
        await import_files(store, [tmp_path / "without.json"])
    read = await flux_read(new, "chat")
    assert [(m["role"], m["content"]) for m in read] == [
        (m["role"], m["content"]) for m in FLUX["chat"]
    ] + [("user", "odd")]
    assert all("metadata" not in m for m in read)


# --------------------------------------------------------------------------- copies


async def test_copy_sqlite_postgres_sqlite_is_lossless(tmp_path, pg_url):
    source = await agents_sqlite(tmp_path)
    original = await contents(source)
    async with await open_store(source) as src:
        async with await open_copy_target(pg_url, src) as dest:
            assert dest.format == "agents"
            result = await copy_sessions(src, dest)
    assert (result.sessions, result.messages) == (3, sum(len(v) for v in AGENTS.values()))
    assert await contents(pg_url) == original
    for sid, items in AGENTS.items():
        assert await sa_read(pg_url, sid) == items  # SQLAlchemySession reads the copy
    assert await sa_read(pg_url, "emptied") == []

    back = tmp_path / "back.db"
    async with await open_store(pg_url) as src:
        async with await open_copy_target(str(back), src) as dest:
            await copy_sessions(src, dest)
    assert await contents(str(back)) == original
    for sid, items in AGENTS.items():
        assert await agents_read(back, sid) == items  # SQLiteSession reads the copy
    # Raw rows: the same items, JSON as SQLiteSession writes it, the same times.
    def rows(path):
        conn = sqlite3.connect(path)
        try:
            return (
                conn.execute("SELECT session_id, message_data, created_at FROM agent_messages ORDER BY id").fetchall(),
                conn.execute("SELECT * FROM agent_sessions ORDER BY session_id").fetchall(),
            )
        finally:
            conn.close()

    assert rows(back) == rows(source)
    # The SDK carries on in the copy.
    session = AgentsSQLiteSession("weather", str(back))
    try:
        await session.add_items([{"role": "user", "content": "more"}])
    finally:
        session.close()
    assert await agents_read(back, "weather") == AGENTS["weather"] + [{"role": "user", "content": "more"}]


async def test_copy_postgres_to_postgres_schema_is_the_sdks(tmp_path, pg_url):
    """A store fluxgui made on Postgres is one SQLAlchemySession writes to and reads."""
    source = await agents_sqlite(tmp_path)
    async with await open_store(source) as src:
        async with await open_copy_target(pg_url, src) as dest:
            await copy_sessions(src, dest, ["weather"])
    await sa_write(pg_url, {"weather": [{"role": "user", "content": "after"}], "new": [{"role": "user", "content": "x"}]})
    assert await sa_read(pg_url, "weather") == AGENTS["weather"] + [{"role": "user", "content": "after"}]
    assert await sa_read(pg_url, "new") == [{"role": "user", "content": "x"}]
    conn = await asyncpg.connect(pg_url.replace("+asyncpg", ""))
    try:
        count = await conn.fetchval("SELECT COUNT(*) FROM agent_messages WHERE session_id = 'weather'")
    finally:
        await conn.close()
    assert count == len(AGENTS["weather"]) + 1


async def test_flux_to_agents_to_flux_keeps_roles_and_texts(tmp_path):
    source = Path(await write_flux_plain(tmp_path))
    as_agents, as_flux = tmp_path / "as-agents.db", tmp_path / "as-flux.db"
    async with await open_store(str(source)) as src:
        async with await open_copy_target(str(as_agents), src, fmt="agents") as dest:
            assert dest.format == "agents"
            await copy_sessions(src, dest)
    # The SDK reads the conversion: roles and texts as items (a tool row: its output).
    for sid, msgs in FLUX.items():
        items = await agents_read(as_agents, sid)
        assert len(items) == len(msgs)
        for item, m in zip(items, msgs, strict=True):
            if m["role"] == "tool":
                assert item == {"type": "function_call_output", "call_id": "", "output": m["content"]}
            else:
                assert item == {"role": m["role"], "content": m["content"]}
    async with await open_store(str(as_agents)) as src:
        async with await open_copy_target(str(as_flux), src, fmt="flux") as dest:
            assert dest.format == "flux"
            await copy_sessions(src, dest)
    for sid, msgs in FLUX.items():
        read = await flux_read(as_flux, sid)
        assert [(m["role"], m["content"]) for m in read] == [(m["role"], m["content"]) for m in msgs]
    assert await listed_ids(str(as_flux)) == await listed_ids(str(source))


async def write_flux_plain(tmp_path: Path) -> str:
    path = tmp_path / "plain-flux.db"
    await write_flux(path, FLUX)
    return str(path)


async def test_agents_to_flux_to_agents_keeps_items_exactly(tmp_path):
    source = Path(await agents_sqlite(tmp_path))
    as_flux, again = tmp_path / "as-flux.db", tmp_path / "again.db"
    async with await open_store(str(source)) as src:
        async with await open_copy_target(str(as_flux), src, fmt="flux") as dest:
            await copy_sessions(src, dest)
    # flux reads the conversion: every item's role and text; items flux has no columns
    # for ride along in the metadata.
    read = await flux_read(as_flux, "weather")
    async with await open_store(str(source)) as src:
        originals = await all_messages(src, "weather")
    assert [(m["role"], m["content"]) for m in read] == [(m.role, m.text) for m in originals]
    for m, item in zip(read, AGENTS["weather"], strict=True):
        if set(item) == {"role", "content"} and isinstance(item["content"], str):
            assert "metadata" not in m
        else:
            assert m["metadata"] == {"agents_item": item}
    async with await open_store(str(as_flux)) as src:
        async with await open_copy_target(str(again), src, fmt="agents") as dest:
            await copy_sessions(src, dest)
    for sid, items in AGENTS.items():
        assert await agents_read(again, sid) == items


async def test_copy_conflict_writes_nothing_and_rename(tmp_path):
    source = await agents_sqlite(tmp_path)
    dest_path = tmp_path / "dest.db"
    await write_agents(dest_path, {"short": [{"role": "user", "content": "mine"}]})
    before = snapshot(dest_path)
    async with await open_store(source) as src:
        async with await open_store(str(dest_path), writable=True) as dest:
            with pytest.raises(IdTaken) as err:
                await copy_sessions(src, dest)
        assert err.value.session_id == "short" and '"short"' in str(err.value)
        assert snapshot(dest_path) == before  # not even the other sessions
        async with await open_store(str(dest_path), writable=True) as dest:
            with pytest.raises(SessionNotFound, match='"nope"'):
                await copy_sessions(src, dest, ["weather", "nope"], rename=True)
        assert snapshot(dest_path) == before
        async with await open_store(str(dest_path), writable=True) as dest:
            result = await copy_sessions(src, dest, rename=True)
    assert sorted(result.renamed) == [("short", "short-2")]
    assert await agents_read(dest_path, "short") == [{"role": "user", "content": "mine"}]
    assert await agents_read(dest_path, "short-2") == AGENTS["short"]
    assert await agents_read(dest_path, "weather") == AGENTS["weather"]


async def test_copy_into_a_database_with_other_tables_needs_a_format(tmp_path):
    source = await agents_sqlite(tmp_path)
    other = tmp_path / "app.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    before = snapshot(other)
    async with await open_store(source) as src:
        with pytest.raises(NotASessionStore, match="invoices"):
            await open_copy_target(str(other), src)
        assert snapshot(other) == before
        async with await open_copy_target(str(other), src, fmt="agents") as dest:
            await copy_sessions(src, dest, ["short"])
    assert await agents_read(other, "short") == AGENTS["short"]


# --------------------------------------------------------------------------- imports


async def test_import_conflict_and_corrupt_files_write_nothing(tmp_path):
    agents_db = await agents_sqlite(tmp_path)
    good = tmp_path / "good.json"
    async with await open_store(agents_db) as store:
        await export_sessions(store, good, "json")
    bad = tmp_path / "bad.jsonl"
    lines = [
        json.dumps({"session_id": "fresh", "role": "user", "text": "ok"}),
        json.dumps({"session_id": "fresh", "role": "user", "text": "ok too"}),
        '{"session_id": "fresh", "role": ',
    ]
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dup = _write_dup(tmp_path, good)
    target = tmp_path / "target.db"
    await write_agents(target, {"short": [{"role": "user", "content": "mine"}]})
    before = snapshot(target)
    attempts = [
        # the good file would be imported, but the bad one after it stops everything
        ([good, bad], True, InvalidItem, r"bad\.jsonl, line 3: not valid JSON"),
        ([good], False, IdTaken, '"short" already exists'),
        ([dup], False, IdTaken, '"weather" comes twice'),
    ]
    for files, rename, error, message in attempts:
        async with await open_store(str(target), writable=True) as store:
            with pytest.raises(error, match=message):
                await import_files(store, files, rename=rename)
        assert snapshot(target) == before, files
    async with await open_store(str(target), writable=True) as store:
        result = await import_files(store, [good], rename=True)
    assert result.renamed == [("short", "short-2")]
    assert await agents_read(target, "short-2") == AGENTS["short"]
    assert await agents_read(target, "short") == [{"role": "user", "content": "mine"}]
    assert await agents_read(target, "weather") == AGENTS["weather"]


def _write_dup(tmp_path: Path, good: Path) -> Path:
    """An export holding the session "weather" twice."""
    data = json.loads(good.read_text(encoding="utf-8"))
    weather = [s for s in data["sessions"] if s["id"] == "weather"][0]
    data["sessions"] = [weather, weather]
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps(data), encoding="utf-8")
    return dup


async def test_a_new_path_is_not_created_for_a_corrupt_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"fluxgui_export": 1, "sessions": [{"id": "a", "messages": [{"text": 1}]}]}', encoding="utf-8")
    new = tmp_path / "new.db"
    with pytest.raises(InvalidItem, match=r"bad\.json, session 1, message 1: a message needs a \"role\""):
        await open_import_target(str(new), [bad])
    assert not new.exists()


async def test_scan_counts_and_kind(tmp_path):
    flux_db, agents_db = await flux_sqlite(tmp_path), await agents_sqlite(tmp_path)
    files = []
    for target in (flux_db, agents_db):
        out = tmp_path / (Path(target).stem + ".jsonl")
        async with await open_store(target) as store:
            await export_sessions(store, out, "jsonl")
        files.append(out)
    flux_plan = scan_files(files[:1])
    assert not flux_plan.has_raw_items
    assert sorted((sid, n) for _p, sid, n in flux_plan.sessions) == [("chat", 6), ("second", 2)]
    plan = scan_files(files)
    assert plan.has_raw_items
    assert plan.messages == 8 + sum(len(v) for v in AGENTS.values())


# --------------------------------------------------------------------------- cancelling and failing


async def big_flux(tmp_path: Path, n: int = 1600) -> str:
    path = tmp_path / "big.db"
    await FluxSQLiteSession(str(path), session_id="big").add_messages(
        [{"role": "user" if i % 2 else "assistant", "content": f"message {i} " + "x" * 200} for i in range(n)]
    )
    return str(path)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


@pytest.mark.parametrize("fmt", ["json", "html"])
async def test_cancelled_export_leaves_no_file(tmp_path, fmt):
    source = await big_flux(tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / f"export.{fmt}"
    seen: list[int] = []
    parts_while_running: list[list[str]] = []

    async with await open_store(source) as store:
        task: asyncio.Task | None = None

        def progress(done: int, total: int) -> None:
            seen.append(done)
            parts_while_running.append(leftovers(out_dir))
            assert task is not None
            task.cancel()  # after the first page: mid-way

        task = asyncio.ensure_future(export_sessions(store, out, fmt, progress=progress))
        with pytest.raises(asyncio.CancelledError):
            await task
    assert seen == [500]  # it stopped after the first of four pages
    assert len(parts_while_running[0]) == 1  # there was a temporary file …
    assert not out.exists()  # … and now there is nothing
    assert leftovers(out_dir) == []
    assert list(out_dir.iterdir()) == []


async def test_cancelled_export_keeps_the_previous_file(tmp_path):
    source = await big_flux(tmp_path)
    out = tmp_path / "export.json"
    out.write_text("the previous export", encoding="utf-8")
    async with await open_store(source) as store:
        task: asyncio.Task | None = None

        def progress(done: int, total: int) -> None:
            assert task is not None
            task.cancel()

        task = asyncio.ensure_future(export_sessions(store, out, "json", progress=progress))
        with pytest.raises(asyncio.CancelledError):
            await task
        assert out.read_text(encoding="utf-8") == "the previous export"
        assert leftovers(tmp_path) == []
        # Not cancelled, it replaces the file with the whole export.
        totals: list[tuple[int, int]] = []
        result = await export_sessions(store, out, "json", progress=lambda d, t: totals.append((d, t)))
    assert totals == [(500, 1600), (1000, 1600), (1500, 1600), (1600, 1600)]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert len(data["sessions"][0]["messages"]) == result.messages == 1600


async def test_failed_export_leaves_no_file(tmp_path):
    source = await flux_sqlite(tmp_path)
    out = tmp_path / "out.json"
    async with await open_store(source) as store:
        with pytest.raises(SessionNotFound, match='"nope"'):
            await export_sessions(store, out, "json", session_ids=["chat", "nope"])
        from fluxgui.core.errors import TargetError

        with pytest.raises(TargetError, match="no such folder"):
            await export_sessions(store, tmp_path / "missing" / "out.json", "json")
        with pytest.raises(TargetError, match="is a folder"):
            await export_sessions(store, tmp_path, "json")
    assert not out.exists()
    assert leftovers(tmp_path) == []


async def test_cancelled_copy_stops_after_the_session_it_is_writing(tmp_path):
    source = tmp_path / "three.db"
    for n in range(3):  # written in this order: s0 is the least recently active
        await FluxSQLiteSession(str(source), session_id=f"s{n}").add_messages(
            [{"role": "user", "content": f"s{n} message {i}"} for i in range(1200)]
        )
    dest = tmp_path / "dest.db"
    seen: list[int] = []
    async with await open_store(str(source)) as src:
        async with await open_copy_target(str(dest), src) as target:
            task: asyncio.Task | None = None

            def progress(done: int, total: int) -> None:
                seen.append(done)
                if done == 1700:  # the second page of the second session
                    assert task is not None
                    task.cancel()

            task = asyncio.ensure_future(copy_sessions(src, target, progress=progress))
            with pytest.raises(asyncio.CancelledError):
                await task
    assert seen == [500, 1000, 1200, 1700, 2200, 2400]  # s1 was finished, s2 never begun
    after = await contents(str(dest))
    assert sorted(after) == ["s0", "s1"]
    original = await contents(str(source))
    for sid in ("s0", "s1"):
        assert after[sid] == original[sid]
