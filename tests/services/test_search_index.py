"""The local search index against a scan, on stores written by the real libraries.

Every store holds Unicode (case folding that changes lengths: ß, ﬁ, İ, final sigma),
emoji, right-to-left text and hostile text (control characters, FTS5 syntax, quotes,
SQL). For each needle the index's hits equal the scan's; after appends, deletes, clears
and edits an update gives the scan's hits again; the agent's store stays byte-identical.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import sha256, sidecars
from json_helpers import hello_entry, hello_save

from fluxgui.adapters import open_store
from fluxgui.core.hits import fold
from fluxgui.core.ports import OpenOptions
from fluxgui.services.index import IndexFile, full_scan, index_path, scan, search, update_index

TEXTS = [
    "Order A-1234 was refunded",
    "STRASSE und Straße, die Maße",
    "ﬁle ligature and FILE and ǅemal",
    "İstanbul istanbul ISTANBUL",
    "ΣΊΣΥΦΟΣ σίσυφος",
    "emoji 😀🎉 party 👩‍👩‍👧 family",
    "مرحبا بالعالم hello עולם",
    "bell \x07 esc \x1b[31m red \x1b[0m nul-free",
    'quotes "NEAR" AND OR NOT * ^ col:1 ("x")',
    "'; DROP TABLE messages; --",
    "zero\u200bwidth and \u202eoverride",
    "line one\nline two\r\nline three",
    "café CAFÉ cafe\u0301",
    "nul \x00 byte, then more",
    "",
]
NEEDLES = [
    "a-1234", "strasse", "straße", "MASSE", "file", "ﬁle", "istanbul", "i̇stanbul", "σίσυφος",
    "ΣΊΣΥΦΟΣ", "😀🎉", "family", "👩‍👩‍👧", "مرحبا", "עולם", "\x1b[31m", '"near"', "and or",
    "* ^", "drop table", "zero\u200bwidth", "one\nline", "café", "cafe\u0301", "nothing-here",
    "ok ok", "sess", "\x00 byte", "then more", "l \x00 b", "\x00",
]


def _items(i: int) -> list[dict[str, Any]]:
    out = []
    for j in range(4):
        out.append({"role": "user", "content": TEXTS[(i + j) % len(TEXTS)]})
        out.append({"role": "assistant", "content": f"ok ok {i}.{j}"})
    return out


async def write_store(kind: str, path: Path, sessions: int = 12) -> None:
    for i in range(sessions):
        sid = f"sess-{i:02d}" if i % 5 else f"séß-{i} 😀"
        items = _items(i)
        if kind == "flux":
            await FluxSQLiteSession(str(path), session_id=sid).add_messages(items)
        elif kind == "agents":
            s = AgentsSQLiteSession(sid, str(path))
            try:
                await s.add_items(items)  # type: ignore[arg-type]
            finally:
                s.close()
        else:
            hello_save(path, sid.replace(" ", "_"), [hello_entry(m["role"], m["content"]) for m in items])


def hit_set(result: Any) -> list[tuple[Any, ...]]:
    return sorted(
        (h.session_id, h.message_id if h.message_id is not None else -1, h.role, h.snippet, h.start, h.length)
        for h in result.hits
    )


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))


def _target(kind: str, tmp_path: Path) -> Path:
    return tmp_path / ("store.db" if kind != "json" else "folder")


async def assert_same(store: Any, needles: list[str] = NEEDLES) -> None:
    for needle in needles:
        indexed = await search(store, needle, use="index", update=False)
        every = await full_scan(store, needle)
        assert indexed.path == ("index" if len(fold(needle)) >= 3 else "scan")
        assert indexed.hits == every.hits, needle  # the same hits, in the same order
        assert (await scan(store, needle)).hits == every.hits, needle


@pytest.mark.parametrize("kind", ["flux", "agents", "json"])
async def test_index_equals_scan_and_leaves_the_store_untouched(kind: str, tmp_path: Path) -> None:
    target = _target(kind, tmp_path)
    await write_store(kind, target)
    before = sha256(target) if kind != "json" else None
    store = await open_store(str(target))
    try:
        report = await update_index(store)
        assert report.added == 12 * 8 and report.built
        await assert_same(store)
        # the needles that must find something do
        assert len((await search(store, "straße", update=False)).hits) >= 2
        assert (await search(store, "istanbul", update=False)).hits
        assert not (await search(store, "nothing-here", update=False)).hits
    finally:
        await store.close()
    if before is not None:
        assert sha256(target) == before and not sidecars(target)
    path = index_path(store.store_key)
    assert path.exists() and (path.stat().st_mode & 0o777) == 0o600
    assert str(target) not in {str(p) for p in path.parent.iterdir()}


@pytest.mark.parametrize("kind", ["flux", "agents", "json"])
async def test_updates_follow_appends_deletes_clears_and_edits(kind: str, tmp_path: Path) -> None:
    target = _target(kind, tmp_path)
    await write_store(kind, target)
    ro = await open_store(str(target))
    await update_index(ro)
    await ro.close()
    w = await open_store(str(target), OpenOptions(writable=True))
    try:
        sessions = [s.id for s in (await w.reader.list_sessions(limit=100)).sessions]
        # appends (by the library where there is one), then fluxgui's edits
        if kind == "flux":
            await FluxSQLiteSession(str(target), session_id="new-one").add_messages(
                [{"role": "user", "content": "a fresh Straße note"}])
        elif kind == "agents":
            s = AgentsSQLiteSession("new-one", str(target))
            await s.add_items([{"role": "user", "content": "a fresh Straße note"}])  # type: ignore[list-item]
            s.close()
        else:
            hello_save(target, "new-one", [hello_entry("user", "a fresh Straße note")])
        await w.writer.add_messages(sessions[0], [{"role": "user", "content": "appended ISTANBUL line"}])
        await w.writer.clear_messages(sessions[1])
        await w.writer.delete_session(sessions[2])
        if w.editor is not None:
            msgs = [m async for page in w.reader.iter_messages(sessions[3]) for m in page]
            await w.editor.delete_messages(sessions[3], [msgs[0].id])
            target_msg = msgs[2]
            spec = ({"role": "user", "content": "edited to say Straße"} if kind == "flux"
                    else {"role": "user", "content": "edited to say Straße"})
            from fluxgui.services.edits import update_message

            await update_message(w, sessions[3], target_msg, spec)  # tells the index
        report = await update_index(w)
        assert report.added >= 1
        await assert_same(w)
        found = {h.session_id for h in (await search(w, "straße", update=False)).hits}
        assert "new-one" in found and sessions[2] not in found and sessions[1] not in found
        if w.editor is not None:
            hits = [h for h in (await search(w, "edited to say", update=False)).hits]
            assert [h.session_id for h in hits] == [sessions[3]]
    finally:
        await w.close()


@pytest.mark.parametrize("fmt", ["flux", "agents"])
async def test_each_change_alone_is_followed(fmt: str, tmp_path: Path) -> None:
    # One change between two updates, each kind alone: the update skips the sessions'
    # marks when the store holds as many rows as the index, so every change that leaves
    # no new row must change that number (or tell the index, as an edit in place does).
    target = tmp_path / "store.db"
    await write_store(fmt, target)
    from fluxgui.services.edits import insert_message, update_message

    async with await open_store(str(target), OpenOptions(writable=True)) as w:
        await update_index(w)
        ids = [s.id for s in (await w.reader.list_sessions(limit=100)).sessions]

        async def rows(sid: str) -> list[Any]:
            return [m async for page in w.reader.iter_messages(sid) for m in page]

        nothing = await update_index(w)
        assert (nothing.added, nothing.reindexed, nothing.dropped) == (0, 0, 0)
        spec = {"role": "user", "content": "now says Straße"}
        changes = [
            ("delete a message", lambda: w.editor.delete_messages(ids[0], [rows_of[ids[0]][1].id])),
            ("pop the last", lambda: w.editor.pop_message(ids[1])),
            ("clear", lambda: w.writer.clear_messages(ids[2])),
            ("delete a session", lambda: w.writer.delete_session(ids[3])),
            ("edit in place", lambda: update_message(w, ids[4], rows_of[ids[4]][2], spec)),
            ("insert in the middle", lambda: insert_message(w, ids[5], spec, anchor=rows_of[ids[5]][1].id)),
        ]
        rows_of = {sid: await rows(sid) for sid in ids[:6]}
        for what, change in changes:
            await change()
            report = await update_index(w)
            assert report.reindexed + report.dropped + report.added >= 1, what
            await assert_same(w, ["straße", "ok ok", "a-1234", "istanbul"])
        found = {h.session_id for h in (await search(w, "now says", update=False)).hits}
        assert found == {ids[4], ids[5]}


async def test_an_unfinished_build_continues_and_a_wrong_file_starts_again(tmp_path: Path) -> None:
    target = tmp_path / "store.db"
    await write_store("flux", target, sessions=30)
    store = await open_store(str(target))
    try:
        idx = IndexFile.for_store(store.store_key)
        # one batch only, as a build killed after its first transaction leaves it
        rows = await store.feed.messages_after(0, limit=50)
        from fluxgui.services.index.update import record

        recs = [record(sid, m, rid=int(m.id), encrypted=False) for sid, m in rows]
        assert idx.add(recs, watermark=max(m.id for _s, m in rows), expect=0)
        assert idx.state()["ready"] == "0"
        idx.close()
        report = await update_index(store)
        assert report.added == 30 * 8 - 50 and report.built
        await assert_same(store, ["straße", "😀🎉", "ok ok 2"])
    finally:
        await store.close()


async def test_progress_is_reported_to_the_total(tmp_path: Path) -> None:
    target = tmp_path / "store.db"
    await write_store("agents", target, sessions=20)
    store = await open_store(str(target))
    seen: list[tuple[int, int | None]] = []
    try:
        await update_index(store, progress=lambda d, t: seen.append((d, t)), batch=30)
    finally:
        await store.close()
    assert seen[0] == (0, 160) and seen[-1] == (160, 160)
    assert len(seen) > 3 and [d for d, _t in seen] == sorted(d for d, _t in seen)


async def test_short_needles_scan(tmp_path: Path) -> None:
    target = tmp_path / "store.db"
    await write_store("flux", target)
    store = await open_store(str(target))
    try:
        await update_index(store)
        result = await search(store, "ok", update=False)
        assert result.path == "scan" and result.hits
        assert "3 characters" in result.notes[0]
        assert hit_set(result) == hit_set(await scan(store, "ok"))
    finally:
        await store.close()


async def test_no_index_scans_and_says_so(tmp_path: Path) -> None:
    target = tmp_path / "store.db"
    await write_store("flux", target)
    store = await open_store(str(target))
    try:
        result = await search(store, "straße")
        assert result.path == "scan" and "no index" in result.notes[0]
        assert not index_path(store.store_key).exists()
    finally:
        await store.close()


def test_index_file_keeps_the_schema_it_was_made_with(tmp_path: Path) -> None:
    idx = IndexFile(tmp_path / "x.sqlite", "key-a")
    idx.set_state(watermark="7")
    idx.close()
    again = IndexFile(tmp_path / "x.sqlite", "key-b")  # another store's key: starts again
    assert again.state()["watermark"] == "0"
    again.close()
    assert json.dumps(1)
    asyncio.get_event_loop_policy()


def test_openers_of_a_new_index_file_never_find_it_locked(tmp_path: Path) -> None:
    # the window and a command (here: threads) opening a new index at once; switching it
    # to WAL is not waited for by SQLite's busy handler
    from concurrent.futures import ThreadPoolExecutor

    def open_close(path: Path) -> str:
        idx = IndexFile(path, "key")
        try:
            return idx.state()["watermark"]
        finally:
            idx.close()

    with ThreadPoolExecutor(6) as pool:
        for n in range(40):
            path = tmp_path / f"new-{n}.sqlite"
            assert list(pool.map(open_close, [path] * 6)) == ["0"] * 6


@pytest.mark.redis
async def test_a_redis_store_follows_its_change_markers(redis_prefix: str) -> None:
    import redis.asyncio as aioredis
    from agents.extensions.memory import RedisSession
    from helpers import REDIS_URL

    client = aioredis.from_url(REDIS_URL)
    try:
        for i in range(6):
            s = RedisSession(f"r{i}", redis_client=client, key_prefix=redis_prefix)
            await s.add_items(_items(i))  # type: ignore[arg-type]
        store = await open_store(REDIS_URL, OpenOptions(key_prefix=redis_prefix))
        try:
            assert (await update_index(store)).added == 6 * 8
            await assert_same(store, ["straße", "😀🎉", "istanbul", "ok ok 3"])
            # the library appends to one session and clears another
            await RedisSession("r0", redis_client=client, key_prefix=redis_prefix).add_items(
                [{"role": "user", "content": "a fresh Straße note"}])  # type: ignore[list-item]
            await RedisSession("r1", redis_client=client, key_prefix=redis_prefix).clear_session()
            report = await update_index(store)
            assert report.reindexed >= 1 and report.dropped == 1
            await assert_same(store, ["straße", "fresh", "ok ok 1"])
            assert not [h for h in (await search(store, "ok ok 1.", update=False)).hits]
        finally:
            await store.close()
    finally:
        await client.aclose()


def test_a_search_does_not_wait_for_a_build_holding_the_write_lock(tmp_path: Path) -> None:
    """Another process building the index holds its write lock for a batch: opening the
    file to search takes no write lock, so it answers at once."""
    import sqlite3
    import threading

    from fluxgui.services.index.indexfile import Record

    path = tmp_path / "index.sqlite"
    idx = IndexFile(path, "k")
    idx.add([Record(1, "s", 1, "user", "Order A-1234 was refunded")], watermark=1)
    idx.set_state(ready="1")
    idx.close()
    builder = sqlite3.connect(path, isolation_level=None)
    builder.execute("BEGIN IMMEDIATE")  # a build's transaction in progress
    found: list[Any] = []

    def look() -> None:
        reader = IndexFile(path, "k", reading=True)
        try:
            found.extend(row for rows in reader.matches("a-1234") for row in rows)
        finally:
            reader.close()

    t = threading.Thread(target=look, daemon=True)
    t.start()
    t.join(timeout=10)
    builder.execute("ROLLBACK")
    builder.close()
    assert not t.is_alive(), "the search waited for the build's write lock"
    assert [(r[1], r[4]) for r in found] == [("s", "Order A-1234 was refunded")]
