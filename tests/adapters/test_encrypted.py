"""Agents SDK ``EncryptedSession`` stores: fluxgui against the real library.

Every fixture is written by ``agents.extensions.memory.EncryptedSession`` around the real
``agents.SQLiteSession`` (a SQLite file) or ``SQLAlchemySession`` (PostgreSQL), with a
Fernet master key and with a raw passphrase; whatever fluxgui writes is read back through
``EncryptedSession.get_items()``. Items the library skips (expired, plain, unreadable)
are planted through the real underlying session's ``add_items``.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession
from agents.extensions.memory import EncryptedSession
from agents.extensions.memory.encrypt_session import (
    _derive_session_fernet_key,
    _ensure_fernet_key_bytes,
)
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from cryptography.fernet import Fernet
from helpers import all_messages, all_sessions, sqlite_rows

from fluxgui.adapters import open_store, parse_target
from fluxgui.adapters.encryption import LOCKED_TEXT, UNREADABLE_TEXT
from fluxgui.core.errors import InvalidItem, KeyNeeded, WrongKey
from fluxgui.services.transfer import copy_sessions

FERNET_KEY = Fernet.generate_key().decode()
PASSPHRASE = "a raw passphrase, not base64 ✓"
WRONG = {"fernet": Fernet.generate_key().decode(), "passphrase": "a raw passphrase, not base64 ✗"}

#: Items of several kinds, as the SDK stores them.
ITEMS: list[dict[str, Any]] = [
    {"role": "system", "content": "Be terse."},
    {"role": "user", "content": "Wie ist das Wetter in Zürich? ☀️"},
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Need the weather tool."}],
    },
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
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "It is 22 °C. 🌤", "annotations": []}],
    },
    {"role": "user", "content": [{"type": "input_text", "text": "Danke! 日本語も"}]},
    {"type": "some_future_item", "payload": {"nested": [1, 2, {"x": None}]}},
]

#: The sessions every test starts from: session id → add_items batches, in write order.
SESSIONS: list[tuple[str, list[dict[str, Any]]]] = [
    ("enc-a", ITEMS[:5]),
    ("enc-b", ITEMS[2:4]),
    ("日本 ✓", ITEMS[1:2]),
    ("enc-a", ITEMS[5:]),
]
LAST_WRITTEN = "enc-a"


def expected_items() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for sid, items in SESSIONS:
        out.setdefault(sid, []).extend(items)
    return out


@dataclass
class Lib:
    """One store written through the real library: ``target`` is what fluxgui opens."""

    backend: str
    target: str
    key: str
    key_kind: str

    @property
    def display(self) -> str:
        return parse_target(self.target).display

    @asynccontextmanager
    async def plain(self, sid: str) -> AsyncIterator[Any]:
        """The library's own underlying session (no encryption)."""
        if self.backend == "sqlite":
            session: Any = SQLiteSession(sid, self.target)
            try:
                yield session
            finally:
                session.close()
        else:
            session = SQLAlchemySession.from_url(sid, url=self.target, create_tables=True)
            try:
                yield session
            finally:
                await session.engine.dispose()

    @asynccontextmanager
    async def encrypted(self, sid: str, ttl: int = 600) -> AsyncIterator[EncryptedSession]:
        async with self.plain(sid) as under:
            yield EncryptedSession(sid, under, encryption_key=self.key, ttl=ttl)

    async def add(self, sid: str, items: list[dict[str, Any]]) -> None:
        async with self.encrypted(sid) as s:
            await s.add_items(items)  # type: ignore[arg-type]

    async def get(self, sid: str, limit: int | None = None, ttl: int = 600) -> list[Any]:
        async with self.encrypted(sid, ttl) as s:
            return list(await s.get_items(limit))

    async def add_raw(self, sid: str, items: list[dict[str, Any]]) -> None:
        async with self.plain(sid) as s:
            await s.add_items(items)  # type: ignore[arg-type]

    async def raw(self, sid: str) -> list[Any]:
        """What the underlying store holds (envelopes), as the library reads it."""
        async with self.plain(sid) as s:
            return list(await s.get_items())

    def old_envelope(self, sid: str, item: dict[str, Any], age: int) -> dict[str, Any]:
        """The envelope ``EncryptedSession`` would have written ``age`` seconds ago, made
        with the library's own key derivation."""
        f = _derive_session_fernet_key(_ensure_fernet_key_bytes(self.key), sid)
        data = json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode()
        token = f.encrypt_at_time(data, int(time.time()) - age).decode()
        return {"__enc__": 1, "v": 1, "kid": "hkdf-v1", "payload": token}

    async def fill(self) -> None:
        for sid, items in SESSIONS:
            await self.add(sid, items)


