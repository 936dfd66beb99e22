"""Repairs and rewinds, written as one change, read back by the owning library, undone
exactly; and the real ``agents.Runner`` against a loopback Responses API that refuses
what the real API refuses: it rejects the broken sessions, accepts the repaired ones, and
sends exactly what the preflight says."""

from __future__ import annotations

import sqlite3

import pytest
from agents import SQLiteSession
from doctor_helpers import (
    HEALTHY, SHAPES, AlchemySessions, add_agents, add_flux, call, expected, preflight_equals_sent, user,
    write_shapes,
)
from helpers import all_messages
from responses_server import ResponsesServer

from fluxgui.adapters import open_store
from fluxgui.services.doctor import check_session
from fluxgui.services.doctor.repairs import REPAIRABLE, apply_plan, plan_repair, plan_rewind

#: what the API says to each shape once the SDK has built its request (None: accepted;
#: the SDK drops an orphan call, and the reasoning before it, on its own)
REFUSED = {
    "healthy": None,
    "orphan-call": None,
    "popped": None,
    "orphan-output": "No tool call found for function call output with call_id call_gone",
    "dangling-reasoning": "Item 'rs_dr' of type 'reasoning' was provided without its required following item",
    "empty-reasoning": "a reasoning item needs a summary or encrypted_content",
    "duplicate-id": "Duplicate item found with id msg_dup",
    "malformed": "Invalid type for 'input[1]'",
}


async def test_sdk_rejects_broken_accepts_repaired_and_sends_the_preflight(tmp_path):
    path = tmp_path / "agents.db"
    await write_shapes(lambda sid: SQLiteSession(sid, str(path)))
    with ResponsesServer() as server:
        for sid in expected():
            store = await open_store(str(path), writable=True)
            try:
                session = SQLiteSession(sid, str(path))
                error = await preflight_equals_sent(store, server, sid, session)
                want = REFUSED[sid]
                assert (error is None) == (want is None), (sid, error)
                if want is not None:
                    assert want in error, (sid, error)
                    # The SDK saved the new user message although the request failed.
                    assert (await session.get_items())[-1] == {"role": "user", "content": "next question"}
                messages = await all_messages(store, sid)
                plan = plan_repair(sid, messages, REPAIRABLE, items=True)
                if not plan.empty:
                    await apply_plan(store, plan)
                assert (await check_session(store, sid)).problems == ()
                # The repaired session reads back in the library exactly as planned.
                assert await session.get_items() == [m.raw for m in plan.after]
                assert await preflight_equals_sent(store, server, sid, session) is None, sid
                session.close()
            finally:
                await store.close()


@pytest.mark.postgres
async def test_repair_on_postgres_is_one_change_and_undoes(pg_url):
    session = AlchemySessions(pg_url)
    await write_shapes(session)
    store = await open_store(pg_url, writable=True)
    try:
        for sid in ("orphan-call", "orphan-output", "dangling-reasoning", "duplicate-id", "malformed"):
            before = await all_messages(store, sid)
            plan = plan_repair(sid, before, REPAIRABLE, items=True)
            change = await apply_plan(store, plan)
            assert (await check_session(store, sid)).problems == ()
            reader = session(sid)
            assert await reader.get_items() == [m.raw for m in plan.after]
            await store.writer.apply_change(change.inverse())
            again = await all_messages(store, sid)
            assert [(m.id, m.raw, m.created_at) for m in again] == [
                (m.id, m.raw, m.created_at) for m in before
            ]
    finally:
        await store.close()
        await session.dispose()


async def test_orphan_call_completed_in_place_and_undo_restores_rows(tmp_path):
    path = tmp_path / "agents.db"
    items = [user("q"), call("c1"), user("r"), *HEALTHY]
    await add_agents(path, {"s": items})
    rows = lambda: sqlite3.connect(path).execute(  # noqa: E731
        "SELECT id, message_data, created_at FROM agent_messages ORDER BY id").fetchall()
    original = rows()
    store = await open_store(str(path), writable=True)
    try:
        plan = plan_repair("s", await all_messages(store, "s"), ["orphan_call"], items=True,
                           cancel_text="Stopped by the user.")
        assert [line.mark for line in plan.diff()][:4] == [" ", " ", "+", " "]
        change = await apply_plan(store, plan)
        after = await all_messages(store, "s")
        assert after[2].raw == {"type": "function_call_output", "call_id": "c1",
                                "output": "Stopped by the user."}
        assert [m.raw for m in after[3:]] == items[2:]  # the rest moved on, unchanged
        reader = SQLiteSession("s", str(path))
        assert (await reader.get_items())[2] == after[2].raw
        reader.close()
        await store.writer.apply_change(change.inverse())
    finally:
        await store.close()
    assert rows() == original


