"""The shapes sessions really break in (the Agents SDK's issue tracker), each written by
the real libraries: a streamed run's tool output saved twice, a history saved again
after a run, same-instant rows read back out of order in ``SQLAlchemySession`` (SQLite
and Postgres), an approval resumed without its deferred items. ``check`` reports
exactly the new codes, ``--fix all`` leaves the session clean and read back by the
library, and the SDK's request from the repaired session is accepted by the loopback
Responses API, which refuses the broken ones where the API does; the preflight is what
the SDK sends, before and after."""

from __future__ import annotations

import pytest
from agents import Agent, Runner, SQLiteSession
from doctor_helpers import (
    MISORDERED, AlchemySessions, approval_orphans, preflight_equals_sent, save_differing_outputs,
    save_output_twice,
)
from helpers import all_messages
from responses_server import ResponsesServer, sdk_model

from fluxgui.adapters import open_store
from fluxgui.services.doctor import check_session
from fluxgui.services.doctor.preflight import preflight
from fluxgui.services.doctor.repairs import REPAIRABLE, apply_plan, plan_repair

NEXT = {"role": "user", "content": "next question"}


async def _repair_and_resume(store, server, sid: str, session, codes: list[str], refused: str | None):
    """Check finds ``codes`` exactly; the SDK's request is refused with ``refused`` (or
    accepted); repair all; clean, read back by the library, accepted."""
    report = await check_session(store, sid)
    assert [p.code for p in report.problems] == codes, (sid, report.to_dict())
    error = await preflight_equals_sent(store, server, sid, session)
    if refused is None:
        assert error is None, (sid, error)
    else:
        assert error is not None and refused in error, (sid, error)
    plan = plan_repair(sid, await all_messages(store, sid), REPAIRABLE, items=True)
    await apply_plan(store, plan)
    assert (await check_session(store, sid)).problems == ()
    assert await session.get_items() == [m.raw for m in plan.after]
    assert await preflight_equals_sent(store, server, sid, session) is None, sid
    return plan


async def test_outputs_saved_twice_and_a_history_saved_again(tmp_path):
    path = tmp_path / "agents.db"
    twice = SQLiteSession("saved-twice", str(path))
    await save_output_twice(twice)
    differ = SQLiteSession("differing", str(path))
    await save_differing_outputs(differ)
    again = SQLiteSession("saved-again", str(path))
    with ResponsesServer() as server:
        async with sdk_model(server) as model:
            # Code that adds the run's input list to a session the run already saved into.
            result = await Runner.run(Agent(name="a", instructions="x", model=model), "hi", session=again)
            await again.add_items(result.to_input_list())
        store = await open_store(str(path), writable=True)
        try:
            stored = [m.raw for m in await all_messages(store, "saved-twice")]
            assert [i.get("type", "message") for i in stored] == [
                "message", "function_call", "function_call_output", "function_call_output", "message"]
            # The SDK sends only the last of a call's outputs: accepted either way.
            plan = await _repair_and_resume(store, server, "saved-twice", twice, ["duplicate_output"], None)
            assert [line.mark for line in plan.diff()][:5] == [" ", " ", " ", "-", " "]
            differing = await all_messages(store, "differing")
            plan = await _repair_and_resume(store, server, "differing", differ, ["duplicate_output"], None)
            assert plan.delete == (differing[2].id,)  # the last output stays: the one sent
            # What fails the request is the repeated id; the repeated run alone would not.
            assert [p.code for p in (await preflight(store, "saved-again")).problems] == ["duplicate_id"]
            plan = await _repair_and_resume(
                store, server, "saved-again", again, ["duplicate_id", "repeated_items"],
                "Duplicate item found with id msg_srv1",
            )
            # The copies went; the first exchange and the message the refused run saved stay.
            assert [m.raw for m in plan.after] == [plan.before[0].raw, plan.before[1].raw, NEXT]
        finally:
            await store.close()
    for s in (twice, differ, again):
        s.close()


