"""A SQLite file holding two Agents SDK stores (two table pairs), written by the real
openai-agents library twice with different table names: opening it without naming the
tables lists the pairs (to choose from); naming them opens that store."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import assert_known_error, ok_lines, run_cli, write_agents

from fluxgui.adapters import open_store
from fluxgui.adapters.sql.detect import table_pairs
from fluxgui.core.errors import NotASessionStore, SeveralStores

SUPPORT = {"sessions_table": "support_sessions", "messages_table": "support_messages"}
SALES = {"sessions_table": "sales_sessions", "messages_table": "sales_messages"}


@pytest.fixture
def two_pairs(tmp_path: Path) -> Path:
    path = tmp_path / "two.db"
    write_agents(path, {"ticket-1": [{"role": "user", "content": "my order is late"}]}, **SUPPORT)
    write_agents(
        path,
        {
            "lead-1": [{"role": "user", "content": "a quote please"}],
            "lead-2": [{"role": "user", "content": "pricing?"}],
        },
        **SALES,
    )
    return path


def test_table_pairs_pairs_by_name() -> None:
    cols_s = ["session_id", "created_at", "updated_at"]
    cols_m = ["id", "session_id", "message_data", "created_at"]
    tables = {"a_sessions": cols_s, "a_messages": cols_m, "b_sessions": cols_s, "b_messages": cols_m}
    assert table_pairs(tables) == [("a_sessions", "a_messages"), ("b_sessions", "b_messages")]
    # names that do not pair: each messages table with each sessions table left
    assert table_pairs({"s1": cols_s, "m1": cols_m}) == [("s1", "m1")]
    assert table_pairs({"x": ["id"]}) == []


async def test_opening_without_tables_lists_the_pairs(two_pairs: Path) -> None:
    with pytest.raises(SeveralStores) as caught:
        await open_store(str(two_pairs))
    assert caught.value.pairs == [
        ("sales_sessions", "sales_messages"),
        ("support_sessions", "support_messages"),
    ]
    assert caught.value.sessions == {
        ("sales_sessions", "sales_messages"): 2,
        ("support_sessions", "support_messages"): 1,
    }
    assert isinstance(caught.value, NotASessionStore)  # still "no store" to old callers
    assert "--sessions-table" in str(caught.value)
    assert '"sales_sessions" + "sales_messages": 2 sessions;' in str(caught.value)


async def test_a_big_sessions_table_is_counted_up_to_the_cap(
    two_pairs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # counted up to the cap and one, never further: a bigger table is "more than"
    import fluxgui.adapters.registry as registry
    import fluxgui.core.text as text

    from agents import SQLiteSession

    third = SQLiteSession("lead-3", str(two_pairs), **SALES)
    await third.add_items([{"role": "user", "content": "a third lead"}])
    third.close()
    monkeypatch.setattr(registry, "COUNT_CAP", 1)
    monkeypatch.setattr(text, "COUNT_CAP", 1)
    with pytest.raises(SeveralStores) as caught:
        await open_store(str(two_pairs))
    assert caught.value.sessions == {
        ("sales_sessions", "sales_messages"): 2,  # of 3: the count stopped at the cap + 1
        ("support_sessions", "support_messages"): 1,
    }
    assert '"sales_messages": more than 1 session;' in str(caught.value)
    assert '"support_messages": 1 session)' in str(caught.value)


@pytest.mark.postgres
async def test_a_pair_that_cannot_be_counted_is_listed_without_a_count(pg_url: str) -> None:
    # Two pairs written by SQLAlchemySession; a login that may not read one sessions table
    # still lists both, the other with its count, and opens the one it may read.
    import uuid

    import asyncpg
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
    from sqlalchemy import make_url
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(pg_url)
    try:
        for sid, tables in (("ticket-1", SUPPORT), ("lead-1", SALES), ("lead-2", SALES)):
            session = SQLAlchemySession(sid, engine=engine, create_tables=True, **tables)
            await session.add_items([{"role": "user", "content": f"hello from {sid}"}])
    finally:
        await engine.dispose()
    role = f"fluxgui_r_{uuid.uuid4().hex[:8]}"
    plain = pg_url.replace("+asyncpg", "")
    admin = await asyncpg.connect(plain)
    try:
        await admin.execute(f"CREATE ROLE {role} LOGIN")
        await admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        await admin.execute(f"REVOKE SELECT ON support_sessions FROM {role}")
        user_url = make_url(pg_url).set(username=role).render_as_string(hide_password=False)
        with pytest.raises(SeveralStores) as caught:
            await open_store(user_url)
        assert set(caught.value.pairs) == {("sales_sessions", "sales_messages"),
                                           ("support_sessions", "support_messages")}
        assert caught.value.sessions == {("sales_sessions", "sales_messages"): 2}
        assert '; "support_sessions" + "support_messages")' in str(caught.value)
        store = await open_store(user_url, **SALES)
        try:
            assert store.tables.others == [("support_sessions", "support_messages")]
            assert store.tables.sessions == {("sales_sessions", "sales_messages"): 2}
            assert [s.id for s in (await store.reader.list_sessions(limit=5)).sessions] == ["lead-2", "lead-1"]
        finally:
            await store.close()
    finally:
        await admin.execute(f"DROP OWNED BY {role}")
        await admin.execute(f"DROP ROLE IF EXISTS {role}")
        await admin.close()


async def test_naming_the_tables_opens_that_store(two_pairs: Path) -> None:
    store = await open_store(str(two_pairs), **SALES)
    try:
        page = await store.reader.list_sessions(limit=10)
        assert sorted(s.id for s in page.sessions) == ["lead-1", "lead-2"]
    finally:
        await store.close()


def test_cli_says_which_pairs_and_takes_the_flags(two_pairs: Path) -> None:
    line = assert_known_error(run_cli("ls", str(two_pairs)), "2 Agents SDK stores", "support_sessions", "sales_messages")
    assert '"support_sessions" + "support_messages": 1 session)' in line
    assert "--messages-table" in line
    result = run_cli("ls", str(two_pairs), "--sessions-table", "support_sessions", "--messages-table", "support_messages")
    assert result.returncode == 0, result.stderr
    assert any("ticket-1" in line for line in ok_lines(result))