async def test_drop_calls_drops_the_reasoning_left_dangling(tmp_path):
    path = tmp_path / "agents.db"
    items, _problems = SHAPES["orphan-call"]
    await add_agents(path, {"s": items})
    store = await open_store(str(path), writable=True)
    try:
        messages = await all_messages(store, "s")
        plan = plan_repair("s", messages, REPAIRABLE, items=True, drop_calls=True)
        assert plan.delete == (messages[1].id, messages[2].id)  # the call, then its reasoning
        assert [p.code for p in plan.fixed] == ["orphan_call", "dangling_reasoning"]
    finally:
        await store.close()


async def test_rewind_whole_turns(tmp_path):
    path = tmp_path / "agents.db"
    await add_agents(path, {"s": [{"role": "system", "content": "be brief"}, *HEALTHY]})
    store = await open_store(str(path), writable=True)
    try:
        messages = await all_messages(store, "s")
        last = plan_rewind("s", messages, last=True)
        assert last.delete == tuple(m.id for m in messages[6:])  # "and tomorrow?" + answer
        to_zero = plan_rewind("s", messages, to_turn=0)
        assert to_zero.delete == tuple(m.id for m in messages[1:])  # the system prompt stays
        change = await apply_plan(store, last)
        reader = SQLiteSession("s", str(path))
        assert await reader.get_items() == [{"role": "system", "content": "be brief"}, *HEALTHY[:5]]
        reader.close()
        await store.writer.apply_change(change.inverse())
        assert len(await all_messages(store, "s")) == len(messages)
        with pytest.raises(Exception, match="nothing comes after turn 2"):
            plan_rewind("s", messages, to_turn=2)
    finally:
        await store.close()


async def test_flux_orphan_call_completed_reads_back_in_flux(tmp_path):
    from flux.sessions import SQLiteSession as FluxSession

    path = tmp_path / "flux.db"
    tool_calls = [{"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]
    await add_flux(path, {"s": [
        {"role": "user", "content": "find it"},
        {"role": "assistant", "content": "", "metadata": {"tool_calls": tool_calls}},
        {"role": "user", "content": "well?"},
    ]})
    store = await open_store(str(path), writable=True)
    try:
        plan = plan_repair("s", await all_messages(store, "s"), REPAIRABLE, items=False)
        await apply_plan(store, plan)
        assert (await check_session(store, "s")).problems == ()
    finally:
        await store.close()
    got = await FluxSession(str(path), session_id="s").get_messages()
    assert got[2] == {"role": "tool", "content": plan.insert[0].spec["content"],
                      "metadata": {"tool_call_id": "t1"}}


async def test_encrypted_repair_is_sealed_for_the_library(tmp_path):
    from agents.extensions.memory import EncryptedSession

    path = tmp_path / "enc.db"
    key = "a secret master key"
    inner = SQLiteSession("s", str(path))
    enc = EncryptedSession(session_id="s", underlying_session=inner, encryption_key=key)
    await enc.add_items([user("hi"), call("c1"), user("again")])
    store = await open_store(str(path), writable=True, key=key)
    try:
        plan = plan_repair("s", await all_messages(store, "s"), REPAIRABLE, items=True)
        await apply_plan(store, plan)
    finally:
        await store.close()
    items = await enc.get_items()
    inner.close()
    assert items[2] == {"type": "function_call_output", "call_id": "c1", "output": plan.insert[0].spec["output"]}
    raw = sqlite3.connect(path).execute("SELECT message_data FROM agent_messages").fetchall()
    assert all('"__enc__"' in r[0] for r in raw)


async def test_stores_without_edits_refuse_repairs_with_the_reason(tmp_path):
    from advanced_helpers import SID, write_library_store

    path = tmp_path / "adv.db"
    await write_library_store(path)
    store = await open_store(str(path), writable=True)
    try:
        messages = await all_messages(store, SID)
        plan = plan_rewind(SID, messages, last=True)
        with pytest.raises(Exception, match="AdvancedSQLiteSession store"):
            await apply_plan(store, plan)
    finally:
        await store.close()