async def test_keep_first_of_differing_outputs(tmp_path):
    path = tmp_path / "agents.db"
    session = SQLiteSession("differing", str(path))
    await save_differing_outputs(session)
    store = await open_store(str(path), writable=True)
    try:
        messages = await all_messages(store, "differing")
        first = plan_repair("differing", messages, ["duplicate_output"], items=True, keep="first")
        assert first.delete == (messages[3].id,)
        picked = plan_repair("differing", messages, ["duplicate_output"], items=True, keep_ids={messages[2].id})
        assert picked.delete == (messages[3].id,)
        await apply_plan(store, first)
        assert [i.get("output") for i in await session.get_items() if "output" in i] == ["rain, 9 °C"]
    finally:
        await store.close()
        session.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def alchemy_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'sa.db'}"
    return request.getfixturevalue("pg_url")


async def test_misordered_reasoning_moved_back_on_sqlalchemy(alchemy_url):
    sessions = AlchemySessions(alchemy_url)
    try:
        session = sessions("misordered")
        # One add_items: every row of it has the same stored time.
        await session.add_items(MISORDERED)
        store = await open_store(alchemy_url, writable=True)
        try:
            before = await all_messages(store, "misordered")
            report = await check_session(store, "misordered")
            assert [(p.code, p.message_ids) for p in report.problems] == [
                ("misordered_reasoning", (before[2].id, before[1].id)),
                ("misordered_reasoning", (before[5].id, before[4].id)),
            ]
            assert all("was provided without its required following item" in p.detail for p in report.problems)
            with ResponsesServer() as server:
                plan = await _repair_and_resume(
                    store, server, "misordered", session, ["misordered_reasoning"] * 2,
                    "Item 'rs_mo1' of type 'reasoning' was provided without its required following item",
                )
            assert plan.delete == () and plan.insert == ()
            after = await all_messages(store, "misordered")
            assert [m.raw for m in after[:8]] == [MISORDERED[i] for i in (0, 2, 1, 3, 5, 4, 6, 7)]
            # Every row kept its values, its time included.
            assert {m.created_at for m in after[:8]} == {before[0].created_at}
        finally:
            await store.close()
    finally:
        await sessions.dispose()


async def test_approval_orphans(tmp_path):
    path = tmp_path / "agents.db"
    await approval_orphans(lambda sid: SQLiteSession(sid, str(path)))
    store = await open_store(str(path), writable=True)
    try:
        with ResponsesServer() as server:
            fn = SQLiteSession("approval-function", str(path))
            report = await check_session(store, "approval-function")
            assert "No tool call found for function call output with call_id call_ORPHAN" in report.problems[0].detail
            plan = await _repair_and_resume(
                store, server, "approval-function", fn, ["orphan_output"],
                "No tool call found for function call output with call_id call_ORPHAN",
            )
            assert len(plan.delete) == 1 and plan.insert == ()  # nothing names the call: dropped
            mcp = SQLiteSession("approval-mcp", str(path))
            detail = (await check_session(store, "approval-mcp")).problems[0].detail
            assert detail.startswith("mcp_approval_response for 'mcpr_1' answers no earlier mcp_approval_request")
            plan = await _repair_and_resume(store, server, "approval-mcp", mcp, ["orphan_output"], None)
            assert plan.delete == ()
            assert [i.spec for i in plan.insert] == [{
                "type": "mcp_approval_request", "id": "mcpr_1", "name": "list_issues",
                "arguments": '{"repo": "fluxgui"}', "server_label": "github",
            }]
            assert (await mcp.get_items())[1]["type"] == "mcp_approval_request"
            fn.close()
            mcp.close()
    finally:
        await store.close()


async def test_a_pending_async_call_is_no_orphan(tmp_path):
    """An external async call still running (``"async": true``, no output yet) is kept by
    the SDK when it reads the session (openai-agents 0.25) and taken by the API: the
    doctor reports nothing, the preflight is what the SDK sends (the call in it); the
    same call without ``async`` is an orphan the API refuses."""
    path = tmp_path / "agents.db"
    async_call = {"type": "function_call", "call_id": "call_LATER", "name": "ship_order",
                  "arguments": '{"order": 42}', "async": True, "status": "completed"}
    sync_call = {k: v for k, v in async_call.items() if k != "async"}
    head = [{"role": "user", "content": "Ship order 42 and tell me when."}]
    for sid, call in (("pending", async_call), ("orphan", sync_call)):
        session = SQLiteSession(sid, str(path))
        await session.add_items([*head, call])
        session.close()
    async with await open_store(str(path), writable=True) as store:
        with ResponsesServer() as server:
            pending = SQLiteSession("pending", str(path))
            assert (await check_session(store, "pending")).problems == ()
            assert await preflight_equals_sent(store, server, "pending", pending) is None
            assert async_call in (await preflight(store, "pending")).input
            orphan = SQLiteSession("orphan", str(path))
            assert [p.code for p in (await check_session(store, "orphan")).problems] == ["orphan_call"]
            pending.close()
            orphan.close()


