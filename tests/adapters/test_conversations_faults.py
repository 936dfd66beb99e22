"""A Conversations store behind a chaos proxy (tests/chaos_proxy.py) in front of the
loopback Conversations API: an answer that is not the API's is an error (never the end
of a conversation, never an unknown id), a server's text never shows the key, a long
``retry-after`` is not waited for; and reading the end of a conversation right after its
row reads it once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from chaos_proxy import ChaosProxy
from conversations_server import API_KEY, ConversationsServer, texts
from helpers import all_messages

from fluxgui.adapters import open_store
from fluxgui.core.errors import FluxguiError, SessionNotFound, StoreUnavailable

TARGET = "openai-conversations:"

#: answers a broken proxy may give with status 200, and what the error says of them
BODIES = {
    b"{not json": "not JSON",
    b"": "not JSON",
    b"null": "must be a JSON object",
    b"[]": "must be a JSON object",
    b'"x"': "must be a JSON object",
    b'{"object": "list"}': "'data' list",
    b'{"data": 5, "has_more": false}': "'data' list",
    b'{"data": [], "has_more": "yes"}': "'has_more' flag",
    b'{"data": [5], "has_more": true}': "every item has an id",
    b'{"data": [{"type": "message"}], "has_more": true}': "every item has an id",
    b'{"data": [], "has_more": true}': "an empty page cannot have more",
}


@pytest.fixture
def proxy():
    with ConversationsServer() as server, ChaosProxy(server) as p:
        server.seed("conv_a", texts(241))
        server.seed("conv_b", texts(3, "b"))
        yield p


async def conversations(base_url: str, *ids: str, **kw: Any):
    return await open_store(TARGET, base_url=base_url, api_key=API_KEY, conversations=ids, **kw)


@pytest.mark.parametrize("body", list(BODIES), ids=[b.decode() or "empty" for b in BODIES])
async def test_an_answer_that_is_not_the_apis_is_an_error(proxy, body):
    proxy.malformed_body = body
    async with await conversations(proxy.base_url, "conv_a") as store:
        for page in (1, 2, 3):  # the first page, the middle, the last
            proxy.reset()
            proxy.malformed_body, proxy.malformed_page = body, page
            with pytest.raises(StoreUnavailable, match="sent an answer fluxgui cannot read") as err:
                await all_messages(store, "conv_a")
            assert BODIES[body] in str(err.value)
        proxy.reset()
        assert len(await all_messages(store, "conv_a")) == 241


async def test_a_listing_with_a_malformed_answer_fails_and_reports_no_unknown_id(proxy):
    async with await conversations(proxy.base_url, "conv_a", "conv_b") as store:
        proxy.malformed_page = 2
        with pytest.raises(StoreUnavailable, match="not JSON"):
            await store.reader.list_sessions()
        assert store.problems == []  # before: both read as "unknown conversation"
        proxy.reset()
        assert [s.id for s in (await store.reader.list_sessions()).sessions] == ["conv_a", "conv_b"]


async def test_ids_the_client_cannot_send_are_unknown_without_a_request(proxy):
    async with await conversations(proxy.base_url) as store:
        for cid in ("", ".", ".."):
            assert await store.reader.session_info(cid) is None
            with pytest.raises(SessionNotFound):
                await store.reader.require_session(cid)
        assert proxy.seen == []


@pytest.mark.parametrize("status", (400, 401, 403, 404, 422, 429, 500, 503))
async def test_a_servers_text_never_shows_the_key(proxy, status):
    key = "proxy-secret-7f3a9c"
    proxy.echo_status = status
    async with await open_store(TARGET, base_url=proxy.base_url, api_key=key,
                                conversations=("conv_a",), api_timeout=5) as store:
        with pytest.raises(FluxguiError) as err:
            await store.reader.require_session("conv_a")
        text = str(err.value)
        assert key not in text and "proxy-secret" not in text
        assert f"{status}" in text


async def test_a_long_retry_after_is_not_waited_for_a_short_one_is(proxy):
    async with await conversations(proxy.base_url, "conv_a", api_timeout=5) as store:
        proxy.retry_after = "120"
        with pytest.raises(StoreUnavailable, match="asked to wait 120 s, longer than the API timeout"):
            async with asyncio.timeout(60):  # (before: 242 s, the client waiting twice)
                await store.reader.session_info("conv_a")
        assert len(proxy.seen) == 1
        proxy.retry_after = "1"
        with pytest.raises(StoreUnavailable, match="also after the client's retries: retry after 1 s"):
            await store.reader.session_info("conv_a")
        assert len(proxy.seen) == 1 + 3


async def test_the_end_read_for_a_row_is_the_first_page_once(proxy):
    server = proxy.upstream
    async with await conversations(server.base_url, "conv_a", writable=True) as store:
        server.served = 0
        info = await store.reader.require_session("conv_a")
        last = await store.reader.page_messages("conv_a", limit=50)
        assert (info.messages, [m.text for m in last]) == (100, [f"m{i}" for i in range(191, 241)])
        assert server.served == 100 and len(server.item_requests("conv_a")) == 1
        # More than the row read: the rest after it.
        await store.reader.require_session("conv_a")
        longer = await store.reader.page_messages("conv_a", limit=150)
        assert [m.text for m in longer] == [f"m{i}" for i in range(91, 241)]
        assert server.served == 100 + 150
        # Taken once; never by another task; never after a write.
        server.served = 0
        await store.reader.require_session("conv_a")
        await asyncio.create_task(store.reader.page_messages("conv_a", limit=10))
        assert server.served == 100 + 10
        await store.writer.add_messages("conv_a", [{"role": "user", "content": "new"}])
        assert [m.text for m in await store.reader.page_messages("conv_a", limit=1)] == ["new"]
