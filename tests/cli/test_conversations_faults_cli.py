"""The commands on ``openai-conversations:`` when the server (or a proxy before it) fails:
a chaos proxy (tests/chaos_proxy.py) in front of the loopback Conversations API breaks
one answer at a time. A malformed answer is one line and exit 3 with nothing written,
never the end of a conversation; no server text shows the key; a server that asks to
wait longer than ``--api-timeout`` is not waited for; ``show --limit`` reads one page."""

from __future__ import annotations

import asyncio
import json

import pytest
from agents import SQLiteSession
from chaos_proxy import ChaosProxy
from conversations_server import API_KEY, ConversationsServer, texts, use_test_key
from helpers import run_cli, sqlite_rows

TARGET = "openai-conversations:"
#: a key a gateway gives, not shaped like OpenAI's: masked because it is the one configured
GATEWAY_KEY = "gateway-token-98765-abcdef"
#: the 241 items of the conversation exported: the requests for it, in order, are two
#: reads of its latest items (the command checks the id, then the export does), then three
#: pages from its start (100, 100, 41)
PAGES = (1, 2, 3, 4, 5)


@pytest.fixture
def server(monkeypatch):
    use_test_key(monkeypatch)
    with ConversationsServer() as s:
        s.seed("conv_long", texts(241))
        yield s


@pytest.fixture
def proxy(server):
    with ChaosProxy(server) as p:
        yield p


def one_line(result, *needles: str, secrets: tuple[str, ...] = (API_KEY,)) -> str:
    """The one error line of a command that failed (exit 3); no secret anywhere."""
    assert result.returncode == 3, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    for secret in secrets:
        assert secret not in result.stderr and secret not in result.stdout
    return lines[0]


def test_the_proxy_passes_a_whole_export_through(proxy, tmp_path):
    # (the fault-free baseline of the tests below: 241 items in five reads)
    out = tmp_path / "out.jsonl"
    result = run_cli("export", TARGET, "conv_long", "-o", str(out), "--base-url", proxy.base_url)
    assert result.returncode == 0, result.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 241
    assert sum(1 for m, p in proxy.seen if m == "GET" and p.endswith("/items")) == len(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_a_malformed_page_fails_an_export_and_writes_nothing(proxy, tmp_path, page):
    proxy.malformed_page = page
    out = tmp_path / "out.jsonl"
    result = run_cli("export", TARGET, "conv_long", "-o", str(out), "--base-url", proxy.base_url)
    one_line(result, "sent an answer fluxgui cannot read (not JSON)")
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("page", PAGES)
def test_a_malformed_page_fails_a_copy_and_writes_nothing(proxy, tmp_path, page):
    # Into an agents SQLite store that holds another session: conv_long is not made.
    db = tmp_path / "dest.db"
    session = SQLiteSession("kept", str(db))
    try:
        asyncio.run(session.add_items([{"role": "user", "content": "already here"}]))
    finally:
        session.close()
    proxy.malformed_page = page
    result = run_cli("copy", TARGET, str(db), "conv_long", "--base-url", proxy.base_url)
    one_line(result, "sent an answer fluxgui cannot read (not JSON)")
    assert sqlite_rows(db, "SELECT session_id FROM agent_sessions") == [("kept",)]
    assert sqlite_rows(db, "SELECT count(*) FROM agent_messages") == [(1,)]


@pytest.mark.parametrize("page", (3, 5))
def test_a_malformed_page_fails_a_copy_to_another_server_and_makes_no_conversation(proxy, page):
    proxy.malformed_page = page
    with ConversationsServer() as dest:
        result = run_cli("copy", TARGET, TARGET, "conv_long", "--base-url", proxy.base_url,
                         "--dest-base-url", dest.base_url)
        one_line(result, "sent an answer fluxgui cannot read (not JSON)")
        assert dest.conversations == {} and dest.requests == []


def test_a_copy_between_conversations_servers_is_told_apart_by_base_url(server):
    # Both targets are "openai-conversations:": the servers are the base URLs. (Before, a
    # copy to another server was refused as "the store being read".)
    same = run_cli("copy", TARGET, TARGET, "conv_long", "--base-url", server.base_url,
                   "--dest-base-url", server.base_url + "/")
    one_line(same, "refusing to copy into", "the server being read")
    assert list(server.conversations) == ["conv_long"]
    with ConversationsServer() as dest:
        result = run_cli("copy", TARGET, TARGET, "conv_long", "--base-url", server.base_url,
                         "--dest-base-url", dest.base_url)
        assert result.returncode == 0, result.stderr
        (made,) = dest.conversations
        assert [i["content"] for i in dest.stored(made)] == [i["content"] for i in server.stored("conv_long")]


@pytest.mark.parametrize("status", (400, 401, 403, 404, 429, 500))
@pytest.mark.parametrize("key", (API_KEY, GATEWAY_KEY))
def test_no_status_shows_the_key_a_server_echoes(proxy, monkeypatch, status, key):
    monkeypatch.setenv("OPENAI_API_KEY", key)
    proxy.echo_status = status
    for args in (("show", TARGET, "conv_long"), ("ls", TARGET, "--conversation", "conv_long")):
        result = run_cli(*args, "--base-url", proxy.base_url, "--api-timeout", "5")
        if status == 404 and args[0] == "ls":  # a listing skips an id the server lacks
            assert result.returncode == 0 and "skipped unknown conversation id" in result.stderr
            assert key[:12] not in result.stdout + result.stderr
            continue
        line = one_line(result, f"{status}", secrets=(key, key[:12]))
        if status not in (401, 403, 404, 429):  # (these say what they mean, not the echo)
            assert "bad auth header Bearer ***" in line


def test_a_long_retry_after_is_not_waited_for(proxy):
    proxy.retry_after = "120"
    # Before: the client waited 120 s twice (242 s); the process is given 60.
    result = run_cli("show", TARGET, "conv_long", "--base-url", proxy.base_url,
                     "--api-timeout", "5", timeout=60)
    one_line(result, "rate-limiting requests (429 rate_limit_exceeded)",
             "asked to wait 120 s", "longer than the API timeout (5 s)")
    assert len(proxy.seen) == 1  # no retry: nothing waited for


def test_a_short_retry_after_is_still_waited_for(proxy):
    proxy.retry_after = "1"
    result = run_cli("show", TARGET, "conv_long", "--base-url", proxy.base_url,
                     "--api-timeout", "5")
    one_line(result, "rate-limiting requests (429", "retry after 1 s")
    assert len(proxy.seen) == 3  # the client's own two retries


def test_show_limit_reads_one_page(server):
    server.seed("conv_250", texts(250))
    result = run_cli("show", TARGET, "conv_250", "--limit", "50", "--json",
                     "--base-url", server.base_url)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [m["text"] for m in doc["messages"]] == [f"m{i}" for i in range(200, 250)]
    assert doc["session"]["messages"] == 100 and doc["session"]["count_exact"] is False
    # Before: 150 items in two requests (the count's 100, then the 50 asked for).
    assert server.served <= 100
    assert len(server.item_requests("conv_250")) == 1
