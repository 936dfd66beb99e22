"""Eval datasets from sessions (issue 38): one item per assistant turn, each format
checked against its consuming tool's documented shape (tests/eval_shapes.py), the count
equal to the assistant turns minus those left out, review filters choosing sessions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from eval_shapes import check_file
from helpers import write_agents
from replay_helpers import ANSWERS, SID, USERS, agents_items
from replay_helpers import write_session as _write_session

from fluxgui.adapters import open_store
from fluxgui.services.evals import EVAL_FORMATS, EvalFilter, collect, export_eval
from fluxgui.services.reviews import Edit, ReviewDB


@pytest.fixture(autouse=True)
def private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("FLUXGUI_REVIEWS", raising=False)


def broken_items() -> list[dict]:
    """Turn 1 answered; turn 2 calls a tool whose output was never stored (an orphan
    call); turn 3 answered after it; turn 4 a user message the agent never answered."""
    items = agents_items()[:6]  # system, turn 1 (user, call, output, answer)
    items += [
        {"role": "user", "content": "And order 7?"},
        {"type": "function_call", "call_id": "call_x", "name": "lookup_order", "arguments": '{"order_id": 7}'},
        {"type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Order 7 is late.", "annotations": []}]},
        {"role": "user", "content": "ok"},
        {"type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Anything else?", "annotations": []}]},
        {"role": "user", "content": "no"},
    ]
    return items


async def _store_with_both(tmp_path: Path, fmt: str) -> Path:
    path = tmp_path / "s.db"
    await asyncio.to_thread(_write_session, path, fmt)
    if fmt == "agents":
        await asyncio.to_thread(write_agents, path, {"broken": broken_items()})
    return path


@pytest.mark.parametrize("fmt", ["agents", "flux"])
@pytest.mark.parametrize("eval_format", EVAL_FORMATS)
async def test_each_format_has_its_documented_shape_and_one_item_per_assistant_turn(tmp_path, fmt, eval_format):
    path = await _store_with_both(tmp_path, fmt)
    out = tmp_path / ("cases.yaml" if eval_format == "promptfoo" else "out.jsonl")
    store = await open_store(str(path))
    one = out.with_name("one-" + out.name)
    try:
        result = await export_eval(store, out, eval_format, label="support")
        await export_eval(store, one, eval_format, [SID], label="support")
    finally:
        await store.close()
    docs = check_file(out, eval_format)
    if fmt == "agents":  # conv-1: 3 turns; broken: 3 assistant turns, 2 left out
        assert result.assistant_turns == 6
        assert dict(result.left_out) == {"orphan call": 2}
    else:
        assert result.assistant_turns == 3 and not result.left_out
    assert len(docs) == result.items == result.assistant_turns - sum(result.left_out.values())
    ours = check_file(one, eval_format)
    assert len(ours) == 3
    if eval_format == "openai":
        assert [d["messages"][-1]["content"] for d in ours] == ANSWERS
        calls = [c["function"]["name"] for m in ours[1]["messages"] for c in m.get("tool_calls", [])]
        assert calls == ["lookup_order", "lookup_order", "refund"]  # turn 1's and turn 2's
    elif eval_format == "promptfoo":
        assert [d["assert"][0] for d in ours] == [{"type": "factuality", "value": a} for a in ANSWERS]
        assert [d["vars"]["messages"][-1] for d in ours] == [{"role": "user", "content": u} for u in USERS]
        assert ours[0]["metadata"]["store"] == "support"
    else:
        meta = [d["metadata"] for d in ours]
        assert [(m["session_id"], m["turn"]) for m in meta] == [(SID, 1), (SID, 2), (SID, 3)]
        inputs = {"jsonl": "input", "langfuse": "input", "langsmith": "inputs"}[eval_format]
        first = ours[1][inputs] if eval_format == "jsonl" else ours[1][inputs]["messages"]
        assert first[-1] == {"role": "user", "content": USERS[1]}
        tools = [m for m in first if m["role"] == "tool"]
        assert [t["tool_call_id"] for t in tools] == ["call_a1"]
        if eval_format == "jsonl":
            expected = ours[1]["expected"]
            assert expected["content"] == ANSWERS[1]
            assert [(c["name"], c["output"]) for c in expected["tool_calls"]] == [
                ("lookup_order", '{"status": "shipped", "paid": 19.5}'),
                ("refund", '{"refund_id": "R-7", "ok": true}')]


async def test_promptfoo_json_is_a_list_of_test_cases(tmp_path):
    path = await _store_with_both(tmp_path, "flux")
    out = tmp_path / "cases.json"
    store = await open_store(str(path))
    try:
        result = await export_eval(store, out, "promptfoo", [SID])
    finally:
        await store.close()
    assert isinstance(json.loads(out.read_text()), list)
    assert len(check_file(out, "promptfoo")) == result.items == 3


async def test_a_review_filter_chooses_sessions_and_its_review_is_metadata(tmp_path):
    path = await _store_with_both(tmp_path, "agents")
    await asyncio.to_thread(_write_session, path, "agents", "conv-2")
    store = await open_store(str(path))
    db = await ReviewDB.open(f"sqlite:///{tmp_path / 'reviews.db'}", stores=[store])
    try:
        key = "support"
        await db.change(key, SID, Edit(state="reviewed", scores={"tone": 5}, add_tags=["gold"]), reviewer="ann")
        await db.change(key, "conv-2", Edit(state="reviewed", scores={"tone": 2}, add_tags=["gold"]), reviewer="ann")
        await db.change(key, "broken", Edit(state="flagged", add_tags=["gold"]), reviewer="ann")
        items, result = await collect(store, flt=EvalFilter(state="reviewed", min_scores={"tone": 4}), reviews=db, key=key)
        assert {i.session_id for i in items} == {SID} and result.sessions == 1 and result.items == 3
        assert items[0].metadata["review_state"] == "reviewed"
        assert items[0].metadata["review_scores"] == {"tone": 5}
        assert items[0].metadata["review_tags"] == ["gold"]
        items, result = await collect(store, flt=EvalFilter(tag="gold"), reviews=db, key=key)
        assert result.sessions == 3 and result.items == 3 + 3 + 1
        items, _ = await collect(store, ["broken"], flt=EvalFilter(state="flagged"), reviews=db, key=key)
        assert [(i.session_id, i.turn) for i in items] == [("broken", 1)]
    finally:
        await db.close()
        await store.close()


async def test_encrypted_sessions_need_their_key_and_expired_turns_are_left_out(tmp_path, monkeypatch):
    import time
    import types

    import cryptography.fernet
    from agents import SQLiteSession
    from agents.extensions.memory import EncryptedSession

    from fluxgui.core.errors import KeyNeeded

    path = tmp_path / "enc.db"
    key = "a secret master key"
    items = agents_items()
    turn2 = items.index({"role": "user", "content": USERS[1]})

    async def add(batch: list[dict], at: float) -> None:
        # Fernet stamps each token with time.time(): the first turn an hour old
        monkeypatch.setattr(cryptography.fernet, "time", types.SimpleNamespace(time=lambda: at))
        inner = SQLiteSession(SID, str(path))
        try:
            await EncryptedSession(session_id=SID, underlying_session=inner, encryption_key=key).add_items(batch)
        finally:
            inner.close()

    await add(items[:turn2], time.time() - 3600)
    await add(items[turn2:], time.time())
    monkeypatch.undo()
    without = await open_store(str(path))
    try:
        with pytest.raises(KeyNeeded, match="give its key"):
            await collect(without)
    finally:
        await without.close()
    store = await open_store(str(path), key=key, ttl=600)
    try:
        got, result = await collect(store)
    finally:
        await store.close()
    assert result.assistant_turns == 3 and dict(result.left_out) == {"expired items (the Agents SDK skips them)": 1}
    assert [i.turn for i in got] == [2, 3]
    # the history is what the SDK reads: the expired turn is not in it
    assert got[0].input == [{"role": "user", "content": USERS[1]}]
    assert got[0].answer == ANSWERS[1]
