"""Test chat on an OpenAI conversation, as the Agents SDK chats with an
``OpenAIConversationsSession``: the conversation's history is the model's input, and the
turn is written back to the conversation (ids left to the server). The conversation is a
loopback Conversations API, the model a loopback OpenAI chat server."""

from __future__ import annotations

import pytest
from chat_servers import ChatServer
from conversations_server import API_KEY, conv_server, sdk_items, sdk_write  # noqa: F401

from fluxgui.adapters import open_store
from fluxgui.core.errors import ProviderError, SessionNotFound
from fluxgui.services.chat import AgentConfig, chat

HISTORY = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is the capital of France?"},
    {"type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Paris.", "annotations": []}]},
    {"type": "compaction", "encrypted_content": "gAAAAB" + "z" * 100},
    {"role": "user", "content": "And of Spain?"},
    {"type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Madrid.", "annotations": []}]},
]


async def _store(server, cid: str):
    return await open_store(
        "openai-conversations:", base_url=server.base_url, api_key=API_KEY,
        conversations=(cid,), writable=True,
    )


async def test_the_history_goes_to_the_model_and_the_turn_back_to_the_conversation(conv_server):
    cid = await sdk_write(conv_server, HISTORY)
    before = await sdk_items(conv_server, cid)
    with ChatServer("openai", reply="Rome.") as model:
        async with await _store(conv_server, cid) as store:
            config = AgentConfig(provider="openai", base_url=model.base_url, api_key="k", model="m")
            result = await chat(store, cid, "And of Italy?", config)
        sent = model.requests[0]["body"]["messages"]
    assert result.reply == "Rome."
    assert [(m["role"], m["content"]) for m in sent] == [
        ("system", "Be brief."),
        ("user", "What is the capital of France?"),
        ("assistant", "Paris."),
        ("user", "And of Spain?"),
        ("assistant", "Madrid."),
        ("user", "And of Italy?"),
    ]
    after = await sdk_items(conv_server, cid)
    assert after[: len(before)] == before
    new = after[len(before):]
    assert [i["role"] for i in new] == ["user", "assistant"]
    assert new[1]["content"] == [{"type": "output_text", "text": "Rome.", "annotations": []}]
    assert all(i["id"] and i["id"] not in {b["id"] for b in before} for i in new)


async def test_a_provider_error_writes_nothing(conv_server):
    cid = await sdk_write(conv_server, HISTORY[:2])
    with ChatServer("openai", mode="401") as model:
        async with await _store(conv_server, cid) as store:
            config = AgentConfig(provider="openai", base_url=model.base_url, api_key="k", model="m")
            with pytest.raises(ProviderError):
                await chat(store, cid, "hello?", config)
    assert len(await sdk_items(conv_server, cid)) == 2
    assert len(conv_server.item_requests(cid, "POST")) == 1  # the fixture's own write


async def test_an_unknown_conversation_is_refused_before_the_model_is_asked(conv_server):
    with ChatServer("openai") as model:
        async with await _store(conv_server, "conv_none") as store:
            config = AgentConfig(provider="openai", base_url=model.base_url, api_key="k", model="m")
            with pytest.raises(SessionNotFound, match="conv_none"):
                await chat(store, "conv_none", "hello?", config)
        assert model.requests == []
