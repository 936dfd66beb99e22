"""The Redis store against the real writer: the Agents SDK's ``RedisSession`` (and
``EncryptedSession`` around it), on the test Redis server.

Every fixture is written by the library and compared with what the library reads back;
then fluxgui writes and the library reads. Each test works under a fresh key prefix
(``redis_prefix``) whose keys are deleted afterwards; the default-prefix test uses its own
session ids on database 15 and deletes them.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timezone
from urllib.parse import urlsplit

import pytest
import redis.asyncio as aioredis
from agents.extensions.memory import EncryptedSession, RedisSession
from helpers import REDIS_URL
from helpers import all_messages, all_sessions, closed_port

from fluxgui.core.roles import refuse
from fluxgui.adapters import open_store
from fluxgui.core.errors import (
    Conflict,
    KeyNeeded,
    NotASessionStore,
    ReadOnlyError,
    StoreUnavailable,
    TargetError,
    WrongKey,
)
from fluxgui.core.model import message_to_item
from fluxgui.services.transfer import copy_sessions

KEY = "uGm8G3p3m0JtQxq0xk0t5y0y2n3sL8mX9q2r5VbJ1Yw="
OTHER_KEY = "b3RoZXIta2V5LW9mLXRoaXJ0eS10d28tYnl0ZXMhIT0="

#: A conversation as the Agents SDK stores it.
ITEMS: list[dict] = [
    {"role": "system", "content": "Be terse."},
    {"role": "user", "content": 'Wie ist das Wetter in Zürich? ☀️ "quoted" \'single\''},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Need the tool."}]},
    {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": json.dumps({"city": "Zürich"}),
        "id": "fc_1",
        "status": "completed",
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "22 °C, sunny"},
    {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [{"type": "output_text", "text": "Sunny, 22 °C.", "annotations": []}],
    },
]


@pytest.fixture
async def client(redis_available):
    c = aioredis.from_url(REDIS_URL)
    yield c
    await c.aclose()


def lib(client, sid: str, prefix: str, **kw) -> RedisSession:
    return RedisSession(sid, redis_client=client, key_prefix=prefix, **kw)


def enc(client, sid: str, prefix: str, key: str = KEY) -> EncryptedSession:
    return EncryptedSession(sid, underlying_session=lib(client, sid, prefix), encryption_key=key)


def where(prefix: str) -> str:
    """How the store names itself in messages."""
    return f"{REDIS_URL} (key prefix {prefix})"


def iso(stamp: bytes) -> str:
    return datetime.fromtimestamp(int(stamp), timezone.utc).isoformat()


def compact(item) -> bytes:
    return json.dumps(item, separators=(",", ":")).encode()


# --------------------------------------------------------------------------- reading


async def test_library_sessions_read_as_the_library_reads_them(client, redis_prefix):
    written = {
        "plain": ITEMS,
        "user:42:chat": ITEMS[:3],  # ':' in ids
        "tenant:7": [ITEMS[1]] * 5,
    }
    for sid, items in written.items():
        s = lib(client, sid, redis_prefix)
        await s.add_items(items[:2])
        await s.add_items(items[2:])
    emptied = lib(client, "emptied", redis_prefix)
    await emptied.add_items([ITEMS[1]])
    assert await emptied.pop_item() == ITEMS[1]  # hash stays, list is gone

    async with await open_store(REDIS_URL, key_prefix=redis_prefix) as ro:
        assert ro.format == "agents" and ro.needs_key is False and ro.can_write is False
        listed = await all_sessions(ro, page_size=2)
        expected_counts = {sid: len(await lib(client, sid, redis_prefix).get_items()) for sid in [*written, "emptied"]}
        assert {s.id: s.messages for s in listed} == expected_counts
        assert expected_counts["emptied"] == 0
        # Activity order: updated_at (seconds) descending, ties by id descending.
        stamps = {s: int(await client.hget(f"{redis_prefix}:{s}", "updated_at")) for s in expected_counts}
        assert [s.id for s in listed] == sorted(stamps, key=lambda s: (stamps[s], s), reverse=True)
        for sid in written:
            library = lib(client, sid, redis_prefix)
            everything = await library.get_items()
            got = await all_messages(ro, sid, batch=2)
            assert [m.raw for m in got] == everything
            assert [m.id for m in got] == list(range(1, len(everything) + 1))
            for n in (1, 2, len(everything), len(everything) + 5):
                page = await ro.reader.page_messages(sid, limit=n)
                assert [m.raw for m in page] == await library.get_items(limit=n), (sid, n)
            fields = await client.hgetall(f"{redis_prefix}:{sid}")
            info = await ro.reader.require_session(sid)
            assert info.created_at == iso(fields[b"created_at"])
            assert info.updated_at == iso(fields[b"updated_at"])
            assert await ro.reader.count_messages(sid) == len(everything)
            flux_view = await ro.session(sid).get_messages(limit=2)
            assert [d["content"] for d in flux_view] == [m.text for m in got[-2:]]
        by_id = await ro.reader.list_sessions(order="id", descending=False, limit=10)
        assert [s.id for s in by_id.sessions] == sorted(expected_counts)
        by_count = await ro.reader.list_sessions(order="messages", limit=10)
        assert [s.id for s in by_count.sessions] == sorted(
            expected_counts, key=lambda s: (expected_counts[s], s), reverse=True
        )


async def test_message_ids_stay_put_when_the_library_pops(client, redis_prefix):
    s = lib(client, "pop", redis_prefix)
    await s.add_items(ITEMS)
    async with await open_store(REDIS_URL, key_prefix=redis_prefix) as ro:
        before = await all_messages(ro, "pop")
        assert await s.pop_item() == ITEMS[-1]
        after = await all_messages(ro, "pop")
        assert [(m.id, m.raw) for m in after] == [(m.id, m.raw) for m in before[:-1]]
        middle = after[2]
        fwd = await ro.reader.page_messages("pop", limit=2, anchor=middle.sort_key, direction="forward")
        back = await ro.reader.page_messages("pop", limit=2, anchor=middle.sort_key, direction="backward")
        assert [m.raw for m in fwd] == ITEMS[3:5]
        assert [m.raw for m in back] == ITEMS[0:2]


HOSTILE_IDS = [
    "a:b",
    "a:b:c",
    ":lead",
    "trail:",
    "sess:messages",  # its hash name ends in ":messages"
    "x:counter",
    "*",
    "?[x]",
    "back\\slash",
    "",
    "日本語 🧪",
    "new\nline",
]


async def test_hostile_ids_and_glob_characters_in_the_prefix(client, redis_prefix):
    # "<p>:[ab]*" unescaped as a glob would also match the keys of "<p>:a".
    prefix, decoy = f"{redis_prefix}:[ab]*", f"{redis_prefix}:a"
    for i, sid in enumerate(HOSTILE_IDS):
        await lib(client, sid, prefix).add_items(ITEMS[: 1 + i % len(ITEMS)])
    await lib(client, "decoy", decoy).add_items(ITEMS)
    async with await open_store(REDIS_URL, key_prefix=prefix, writable=True) as store:
        listed = await all_sessions(store, page_size=5)
        assert sorted(s.id for s in listed) == sorted(HOSTILE_IDS)
        for sid in HOSTILE_IDS:
            library = lib(client, sid, prefix)
            assert [m.raw for m in await all_messages(store, sid)] == await library.get_items()
            assert (await store.reader.require_session(sid)).messages == len(await library.get_items())
            await store.writer.add_messages(sid, [{"role": "user", "content": f"more for {sid}"}])
            assert (await library.get_items(limit=1)) == [{"role": "user", "content": f"more for {sid}"}]
        assert [s.id for s in await store.reader.search_sessions("[x]")] == ["?[x]"]
    async with await open_store(REDIS_URL, key_prefix=decoy) as other:
        assert [s.id for s in await all_sessions(other)] == ["decoy"]


async def test_default_prefix_on_another_database(redis_available):
    url = REDIS_URL.rsplit("/", 1)[0] + "/15"
    tag = uuid.uuid4().hex[:10]
    ids = [f"fluxgui-test-{tag}:{n}" for n in range(3)]
    try:
        for n, sid in enumerate(ids[:2]):
            s = RedisSession.from_url(sid, url=url)
            await s.add_items(ITEMS[: n + 2])
            await s.close()
        async with await open_store(url, writable=True) as store:
            assert store.target == url  # the default prefix is not spelled out
            listed = {s.id: s.messages for s in await all_sessions(store, page_size=100)}
            assert {sid: listed.get(sid) for sid in ids[:2]} == {ids[0]: 2, ids[1]: 3}
            hits = await store.reader.search_sessions(tag)
            assert sorted(s.id for s in hits) == ids[:2]
            await store.writer.add_messages(ids[2], [{"role": "user", "content": "hello"}])
        reader = RedisSession.from_url(ids[2], url=url)
        assert await reader.get_items() == [{"role": "user", "content": "hello"}]
        await reader.close()
    finally:
        c = aioredis.from_url(url)
        for sid in ids:
            await c.delete(*(f"agents:session:{sid}{end}" for end in ("", ":messages", ":counter")))
        await c.aclose()


async def test_search_reads_item_text_case_insensitively(client, redis_prefix):
    await lib(client, "weather", redis_prefix).add_items(ITEMS)
    await lib(client, "Other-Chat", redis_prefix).add_items([{"role": "user", "content": "hi"}])
    async with await open_store(REDIS_URL, key_prefix=redis_prefix) as ro:
        for query, hits in [
            ("ZÜRICH", ["weather"]),  # non-ASCII, stored as \\u escapes
            ("get_weather(", ["weather"]),  # the text a person reads for a tool call
            ("other-chat", ["Other-Chat"]),  # the id
            ("HI", ["Other-Chat"]),
            ("", ["Other-Chat", "weather"]),
            ("nowhere", []),
        ]:
            assert sorted(s.id for s in await ro.reader.search_sessions(query)) == hits, query


# --------------------------------------------------------------------------- writing


async def test_fluxgui_writes_as_the_library_writes(client, redis_prefix):
    await lib(client, "s", redis_prefix).add_items(ITEMS[:2])
    hk, mk = f"{redis_prefix}:s", f"{redis_prefix}:s:messages"
    created = await client.hget(hk, "created_at")
    given = [
        {"role": "user", "content": "flux message ✓"},
        {"role": "assistant", "content": "reply"},
        {"role": "tool", "content": "42", "tool_call_id": "call_9"},
        ITEMS[3],  # an item stays as it is
    ]
    expected = [message_to_item(m) for m in given]
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True) as store:
        before = time.time()
        assert await store.writer.add_messages("s", given) == len(given)
        assert await store.writer.add_messages("s", []) == 0
    assert await lib(client, "s", redis_prefix).get_items() == [*ITEMS[:2], *expected]
    # The same bytes RedisSession writes: compact JSON, ASCII-escaped.
    assert await client.lrange(mk, 2, -1) == [compact(i) for i in expected]
    assert await client.lrange(mk, 0, 1) == [compact(i) for i in ITEMS[:2]]
    fields = await client.hgetall(hk)
    # The library's three fields, plus fluxgui's sub-second tie-break for the listing
    # (RedisSession never reads the hash).
    assert set(fields) == {b"session_id", b"created_at", b"updated_at", b"fluxgui_updated_us"}
    assert int(fields[b"fluxgui_updated_us"]) // 1_000_000 == int(fields[b"updated_at"])
    assert fields[b"session_id"] == b"s"
    assert fields[b"created_at"] == created  # HSETNX: the first write's time stays
    assert int(before) <= int(fields[b"updated_at"]) <= int(time.time())
    # The library appends after fluxgui, in order.
    await lib(client, "s", redis_prefix).add_items([ITEMS[4]])
    async with await open_store(REDIS_URL, key_prefix=redis_prefix) as ro:
        assert [m.raw for m in await all_messages(ro, "s")] == [*ITEMS[:2], *expected, ITEMS[4]]


async def test_clear_deletes_the_keys_the_library_deletes(client, redis_prefix):
    for sid in ("by-lib", "by-flux"):
        s = lib(client, sid, redis_prefix)
        await s.add_items(ITEMS)
        await s._get_next_id()  # the library's legacy counter key, part of the session
    await lib(client, "by-lib", redis_prefix).clear_session()
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True) as store:
        assert await store.writer.clear_session("by-flux") == len(ITEMS)
        assert await store.reader.session_info("by-flux") is None
        assert await store.writer.clear_session("never-there") == 0
    for sid in ("by-lib", "by-flux"):
        base = f"{redis_prefix}:{sid}"
        assert await client.exists(base, f"{base}:messages", f"{base}:counter") == 0, sid
        assert await lib(client, sid, redis_prefix).get_items() == []


async def test_session_ttl_is_kept(client, redis_prefix):
    ttl = lib(client, "ttl", redis_prefix, ttl=300)
    await ttl.add_items(ITEMS[:2])
    await lib(client, "forever", redis_prefix).add_items(ITEMS[:1])
    hk, mk = f"{redis_prefix}:ttl", f"{redis_prefix}:ttl:messages"
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True) as store:
        await store.writer.add_messages("ttl", [{"role": "user", "content": "more"}])
        assert 0 < await client.pttl(hk) <= 300_000
        assert 0 < await client.pttl(mk) <= 300_000
        # Popped empty: the list is gone, the hash (with its TTL) stays; a new list
        # takes the session's remaining time.
        for _ in range(3):
            await ttl.pop_item()
        assert await client.exists(mk) == 0
        await store.writer.add_messages("ttl", [{"role": "user", "content": "again"}])
        assert 0 < await client.pttl(mk) <= 300_000
        await store.writer.add_messages("forever", [{"role": "user", "content": "x"}])
        assert await client.pttl(f"{redis_prefix}:forever") == -1
        assert await client.pttl(f"{redis_prefix}:forever:messages") == -1
    assert await ttl.get_items() == [{"role": "user", "content": "again"}]


async def test_import_and_copy_write_new_sessions_the_library_reads(client, redis_prefix):
    src, dst = f"{redis_prefix}:src", f"{redis_prefix}:dst"
    await lib(client, "orig", src).add_items(ITEMS)
    await lib(client, "second", src).add_items(ITEMS[1:2])
    async with (
        await open_store(REDIS_URL, key_prefix=src) as source,
        await open_store(REDIS_URL, key_prefix=dst, writable=True) as dest,
    ):
        sid, n = await dest.writer.import_session(
            "orig",
            source.reader.iter_messages("orig", batch=4),
            created_at="2024-01-02T03:04:05+00:00",
            updated_at="2024-01-02T04:00:00",
        )
        assert (sid, n) == ("orig", len(ITEMS))
        assert await lib(client, "orig", dst).get_items() == ITEMS
        fields = await client.hgetall(f"{dst}:orig")
        assert fields[b"session_id"] == b"orig"
        assert fields[b"created_at"] == str(int(datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc).timestamp())).encode()
        assert fields[b"updated_at"] == str(int(datetime(2024, 1, 2, 4, tzinfo=timezone.utc).timestamp())).encode()
        info = await dest.reader.require_session("orig")
        assert (info.created_at, info.updated_at) == (
            "2024-01-02T03:04:05+00:00",
            "2024-01-02T04:00:00+00:00",
        )
        with pytest.raises(Conflict) as err:
            await dest.writer.import_session("orig", source.reader.iter_messages("orig"))
        assert str(err.value) == f'session "orig" already exists in {where(dst)}; nothing was written for it'
        assert await client.llen(f"{dst}:orig:messages") == len(ITEMS)
        assert (await dest.writer.import_session("orig", source.reader.iter_messages("orig"), rename=True))[0] == "orig-2"
        assert (await dest.writer.import_session("orig", [[]], rename=True)) == ("orig-3", 0)
        assert await lib(client, "orig-2", dst).get_items() == ITEMS
        assert (await dest.reader.require_session("orig-3")).messages == 0
        result = await copy_sessions(source, dest, ["second"])
        assert result.written == [("second", "second")]
    assert await lib(client, "second", dst).get_items() == ITEMS[1:2]


async def test_read_only_store_refuses_writes(client, redis_prefix):
    await lib(client, "s", redis_prefix).add_items(ITEMS)
    async with await open_store(REDIS_URL, key_prefix=redis_prefix) as ro:
        with pytest.raises(ReadOnlyError) as err:
            await ro.writer.add_messages("s", [{"role": "user", "content": "no"}])
        assert str(err.value) == f"{where(redis_prefix)} is open read-only; open it writable to change it"
        with pytest.raises(ReadOnlyError):
            await ro.writer.clear_session("s")
        for edit in (ro.writer.clear_messages("s"), ro.writer.delete_session("s"), ro.forks.fork_session("s", 1)):
            with pytest.raises(ReadOnlyError):
                await edit
        with pytest.raises(ReadOnlyError):
            await ro.writer.import_session("new", [[]])
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True) as store:
        with pytest.raises(ReadOnlyError) as err:
            await (store.editor or refuse(store, "editor")).pop_message("s")
        assert str(err.value) == (
            f"{where(redis_prefix)}: single items of Redis sessions cannot be edited in place "
            "(clear, delete and fork whole sessions instead)"
        )
        with pytest.raises(ReadOnlyError):
            await (store.editor or refuse(store, "editor")).delete_messages("s", [1])
    assert await lib(client, "s", redis_prefix).get_items() == ITEMS


async def test_listing_follows_library_writes(client, redis_prefix):
    await lib(client, "a", redis_prefix).add_items(ITEMS[:1])
    async with await open_store(REDIS_URL, key_prefix=redis_prefix) as ro:
        assert {s.id: s.messages for s in await all_sessions(ro)} == {"a": 1}
        token = await ro.change_token()
        await lib(client, "b", redis_prefix).add_items(ITEMS[:2])
        await lib(client, "a", redis_prefix).add_items(ITEMS[:2])
        assert await ro.change_token() != token
        assert {s.id: s.messages for s in await all_sessions(ro)} == {"a": 3, "b": 2}


# --------------------------------------------------------------------------- encryption


async def test_encrypted_session_written_by_the_library(client, redis_prefix):
    e = enc(client, "secret", redis_prefix)
    await e.add_items(ITEMS)
    # A plaintext item in the same list: EncryptedSession skips it.
    await lib(client, "secret", redis_prefix).add_items([{"role": "user", "content": "plain"}])
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, key=KEY) as store:
        assert store.needs_key is True
        got = await all_messages(store, "secret")
        assert [m.raw for m in got[:-1]] == await e.get_items()
        assert all(m.metadata["encryption"]["state"] == "ok" for m in got[:-1])
        assert got[-1].raw == {"role": "user", "content": "plain"}
        for n in (1, 3, None):
            flux = await store.session("secret").get_messages(limit=n)
            lib_items = await e.get_items(limit=n)
            assert [d["content"] for d in flux] == [m.text for m in got[:-1]][-len(lib_items):]
            assert len(flux) == len(lib_items)
        assert [s.id for s in await store.reader.search_sessions("zürich")] == ["secret"]
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, writable=True) as locked:
        assert locked.needs_key is True
        shown = await all_messages(locked, "secret")
        assert [m.metadata["encryption"]["state"] for m in shown[:-1]] == ["locked"] * len(ITEMS)
        assert await locked.session("secret").get_messages() == []
        with pytest.raises(KeyNeeded) as err:
            await locked.writer.add_messages("secret", [{"role": "user", "content": "x"}])
        assert str(err.value) == (
            f"{where(redis_prefix)} holds encrypted items (EncryptedSession): give its key to write to it"
        )
    assert len(await e.get_items()) == len(ITEMS)


async def test_wrong_key_is_one_line(client, redis_prefix):
    await enc(client, "only", redis_prefix).add_items(ITEMS[:2])
    with pytest.raises(WrongKey) as err:
        await open_store(REDIS_URL, key_prefix=redis_prefix, key=OTHER_KEY)
    assert str(err.value) == (
        f'the key does not decrypt the encrypted items of {where(redis_prefix)} '
        '(tried session "only"): wrong key?'
    )


async def test_sealed_writes_read_back_through_encrypted_session(client, redis_prefix):
    given = [{"role": "user", "content": "sealed ✓"}, ITEMS[3], ITEMS[4]]
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, key=KEY, writable=True) as store:
        assert store.needs_key is False  # nothing stored yet
        await store.writer.add_messages("sealed", given)
        assert store.needs_key is True
        # Imported under a new id: sealed with that session's key (the id is the salt).
        copied = await store.writer.import_session("sealed", store.reader.iter_messages("sealed"), rename=True)
        assert copied == ("sealed-2", len(given))
    raws = await client.lrange(f"{redis_prefix}:sealed:messages", 0, -1)
    envelopes = [json.loads(r) for r in raws]
    assert all(set(e) == {"__enc__", "v", "kid", "payload"} for e in envelopes)
    assert raws == [compact(e) for e in envelopes]
    expected = [message_to_item(m) for m in given]
    assert await enc(client, "sealed", redis_prefix).get_items() == expected
    assert await enc(client, "sealed-2", redis_prefix).get_items() == expected


# --------------------------------------------------------------------------- opening


async def test_redis_down_is_one_line_without_the_password(redis_available):
    port = closed_port()
    with pytest.raises(StoreUnavailable) as err:
        await open_store(f"redis://user:secret@127.0.0.1:{port}/0")
    assert str(err.value) == f"cannot reach Redis at redis://user:***@127.0.0.1:{port}/0: connection refused"


async def test_login_refused_and_missing_database(redis_available):
    server = urlsplit(REDIS_URL)
    hostport = f"{server.hostname}:{server.port or 6379}"
    with pytest.raises(StoreUnavailable) as err:
        await open_store(f"redis://nobody:hunter2@{hostport}/0")
    assert str(err.value) == (
        f"Redis at redis://nobody:***@{hostport}/0 refused the login: wrong user name or password"
    )
    with pytest.raises(StoreUnavailable) as err:
        await open_store(f"redis://{hostport}/9999")
    assert str(err.value) == f"Redis at redis://{hostport}/9999 has no database 9999"
    with pytest.raises(TargetError) as err:
        await open_store(f"redis://{hostport}/zero")
    assert str(err.value) == f'bad Redis URL redis://{hostport}/zero: the database "zero" is not a number'


async def test_prefix_holding_other_keys_is_not_a_session_store(client, redis_prefix):
    async with await open_store(REDIS_URL, key_prefix=redis_prefix) as empty:
        assert (await empty.reader.list_sessions()).sessions == []
    await client.sadd(f"{redis_prefix}:members", "x")
    with pytest.raises(NotASessionStore) as err:
        await open_store(REDIS_URL, key_prefix=redis_prefix)
    assert str(err.value) == (
        f'{where(redis_prefix)} is not a RedisSession store: key "{redis_prefix}:members" is a set '
        f"(expected session hashes {redis_prefix}:<id> and lists {redis_prefix}:<id>:messages)"
    )
    # Once the library has written a session there, the prefix opens.
    await lib(client, "s", redis_prefix).add_items(ITEMS[:1])
    async with await open_store(REDIS_URL, key_prefix=redis_prefix) as store:
        assert [s.id for s in await all_sessions(store)] == ["s"]
