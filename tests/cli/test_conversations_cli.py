"""The commands on ``openai-conversations:`` against a loopback Conversations API
(tests/conversations_server.py): the real ``OpenAIConversationsSession`` writes the
conversations and reads back what the commands wrote."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from conversations_server import API_KEY, ConversationsServer, sdk_items, sdk_write, texts, use_test_key
from helpers import closed_port, run_cli

TARGET = "openai-conversations:"


@pytest.fixture
def server(monkeypatch):
    use_test_key(monkeypatch)
    with ConversationsServer() as s:
        yield s


@pytest.fixture
def two(server) -> tuple[str, str]:
    a = asyncio.run(sdk_write(server, texts(3) + [
        {"type": "compaction", "encrypted_content": "gAAAAB" + "x" * 300},
        {"role": "user", "content": "after"},
    ]))
    b = asyncio.run(sdk_write(server, texts(130, "b")))
    return a, b


def bare(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "id"}


def one_error(result, *needles: str) -> str:
    assert result.returncode == 3, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert API_KEY not in result.stderr
    return lines[0]


def test_ls_lists_the_conversations_named(server, two):
    a, b = two
    result = run_cli("ls", TARGET, "--base-url", server.base_url, "--conversation", a,
                     "--conversation", b, "--json")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)["sessions"]
    assert [(s["id"], s["messages"], s.get("count_exact", True)) for s in listed] == [
        (a, 5, True), (b, 100, False)
    ]
    text = run_cli("ls", TARGET + server.base_url, "--conversation", a, "--conversation", b)
    assert "≥ 100" in text.stdout and text.returncode == 0
    none = run_cli("ls", TARGET, "--base-url", server.base_url)
    assert none.returncode == 0 and "--conversation ID or --ids FILE" in none.stderr


def test_show_json_is_what_the_sdk_reads(server, two):
    a, b = two
    for cid in two:
        result = run_cli("show", TARGET, cid, "--base-url", server.base_url, "--json")
        assert result.returncode == 0, result.stderr
        doc = json.loads(result.stdout)
        assert [m["raw"] for m in doc["messages"]] == asyncio.run(sdk_items(server, cid))
    text = run_cli("show", TARGET, a, "--base-url", server.base_url)
    assert "[compaction]" in text.stdout and "compacted history: 306 B" in text.stdout
    assert "gAAAAB" not in text.stdout
    latest = run_cli("show", TARGET, b, "--base-url", server.base_url, "--json", "--limit", "3")
    assert [m["text"] for m in json.loads(latest.stdout)["messages"]] == ["b127", "b128", "b129"]


def test_export_writes_every_item(server, two, tmp_path):
    a, b = two
    out = tmp_path / "out.jsonl"
    result = run_cli("export", TARGET, a, b, "-o", str(out), "--base-url", server.base_url)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    by_session: dict[str, list[Any]] = {}
    for line in lines:
        by_session.setdefault(line["session_id"], []).append(line["raw"])
    assert by_session == {cid: asyncio.run(sdk_items(server, cid)) for cid in two}


def test_copy_to_sqlite_and_back(server, two, tmp_path):
    a, _b = two
    db = tmp_path / "copied.db"
    result = run_cli("copy", TARGET, str(db), a, "--base-url", server.base_url)
    assert result.returncode == 0, result.stderr
    original = asyncio.run(sdk_items(server, a))
    session = SQLiteSession(a, str(db))
    try:
        assert asyncio.run(session.get_items()) == original
    finally:
        session.close()
    before = set(server.conversations)
    back = run_cli("copy", str(db), TARGET, "--dest-base-url", server.base_url)
    assert back.returncode == 0, back.stderr
    (new_id,) = set(server.conversations) - before
    assert f"renamed \"{a}\" to \"{new_id}\"" in back.stdout
    assert [bare(i) for i in asyncio.run(sdk_items(server, new_id))] == [bare(i) for i in original]
    assert all(len(r["body"]["items"]) <= 20 for r in server.requests if r["method"] == "POST")


def test_clear_deletes_the_conversation(server, two):
    a, b = two
    refused = run_cli("clear", TARGET, a, "--base-url", server.base_url)
    assert refused.returncode == 2 and "without confirmation" in refused.stderr
    assert a in server.conversations
    result = run_cli("clear", TARGET, a, "--yes", "--base-url", server.base_url)
    assert result.returncode == 0, result.stderr
    assert a not in server.conversations and b in server.conversations
    assert "cleared 5 messages" in result.stdout
    one_error(run_cli("show", TARGET, a, "--base-url", server.base_url), "unknown conversation id", "404")


def test_chat_sends_the_history_and_writes_the_turn_back(server, two):
    a, _b = two
    before = asyncio.run(sdk_items(server, a))
    result = run_cli("chat", TARGET, a, "-m", "one more?", "--store-base-url", server.base_url)
    assert result.returncode == 0, result.stderr
    # The offline model counts the history it was sent (the compaction item is not text).
    assert "I was given 4 earlier messages as history" in result.stdout
    after = asyncio.run(sdk_items(server, a))
    assert after[: len(before)] == before
    assert [bare(i) for i in after[len(before):]] == [
        {"type": "message", "role": "user", "status": "completed",
         "content": [{"type": "input_text", "text": "one more?"}]},
        {"type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": result.stdout.strip(), "annotations": []}]},
    ]
    posted = server.item_requests(a, "POST")[-1]["body"]["items"]
    assert all("id" not in item for item in posted)


def test_errors_are_one_line(server, two, monkeypatch):
    a, _b = two
    one_error(run_cli("show", TARGET, "conv_nope", "--base-url", server.base_url),
              'unknown conversation id "conv_nope"', "(404)")
    server.fail = (429, {"retry-after": "300"})
    one_error(run_cli("ls", TARGET, "--conversation", a, "--base-url", server.base_url),
              "rate-limiting requests (429", "retry after 300 s")
    server.fail = None
    port = closed_port()
    one_error(run_cli("ls", TARGET, "--conversation", a, "--base-url", f"http://127.0.0.1:{port}/v1"),
              "cannot reach", "connection refused")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-0123456789")
    line = one_error(run_cli("show", TARGET, a, "--base-url", server.base_url),
                     "refused the API key (401 invalid_api_key)")
    assert "sk-wro" not in line
    monkeypatch.delenv("OPENAI_API_KEY")
    one_error(run_cli("ls", TARGET, "--conversation", a, "--base-url", server.base_url),
              "no API key", "OPENAI_API_KEY")


def test_ids_file_and_store_base_url_option_are_declared(server, two, tmp_path):
    a, b = two
    ids = tmp_path / "ids.txt"
    ids.write_text(f"{b}\n# a comment\n{a}\n", encoding="utf-8")
    result = run_cli("ls", TARGET, "--ids", str(ids), "--base-url", server.base_url, "--json")
    assert [s["id"] for s in json.loads(result.stdout)["sessions"]] == [b, a]
    missing = run_cli("ls", TARGET, "--ids", str(Path(tmp_path, "nope.txt")), "--base-url", server.base_url)
    one_error(missing, "cannot read the ids file")
