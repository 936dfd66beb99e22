"""``fluxgui chat``: the reply on stdout, the turn saved as the libraries read it back, one
line and exit 3 on a provider error with nothing saved; against the offline model and
real loopback servers (tests/chat_servers.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from chat_servers import ChatServer, closed_port
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import run_cli, sqlite_rows

SID = "s1"
HISTORY = [
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
]


@pytest.fixture
def flux_db(tmp_path: Path) -> Path:
    path = tmp_path / "flux.db"
    asyncio.run(FluxSQLiteSession(str(path), SID).add_messages(HISTORY))
    return path


def rows(path: Path) -> list[tuple]:
    return sqlite_rows(path, "SELECT * FROM messages ORDER BY id")


def messages(path: Path, sid: str = SID) -> list[dict]:
    return asyncio.run(FluxSQLiteSession(str(path), sid).get_messages())


def assert_one_line_error(result, *needles: str, stdout: str = "") -> str:
    assert result.returncode == 3, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert result.stdout == stdout
    return lines[0]


def test_offline_chat_prints_the_reply_and_saves_it(flux_db):
    result = run_cli("chat", str(flux_db), SID, "--message", "And of Italy?")
    reply = "[offline] You said: And of Italy?. I was given 2 earlier messages as history."
    assert (result.returncode, result.stdout, result.stderr) == (0, reply + "\n", "")
    assert messages(flux_db) == HISTORY + [
        {"role": "user", "content": "And of Italy?"}, {"role": "assistant", "content": reply},
    ]


def test_offline_chat_on_an_agents_sdk_store(tmp_path):
    path = tmp_path / "agents.db"
    lib = AgentsSQLiteSession(SID, str(path))
    asyncio.run(lib.add_items([{"role": "user", "content": "hello"}, {"role": "assistant", "content": "Hi!"}]))
    lib.close()
    result = run_cli("chat", str(path), SID, "-m", "again")
    reply = "[offline] You said: again. I was given 2 earlier messages as history."
    assert (result.returncode, result.stdout, result.stderr) == (0, reply + "\n", "")
    lib = AgentsSQLiteSession(SID, str(path))
    items = asyncio.run(lib.get_items())
    lib.close()
    assert [i["role"] for i in items] == ["user", "assistant", "user", "assistant"]
    assert items[2]["content"] == "again"
    last = items[3]["content"]
    assert (last if isinstance(last, str) else "".join(p.get("text", "") for p in last)) == reply


def test_openai_chat_streams_from_the_endpoint(flux_db):
    with ChatServer("openai", reply="Rome.", chunks=3) as server:
        result = run_cli(
            "chat", str(flux_db), SID, "--message", "And of Italy?", "--provider", "openai",
            "--base-url", server.base_url, "--model", "gpt-test",
        )
    assert (result.returncode, result.stdout, result.stderr) == (0, "Rome.\n", "")
    (request,) = server.requests
    assert request["body"]["model"] == "gpt-test"
    assert request["body"]["messages"] == [*HISTORY, {"role": "user", "content": "And of Italy?"}]
    assert messages(flux_db)[-2:] == [
        {"role": "user", "content": "And of Italy?"}, {"role": "assistant", "content": "Rome."},
    ]


def test_ollama_chat_streams_from_the_server(flux_db):
    with ChatServer("ollama", reply="Roma.", chunks=2) as server:
        result = run_cli(
            "chat", str(flux_db), SID, "-m", "And of Italy?", "--provider", "ollama",
            "--base-url", server.base_url,
        )
    assert (result.returncode, result.stdout, result.stderr) == (0, "Roma.\n", "")
    body = server.requests[0]["body"]
    assert body["model"] == "llama3.2"  # the default for ollama
    assert body["messages"] == [*HISTORY, {"role": "user", "content": "And of Italy?"}]
    assert messages(flux_db)[-1] == {"role": "assistant", "content": "Roma."}


@pytest.mark.parametrize(("kind", "mode", "needle", "stdout"), [
    ("openai", "401", "the endpoint refused the API key", ""),
    ("openai", "malformed", "malformed stream", "Hello\n"),  # what streamed before it broke
    ("ollama", "hang", "did not answer within 0.5 s", ""),
    ("openai", "stall", "did not answer within 0.5 s", "Hello\n"),
    ("ollama", "truncated", "the stream ended before the reply was complete", "Hello\n"),
])
def test_provider_error_is_one_line_exit_3_and_saves_nothing(flux_db, kind, mode, needle, stdout):
    before = rows(flux_db)
    with ChatServer(kind, mode) as server:
        result = run_cli(
            "chat", str(flux_db), SID, "-m", "hi", "--provider", kind,
            "--base-url", server.base_url, "--timeout", "0.5",
        )
    line = assert_one_line_error(result, needle, server.base_url, stdout=stdout)
    assert line.startswith("fluxgui: error: ")
    assert rows(flux_db) == before


def test_connection_refused(flux_db):
    before = rows(flux_db)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = run_cli("chat", str(flux_db), SID, "-m", "hi", "--provider", "openai", "--base-url", url)
    assert_one_line_error(result, f"cannot reach {url}: connection refused")
    assert rows(flux_db) == before


def test_copy_leaves_the_original_and_fills_the_fork(flux_db):
    before = rows(flux_db)
    result = run_cli("chat", str(flux_db), SID, "-m", "And of Italy?", "--copy")
    reply = "[offline] You said: And of Italy?. I was given 2 earlier messages as history."
    assert result.returncode == 0, result.stderr
    assert result.stdout == reply + "\n"
    assert result.stderr == 'fluxgui: saved in the copy "s1-fork"\n'
    assert [r for r in rows(flux_db) if r[1] == SID] == before
    assert messages(flux_db) == HISTORY
    assert messages(flux_db, "s1-fork") == HISTORY + [
        {"role": "user", "content": "And of Italy?"}, {"role": "assistant", "content": reply},
    ]


def test_chat_help_lists_the_options():
    result = run_cli("chat", "-h")
    assert result.returncode == 0
    for option in ("--message", "--provider", "--base-url", "--model", "--copy"):
        assert option in result.stdout


def test_an_unknown_session_is_refused_unless_new(flux_db):
    """A typo must not make a new session: without --new an unknown id is one line."""
    before = rows(flux_db)
    assert_one_line_error(
        run_cli("chat", str(flux_db), "s2-typo", "-m", "hi"), 'unknown session id "s2-typo"', "--new"
    )
    assert rows(flux_db) == before
    made = run_cli("chat", str(flux_db), "s2", "-m", "hi", "--new")
    assert made.returncode == 0, made.stderr
    assert [m["role"] for m in messages(flux_db, "s2")] == ["user", "assistant"]
    assert_one_line_error(run_cli("chat", str(flux_db), "s2", "-m", "again", "--new"), "already exists", "leave out --new")