LIBS = [(b, k) for b in ("sqlite", "postgres") for k in ("fernet", "passphrase")]


@pytest.fixture(params=LIBS, ids=[f"{b}-{k}" for b, k in LIBS])
def lib(request, tmp_path) -> Lib:
    backend, kind = request.param
    target = str(tmp_path / "enc.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    return Lib(backend, target, FERNET_KEY if kind == "fernet" else PASSPHRASE, kind)


def state(m: Any) -> str | None:
    enc = (m.metadata or {}).get("encryption")
    return enc.get("state") if isinstance(enc, dict) else None


def flux_view(items: list[Any], messages: list[Any]) -> list[dict[str, Any]]:
    """The flux dicts fluxgui gives for ``items``, taking each text from ``messages``."""
    by_raw = {json.dumps(m.raw, sort_keys=True): m for m in messages}
    shown = [by_raw[json.dumps(i, sort_keys=True)] for i in items]
    return [{"role": m.role, "content": m.text} for m in shown]


def key_needed_text(lib: Lib) -> str:
    return f"{lib.display} holds encrypted sessions: give the key (--key or FLUXGUI_KEY) to write to it"


# --------------------------------------------------------------------------- reading


async def test_reads_every_item_as_get_items_does(lib):
    await lib.fill()
    expected = expected_items()
    for sid in expected:
        assert all(set(e) == {"__enc__", "v", "kid", "payload"} for e in await lib.raw(sid))
    async with await open_store(lib.target, key=lib.key) as store:
        assert store.needs_key is True and store.keys.encrypted is True
        assert store.traits.encryption and store.has_key
        listed = await all_sessions(store, page_size=2)
        assert {s.id: s.messages for s in listed} == {sid: len(v) for sid, v in expected.items()}
        assert listed[0].id == LAST_WRITTEN
        for sid, items in expected.items():
            theirs = await lib.get(sid)
            assert theirs == items
            ours = await all_messages(store, sid, batch=3)
            assert [m.raw for m in ours] == theirs
            assert {state(m) for m in ours} == {"ok"}
            for n in (1, 3, 50):
                assert [m.raw for m in await store.reader.latest_messages(sid, n)] == await lib.get(sid, n)
                assert await store.session(sid).get_messages(limit=n) == flux_view(
                    await lib.get(sid, n), ours
                )
            assert await store.session(sid).get_messages() == flux_view(theirs, ours)
        # The kinds survive decryption: a tool call reads as one.
        kinds = [m.kind for m in await all_messages(store, "enc-a")]
        assert kinds[:5] == ["message", "message", "reasoning", "tool_call", "tool_output"]


async def test_search_looks_inside_envelopes_only_with_the_key(lib):
    await lib.fill()
    async with await open_store(lib.target, key=lib.key) as store:
        assert {s.id for s in await store.reader.search_sessions("ZÜRICH")} == {"enc-a", "日本 ✓"}
        assert {s.id for s in await store.reader.search_sessions("get_weather")} == {"enc-a", "enc-b"}
        assert [s.id for s in await store.reader.search_sessions("日本語も")] == ["enc-a"]
        # The envelope's own JSON is not what a person reads.
        assert await store.reader.search_sessions("hkdf") == []
        assert await store.reader.search_sessions("__enc__") == []
        assert {s.id for s in await store.reader.search_sessions("")} == set(expected_items())
    async with await open_store(lib.target) as locked:
        assert await locked.reader.search_sessions("zürich") == []
        assert await locked.reader.search_sessions("encrypted item") == []  # the placeholder text
        assert [s.id for s in await locked.reader.search_sessions("ENC-B")] == ["enc-b"]
        assert [s.id for s in await locked.reader.search_sessions("日本")] == ["日本 ✓"]


async def test_turns_are_counted_from_decrypted_items(lib):
    await lib.fill()
    items = expected_items()["enc-a"]
    async with await open_store(lib.target, key=lib.key) as store:
        ours = await all_messages(store, "enc-a")
        for k in (1, 2, 6, 7, len(items) - 1):
            users = sum(
                1 for i in items[:k] if i.get("role") == "user" and i.get("type", "message") == "message"
            )
            assert await store.reader.count_turns_before("enc-a", ours[k].sort_key) == users, k
        assert await store.reader.count_turns_before("enc-a", ours[-1].sort_key) == 2
    async with await open_store(lib.target) as locked:
        last = (await all_messages(locked, "enc-a"))[-1]
        assert await locked.reader.count_turns_before("enc-a", last.sort_key) == 0


async def test_wrong_key_is_one_line(lib):
    await lib.fill()
    with pytest.raises(WrongKey) as err:
        await open_store(lib.target, key=WRONG[lib.key_kind])
    assert str(err.value) == (
        f"the key does not decrypt the encrypted items of {lib.display} "
        f'(tried session "{LAST_WRITTEN}"): wrong key?'
    )


async def test_no_key_shows_locked_items_and_refuses_writes(lib):
    await lib.fill()
    expected = expected_items()
    async with await open_store(lib.target) as store:
        assert store.needs_key is True and store.has_key is False
        for sid in expected:
            ours = await all_messages(store, sid, batch=2)
            assert [m.raw for m in ours] == await lib.raw(sid)
            assert {(m.kind, m.role, m.text, state(m)) for m in ours} == {
                ("other", "unknown", LOCKED_TEXT, "locked")
            }
            assert await store.session(sid).get_messages() == []
            assert json.loads(json.dumps([m.to_dict() for m in ours]))  # exportable
    async with await open_store(lib.target, writable=True) as store:
        first = (await all_messages(store, "enc-a"))[0]
        attempts = [  # made one at a time: a failure leaves no coroutine unawaited
            lambda: store.writer.add_messages("enc-a", [{"role": "user", "content": "x"}]),
            lambda: store.writer.add_messages("brand-new", [{"role": "user", "content": "x"}]),
            lambda: store.session("enc-a").add_messages([{"role": "user", "content": "x"}]),
            lambda: store.editor.update_message(
                "enc-a", first.id, {"role": "user", "content": "x"}, original=first
            ),
            lambda: store.editor.insert_message("enc-a", {"role": "user", "content": "x"}),
            lambda: store.writer.clear_messages("enc-b"),
            lambda: store.writer.clear_session("enc-b"),
            lambda: store.writer.delete_session("enc-b"),
            lambda: store.editor.pop_message("enc-b"),
            lambda: store.forks.fork_session("enc-a", first.id),
            lambda: store.writer.import_session("imported", iter([[first]])),
        ]
        for attempt in attempts:
            with pytest.raises(KeyNeeded) as err:
                await attempt()
            assert str(err.value) == key_needed_text(lib)
        with pytest.raises(KeyNeeded):
            store.editor.edit_values({"role": "user", "content": "x"})
        assert {s.id for s in await all_sessions(store)} == set(expected)
    for sid, items in expected.items():
        assert await lib.get(sid) == items


async def test_expired_items_are_shown_as_expired(lib):
    old = {"role": "user", "content": "said an hour ago"}
    await lib.add("s", [ITEMS[1]])
    await lib.add_raw("s", [lib.old_envelope("s", old, age=3600)])
    await lib.add("s", [ITEMS[5], ITEMS[6]])
    theirs = await lib.get("s")
    assert theirs == [ITEMS[1], ITEMS[5], ITEMS[6]]  # the library skips it
    async with await open_store(lib.target, key=lib.key) as store:
        ours = await all_messages(store, "s")
        assert [m.raw for m in ours] == [ITEMS[1], old, ITEMS[5], ITEMS[6]]
        assert [state(m) for m in ours] == ["ok", "expired", "ok", "ok"]
        when = datetime.fromisoformat(ours[1].metadata["encryption"]["encrypted_at"])
        assert abs(when.timestamp() - (time.time() - 3600)) < 120
        assert ours[1].text == "said an hour ago" and ours[1].role == "user"
        assert await store.session("s").get_messages() == flux_view(theirs, ours)
        for n in (1, 2, 3, 4):
            assert await store.session("s").get_messages(limit=n) == flux_view(
                await lib.get("s", n), ours
            ), n
        assert await store.reader.search_sessions("an hour ago") != []  # shown, so findable
    # A longer TTL reads it as the library with that TTL does.
    async with await open_store(lib.target, key=lib.key, ttl=7200) as store:
        ours = await all_messages(store, "s")
        assert [state(m) for m in ours] == ["ok"] * 4
        assert len(await store.session("s").get_messages()) == len(await lib.get("s", ttl=7200)) == 4


async def test_plain_item_in_an_encrypted_session_is_shown_plain(lib):
    plain = {"role": "user", "content": "written without encryption"}
    await lib.add("s", ITEMS[:2])
    await lib.add_raw("s", [plain])
    await lib.add("s", ITEMS[5:6])
    theirs = await lib.get("s")
    assert theirs == ITEMS[:2] + ITEMS[5:6]
    async with await open_store(lib.target, key=lib.key) as store:
        ours = await all_messages(store, "s")
        assert [m.raw for m in ours] == ITEMS[:2] + [plain] + ITEMS[5:6]
        assert [state(m) for m in ours] == ["ok", "ok", "plaintext", "ok"]
        assert (ours[2].kind, ours[2].role, ours[2].text) == ("message", "user", plain["content"])
        assert await store.session("s").get_messages() == flux_view(theirs, ours)
        assert [s.id for s in await store.reader.search_sessions("WITHOUT encryption")] == ["s"]


async def test_envelopes_that_do_not_open_are_unreadable(lib):
    garbage = {"__enc__": 1, "v": 1, "kid": "hkdf-v1", "payload": "not a fernet token"}
    other = Lib(lib.backend, lib.target, WRONG[lib.key_kind], lib.key_kind)
    foreign = other.old_envelope("s", {"role": "user", "content": "another key"}, age=0)
    await lib.add("s", ITEMS[:2])
    # The newest rows do not open: the key check at open must look past them.
    await lib.add_raw("s", [foreign, garbage])
    assert await lib.get("s") == ITEMS[:2]
    async with await open_store(lib.target, key=lib.key) as store:
        ours = await all_messages(store, "s")
        assert [state(m) for m in ours] == ["ok", "ok", "unreadable", "unreadable"]
        assert [m.raw for m in ours[2:]] == [foreign, garbage]
        assert {(m.kind, m.text) for m in ours[2:]} == {("other", UNREADABLE_TEXT)}
        assert await store.session("s").get_messages() == flux_view(ITEMS[:2], ours)
        assert await store.reader.search_sessions("another key") == []
        assert await store.reader.search_sessions("fernet") == []


# --------------------------------------------------------------------------- writing


async def test_fluxgui_writes_read_back_through_the_library(lib):
    await lib.fill()
    expected = expected_items()
    async with await open_store(lib.target, key=lib.key, writable=True) as store:
        await store.writer.add_messages("enc-b", [ITEMS[5], {"role": "user", "content": "from fluxgui ✓"}])
        await store.session("fresh").add_messages([{"role": "assistant", "content": "new session"}])
        await store.writer.add_messages("fresh", [{"role": "tool", "content": "out", "tool_call_id": "c9"}])
        shown = await all_messages(store, "enc-a")
        edited = {"role": "user", "content": "edited, still secret"}
        await store.editor.update_message("enc-a", shown[1].id, edited, original=shown[1])
        inserted = {"role": "assistant", "content": "inserted"}
        await store.editor.insert_message("enc-a", inserted, anchor=shown[0].id)
        reopened = await all_messages(store, "enc-a")
        assert {state(m) for m in reopened} == {"ok"}
    added = [ITEMS[5], {"role": "user", "content": "from fluxgui ✓"}]
    assert await lib.get("enc-b") == expected["enc-b"] + added
    assert await lib.get("fresh") == [
        {"role": "assistant", "content": "new session"},
        {"type": "function_call_output", "call_id": "c9", "output": "out"},
    ]
    assert await lib.get("enc-a") == (
        [ITEMS[0], inserted, edited] + expected["enc-a"][2:]
    )
    # What fluxgui wrote is sealed like the library's own items.
    for sid in ("enc-a", "enc-b", "fresh"):
        assert all(set(e) == {"__enc__", "v", "kid", "payload"} for e in await lib.raw(sid))


async def test_edit_validates_the_decrypted_item(lib):
    await lib.add("s", ITEMS)
    async with await open_store(lib.target, key=lib.key, writable=True) as store:
        shown = await all_messages(store, "s")
        future = shown[7]
        assert future.raw["type"] == "some_future_item"
        # An item type fluxgui does not know may keep its type: the original is the
        # decrypted item, not the envelope (which has no type, so reads as a message).
        changed = {"type": "some_future_item", "payload": {"nested": ["edited"]}}
        await store.editor.update_message("s", future.id, changed, original=future)
        with pytest.raises(InvalidItem):
            store.editor.edit_values({"type": "another_future_item"}, original=future)
        with pytest.raises(InvalidItem):  # an envelope is not an item to seal again
            store.editor.edit_values((await lib.raw("s"))[0], original=shown[0])
    assert await lib.get("s") == ITEMS[:7] + [changed]


def stored_rows(lib: Lib, sid: str) -> list[tuple[Any, ...]] | None:
    """The stored rows themselves (SQLite), byte for byte."""
    if lib.backend != "sqlite":
        return None
    return sqlite_rows(
        Path(lib.target),
        "SELECT id, message_data, created_at FROM agent_messages WHERE session_id = ? ORDER BY id",
        (sid,),
    )


async def test_undo_restores_the_exact_envelopes(lib):
    await lib.fill()
    before = await lib.raw("enc-a")
    rows_before = stored_rows(lib, "enc-a")
    async with await open_store(lib.target, key=lib.key, writable=True) as store:
        ids = [m.id for m in await all_messages(store, "enc-a")]
        cleared = await store.writer.clear_messages("enc-a")
        assert await lib.get("enc-a") == []
        await store.writer.apply_change(cleared.inverse())
        assert await lib.raw("enc-a") == before  # the same tokens, not re-sealed ones
        assert stored_rows(lib, "enc-a") == rows_before
        assert [m.id for m in await all_messages(store, "enc-a")] == ids
        shown = await all_messages(store, "enc-a")
        changed = {"role": "system", "content": "changed"}
        edit = await store.editor.update_message("enc-a", shown[0].id, changed)
        assert (await lib.get("enc-a"))[0] == changed
        sealed_edit = await lib.raw("enc-a")
        await store.writer.apply_change(edit.inverse())
        assert await lib.raw("enc-a") == before
        await store.writer.apply_change(edit)  # redo writes the same sealed value again
        assert await lib.raw("enc-a") == sealed_edit
        inserted = await store.editor.insert_message(
            "enc-a", {"role": "user", "content": "mid"}, anchor=shown[2].id, where="before"
        )
        await store.writer.apply_change(inserted.inverse())
        assert await lib.raw("enc-a") == sealed_edit
    assert await lib.get("enc-a") == [changed] + expected_items()["enc-a"][1:]


async def test_fork_seals_items_for_the_fork(lib):
    old = {"role": "user", "content": "old news"}
    await lib.add("s", ITEMS[:2])
    await lib.add_raw("s", [lib.old_envelope("s", old, age=3600), {"role": "user", "content": "plain"}])
    await lib.add("s", ITEMS[2:5])
    async with await open_store(lib.target, key=lib.key, writable=True) as store:
        shown = await all_messages(store, "s")
        change = await store.forks.fork_session("s", shown[5].id, "s-fork")
        assert change.session_id == "s-fork"
        forked = await all_messages(store, "s-fork")
        assert [m.raw for m in forked] == [m.raw for m in shown[:6]]
        assert [state(m) for m in forked] == ["ok", "ok", "expired", "plaintext", "ok", "ok"]
        origin = await store.forks.fork_origin("s-fork")
        assert origin is not None
        assert (origin["session_id"], origin["message_id"]) == ("s", shown[5].id)
    assert await lib.get("s-fork") == ITEMS[:4]
    assert await lib.get("s") == ITEMS[:5]  # the origin is untouched
    async with await open_store(lib.target, key=lib.key, writable=True) as store:
        await store.writer.apply_change(change.inverse())
        assert await store.reader.session_info("s-fork") is None


async def test_copies_into_an_encrypted_store_are_sealed(lib, tmp_path):
    """A plain store's sessions copied in are sealed for the id they land under."""
    plain_path = tmp_path / "plain.db"
    source = SQLiteSession("enc-a", str(plain_path))
    try:
        await source.add_items(ITEMS[2:6])  # type: ignore[arg-type]
        plain_items = list(await source.get_items())
    finally:
        source.close()
    await lib.fill()
    async with await open_store(str(plain_path)) as src, await open_store(
        lib.target, key=lib.key, writable=True
    ) as dest:
        result = await copy_sessions(src, dest, ["enc-a"], rename=True)
        assert result.written == [("enc-a", "enc-a-2")]
        pages = iter([await all_messages(src, "enc-a")])
        new_id, n = await dest.writer.import_session("enc-b", pages, rename=True)
        assert (new_id, n) == ("enc-b-2", len(plain_items))
    assert await lib.get("enc-a-2") == plain_items
    assert await lib.get("enc-b-2") == plain_items
    assert await lib.get("enc-a") == expected_items()["enc-a"]


async def test_copies_out_of_an_encrypted_store_are_decrypted(lib, tmp_path):
    await lib.fill()
    dest_path = tmp_path / "out.db"
    async with await open_store(lib.target, key=lib.key) as src, await open_store(
        str(dest_path), create="agents"
    ) as dest:
        await copy_sessions(src, dest)
    for sid, items in expected_items().items():
        out = SQLiteSession(sid, str(dest_path))
        try:
            assert list(await out.get_items()) == items
        finally:
            out.close()


async def test_copy_between_encrypted_stores_keeps_expiry(lib, tmp_path):
    old = {"role": "user", "content": "expired at the source"}
    await lib.add("s", ITEMS[:1])
    await lib.add_raw("s", [lib.old_envelope("s", old, age=3600)])
    await lib.add("s", ITEMS[1:2])
    dest = Lib("sqlite", str(tmp_path / "other.db"), WRONG[lib.key_kind], lib.key_kind)
    async with await open_store(lib.target, key=lib.key) as src, await open_store(
        dest.target, create="agents", key=dest.key
    ) as store:
        await copy_sessions(src, store)
        copied = await all_messages(store, "s")
        assert [m.raw for m in copied] == [ITEMS[0], old, ITEMS[1]]
        assert [state(m) for m in copied] == ["ok", "expired", "ok"]
    # The library, with the destination's key, reads what it read at the source.
    assert await dest.get("s") == await lib.get("s") == ITEMS[:2]


# --------------------------------------------------------------------------- keys and new stores


@pytest.mark.parametrize("kind", ["fernet", "passphrase"])
async def test_new_encrypted_store_is_written_as_the_library_writes(tmp_path, kind):
    lib = Lib("sqlite", str(tmp_path / "new.db"), FERNET_KEY if kind == "fernet" else PASSPHRASE, kind)
    async with await open_store(lib.target, create="agents", key=lib.key) as store:
        assert store.needs_key is False  # nothing encrypted in it yet
        await store.writer.add_messages("n", ITEMS)
        assert store.needs_key is True
    assert await lib.get("n") == ITEMS
    await lib.add("n", [{"role": "user", "content": "the SDK goes on"}])
    async with await open_store(lib.target, key=lib.key) as store:
        assert [m.raw for m in await all_messages(store, "n")] == await lib.get("n")
    with pytest.raises(WrongKey):
        await open_store(lib.target, key=WRONG[kind])


async def test_key_given_for_a_plain_store(tmp_path):
    """No envelopes: no key check; what is written is sealed, and the flux view reads as
    EncryptedSession with that key would (the plain items are skipped)."""
    lib = Lib("sqlite", str(tmp_path / "plain.db"), FERNET_KEY, "fernet")
    await lib.add_raw("p", ITEMS[:2])
    async with await open_store(lib.target, key=WRONG["fernet"]) as store:
        assert store.needs_key is False and store.keys.encrypted is False
    async with await open_store(lib.target, key=lib.key, writable=True) as store:
        assert [m.raw for m in await all_messages(store, "p")] == ITEMS[:2]
        assert await store.session("p").get_messages() == await lib.get("p") == []
        await store.writer.add_messages("p", ITEMS[5:6])
        assert await store.session("p").get_messages() == [
            {"role": "assistant", "content": "It is 22 °C. 🌤"}
        ]
    assert await lib.get("p") == ITEMS[5:6]
    assert (await lib.raw("p"))[:2] == ITEMS[:2]


async def test_detection_reads_no_more_than_a_sample(tmp_path):
    """An envelope among the oldest rows (not the first, not the latest 50) is not seen
    at open, but is flagged the moment it is read."""
    lib = Lib("sqlite", str(tmp_path / "big.db"), FERNET_KEY, "fernet")
    await lib.add_raw("plain", [{"role": "user", "content": "first"}])
    await lib.add("hidden", ITEMS[:1])
    await lib.add_raw("plain", [{"role": "user", "content": f"m{i}"} for i in range(60)])
    async with await open_store(lib.target, writable=True) as store:
        assert store.needs_key is False
        await store.writer.add_messages("plain", [{"role": "user", "content": "still writable"}])
        shown = await all_messages(store, "hidden")
        assert state(shown[0]) == "locked"
        assert store.needs_key is True
        with pytest.raises(KeyNeeded):
            await store.writer.add_messages("plain", [{"role": "user", "content": "now refused"}])
    assert len(await lib.raw("plain")) == 62
