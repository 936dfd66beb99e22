"""OpenAI Conversations stores against a loopback Conversations API (tests/
conversations_server.py): the real ``OpenAIConversationsSession`` writes the fixtures and
reads back what fluxgui wrote."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conversations_server import (  # noqa: F401 - conv_server is a fixture
    API_KEY,
    conv_server,
    sdk_items,
    sdk_write,
    texts,
)
from helpers import all_messages, all_sessions

from fluxgui.adapters import open_store
from fluxgui.core.errors import Conflict, ReadOnlyError, SessionNotFound

TARGET = "openai-conversations:"


async def conversations(server, *ids: str, **kw: Any):
    return await open_store(
        TARGET, base_url=server.base_url, api_key=API_KEY, conversations=tuple(ids), **kw
    )


def bare(item: dict[str, Any]) -> dict[str, Any]:
    """An item without its server-given id."""
    return {k: v for k, v in item.items() if k != "id"}


# --------------------------------------------------------------------------- reading


async def test_messages_are_what_the_sdk_reads_in_order(conv_server):
    items = texts(7) + [
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": 1}'},
        # a field the client's model names otherwise (async_): read under the API's name
        {"type": "function_call", "call_id": "c2", "name": "later", "arguments": "{}",
         "async": True},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
        {"type": "compaction", "encrypted_content": "gAAAAB" * 40},
    ]
    cid = await sdk_write(conv_server, items)
    expected = await sdk_items(conv_server, cid)
    async with await conversations(conv_server, cid) as store:
        got = await all_messages(store, cid)
        assert [m.raw for m in got] == expected
        assert [m.kind for m in got][-3:] == ["tool_call", "tool_output", "compaction"]
        assert got[-3].raw["async"] is True and "async_" not in got[-3].raw
        assert [m.ref for m in got] == [i["id"] for i in expected]
        # Message ids are stable numbers: the same item, the same id, in any read.
        again = await store.reader.page_messages(cid, limit=3)
        assert [m.id for m in again] == [m.id for m in got[-3:]]
        assert len({m.id for m in got}) == len(got)
        latest = await store.session(cid).get_messages(limit=2)
        assert [d["content"] for d in latest] == ["42", ""]


async def test_the_latest_page_comes_first_without_reading_the_rest(conv_server):
    cid = await sdk_write(conv_server, texts(250))
    expected = await sdk_items(conv_server, cid)
    async with await conversations(conv_server, cid) as store:
        conv_server.requests.clear()
        last = await store.reader.page_messages(cid, limit=50)
        assert [m.raw for m in last] == expected[-50:]
        reads = conv_server.item_requests(cid)
        assert [r["query"] for r in reads] == [{"order": "desc", "limit": "50"}]
        collected = list(last)
        while True:
            page = await store.reader.page_messages(cid, limit=80, anchor=collected[0].sort_key)
            if not page:
                break
            collected[:0] = page
        assert [m.raw for m in collected] == expected
        # Every request after the first starts after the oldest item seen so far.
        assert all(r["query"]["after"] for r in conv_server.item_requests(cid)[1:])


async def test_paging_forward_and_from_the_middle(conv_server):
    cid = await sdk_write(conv_server, texts(30))
    expected = [i["content"][0]["text"] for i in await sdk_items(conv_server, cid)]
    async with await conversations(conv_server, cid) as store:
        first = await store.reader.page_messages(cid, limit=4, direction="forward")
        assert [m.text for m in first] == expected[:4]
        every = await all_messages(store, cid, batch=7)
        assert [m.text for m in every] == expected
        mid = every[10]
        after = await store.reader.page_messages(cid, limit=3, anchor=mid.sort_key, direction="forward")
        before = await store.reader.page_messages(cid, limit=3, anchor=mid.sort_key)
        assert [m.text for m in after] == expected[11:14]
        assert [m.text for m in before] == expected[7:10]
        # A page longer than the API's 100 is several requests.
        assert len(await store.reader.page_messages(cid, limit=250)) == 30


async def test_counts_are_exact_when_known_and_a_bound_otherwise(conv_server):
    small = await sdk_write(conv_server, texts(3))
    big = await sdk_write(conv_server, texts(130))
    async with await conversations(conv_server, small, big) as store:
        listed = {s.id: s for s in await all_sessions(store)}
        assert (listed[small].messages, listed[small].count_exact) == (3, True)
        assert (listed[big].messages, listed[big].count_exact) == (100, False)
        assert listed[big].count_text == "≥ 100" and listed[small].count_text == "3"
        assert listed[big].to_dict()["count_exact"] is False
        assert "count_exact" not in listed[small].to_dict()
        assert await store.reader.count_messages(big) == 130


async def test_listing_is_the_ids_given_and_unknown_ones_are_reported(conv_server):
    a = await sdk_write(conv_server, texts(1))
    b = await sdk_write(conv_server, texts(2))
    async with await conversations(conv_server, a, "conv_gone", b, a) as store:
        assert [s.id for s in await all_sessions(store, page_size=1)] == [a, b]
        assert [s.id for s in (await store.reader.list_sessions(descending=False)).sessions] == [b, a]
        assert len(store.problems) == 1 and "conv_gone" in store.problems[0]
        assert "404" in store.problems[0]
        assert await store.reader.session_info("conv_gone") is None
        with pytest.raises(SessionNotFound, match="conv_gone"):
            await store.reader.require_session("conv_gone")
        assert await store.reader.page_messages("conv_gone") == []
        assert [s.id for s in await store.reader.search_sessions("m1")] == [b]
        assert [s.id for s in await store.reader.search_sessions(a[-6:])] == [a]
    async with await conversations(conv_server) as empty:
        assert (await empty.reader.list_sessions()).sessions == []


async def test_ids_file(conv_server, tmp_path):
    a = await sdk_write(conv_server, texts(1))
    b = await sdk_write(conv_server, texts(1))
    ids = tmp_path / "ids.txt"
    ids.write_text(f"# support queue\n{a}\n\n  {b}  \n", encoding="utf-8")
    async with await conversations(conv_server, b, ids_file=str(ids)) as store:
        assert [s.id for s in await all_sessions(store)] == [b, a]


async def test_store_key_names_the_server_not_the_key(conv_server):
    async with await conversations(conv_server) as store:
        key = store.store_key
    port = conv_server.base_url.split(":")[2].split("/")[0]
    assert key == f"openai-conversations:http://localhost:{port}/v1?format=agents"
    assert API_KEY not in key
    again = await open_store(f"{TARGET}{conv_server.base_url}/", api_key="another-key")
    try:
        assert again.store_key == key
    finally:
        await again.close()
    public = await open_store(TARGET, base_url="https://API.openai.com:443/v1", api_key="k")
    try:
        assert public.store_key == "openai-conversations:https://api.openai.com/v1?format=agents"
    finally:
        await public.close()


# --------------------------------------------------------------------------- writing


async def test_appends_are_what_the_sdk_writes_in_batches_of_twenty(conv_server):
    cid = await sdk_write(conv_server, texts(1))
    async with await conversations(conv_server, cid, writable=True) as store:
        turn = [{"role": "user", "content": "question"}, {"role": "assistant", "content": "answer"}]
        assert await store.writer.add_messages(cid, turn) == 2
        many = [{"role": "user", "content": f"bulk {i}"} for i in range(45)]
        await store.writer.add_messages(cid, many)
    posts = conv_server.item_requests(cid, "POST")
    assert [len(r["body"]["items"]) for r in posts] == [1, 2, 20, 20, 5]
    got = await sdk_items(conv_server, cid)
    assert [bare(i) for i in got[1:3]] == [
        {"type": "message", "role": "user", "status": "completed",
         "content": [{"type": "input_text", "text": "question"}]},
        {"type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "answer", "annotations": []}]},
    ]
    assert [i["content"][0]["text"] for i in got[3:]] == [f"bulk {i}" for i in range(45)]
    # What fluxgui sent is what the SDK would send: no ids of its own.
    assert all("id" not in item for r in posts[1:] for item in r["body"]["items"])


async def test_item_shapes_match_the_sdks_sanitising(conv_server):
    from agents.run_internal.session_persistence import _sanitize_openai_conversation_item

    from fluxgui.adapters.conversations.items import for_conversation

    samples = [
        {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "provider_data": {"x": 1}},
        {"id": "rs_1", "type": "reasoning", "summary": []},
        {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {}},
        {"id": "__fake_id__", "type": "reasoning", "summary": []},
        {"id": "fc_1", "type": "function_call", "call_id": "c", "name": "f", "arguments": "{}",
         "_agents_tool_title": "t"},
        {"id": "cmp_1", "type": "compaction", "encrypted_content": "x", "created_by": "me"},
        {"role": "user", "content": "hi"},
    ]
    assert [for_conversation(i) for i in samples] == [
        _sanitize_openai_conversation_item(dict(i)) for i in samples
    ]


async def test_read_only_refuses_and_writes_nothing(conv_server):
    cid = await sdk_write(conv_server, texts(2))
    conv_server.requests.clear()
    async with await conversations(conv_server, cid) as store:
        with pytest.raises(ReadOnlyError):
            await store.writer.add_messages(cid, [{"role": "user", "content": "no"}])
        with pytest.raises(ReadOnlyError):
            await store.writer.clear_messages(cid)
        with pytest.raises(ReadOnlyError):
            await store.editor.delete_messages(cid, [1])
    assert not [r for r in conv_server.requests if r["method"] != "GET"]


async def test_delete_the_last_items_and_undo_with_new_ids(conv_server):
    cid = await sdk_write(conv_server, texts(6))
    before = await sdk_items(conv_server, cid)
    async with await conversations(conv_server, cid, writable=True) as store:
        msgs = await all_messages(store, cid)
        change = await store.editor.delete_messages(cid, [msgs[-1].id, msgs[-2].id])
        assert [r["item_id"] for r in change.removed] == [i["id"] for i in before[-2:]]
        assert await sdk_items(conv_server, cid) == before[:-2]
        undone = await store.writer.apply_change(change.inverse())
        assert "new ids" in undone.label
        after = await sdk_items(conv_server, cid)
        assert [bare(i) for i in after] == [bare(i) for i in before]
        assert [i["id"] for i in after[-2:]] != [i["id"] for i in before[-2:]]
        # Redo deletes the items as they are now (the window keeps what undo wrote).
        await store.writer.apply_change(undone.inverse())
        assert await sdk_items(conv_server, cid) == before[:-2]


async def test_a_deletion_in_the_middle_cannot_be_undone(conv_server):
    cid = await sdk_write(conv_server, texts(5))
    before = await sdk_items(conv_server, cid)
    async with await conversations(conv_server, cid, writable=True) as store:
        msgs = await all_messages(store, cid)
        change = await store.editor.delete_messages(cid, [msgs[1].id])
        assert await sdk_items(conv_server, cid) == before[:1] + before[2:]
        with pytest.raises(Conflict, match="only appends"):
            await store.writer.apply_change(change.inverse())
        pop = await store.editor.pop_message(cid)
        assert await sdk_items(conv_server, cid) == before[:1] + before[2:4]
        await store.writer.add_messages(cid, [{"role": "user", "content": "later"}])
        with pytest.raises(Conflict, match="changed since"):
            await store.writer.apply_change(pop.inverse())


async def test_items_are_added_at_the_end_and_never_changed(conv_server):
    cid = await sdk_write(conv_server, texts(3))
    before = await sdk_items(conv_server, cid)
    async with await conversations(conv_server, cid) as store:
        with pytest.raises(ReadOnlyError, match="open read-only"):
            await store.editor.update_message(cid, 1, {"role": "user", "content": "x"})
    async with await conversations(conv_server, cid, writable=True) as store:
        editor = store.editor
        assert editor is not None and not editor.in_place and store.forks is None
        msgs = await all_messages(store, cid)
        change = await editor.insert_message(cid, {"role": "user", "content": "new"}, anchor=msgs[-1].id)
        after = await sdk_items(conv_server, cid)
        assert after[:-1] == before and after[-1]["content"][0]["text"] == "new"
        assert [r["after"] for r in change.added] == [before[-1]["id"]]
        never = "cannot change an item or put one between others"
        with pytest.raises(ReadOnlyError, match=never):
            await editor.insert_message(cid, {"role": "user", "content": "x"}, anchor=msgs[0].id)
        with pytest.raises(ReadOnlyError, match=never):
            await editor.update_message(cid, msgs[0].id, {"role": "user", "content": "x"})
        with pytest.raises(ReadOnlyError, match=never):
            await editor.rewrite_messages(cid, delete=[], insert_after=[(msgs[0].id, {"role": "user", "content": "x"})], label="x")
        assert await sdk_items(conv_server, cid) == after


async def test_clear_deletes_the_conversation_and_undo_makes_a_new_one(conv_server):
    cid = await sdk_write(conv_server, texts(25))
    before = await sdk_items(conv_server, cid)
    async with await conversations(conv_server, cid, writable=True) as store:
        change = await store.writer.clear_messages(cid)
        assert len(change.removed) == 25
        assert cid not in conv_server.conversations
        assert await store.reader.session_info(cid) is None
        assert [s.id for s in await all_sessions(store)] == []
        undone = await store.writer.apply_change(change.inverse())
        new_id = undone.session_id
        assert new_id != cid and "new conversation id" in undone.label
        assert [bare(i) for i in await sdk_items(conv_server, new_id)] == [bare(i) for i in before]
        assert [s.id for s in await all_sessions(store)] == [new_id]
        posts = [r for r in conv_server.requests if r["method"] == "POST"]
        assert max(len(r["body"]["items"]) for r in posts) <= 20


async def test_a_cancelled_write_completes_whole(conv_server):
    cid = await sdk_write(conv_server, texts(1))
    rows = [{"role": "user", "content": f"row {i}"} for i in range(90)]
    async with await conversations(conv_server, cid, writable=True) as store:
        task = asyncio.ensure_future(store.writer.add_messages(cid, rows))
        asyncio.get_running_loop().call_soon(task.cancel)
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await store.reader.count_messages(cid) == 91


# --------------------------------------------------------------------------- errors


async def _error(server, **kw: Any) -> str:
    store = await open_store(TARGET, base_url=server.base_url, conversations=("conv_x",), **kw)
    try:
        with pytest.raises(Exception) as err:
            await store.reader.list_sessions()
    finally:
        await store.close()
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text


async def test_a_refused_key_is_one_line_without_the_key(conv_server):
    text = await _error(conv_server, api_key="sk-wrong-secret-key")
    assert "refused the API key (401 invalid_api_key)" in text
    assert "sk-wro" not in text and "secret" not in text


async def test_rate_limiting_says_when_to_retry(conv_server):
    conv_server.fail = (429, {"retry-after": "300"})  # longer than the client waits: no retry
    text = await _error(conv_server, api_key=API_KEY)
    assert "rate-limiting requests (429" in text and "retry after 300 s" in text
    assert len(conv_server.requests) == 1
    conv_server.requests.clear()
    conv_server.fail = (429, {"retry-after-ms": "20"})
    text = await _error(conv_server, api_key=API_KEY)
    assert len(conv_server.requests) == 3  # the client's own two retries came first
    assert "retry after 0.02 s" in text


async def test_a_closed_port_and_a_timeout_are_one_line(conv_server):
    from helpers import closed_port

    store = await open_store(
        TARGET, base_url=f"http://127.0.0.1:{closed_port()}/v1", api_key=API_KEY,
        conversations=("conv_x",),
    )
    try:
        with pytest.raises(Exception, match="cannot reach the Conversations API at .*: connection refused"):
            await store.reader.list_sessions()
    finally:
        await store.close()
    conv_server.hang = True
    text = await _error(conv_server, api_key=API_KEY, api_timeout=1)
    assert "did not answer within 1 s" in text


async def test_no_api_key_is_one_line(monkeypatch):
    import keyring
    import keyring.backends.fail

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    try:
        with pytest.raises(Exception, match="no API key for the OpenAI Conversations API"):
            await open_store(TARGET)
    finally:
        keyring.set_keyring(previous)


async def test_the_api_key_comes_from_the_keyring(monkeypatch, conv_server):
    from conversations_server import memory_keyring

    from fluxgui.services.credentials import API_KEY_KEYRING, SERVICE

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with memory_keyring() as values:
        values[(SERVICE, API_KEY_KEYRING)] = API_KEY  # where the chat's key is filed
        cid = await sdk_write(conv_server, texts(2))
        store = await open_store(TARGET, base_url=conv_server.base_url, conversations=(cid,))
        try:
            assert [s.messages for s in await all_sessions(store)] == [2]
        finally:
            await store.close()


@pytest.mark.parametrize("target", ["openai-conversations:ftp://x", "openai-conversations:nothing"])
async def test_bad_base_urls_are_one_line(target):
    with pytest.raises(Exception, match="bad base URL"):
        await open_store(target, api_key="k")


async def test_two_base_urls_are_refused():
    with pytest.raises(Exception, match="two base URLs given"):
        await open_store(f"{TARGET}http://a.example/v1", base_url="http://b.example/v1", api_key="k")
