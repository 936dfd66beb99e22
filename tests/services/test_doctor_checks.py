"""The session doctor's checks on sessions the real libraries wrote: every broken shape
is found exactly, on SQLite and on Postgres, and healthy sessions are clean."""

from __future__ import annotations

import sqlite3

import pytest
from agents import SQLiteSession
from doctor_helpers import (
    HEALTHY, AlchemySessions, add_agents, add_flux, call, expected, found, output, user, write_shapes,
)
from helpers import all_messages

from fluxgui.adapters import open_store
from fluxgui.services.doctor import check_session, check_sessions
from fluxgui.services.doctor.conventions import OUTPUT_TYPE


async def _check_all(target: str, **options) -> None:
    store = await open_store(target, **options)
    try:
        reports = [r async for r in check_sessions(store)]
        assert {r.session_id for r in reports} == set(expected())
        for report in reports:
            messages = await all_messages(store, report.session_id)
            assert found(report, messages) == expected()[report.session_id], report.session_id
            assert all(p.detail and "\n" not in p.detail for p in report.problems)
    finally:
        await store.close()


async def test_shapes_on_sqlite(tmp_path):
    path = tmp_path / "agents.db"
    await write_shapes(lambda sid: SQLiteSession(sid, str(path)))
    await _check_all(str(path))


@pytest.mark.postgres
async def test_shapes_on_postgres(pg_url):
    sessions = AlchemySessions(pg_url)
    await write_shapes(sessions)
    await sessions.dispose()
    await _check_all(pg_url)


async def test_non_json_row_is_malformed_and_skipped_like_the_sdk(tmp_path):
    path = tmp_path / "agents.db"
    await add_agents(path, {"s": [user("hi"), user("garbage soon"), call("c1"), output("c1")]})
    # A row damaged on disk (the library never writes one; it skips it when reading).
    conn = sqlite3.connect(path)
    conn.execute("UPDATE agent_messages SET message_data = '{not json' WHERE id = 2")
    conn.commit()
    conn.close()
    store = await open_store(str(path))
    try:
        report = await check_session(store, "s")
    finally:
        await store.close()
    assert [(p.code, p.message_ids) for p in report.problems] == [("malformed_item", (2,))]
    assert "skips it" in report.problems[0].detail


async def test_limit_split(tmp_path):
    path = tmp_path / "agents.db"
    await add_agents(path, {"s": HEALTHY})
    store = await open_store(str(path))
    try:
        messages = await all_messages(store, "s")
        split = await check_session(store, "s", limit=4)  # keeps the output, not its call
        whole = await check_session(store, "s", limit=5)  # keeps both
    finally:
        await store.close()
    assert found(split, messages) == [("limit_split", [2, 3])]
    assert "SessionSettings(limit=4)" in split.problems[0].detail
    assert whole.problems == ()


async def test_flux_and_chat_conventions(tmp_path):
    path = tmp_path / "flux.db"
    tool_calls = [{"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]
    await add_flux(path, {
        "ok": [
            {"role": "user", "content": "find it"},
            {"role": "assistant", "content": "", "metadata": {"tool_calls": tool_calls}},
            {"role": "tool", "content": "found", "metadata": {"tool_call_id": "t1"}},
            {"role": "assistant", "content": "Here."},
        ],
        "broken": [
            {"role": "user", "content": "find it"},
            {"role": "assistant", "content": "", "metadata": {"tool_calls": tool_calls}},
            {"role": "user", "content": "well?"},
            {"role": "tool", "content": "stray", "metadata": {"tool_call_id": "t9"}},
            {"role": "tool", "content": "no id at all"},
        ],
    })
    store = await open_store(str(path))
    try:
        ok = await check_session(store, "ok")
        broken = await check_session(store, "broken")
        messages = await all_messages(store, "broken")
    finally:
        await store.close()
    assert ok.problems == ()
    assert found(broken, messages) == [
        ("orphan_call", [1]), ("orphan_output", [3]), ("orphan_output", [4]),
    ]


async def test_encrypted_items_checked_with_the_key_not_without(tmp_path):
    from agents.extensions.memory import EncryptedSession

    path = tmp_path / "enc.db"
    key = "a secret master key"

    async def write():
        for sid, items in (("enc-ok", HEALTHY), ("enc-broken", [user("hi"), call("c_x")])):
            inner = SQLiteSession(sid, str(path))
            s = EncryptedSession(session_id=sid, underlying_session=inner, encryption_key=key)
            await s.add_items(items)
            inner.close()

    await write()
    with_key = await open_store(str(path), key=key)
    without = await open_store(str(path))
    try:
        assert (await check_session(with_key, "enc-ok")).problems == ()
        broken = await check_session(with_key, "enc-broken")
        assert [p.code for p in broken.problems] == ["orphan_call"]
        locked = await check_session(without, "enc-broken")
    finally:
        await with_key.close()
        await without.close()
    assert locked.problems == () and len(locked.unchecked) == 2
    assert locked.to_dict()["unchecked"] == list(locked.unchecked)


def test_output_types_are_the_sdks():
    from agents.run_internal.items import _TOOL_CALL_TO_OUTPUT_TYPE

    assert {k: v for k, v in OUTPUT_TYPE.items() if k != "mcp_approval_request"} == _TOOL_CALL_TO_OUTPUT_TYPE