async def test_flux_chat_convention(tmp_path):
    from doctor_helpers import add_flux
    from flux.sessions import SQLiteSession as FluxSession

    path = tmp_path / "flux.db"
    calls = [{"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]
    asked = {"role": "assistant", "content": "", "metadata": {"tool_calls": calls}}
    await add_flux(path, {
        "twice": [
            {"role": "user", "content": "find it"}, asked,
            {"role": "tool", "content": "found", "metadata": {"tool_call_id": "t1"}},
            {"role": "tool", "content": "found again", "metadata": {"tool_call_id": "t1"}},
            {"role": "assistant", "content": "Here."},
        ],
        "again": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}] * 2,
    })
    store = await open_store(str(path), writable=True)
    try:
        twice = await check_session(store, "twice")
        assert [p.code for p in twice.problems] == ["duplicate_output"]
        assert "tool message for call 't1'" in twice.problems[0].detail
        again = await check_session(store, "again")
        assert [p.code for p in again.problems] == ["repeated_items"]
        # flux sends the exchange twice; no API refuses that: preflight finds nothing.
        assert (await preflight(store, "again")).problems == ()
        for sid in ("twice", "again"):
            plan = plan_repair(sid, await all_messages(store, sid), REPAIRABLE, items=False, keep="first")
            await apply_plan(store, plan)
            assert (await check_session(store, sid)).problems == ()
    finally:
        await store.close()
    got = await FluxSession(str(path), session_id="twice").get_messages()
    assert [m["content"] for m in got] == ["find it", "", "found", "Here."]
    got = await FluxSession(str(path), session_id="again").get_messages()
    assert [m["content"] for m in got] == ["hi", "Hello!"]


async def test_move_is_one_change_that_undoes(tmp_path):
    import sqlite3

    path = tmp_path / "agents.db"
    session = SQLiteSession("s", str(path))
    await session.add_items(MISORDERED)
    rows = lambda: sqlite3.connect(path).execute(  # noqa: E731
        "SELECT id, message_data, created_at FROM agent_messages ORDER BY id").fetchall()
    original = rows()
    store = await open_store(str(path), writable=True)
    try:
        plan = plan_repair("s", await all_messages(store, "s"), ["misordered_reasoning"], items=True)
        assert plan.summary() == "moves 2 messages (misordered_reasoning ×2)"
        change = await apply_plan(store, plan)
        moved = rows()
        # Same stored text and time, in the new order; the rows from the first move on
        # have new ids (one transaction).
        assert [(r[1], r[2]) for r in moved] == [(original[i][1], original[i][2]) for i in (0, 2, 1, 3, 5, 4, 6, 7)]
        assert await session.get_items() == [MISORDERED[i] for i in (0, 2, 1, 3, 5, 4, 6, 7)]
        await store.writer.apply_change(change.inverse())
    finally:
        await store.close()
        session.close()
    assert rows() == original


async def test_one_message_said_again_and_again_is_no_repeated_run(tmp_path):
    """A user sending the same message over and over is not a history saved twice; an
    exchange repeated word for word is reported (its sentence says it may be a user)."""
    from doctor_helpers import add_agents, answer, user

    path = tmp_path / "agents.db"
    await add_agents(path, {
        "retries": [user("are you there?")] * 6,
        "exchange": [user("ping"), answer("pong", "msg_a"), user("ping"), answer("pong", "msg_b")],
    })
    store = await open_store(str(path))
    try:
        assert (await check_session(store, "retries")).problems == ()
        (problem,) = (await check_session(store, "exchange")).problems
        ids = [m.id for m in await all_messages(store, "exchange")]
    finally:
        await store.close()
    assert problem.code == "repeated_items" and problem.message_ids == (ids[2], ids[3])
    assert "a user repeating an exchange word for word" in problem.detail
