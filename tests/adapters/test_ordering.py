"""Session list orders, one contract over every adapter: flux and Agents SDK, SQLite and
Postgres.

Stores are written by the real libraries where they have a writer (flux's and the Agents
SDK's ``SQLiteSession``, the SDK's ``SQLAlchemySession`` on Postgres) and through
``open_store(create="flux")`` + ``add_messages`` for flux on Postgres, which flux cannot
write. The expected order is a Python sort of the raw rows read back with a plain driver
(sqlite3, asyncpg); id order is the database's own (its collation), asked of the database.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from flux.sessions import SQLiteSession as FluxSQLiteSession

from fluxgui.adapters import open_store
from fluxgui.core.ports import ORDERS

ADAPTERS = [
    ("flux", "sqlite"),
    ("flux", "postgres"),
    ("agents", "sqlite"),
    ("agents", "postgres"),
]

#: Ids whose order differs by case, punctuation, digits and script.
IDS = [
    "alpha",
    "Alpha",
    "beta",
    "beta-10",
    "beta-9",
    "ümlaut",
    "zeta",
    "Z",
    "0",
    "日本語",
    "emoji 🧪",
    "it's",
    "100%",
    "a_b",
    " lead",
    "tab\there",
] + [f"s{i:02d}" for i in range(14)]


def write_plan() -> list[tuple[str, int]]:
    """``(session id, number of messages)`` per write, in write order: every session once
    (message counts 1-4, so counts tie a lot), then a few sessions again."""
    rng = random.Random(20240611)
    order = list(IDS)
    rng.shuffle(order)
    plan = [(sid, 1 + (i * 7) % 4) for i, sid in enumerate(order)]
    plan += [(sid, 1) for sid in rng.sample(IDS, 6)]
    return plan


#: an Agents SDK session whose items were all popped: listed with 0 messages
EMPTIED = "emptied"


@dataclass
class Written:
    """A store and what its rows say the orders must be."""

    url: str
    activity: dict[str, tuple[Any, ...]]  # session id → activity key (ascending)
    count: dict[str, int]
    rank: dict[str, int] = field(default_factory=dict)  # session id → place in id order

    def expected(self, order: str, descending: bool) -> list[str]:
        if order == "id":
            key: Any = lambda sid: self.rank[sid]  # noqa: E731
        elif order == "messages":
            key = lambda sid: (self.count[sid], self.rank[sid])  # noqa: E731
        else:
            key = lambda sid: self.activity[sid]  # noqa: E731
        return sorted(self.count, key=key, reverse=descending)


def _messages(sid: str, start: int, n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user" if (start + i) % 2 == 0 else "assistant", "content": f"{sid} #{start + i}"}
        for i in range(n)
    ]


async def _write_flux_sqlite(path: Path) -> None:
    done: dict[str, int] = {}
    for sid, n in write_plan():
        await FluxSQLiteSession(str(path), session_id=sid).add_messages(_messages(sid, done.get(sid, 0), n))
        done[sid] = done.get(sid, 0) + n


async def _write_flux_postgres(url: str) -> None:
    done: dict[str, int] = {}
    async with await open_store(url, create="flux") as store:
        for sid, n in write_plan():
            await store.writer.add_messages(sid, _messages(sid, done.get(sid, 0), n))
            done[sid] = done.get(sid, 0) + n


async def _write_agents(make_session) -> None:
    done: dict[str, int] = {}
    for sid, n in write_plan():
        session = make_session(sid)
        try:
            await session.add_items(_messages(sid, done.get(sid, 0), n))
        finally:
            close = getattr(session, "close", None)
            if close is not None:
                close()
        done[sid] = done.get(sid, 0) + n
    session = make_session(EMPTIED)
    try:
        await session.add_items(_messages(EMPTIED, 0, 2))
        while await session.pop_item() is not None:
            pass
    finally:
        close = getattr(session, "close", None)
        if close is not None:
            close()


async def _write_agents_pg(url: str) -> None:
    """The plan written to Postgres by ``SQLAlchemySession``, one engine for all."""
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url)
    try:
        await _write_agents(lambda sid: SQLAlchemySession(sid, engine=engine, create_tables=True))
    finally:
        await engine.dispose()


def _plain_pg(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def _pg_rows(url: str, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = await asyncpg.connect(_plain_pg(url))
    try:
        return [tuple(r) for r in await conn.fetch(sql, *args)]
    finally:
        await conn.close()


async def _rank(backend: str, url: str, ids: list[str]) -> dict[str, int]:
    if backend == "postgres":
        # The database's collation decides; ask it.
        rows = await _pg_rows(url, "SELECT x FROM unnest($1::text[]) AS x ORDER BY x", ids)
        ordered = [r[0] for r in rows]
    else:
        ordered = sorted(ids)  # SQLite's BINARY collation: code point order, as Python's
    return {sid: i for i, sid in enumerate(ordered)}


def _flux_expectation(url: str, rows: list[tuple[int, str]]) -> Written:
    count: dict[str, int] = {}
    last: dict[str, int] = {}
    for row_id, sid in rows:
        count[sid] = count.get(sid, 0) + 1
        last[sid] = max(last.get(sid, 0), row_id)
    return Written(url, {sid: (i,) for sid, i in last.items()}, count)


def _agents_expectation(
    url: str, sessions: list[tuple[str, Any]], items: list[tuple[int, str, Any]]
) -> Written:
    count = {sid: 0 for sid, _ in sessions}
    latest: dict[str, int] = {}
    for row_id, sid, _created in items:
        count[sid] = count.get(sid, 0) + 1
        latest[sid] = max(latest.get(sid, 0), row_id)
    activity = {sid: (updated, latest.get(sid, 0)) for sid, updated in sessions}
    return Written(url, activity, count)


@pytest.fixture(params=ADAPTERS, ids=[f"{f}-{b}" for f, b in ADAPTERS])
def target(request, tmp_path) -> tuple[str, str, str]:
    """(format, backend, url); a sync fixture, so that ``pg_url`` is made outside the
    test's event loop."""
    fmt, backend = request.param
    url = str(tmp_path / "store.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    return fmt, backend, url


@pytest.fixture
async def written(target) -> Written:
    fmt, backend, url = target
    if backend == "sqlite":
        path = Path(url)
        if fmt == "flux":
            await _write_flux_sqlite(path)
            expectation = _flux_expectation(
                url, sqlite_rows(path, "SELECT id, session_id FROM messages")
            )
        else:
            await _write_agents(lambda sid: AgentsSQLiteSession(sid, path))
            expectation = _agents_expectation(
                url,
                sqlite_rows(path, "SELECT session_id, updated_at FROM agent_sessions"),
                sqlite_rows(path, "SELECT id, session_id, created_at FROM agent_messages"),
            )
    else:
        if fmt == "flux":
            await _write_flux_postgres(url)
            expectation = _flux_expectation(
                url, await _pg_rows(url, "SELECT id, session_id FROM messages")
            )
        else:
            await _write_agents_pg(url)
            expectation = _agents_expectation(
                url,
                await _pg_rows(url, "SELECT session_id, updated_at FROM agent_sessions"),
                await _pg_rows(url, "SELECT id, session_id, created_at FROM agent_messages"),
            )
    expectation.rank = await _rank(backend, url, list(expectation.count))
    # The activity key ends with the session id's place: the last tie-break.
    expectation.activity = {
        sid: (*key, expectation.rank[sid]) for sid, key in expectation.activity.items()
    }
    if fmt == "agents":
        assert expectation.count[EMPTIED] == 0
    assert set(expectation.count) >= set(IDS)
    return expectation


def sqlite_rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def walk(store, order: str, descending: bool, page_size: int) -> list[Any]:
    """Every session through ``list_sessions`` pages of one order."""
    out: list[Any] = []
    cursor = None
    for _ in range(1000):
        page = await store.reader.list_sessions(
            limit=page_size, cursor=cursor, order=order, descending=descending
        )
        assert len(page.sessions) <= page_size
        out.extend(page.sessions)
        if page.cursor is None:
            return out
        assert len(page.sessions) == page_size, "a short page must be the last"
        cursor = page.cursor
    raise AssertionError("paging does not end")


# --------------------------------------------------------------------------- the contract


@pytest.mark.parametrize("order", ORDERS)
async def test_pages_cover_every_session_once_in_order(written, order):
    async with await open_store(written.url) as store:
        for descending in (True, False):
            expected = written.expected(order, descending)
            for page_size in (1, 3, 7, 100):
                listed = await walk(store, order, descending, page_size)
                ids = [s.id for s in listed]
                assert len(ids) == len(set(ids)), f"listed twice ({order}, {page_size})"
                assert ids == expected, (order, descending, page_size)
                assert {s.id: s.messages for s in listed} == written.count


async def test_default_order_is_activity_most_recent_first(written):
    async with await open_store(written.url) as store:
        for page_size in (2, 50):
            plain = await store.reader.list_sessions(limit=page_size)
            explicit = await store.reader.list_sessions(limit=page_size, order="activity", descending=True)
            assert [s.id for s in plain.sessions] == [s.id for s in explicit.sessions]
            assert plain.cursor == explicit.cursor
        assert [s.id for s in await walk(store, "activity", True, 5)] == written.expected(
            "activity", True
        )


async def test_rows_of_every_order_agree_with_session_info(written):
    async with await open_store(written.url) as store:
        reference = {sid: (await store.reader.session_info(sid)).to_dict() for sid in written.count}
        for order in ORDERS:
            for descending in (True, False):
                for info in await walk(store, order, descending, 6):
                    assert info.to_dict() == reference[info.id], (order, descending)


async def test_orders_are_deterministic(written):
    """Ties (same count, same updated_at second) come back the same way every time."""
    async with await open_store(written.url) as store:
        for order in ORDERS:
            first = [s.id for s in await walk(store, order, True, 4)]
            again = [s.id for s in await walk(store, order, True, 3)]
            assert first == again
            backwards = [s.id for s in await walk(store, order, False, 5)]
            assert backwards == first[::-1], order


# --------------------------------------------------------------------------- edges


@pytest.fixture
async def empty_store(target):
    fmt, _, url = target
    async with await open_store(url, create=fmt) as store:
        yield store


async def test_empty_store_and_limit_zero_in_every_order(empty_store):
    for order in ORDERS:
        for descending in (True, False):
            page = await empty_store.reader.list_sessions(limit=10, order=order, descending=descending)
            assert page.sessions == [] and page.cursor is None
    await empty_store.writer.add_messages("only", [{"role": "user", "content": "hi"}])
    for order in ORDERS:
        for descending in (True, False):
            page = await empty_store.reader.list_sessions(limit=1, order=order, descending=descending)
            assert [s.id for s in page.sessions] == ["only"]
            assert page.cursor is not None  # a full page: the next one tells
            rest = await empty_store.reader.list_sessions(
                limit=1, cursor=page.cursor, order=order, descending=descending
            )
            assert rest.sessions == [] and rest.cursor is None
            zero = await empty_store.reader.list_sessions(limit=0, order=order, descending=descending)
            assert zero.sessions == [] and zero.cursor is None


async def test_unknown_order_is_refused(empty_store):
    with pytest.raises(ValueError, match="unknown session order"):
        await empty_store.reader.list_sessions(order="size")  # type: ignore[arg-type]


async def test_flux_sqlite_id_order_reads_only_the_page(tmp_path):
    """flux has no sessions table: the id order hops through the session index, one seek
    per listed session, and never scans the table (checked on SQLite's own plan)."""
    path = tmp_path / "flux.db"
    await _write_flux_sqlite(path)
    async with await open_store(str(path)) as store:
        ran: list[tuple[str, dict]] = []
        fetchall = store.backend.fetchall

        async def recording(sql: str, params: dict | None = None):
            ran.append((sql, dict(params or {})))
            return await fetchall(sql, params)

        store.backend.fetchall = recording  # records the SQL; the database still answers
        first = await store.reader.list_sessions(limit=5, order="id")
        await store.reader.list_sessions(limit=5, order="id", cursor=first.cursor, descending=True)
        await store.reader.list_sessions(limit=5, order="id", cursor=first.cursor, descending=False)
    assert len(ran) == 3
    conn = sqlite3.connect(str(path))
    try:
        for sql, params in ran:
            plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params)]
            scans = [step for step in plan if step.startswith("SCAN") and "ids" not in step
                     and "CONSTANT ROW" not in step]
            assert scans == [], plan
            assert any("USING COVERING INDEX idx_session (session_id" in s for s in plan), plan
    finally:
        conn.close()


