"""Replay from turn N (issue 38): a scripted model on a loopback OpenAI-compatible
server replays sessions written by the real libraries (Agents SDK items, flux messages
with ``tool_calls`` metadata); its tools are answered from the record, never run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers import agents_read as _agents_read
from helpers import flux_read as _flux_read
from helpers import sqlite_rows
from replay_helpers import ANSWERS, CALLS, FAIL, SID, USERS, ScriptedServer, faithful_script
from replay_helpers import write_session as _write_session

from fluxgui.adapters import open_store
from fluxgui.core.errors import FluxguiError, ProviderError
from fluxgui.services.chat import AgentConfig
from fluxgui.services.replay import ReplayEvent, ReplayOptions, replay, turn_at, undo_replay

FORMATS = ["agents", "flux"]


# the libraries' writers and readers run their own event loop: in a thread here
async def write_session(path: Path, fmt: str) -> None:
    await asyncio.to_thread(_write_session, path, fmt)


async def agents_read(path: Path, sid: str) -> list:
    return await asyncio.to_thread(_agents_read, path, sid)


async def flux_read(path: Path, sid: str) -> list:
    return await asyncio.to_thread(_flux_read, path, sid)


def _original_rows(path: Path, fmt: str) -> list[tuple]:
    if fmt == "agents":
        return sqlite_rows(path, "SELECT * FROM agent_messages WHERE session_id = ? ORDER BY id", (SID,))
    return sqlite_rows(path, "SELECT * FROM messages WHERE session_id = ? ORDER BY id", (SID,))


def _openai(server: ScriptedServer) -> AgentConfig:
    return AgentConfig(provider="openai", model="scripted", base_url=server.base_url, timeout=20)


def _tool_messages(server: ScriptedServer) -> dict[str, str]:
    """call id → the tool output each request carried (the last request has them all)."""
    out: dict[str, str] = {}
    for body in server.requests:
        for m in body["messages"]:
            if m["role"] == "tool":
                out[m["tool_call_id"]] = m["content"]
    return out


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_faithful_model_gets_the_recorded_outputs_and_the_fork_reads_back(tmp_path, fmt):
    path = tmp_path / "s.db"
    await write_session(path, fmt)
    before = _original_rows(path, fmt)
    store = await open_store(str(path), writable=True)
    events: list[ReplayEvent] = []
    try:
        with ScriptedServer(faithful_script()) as server:
            report = await replay(store, SID, 1, ReplayOptions(_openai(server)), on_event=events.append)
    finally:
        await store.close()
    assert report.to_json() == {"fork": f"{SID}-fork", "replayed_turns": 3, "stopped": None,
                                "tool_calls": {"matched": 3, "unmatched": 0}}
    # every tool output the model received is the recorded one, for the call it made
    got = _tool_messages(server)
    recorded = [out for n in (1, 2) for _c, _name, _a, out in CALLS[n]]
    assert sorted(got.values()) == sorted(recorded)
    outputs = [e.data for e in events if e.kind == "tool_output"]
    assert [o["output"] for o in outputs] == recorded and all(o["matched"] for o in outputs)
    # the recorded tools were offered, with argument shapes from the recorded calls
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in server.requests[0]["tools"]}
    assert tools["lookup_order"] == {"type": "object", "properties": {"order_id": {"type": "integer"}},
                                     "required": ["order_id"]}
    assert set(tools["refund"]["required"]) == {"order_id", "amount"}
    # later turns were sent the replayed answers, not the recorded ones
    last = server.requests[-1]["messages"]
    assert "replayed answer 2" in [m.get("content") for m in last]
    assert ANSWERS[1] not in [m.get("content") for m in last]
    assert report.usage[0]["requests"] == 2 and report.usage[0]["total_tokens"] > 0
    # the original is untouched, row for row
    assert _original_rows(path, fmt) == before
    # the fork reads back in the owning library
    fork = report.fork
    if fmt == "agents":
        items = await agents_read(path, fork)
        calls = [i for i in items if i.get("type") == "function_call"]
        outs = [i for i in items if i.get("type") == "function_call_output"]
        assert [c["name"] for c in calls] == ["lookup_order", "lookup_order", "refund"]
        assert [o["output"] for o in outs] == recorded
        assert {c["call_id"] for c in calls} == {o["call_id"] for o in outs}
        texts = [i["content"][0]["text"] for i in items if i.get("type") == "message"]
        assert texts == ["replayed answer 1", "replayed answer 2", "replayed answer 3"]
        assert [i["content"] for i in items if i.get("role") == "user"] == USERS
    else:
        msgs = await flux_read(path, fork)
        assert [m["content"] for m in msgs if m["role"] == "user"] == USERS
        tool_rows = [m for m in msgs if m["role"] == "tool"]
        assert [m["content"] for m in tool_rows] == recorded
        callers = [m for m in msgs if m.get("metadata", {}).get("tool_calls")]
        ids = [c["id"] for m in callers for c in m["metadata"]["tool_calls"]]
        assert ids == [m["metadata"]["tool_call_id"] for m in tool_rows]
        assert [m["content"] for m in msgs if m["role"] == "assistant" and m["content"]][-3:] == [
            "replayed answer 1", "replayed answer 2", "replayed answer 3"]


@pytest.mark.parametrize("fmt", FORMATS)
async def test_an_unrecorded_call_stops_the_replay_and_keeps_the_turns_before(tmp_path, fmt):
    path = tmp_path / "s.db"
    await write_session(path, fmt)
    script = faithful_script()
    script[USERS[1]] = [[("delete_account", {"user": "bob"})], "never"]
    store = await open_store(str(path), writable=True)
    try:
        with ScriptedServer(script) as server:
            report = await replay(store, SID, 1, ReplayOptions(_openai(server)))
        stop = report.stopped
        assert stop is not None and stop.turn == 2 and stop.name == "delete_account"
        assert json.loads(stop.arguments) == {"user": "bob"}
        assert "no call of 'delete_account'" in stop.reason
        assert {c["name"] for c in stop.nearest} == {"lookup_order", "refund"}
        assert report.to_json()["stopped"] == {
            "turn": 2, "call": {"name": "delete_account", "arguments": {"user": "bob"}},
            "reason": stop.reason}
        assert report.replayed_turns == 1
        fork = [m.text for page in [await store.reader.latest_messages(report.fork, None)] for m in page]
        assert fork[-1] == "replayed answer 1" and USERS[1] not in fork
    finally:
        await store.close()


async def test_strict_matching_wants_equal_arguments_and_name_matching_does_not(tmp_path):
    path = tmp_path / "s.db"
    await write_session(path, "agents")
    script = faithful_script()
    script[USERS[0]] = [[("lookup_order", {"order_id": 43})], "done 1"]
    store = await open_store(str(path), writable=True)
    try:
        with ScriptedServer(script) as server:
            strict = await replay(store, SID, 1, ReplayOptions(_openai(server)))
            assert strict.stopped is not None and strict.stopped.turn == 1
            assert "with these arguments" in strict.stopped.reason
            assert strict.stopped.nearest[0] == {"name": "lookup_order", "arguments": {"order_id": 42}, "used": False}
            by_name = await replay(store, SID, 1, ReplayOptions(_openai(server), match="name"))
        assert by_name.stopped is None and by_name.to_json()["tool_calls"] == {"matched": 3, "unmatched": 0}
        assert by_name.fork == f"{SID}-fork-2"
    finally:
        await store.close()


async def test_a_fixed_text_answers_unmatched_calls_and_the_replay_goes_on(tmp_path):
    path = tmp_path / "s.db"
    await write_session(path, "flux")
    script = faithful_script()
    script[USERS[2]] = [[("send_email", {"to": "bob"})], "bye"]
    store = await open_store(str(path), writable=True)
    try:
        with ScriptedServer(script) as server:
            report = await replay(store, SID, 2, ReplayOptions(_openai(server), unmatched="(no record)"))
    finally:
        await store.close()
    assert report.stopped is None and report.replayed_turns == 2
    assert report.to_json()["tool_calls"] == {"matched": 2, "unmatched": 1}
    assert "(no record)" in _tool_messages(server).values()
    # from turn 2: the fork holds turn 1 as recorded
    msgs = await flux_read(path, report.fork)
    assert ANSWERS[0] in [m["content"] for m in msgs]
    assert ANSWERS[1] not in [m["content"] for m in msgs]


@pytest.mark.parametrize("fmt", FORMATS)
async def test_the_offline_replay_is_deterministic(tmp_path, fmt):
    path = tmp_path / "s.db"
    await write_session(path, fmt)
    store = await open_store(str(path), writable=True)
    try:
        one = await replay(store, SID, 2, ReplayOptions(AgentConfig(instructions="Be brief.")))
        two = await replay(store, SID, 2, ReplayOptions(AgentConfig(instructions="Be brief.")))
    finally:
        await store.close()
    assert one.fork != two.fork and one.replayed_turns == two.replayed_turns == 2
    if fmt == "agents":
        a, b = await agents_read(path, one.fork), await agents_read(path, two.fork)
    else:
        a, b = await flux_read(path, one.fork), await flux_read(path, two.fork)
    assert a == b and len(a) > 0
    assert one.usage == two.usage


async def test_a_cancel_keeps_the_completed_turns_and_undo_deletes_the_fork(tmp_path):
    path = tmp_path / "s.db"
    await write_session(path, "agents")
    store = await open_store(str(path), writable=True)
    try:
        seen: list[ReplayEvent] = []

        def on_event(event: ReplayEvent) -> None:
            seen.append(event)
            if event.kind == "turn" and event.turn == 2:
                task.cancel()

        task = asyncio.ensure_future(replay(store, SID, 1, ReplayOptions(), on_event=on_event))
        with pytest.raises(asyncio.CancelledError):
            await task
        fork = next(e.data["fork"] for e in seen if e.kind == "forked")
        items = await agents_read(path, fork)
        assert [i["role"] for i in items if "role" in i][-2:] == ["user", "assistant"]
        assert items[-1]["content"][0]["text"].startswith("[offline] You said: Where is order 42?")
        change = await undo_replay(store, fork)
        assert change.session_id == fork
        assert await store.reader.session_info(fork) is None
        assert await store.reader.session_info(SID) is not None
    finally:
        await store.close()


async def test_a_turn_that_is_not_there_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "s.db"
    await write_session(path, "flux")
    store = await open_store(str(path), writable=True)
    try:
        with pytest.raises(FluxguiError, match="has no turn 4: it has turns 1–3"):
            await replay(store, SID, 4, ReplayOptions())
        with pytest.raises(FluxguiError, match="has no turn 0"):
            await replay(store, SID, 0, ReplayOptions())
        ids = [s.id for s in (await store.reader.list_sessions()).sessions]
    finally:
        await store.close()
    assert ids == [SID]


async def test_an_ollama_model_replays_with_the_recorded_outputs_too(tmp_path):
    path = tmp_path / "s.db"
    await write_session(path, "agents")
    store = await open_store(str(path), writable=True)
    try:
        with ScriptedServer(faithful_script()) as server:
            config = AgentConfig(provider="ollama", model="scripted", base_url=server.root_url, timeout=20)
            report = await replay(store, SID, 1, ReplayOptions(config))
    finally:
        await store.close()
    assert report.stopped is None and report.to_json()["tool_calls"] == {"matched": 3, "unmatched": 0}
    recorded = sorted(out for n in (1, 2) for _c, _name, _a, out in CALLS[n])
    last = server.requests[-2]["messages"]  # turn 2's answer request carries every output so far
    assert sorted(m["content"] for m in last if m["role"] == "tool") == recorded
    # earlier calls go back to Ollama with their arguments as objects, as it takes them
    sent = [c["function"]["arguments"] for m in last for c in m.get("tool_calls", [])]
    assert sent[:2] == [{"order_id": 42}, {"order_id": 42}]
    items = await agents_read(path, report.fork)
    ids = [i["call_id"] for i in items if i.get("type") == "function_call"]
    assert len(set(ids)) == 3 == len([i for i in items if i.get("type") == "function_call_output"])


async def test_turn_at_names_the_turn_a_message_is_in(tmp_path):
    path = tmp_path / "s.db"
    await write_session(path, "flux")
    store = await open_store(str(path))
    try:
        messages = await store.reader.latest_messages(SID, None)
        user2 = next(m for m in messages if m.text == USERS[1])
        assert await turn_at(store, SID, user2.id) == 2
        assert await turn_at(store, SID, messages[-1].id) == 3
        assert await turn_at(store, SID, messages[0].id) is None  # the system prompt: turn 0
    finally:
        await store.close()


async def test_a_provider_failure_mid_way_keeps_the_turns_replayed_before(tmp_path):
    path = tmp_path / "s.db"
    await write_session(path, "flux")
    script = faithful_script()
    script[USERS[1]] = [FAIL]
    store = await open_store(str(path), writable=True)
    try:
        with ScriptedServer(script) as server:
            with pytest.raises(ProviderError) as failed:
                await replay(store, SID, 1, ReplayOptions(_openai(server)))
    finally:
        await store.close()
    assert "replaying turn 2:" in str(failed.value) and "HTTP 500" in str(failed.value)
    assert str(failed.value).endswith('the fork "conv-1-fork" keeps the 1 turn replayed before')
    msgs = await flux_read(path, f"{SID}-fork")
    assert msgs[-1]["content"] == "replayed answer 1" and USERS[1] not in [m["content"] for m in msgs]


async def test_a_replays_usage_shows_in_the_comparison_and_the_ledger(tmp_path):
    from fluxgui.services.compare import compare_sessions
    from fluxgui.services.doctor.ledger import ledger

    path = tmp_path / "s.db"
    await write_session(path, "flux")
    store = await open_store(str(path), writable=True)
    try:
        with ScriptedServer(faithful_script()) as server:
            report = await replay(store, SID, 2, ReplayOptions(_openai(server)))
        usage = (await compare_sessions(store, SID, session_b=report.fork)).usage_dict()
        book = await ledger(store, report.fork)
    finally:
        await store.close()
    assert usage is not None and usage["a_total_tokens"] is None
    by_turn = {t["turn"]: t["b"] for t in usage["turns"]}
    assert by_turn == {u["turn"]: {k: v for k, v in u.items() if k != "turn"} for u in report.usage}
    assert usage["b_total_tokens"] == sum(u["total_tokens"] for u in report.usage)
    rows = await flux_read(path, report.fork)
    assert [m["metadata"]["model"] for m in rows if "usage" in m.get("metadata", {})] == ["scripted"] * 2
    recorded = {t.number: (t.requests, t.input_tokens, t.output_tokens) for t in book.turns if t.recorded}
    assert recorded == {u["turn"]: (u["requests"], u["input_tokens"], u["output_tokens"]) for u in report.usage}
    assert book.model == "scripted"
