"""A key ring for Agents SDK ``EncryptedSession`` stores: sessions of one SQLite file sealed
by the real library with two different keys, read in one pass with both keys; items in
clear inside encrypted sessions marked ``plaintext``; the CLI's ``--key`` given twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from agents.extensions.memory import EncryptedSession
from cryptography.fernet import Fernet
from helpers import all_messages, ok_lines, run_cli

from fluxgui.adapters import open_store
from fluxgui.core.errors import WrongKey
from fluxgui.core.ports import OpenOptions

KEY_A = Fernet.generate_key().decode()
KEY_B = "a passphrase for bob's sessions"
WRONG = Fernet.generate_key().decode()

ALICE = [{"role": "user", "content": "alice asks about invoices"},
         {"role": "assistant", "content": "alice gets an answer"}]
BOB = [{"role": "user", "content": "bob asks about shipping"}]
PLAIN = {"role": "user", "content": "written in clear by mistake"}


async def _write(path: Path) -> None:
    for sid, items, key in (("alice", ALICE, KEY_A), ("bob", BOB, KEY_B)):
        under = SQLiteSession(sid, str(path))
        try:
            await EncryptedSession(sid, under, encryption_key=key).add_items(items)  # type: ignore[arg-type]
            if sid == "alice":
                await under.add_items([PLAIN])  # type: ignore[list-item]
        finally:
            under.close()


async def _library_items(path: Path, sid: str, key: str) -> list[Any]:
    under = SQLiteSession(sid, str(path))
    try:
        return list(await EncryptedSession(sid, under, encryption_key=key).get_items())
    finally:
        under.close()


@pytest.fixture
async def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "two-keys.db"
    await _write(path)
    return path


def _states(messages: list[Any]) -> list[str | None]:
    return [(m.metadata or {}).get("encryption", {}).get("state") for m in messages]


async def test_two_keys_read_every_session(store_path: Path) -> None:
    assert OpenOptions(key=(KEY_A, KEY_B, KEY_A, "")).keys == (KEY_A, KEY_B)
    async with await open_store(str(store_path), key=(KEY_A, KEY_B)) as store:
        alice = await all_messages(store, "alice")
        bob = await all_messages(store, "bob")
        assert [m.text for m in alice] == [ALICE[0]["content"], ALICE[1]["content"], PLAIN["content"]]
        assert _states(alice) == ["ok", "ok", "plaintext"]
        assert [m.text for m in bob] == [BOB[0]["content"]] and _states(bob) == ["ok"]
        # search decrypts with whichever key opens each session
        assert [s.id for s in await store.reader.search_sessions("bob asks")] == ["bob"]
        assert [s.id for s in await store.reader.search_sessions("alice asks")] == ["alice"]
        # the flux view reads as EncryptedSession does: the item in clear is skipped
        assert [m["content"] for m in await store.session("alice").get_messages()] == [
            ALICE[0]["content"], ALICE[1]["content"]]


async def test_one_key_leaves_the_other_sessions_unreadable(store_path: Path) -> None:
    async with await open_store(str(store_path), key=KEY_A) as store:
        assert _states(await all_messages(store, "bob")) == ["unreadable"]
        assert _states(await all_messages(store, "alice")) == ["ok", "ok", "plaintext"]
    # a wrong key beside a right one is no error; only wrong keys are
    async with await open_store(str(store_path), key=(WRONG, KEY_B)) as store:
        assert _states(await all_messages(store, "bob")) == ["ok"]
    with pytest.raises(WrongKey, match="none of the keys"):
        await open_store(str(store_path), key=(WRONG, "another wrong one"))


async def test_writes_are_sealed_with_the_sessions_own_key(store_path: Path) -> None:
    async with await open_store(str(store_path), key=(KEY_A, KEY_B), writable=True) as store:
        await store.writer.add_messages("bob", [{"role": "assistant", "content": "shipped today"}])
    theirs = await _library_items(store_path, "bob", KEY_B)
    assert [i["content"] if isinstance(i.get("content"), str) else i["content"][0]["text"] for i in theirs][-1] == "shipped today"


async def test_a_fork_is_sealed_with_its_sources_key(store_path: Path) -> None:
    # bob's agent holds KEY_B only: the fork a reviewer with both keys makes of bob's
    # session must open with it (the session id salts the key: each item is sealed again)
    async with await open_store(str(store_path), key=(KEY_A, KEY_B), writable=True) as store:
        [first] = await store.reader.page_messages("bob", limit=1)
        await store.forks.fork_session("bob", first.id, "bob-fork")
        await store.writer.add_messages("bob-fork", [{"role": "assistant", "content": "on the fork"}])
    async with await open_store(str(store_path), key=(KEY_A, KEY_B), writable=True) as store:
        await store.writer.add_messages("bob-fork", [{"role": "assistant", "content": "later"}])
    theirs = await _library_items(store_path, "bob-fork", KEY_B)
    texts = [i["content"] if isinstance(i.get("content"), str) else i["content"][0]["text"] for i in theirs]
    assert texts == [BOB[0]["content"], "on the fork", "later"]
    assert await _library_items(store_path, "bob-fork", KEY_A) == []  # not with the other key


def test_cli_takes_key_more_than_once(store_path: Path) -> None:
    # (--key=KEY: a Fernet key may start with "-", which argparse takes for an option)
    result = run_cli("show", str(store_path), "bob", "--json", f"--key={KEY_A}", "--key", KEY_B)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    texts = [m["text"] for m in shown["messages"]]
    assert texts == [BOB[0]["content"]]
    assert KEY_A not in result.stdout + result.stderr and KEY_B not in result.stdout + result.stderr
    one = run_cli("show", str(store_path), "bob", f"--key={KEY_A}")
    assert one.returncode == 0 and "unreadable" in "\n".join(ok_lines(one))


def test_a_key_that_starts_with_a_dash(tmp_path: Path) -> None:
    import asyncio
    import base64

    key = base64.urlsafe_b64encode(bytes([0xF8]) + bytes(range(31))).decode()  # "-…"
    assert key.startswith("-")
    path = tmp_path / "dash.db"

    async def write() -> None:
        under = SQLiteSession("s", str(path))
        try:
            await EncryptedSession("s", under, encryption_key=key).add_items(BOB)  # type: ignore[arg-type]
        finally:
            under.close()

    asyncio.run(write())
    shown = run_cli("show", str(path), "s", "--json", f"--key={key}")
    assert shown.returncode == 0, shown.stderr
    assert [m["text"] for m in json.loads(shown.stdout)["messages"]] == [BOB[0]["content"]]
    refused = run_cli("show", str(path), "s", "--key", key)  # argparse: an option, not a value
    assert refused.returncode == 2 and "--key=VALUE" in refused.stderr and key not in refused.stderr


async def test_a_redis_store_with_two_keys(redis_prefix: str) -> None:
    import redis.asyncio as aioredis
    from agents.extensions.memory import RedisSession
    from helpers import REDIS_URL

    client = aioredis.from_url(REDIS_URL)
    try:
        for sid, items, key in (("alice", ALICE, KEY_A), ("bob", BOB, KEY_B)):
            under = RedisSession(sid, redis_client=client, key_prefix=redis_prefix)
            await EncryptedSession(sid, under, encryption_key=key).add_items(items)  # type: ignore[arg-type]
        async with await open_store(REDIS_URL, key_prefix=redis_prefix, key=(KEY_A, KEY_B), writable=True) as store:
            assert _states(await all_messages(store, "alice")) == ["ok", "ok"]
            assert [m.text for m in await all_messages(store, "bob")] == [BOB[0]["content"]]
        # a write before any read still goes to bob with bob's key
        async with await open_store(REDIS_URL, key_prefix=redis_prefix, key=(KEY_A, KEY_B), writable=True) as store:
            await store.writer.add_messages("bob", [{"role": "assistant", "content": "shipped"}])
        under = RedisSession("bob", redis_client=client, key_prefix=redis_prefix)
        theirs = await EncryptedSession("bob", under, encryption_key=KEY_B).get_items()
        assert len(theirs) == 2
        # a fork of bob's session opens with bob's key alone
        async with await open_store(REDIS_URL, key_prefix=redis_prefix, key=(KEY_A, KEY_B), writable=True) as store:
            shown = await all_messages(store, "bob")
            await store.forks.fork_session("bob", shown[-1].id, "bob-fork")
        under = RedisSession("bob-fork", redis_client=client, key_prefix=redis_prefix)
        assert len(await EncryptedSession("bob-fork", under, encryption_key=KEY_B).get_items()) == 2
    finally:
        await client.aclose()


async def test_a_redis_store_opens_with_a_key_that_opens_some_of_its_sessions(redis_prefix: str) -> None:
    # most sessions are another key's: the check at open must not stop at the first one
    # SCAN happens to give (as a SQL store's does not)
    import redis.asyncio as aioredis
    from agents.extensions.memory import RedisSession
    from helpers import REDIS_URL

    client = aioredis.from_url(REDIS_URL)
    try:
        writes = [(f"alice-{n}", ALICE, KEY_A) for n in range(12)] + [("bob", BOB, KEY_B)]
        for sid, items, key in writes:
            under = RedisSession(sid, redis_client=client, key_prefix=redis_prefix)
            await EncryptedSession(sid, under, encryption_key=key).add_items(items)  # type: ignore[arg-type]
    finally:
        await client.aclose()
    async with await open_store(REDIS_URL, key_prefix=redis_prefix, key=KEY_B) as store:
        assert [m.text for m in await all_messages(store, "bob")] == [BOB[0]["content"]]
        assert _states(await all_messages(store, "alice-0")) == ["unreadable", "unreadable"]
    with pytest.raises(WrongKey, match="the key does not decrypt"):
        await open_store(REDIS_URL, key_prefix=redis_prefix, key=WRONG)
