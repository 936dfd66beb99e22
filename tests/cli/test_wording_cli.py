"""Counts read as words do (issue 15 point 8): "1 session", "1 turn", "1 request"; a tool
output is not a "tool tool output"."""

from __future__ import annotations

from helpers import run_cli, write_agents

from fluxgui.core.text import plural


def test_one_session_is_singular(tmp_path):
    db = tmp_path / "one.db"
    write_agents(db, {"only": [{"role": "user", "content": "hi"}]})
    out = run_cli("ls", str(db)).stdout
    assert out.splitlines()[-1] == "(1 session, agents format)"


def test_diff_names_tool_outputs_once_and_counts_in_words(tmp_path):
    db = tmp_path / "d.db"
    call = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}
    write_agents(db, {
        "a": [{"role": "user", "content": "q"}, call,
              {"type": "function_call_output", "call_id": "c1", "output": "one"}],
        "b": [{"role": "user", "content": "q"}, call,
              {"type": "function_call_output", "call_id": "c1", "output": "two"}],
    })
    result = run_cli("diff", str(db), "a", "b")
    assert result.returncode == 1, result.stderr
    assert "tool tool output" not in result.stdout
    assert "~ A tool output: one" in result.stdout and "B tool output: two" in result.stdout
    assert "3 messages, 1 turn" in result.stdout
    assert "1 turn: 0 same, 1 differ" in result.stdout


def test_plural():
    assert [plural(n, "turn") for n in (0, 1, 2, 1204)] == ["0 turns", "1 turn", "2 turns", "1,204 turns"]
    assert plural(1, "branch") == "1 branch" and plural(3, "branch") == "3 branches"