async def test_agents_postgres_sessions_with_equal_update_times(pg_url):
    """Sessions whose ``updated_at`` ties (written in one transaction: an import, a batch)
    are ordered by their latest item, by ``id`` as ``SQLAlchemySession`` reads it; a session's key is the same in every order's pages and in ``session_info``
    (the latest item is looked up only for tied sessions)."""
    await _write_agents_pg(pg_url)
    # The library wrote every row; then groups of sessions get one update time, as when
    # one transaction touched them all (the SDK stamps updated_at with the server's time).
    groups = [IDS[0:5], IDS[5:7], IDS[10:18] + [EMPTIED]]
    conn = await asyncpg.connect(_plain_pg(pg_url))
    try:
        for i, group in enumerate(groups):
            await conn.execute(
                "UPDATE agent_sessions SET updated_at = TIMESTAMP '2026-01-01' + $1 * INTERVAL '1 hour'"
                " WHERE session_id = ANY($2::text[])", i, group)
    finally:
        await conn.close()
    expectation = _agents_expectation(
        pg_url,
        await _pg_rows(pg_url, "SELECT session_id, updated_at FROM agent_sessions"),
        await _pg_rows(pg_url, "SELECT id, session_id, created_at FROM agent_messages"),
    )
    expectation.rank = await _rank("postgres", pg_url, list(expectation.count))
    expectation.activity = {sid: (*key, expectation.rank[sid]) for sid, key in expectation.activity.items()}
    async with await open_store(pg_url) as store:
        for descending in (True, False):
            for page_size in (1, 2, 3, 7, 100):
                listed = await walk(store, "activity", descending, page_size)
                assert [s.id for s in listed] == expectation.expected("activity", descending), (
                    descending, page_size)
        keys = {s.id: s.sort_key for s in await walk(store, "activity", True, 4)}
        tied = {sid for group in groups for sid in group}
        assert {sid for sid, key in keys.items() if key[1]} == tied - {EMPTIED}
        for order in ORDERS:
            assert {s.id: s.sort_key for s in await walk(store, order, False, 6)} == keys, order
        for sid in expectation.count:
            assert (await store.reader.session_info(sid)).sort_key == keys[sid]
        assert {s.id: s.sort_key for s in await store.reader.sessions_by_ids(list(keys))} == keys
