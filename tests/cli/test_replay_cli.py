"""``fluxgui replay`` and ``fluxgui export --eval`` (issue 38), run as a user runs them:
a subprocess, sessions written by the real libraries, a scripted model on a loopback
OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest
from eval_shapes import check_file
from helpers import agents_read, assert_known_error, flux_read, ok_lines, run_cli, sqlite_rows, write_agents
from replay_helpers import CALLS, SID, USERS, ScriptedServer, agents_items, faithful_script, write_session


@pytest.fixture(autouse=True)
def private_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("FLUXGUI_REVIEWS", raising=False)


def _replay(path, server, *extra):
    return run_cli("replay", str(path), SID, "--from-turn", "1", "--provider", "openai",
                   "--base-url", server.base_url, "--model", "scripted", *extra)


@pytest.mark.parametrize("fmt", ["agents", "flux"])
def test_a_faithful_replay_prints_the_fork_and_exits_0(tmp_path, fmt):
    path = tmp_path / "s.db"
    write_session(path, fmt)
    table = "agent_messages" if fmt == "agents" else "messages"
    before = sqlite_rows(path, f"SELECT * FROM {table} WHERE session_id = ? ORDER BY id", (SID,))
    with ScriptedServer(faithful_script()) as server:
        result = _replay(path, server, "--json", "--name", "retry")
    [doc] = [json.loads("\n".join(ok_lines(result)))]
    assert doc == {"fork": "retry", "replayed_turns": 3, "stopped": None,
                   "tool_calls": {"matched": 3, "unmatched": 0}}
    recorded = sorted(out for n in (1, 2) for _c, _n, _a, out in CALLS[n])
    got = sorted(m["content"] for m in server.requests[-2]["messages"] if m["role"] == "tool")
    assert got == recorded
    assert sqlite_rows(path, f"SELECT * FROM {table} WHERE session_id = ? ORDER BY id", (SID,)) == before
    if fmt == "agents":
        texts = [i["content"][0]["text"] for i in agents_read(path, "retry") if i.get("type") == "message"]
    else:
        texts = [m["content"] for m in flux_read(path, "retry") if m["role"] == "assistant" and m["content"]]
    assert texts[-3:] == ["replayed answer 1", "replayed answer 2", "replayed answer 3"]
    # diff compares the replay with the original, turn by turn
    diff = run_cli("diff", str(path), SID, "retry", "--json")
    assert diff.returncode == 1, diff.stderr
    assert "replayed answer 1" in diff.stdout


def test_an_unrecorded_call_stops_with_exit_1_and_shows_the_call(tmp_path):
    path = tmp_path / "s.db"
    write_session(path, "agents")
    script = faithful_script()
    script[USERS[1]] = [[("refund", {"order_id": 42, "amount": 1000})], "never"]
    with ScriptedServer(script) as server:
        text = _replay(path, server)
        as_json = _replay(path, server, "--json")
    assert text.returncode == 1 and text.stderr == ""
    lines = text.stdout.splitlines()
    assert lines[0] == f"replayed 1 turn of \"{SID}\" from turn 1 into \"{SID}-fork\" (tool calls: 1 matched, 0 unmatched)"
    assert lines[-2] == ('stopped at turn 2: the model called refund({"order_id": 42, "amount": 1000}): '
                         "turn 2 recorded no call of 'refund' with these arguments")
    assert lines[-1].startswith('nearest recorded calls: refund({"order_id": 42, "amount": 19.5})')
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["stopped"] == {
        "turn": 2, "call": {"name": "refund", "arguments": {"order_id": 42, "amount": 1000}},
        "reason": "turn 2 recorded no call of 'refund' with these arguments"}
    with ScriptedServer(script) as server:
        going_on = _replay(path, server, "--unmatched", "refund refused", "--json")
    assert json.loads(going_on.stdout)["tool_calls"] == {"matched": 1, "unmatched": 1}
    assert going_on.returncode == 0


def test_an_offline_replay_is_the_same_twice(tmp_path):
    path = tmp_path / "s.db"
    write_session(path, "flux")
    for name in ("one", "two"):
        lines = ok_lines(run_cli("replay", str(path), SID, "--from-turn", "2", "--name", name,
                                 "--instructions", "Be brief."))
        assert lines[0] == f"replayed 2 turns of \"{SID}\" from turn 2 into \"{name}\" (tool calls: 0 matched, 0 unmatched)"
        assert [line.split(":")[0] for line in lines[1:]] == ["turn 2", "turn 3"]
    assert flux_read(path, "one") == flux_read(path, "two")


def test_bad_turns_and_stores_are_one_line_errors(tmp_path):
    path = tmp_path / "s.db"
    write_session(path, "flux")
    assert_known_error(run_cli("replay", str(path), SID, "--from-turn", "9"), "has no turn 9", "turns 1–3")
    assert_known_error(run_cli("replay", str(path), "nope", "--from-turn", "1"), "nope")
    usage = run_cli("replay", str(path), SID, "--from-turn", "0")
    assert usage.returncode == 2 and "numbered from 1" in usage.stderr


def test_export_eval_writes_items_and_says_what_it_left_out(tmp_path):
    path = tmp_path / "s.db"
    write_session(path, "agents")
    broken = agents_items()[:6] + [
        {"role": "user", "content": "And order 7?"},
        {"type": "function_call_output", "call_id": "call_zz", "output": "stray"},
        {"type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Late.", "annotations": []}]},
    ]
    write_agents(path, {"broken": broken})
    out = tmp_path / "ft.jsonl"
    lines = ok_lines(run_cli("export", str(path), "--eval", "openai", "-o", str(out)))
    assert lines[0].startswith(f"wrote 4 eval items (openai, ") and lines[0].endswith(f"from 2 sessions to {out}")
    assert lines[1] == "left out 1 turn of 5 (orphan output: 1)"
    assert len(check_file(out, "openai")) == 4
    cases = tmp_path / "cases.yaml"
    ok_lines(run_cli("export", str(path), SID, "--eval", "promptfoo", "-o", str(cases)))
    assert len(check_file(cases, "promptfoo")) == 3
    wrong = run_cli("export", str(path), "--tag", "gold", "-o", str(tmp_path / "x.json"))
    assert wrong.returncode == 2 and "add --eval FORMAT" in wrong.stderr


def test_export_eval_by_review(tmp_path):
    path = tmp_path / "s.db"
    write_session(path, "agents")
    write_session(path, "agents", "conv-2")
    reviews = str(tmp_path / "reviews.db")
    ok_lines(run_cli("review", "set", str(path), SID, "--state", "reviewed", "--score", "tone=5",
                     "--tag", "gold", "--reviews", reviews))
    ok_lines(run_cli("review", "set", str(path), "conv-2", "--state", "reviewed", "--score", "tone=3",
                     "--reviews", reviews))
    out = tmp_path / "lf.jsonl"
    lines = ok_lines(run_cli("export", str(path), "--eval", "langfuse", "-o", str(out), "--reviews", reviews,
                             "--review-state", "reviewed", "--min-score", "tone=4"))
    assert "wrote 3 eval items (langfuse" in lines[0] and "from 1 session" in lines[0]
    docs = check_file(out, "langfuse")
    assert {(d["metadata"]["session_id"], d["metadata"]["review_state"]) for d in docs} == {(SID, "reviewed")}
    assert docs[0]["metadata"]["review_scores"] == {"tone": 5} and docs[0]["metadata"]["review_tags"] == ["gold"]


def test_a_provider_error_is_one_line_and_keeps_no_empty_fork(tmp_path):
    from helpers import closed_port

    path = tmp_path / "s.db"
    write_session(path, "agents")
    result = run_cli("replay", str(path), SID, "--from-turn", "2", "--provider", "openai",
                     "--base-url", f"http://127.0.0.1:{closed_port()}/v1")
    assert_known_error(result, "replaying turn 2: cannot reach", "connection refused", "no fork was kept")
    assert [r[0] for r in sqlite_rows(path, "SELECT session_id FROM agent_sessions")] == [SID]
