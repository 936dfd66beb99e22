"""``check``, ``repair``, ``rewind``, ``preflight`` and ``ledger`` as a user runs them."""

from __future__ import annotations

import asyncio
import json

from agents import SQLiteSession
from doctor_helpers import HEALTHY, expected, write_shapes
from helpers import agents_read, assert_known_error, ok_lines, run_cli, snapshot


def _store(tmp_path):
    path = tmp_path / "agents.db"
    asyncio.run(write_shapes(lambda sid: SQLiteSession(sid, str(path))))
    return path


def test_check_exit_codes_and_json(tmp_path):
    path = _store(tmp_path)
    clean = run_cli("check", str(path), "healthy")
    assert ok_lines(clean)[0] == "session healthy: clean"
    broken = run_cli("check", str(path), "--json")
    assert broken.returncode == 1, broken.stderr
    doc = json.loads(broken.stdout)
    codes = {s["session_id"]: [p["code"] for p in s["problems"]] for s in doc["sessions"]}
    assert codes == {sid: [c for c, _ in problems] for sid, problems in expected().items()}
    assert all(set(s) == {"session_id", "problems"} for s in doc["sessions"])
    assert all(set(p) == {"code", "message_ids", "detail"} for s in doc["sessions"] for p in s["problems"])
    assert_known_error(run_cli("check", str(path), "no-such-session"), "unknown session")
    assert_known_error(run_cli("check", str(tmp_path / "missing.db")))


def test_repair_dry_run_then_all(tmp_path):
    path = _store(tmp_path)
    before = snapshot(path)
    dry = run_cli("repair", str(path), "dangling-reasoning", "--fix", "all", "--dry-run")
    lines = ok_lines(dry)
    assert any(line.startswith("- #") and "reasoning" in line for line in lines)
    assert lines[-1] == "(dry run: nothing written)"
    assert snapshot(path) == before
    refused = run_cli("repair", str(path), "dangling-reasoning", "--fix", "all")
    assert refused.returncode == 2 and "--yes" in refused.stderr
    for sid in expected():
        ok_lines(run_cli("repair", str(path), sid, "--fix", "all", "--yes"))
    assert ok_lines(run_cli("check", str(path)))[-1].startswith("(0 problems")
    assert agents_read(path, "healthy") == HEALTHY
    bad = run_cli("repair", str(path), "healthy", "--fix", "limit_split", "--yes")
    assert bad.returncode == 2 and "not a repair" in bad.stderr


def test_repair_cancel_text(tmp_path):
    path = _store(tmp_path)
    ok_lines(run_cli("repair", str(path), "orphan-call", "--fix", "orphan_call",
                     "--cancel-text", "User stopped it.", "--yes"))
    items = agents_read(path, "orphan-call")
    assert items[3] == {"type": "function_call_output", "call_id": "call_oc", "output": "User stopped it."}


def test_rewind(tmp_path):
    path = _store(tmp_path)
    ok_lines(run_cli("rewind", str(path), "healthy", "--last", "--yes"))
    assert agents_read(path, "healthy") == HEALTHY[:5]
    ok_lines(run_cli("rewind", str(path), "healthy", "--to-turn", "0", "--yes"))
    assert agents_read(path, "healthy") == []
    assert_known_error(run_cli("rewind", str(path), "healthy", "--last", "--yes"), "no user turn")
    both = run_cli("rewind", str(path), "healthy", "--last", "--to-turn", "1", "--yes")
    assert both.returncode == 2


def test_preflight_json_is_what_the_runner_sends(tmp_path):
    from agents import Agent, Runner
    from responses_server import ResponsesServer, sdk_model

    path = _store(tmp_path)
    result = run_cli("preflight", str(path), "duplicate-id", "--json")
    assert result.returncode == 1  # the duplicated message is sent twice: refused
    doc = json.loads(result.stdout)
    assert doc["tokens"]["total"] == sum(doc["tokens"]["per_item"])
    assert len(doc["tokens"]["per_item"]) == len(doc["input"])
    assert [p["code"] for p in doc["problems"]] == ["duplicate_id"]

    async def sent() -> list:
        with ResponsesServer() as server:
            async with sdk_model(server) as model:
                agent = Agent(name="a", instructions="x", model=model)
                session = SQLiteSession("duplicate-id", str(path))
                try:
                    await Runner.run(agent, "next", session=session)
                except Exception:  # noqa: BLE001 - refused, as the preflight said
                    pass
                session.close()
            return server.requests[0]["input"][:-1]

    assert doc["input"] == asyncio.run(sent())
    text = run_cli("preflight", str(path), "healthy")
    assert ok_lines(text)[-1].startswith("≈ ")


def test_ledger_with_recorded_usage(tmp_path):
    from advanced_helpers import SID, write_library_store

    path = tmp_path / "adv.db"
    asyncio.run(write_library_store(path))
    doc = json.loads("\n".join(ok_lines(run_cli("ledger", str(path), SID, "--json", "--model", "gpt-4o"))))
    first = doc["turns"][0]
    assert (first["input_tokens"], first["output_tokens"], first["requests"], first["recorded"]) == (100, 20, 2, True)
    assert first["tool_calls"] == ["get_weather"]
    assert first["cost"] is not None and doc["context"]["window_known"]
    lines = ok_lines(run_cli("ledger", str(path), SID))
    assert lines[0].endswith("model unknown (no prices)")
    assert any("largest context" in line for line in lines)


def test_ledger_says_why_a_cost_is_unknown(tmp_path):
    from advanced_helpers import SID, write_library_store

    path = tmp_path / "adv.db"
    asyncio.run(write_library_store(path))
    lines = ok_lines(run_cli("ledger", str(path), SID, "--model", "no-such-model-9"))
    assert lines[1] == ("(COST —: model 'no-such-model-9' is not in genai-prices' offline table: "
                        "no prices (its context window is assumed))")
    doc = json.loads("\n".join(ok_lines(run_cli("ledger", str(path), SID, "--json"))))
    assert doc["price_note"].startswith("no model known")
    priced = json.loads("\n".join(ok_lines(run_cli("ledger", str(path), SID, "--json", "--model", "gpt-4o"))))
    assert priced["price_note"] is None


def test_repair_keep_first_or_last_of_differing_outputs(tmp_path):
    from doctor_helpers import save_differing_outputs

    path = tmp_path / "agents.db"

    async def write() -> None:
        for sid in ("a", "b"):
            s = SQLiteSession(sid, str(path))
            await save_differing_outputs(s)
            s.close()

    asyncio.run(write())
    doc = json.loads(run_cli("check", str(path), "a", "--json").stdout)
    assert [p["code"] for p in doc["sessions"][0]["problems"]] == ["duplicate_output"]
    ok_lines(run_cli("repair", str(path), "a", "--fix", "duplicate_output", "--keep", "first", "--yes"))
    ok_lines(run_cli("repair", str(path), "b", "--fix", "all", "--yes"))
    assert ok_lines(run_cli("check", str(path), "a", "b"))[-1].startswith("(0 problems")
    outputs = lambda sid: [i["output"] for i in agents_read(path, sid) if "output" in i]  # noqa: E731
    assert outputs("a") == ["rain, 9 °C"]
    assert outputs("b") == ["rain, 11 °C"]  # the default: the last, the one the SDK sends
    bad = run_cli("repair", str(path), "a", "--fix", "all", "--keep", "middle", "--yes")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
