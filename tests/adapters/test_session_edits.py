"""Clear, delete and fork whole sessions of JSON session folders and Redis stores, with
undo and redo (issue 15 point 3): what fluxgui writes reads back in the owning library's
layout (HelloAgent ``SessionStore`` files, the Agents SDK's ``RedisSession``), and a
change applied after another writer got in writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from agents.extensions.memory import EncryptedSession, RedisSession
from helpers import REDIS_URL
from json_helpers import hello_entry, hello_history, hello_list, hello_load, hello_save

from fluxgui.adapters import open_store
from fluxgui.core.errors import Conflict, KeyNeeded

KEY = "uGm8G3p3m0JtQxq0xk0t5y0y2n3sL8mX9q2r5VbJ1Yw="

ITEMS = [
    {"role": "user", "content": "Where is my refund?"},
    {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}", "id": "fc_1", "status": "completed"},
    {"type": "function_call_output", "call_id": "c1", "output": "sent on Monday"},
    {"type": "message", "role": "assistant", "id": "m1", "status": "completed",
     "content": [{"type": "output_text", "text": "It went out Monday.", "annotations": []}]},
]


# --------------------------------------------------------------------------- JSON folders


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    history = [hello_entry("user", "hi", "2025-01-01T10:00:00"),
               hello_entry("assistant", "hello", "2025-01-01T10:00:01"),
               hello_entry("user", "bye", "2025-01-01T10:00:02")]
    hello_save(folder, "chat", history, agent_config={"name": "bot"}, metadata={"k": 1})
    hello_save(folder, "other", [hello_entry("user", "x", "2025-01-01T09:00:00")])
    return folder


async def test_json_clear_keeps_the_file_and_every_other_key(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    before = hello_load(folder / "chat.json")
    async with await open_store(str(folder), writable=True) as store:
        change = await store.writer.clear_messages("chat")
        assert len(change.removed) == 3
        after = hello_load(folder / "chat.json")
        assert after["history"] == [] and hello_history(after) == []
        assert {k: v for k, v in after.items() if k != "saved_at" and k != "history"} == {
            k: v for k, v in before.items() if k != "saved_at" and k != "history"
        }
        assert (await store.reader.session_info("chat")).messages == 0
        await store.writer.apply_change(change.inverse())
        assert hello_load(folder / "chat.json") == before  # undo: the very document
        await store.writer.apply_change(change)  # redo
        assert hello_load(folder / "chat.json")["history"] == []


async def test_json_rm_removes_the_file_and_undo_brings_it_back(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    before = (folder / "chat.json").read_bytes()
    async with await open_store(str(folder), writable=True) as store:
        change = await store.writer.delete_session("chat")
        assert not (folder / "chat.json").exists()
        assert [s["filename"] for s in hello_list(folder)] == ["other.json"]
        assert await store.reader.session_info("chat") is None
        await store.writer.apply_change(change.inverse())
        assert hello_load(folder / "chat.json") == json.loads(before)
        assert (await store.reader.session_info("chat")).messages == 3


async def test_json_branch_is_a_new_file_with_the_history_up_to_the_message(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    async with await open_store(str(folder), writable=True) as store:
        change = await store.forks.fork_session("chat", 2)
        assert change.session_id == "chat-fork"
        fork = hello_load(folder / "chat-fork.json")
        assert [m.content for m in hello_history(fork)] == ["hi", "hello"]
        assert fork["agent_config"] == {"name": "bot"} and fork["session_id"] == "chat-fork"
        again = await store.forks.fork_session("chat", 1)
        assert again.session_id == "chat-fork-2"
        with pytest.raises(Conflict):
            await store.forks.fork_session("chat", 1, "other")
        await store.writer.apply_change(change.inverse())
        assert not (folder / "chat-fork.json").exists()
        assert sorted(s["filename"] for s in hello_list(folder)) == ["chat-fork-2.json", "chat.json", "other.json"]


async def test_json_undo_after_another_save_writes_nothing(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    async with await open_store(str(folder), writable=True) as store:
        change = await store.writer.clear_messages("chat")
        # The library saves the session again meanwhile (a new session_id, a message).
        hello_save(folder, "chat", [hello_entry("user", "new", "2025-01-02T10:00:00")])
        saved = (folder / "chat.json").read_bytes()
        with pytest.raises(Conflict):
            await store.writer.apply_change(change.inverse())
        assert (folder / "chat.json").read_bytes() == saved


# --------------------------------------------------------------------------- Redis


@pytest.fixture
async def client(redis_available):
    c = aioredis.from_url(REDIS_URL)
    yield c
    await c.aclose()


def lib(client, sid: str, prefix: str, **kw) -> RedisSession:
    return RedisSession(sid, redis_client=client, key_prefix=prefix, **kw)


async def test_redis_clear_keeps_the_hash_and_its_ttl(client, redis_prefix) -> None:
    await lib(client, "t", redis_prefix, ttl=300).add_items(ITEMS)
    hk, mk = f"{redis_prefix}:t", f"{redis_prefix}:t:messages"
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True) as store:
        change = await store.writer.clear_messages("t")
        assert len(change.removed) == 4
        assert await lib(client, "t", redis_prefix).get_items() == []
        assert await client.exists(mk) == 0 and 0 < await client.pttl(hk) <= 300_000
        assert (await store.reader.session_info("t")).messages == 0  # still listed
        await store.writer.apply_change(change.inverse())
        assert await lib(client, "t", redis_prefix).get_items() == ITEMS
        assert 0 < await client.pttl(mk) <= 300_000


async def test_redis_rm_is_the_librarys_clear_session_and_undoes(client, redis_prefix) -> None:
    await lib(client, "gone", redis_prefix).add_items(ITEMS)
    await lib(client, "gone", redis_prefix)._get_next_id()  # the legacy counter
    base = f"{redis_prefix}:gone"
    counter = await client.get(f"{base}:counter")
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True) as store:
        change = await store.writer.delete_session("gone")
        assert await client.exists(base, f"{base}:messages", f"{base}:counter") == 0
        assert await store.reader.session_info("gone") is None
        await store.writer.apply_change(change.inverse())
        assert await lib(client, "gone", redis_prefix).get_items() == ITEMS
        assert await client.get(f"{base}:counter") == counter
        # Another writer adds an item: redoing the delete would lose it, so it refuses.
        await lib(client, "gone", redis_prefix).add_items([{"role": "user", "content": "more"}])
        with pytest.raises(Conflict):
            await store.writer.apply_change(change)
        assert len(await lib(client, "gone", redis_prefix).get_items()) == 5


async def test_redis_branch_reads_back_in_the_library_with_the_ttl(client, redis_prefix) -> None:
    await lib(client, "orig", redis_prefix, ttl=600).add_items(ITEMS)
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True) as store:
        change = await store.forks.fork_session("orig", 3, "copy")
        assert await lib(client, "copy", redis_prefix).get_items() == ITEMS[:3]
        assert await lib(client, "orig", redis_prefix).get_items() == ITEMS
        assert 0 < await client.pttl(f"{redis_prefix}:copy:messages") <= 600_000
        with pytest.raises(Conflict):
            await store.forks.fork_session("orig", 1, "copy")
        await store.writer.apply_change(change.inverse())
        assert await client.exists(f"{redis_prefix}:copy", f"{redis_prefix}:copy:messages") == 0


async def test_redis_encrypted_fork_is_sealed_for_the_new_id(client, redis_prefix) -> None:
    sealed = EncryptedSession("e1", underlying_session=lib(client, "e1", redis_prefix), encryption_key=KEY)
    await sealed.add_items(ITEMS)
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True) as store:
        with pytest.raises(KeyNeeded):
            await store.forks.fork_session("e1", 2, "e2")
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True, key=KEY) as store:
        await store.forks.fork_session("e1", 2, "e2")
    fork = EncryptedSession("e2", underlying_session=lib(client, "e2", redis_prefix), encryption_key=KEY)
    assert await fork.get_items() == ITEMS[:2]
