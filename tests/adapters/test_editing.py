"""Edits as reversible changes, on stores the real libraries wrote, read back by them.

Four stores: flux on SQLite (``flux.sessions.SQLiteSession``), the Agents SDK on SQLite
(``agents.SQLiteSession``) and on Postgres (``SQLAlchemySession``), and flux on Postgres
(made by fluxgui: flux has no Postgres writer or reader, so fluxgui reads it back there).
Every edit, its undo and its redo are each followed by a read-back through the library;
after an undo the raw rows (ids, times, session rows) are exactly the ones before.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from agents.extensions.memory import AdvancedSQLiteSession
from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages

from fluxgui.core.roles import refuse
from fluxgui.adapters import open_store
from fluxgui.core.changes import Change
from fluxgui.core.errors import Conflict, InvalidItem, ReadOnlyError, SessionNotFound

SID = "s"
OTHER = "other"

FLUX_S = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Wie spät ist es? ⏰"},
    {"role": "assistant", "content": "Zwölf.", "metadata": {"model": "m1", "tokens": 3}},
    {"role": "user", "content": "Danke"},
    {"role": "assistant", "content": "Bitte."},
]
FLUX_OTHER = [{"role": "user", "content": "another session"}, {"role": "assistant", "content": "ok"}]

AGENTS_S = [
    {"role": "user", "content": "Weather in Zürich?"},
    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Zürich"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "22 °C"},
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "22 °C and sunny.", "annotations": []}],
    },
    {"role": "user", "content": [{"type": "input_text", "text": "Thanks ✓"}]},
]
AGENTS_OTHER = [{"role": "user", "content": "another session"}, {"role": "user", "content": "still"}]

INITIAL = {"flux": FLUX_S, "agents": AGENTS_S}
INITIAL_OTHER = {"flux": FLUX_OTHER, "agents": AGENTS_OTHER}

#: what insert_message writes (the library reads it back as it is)
NEW = {
    "flux": {"role": "user", "content": "inserted ✓", "metadata": {"by": "fluxgui"}},
    "agents": {"role": "user", "content": "inserted ✓"},
}


# --------------------------------------------------------------------------- the four stores


@dataclass
class Kind:
    """One store kind: how the library writes it, reads it back and appends to it."""

    fmt: str
    where: str
    target: str
    initial: list = field(default_factory=list)
    raw_initial: dict = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return Path(self.target)

    @property
    def pg_dsn(self) -> str:
        return self.target.replace("+asyncpg", "")

    def __str__(self) -> str:
        return f"{self.fmt}-{self.where}"

    # -- the library ---------------------------------------------------------------

    async def write(self, sid: str, entries: list[dict]) -> None:
        if (self.fmt, self.where) == ("flux", "sqlite"):
            await FluxSQLiteSession(self.target, session_id=sid).add_messages(entries)
        elif (self.fmt, self.where) == ("agents", "sqlite"):
            session = AgentsSQLiteSession(sid, self.target)
            try:
                await session.add_items(entries)
            finally:
                session.close()
        elif (self.fmt, self.where) == ("agents", "postgres"):
            session = SQLAlchemySession.from_url(sid, url=self.target, create_tables=True)
            try:
                await session.add_items(entries)
            finally:
                await session.engine.dispose()
        else:  # flux on Postgres: no flux writer exists; fluxgui writes as flux would
            async with await open_store(self.target, create="flux") as store:
                await store.writer.add_messages(sid, entries)

    async def read(self, sid: str) -> list[dict]:
        """The session as the library reads it (fluxgui's flux view on Postgres)."""
        if (self.fmt, self.where) == ("flux", "sqlite"):
            return await FluxSQLiteSession(self.target, session_id=sid).get_messages()
        if (self.fmt, self.where) == ("agents", "sqlite"):
            session = AgentsSQLiteSession(sid, self.target)
            try:
                return await session.get_items()
            finally:
                session.close()
        if (self.fmt, self.where) == ("agents", "postgres"):
            session = SQLAlchemySession.from_url(sid, url=self.target)
            try:
                return await session.get_items()
            finally:
                await session.engine.dispose()
        async with await open_store(self.target) as store:
            return await store.session(sid).get_messages()

    async def library_clear(self, sid: str) -> None:
        """Another writer clears the session (the library's own clear)."""
        if (self.fmt, self.where) == ("flux", "sqlite"):
            await FluxSQLiteSession(self.target, session_id=sid).clear()
        elif (self.fmt, self.where) == ("agents", "sqlite"):
            session = AgentsSQLiteSession(sid, self.target)
            try:
                await session.clear_session()
            finally:
                session.close()
        elif (self.fmt, self.where) == ("agents", "postgres"):
            session = SQLAlchemySession.from_url(sid, url=self.target)
            try:
                await session.clear_session()
            finally:
                await session.engine.dispose()
        else:
            async with await open_store(self.target, writable=True) as store:
                await store.session(sid).clear()

    # -- raw rows --------------------------------------------------------------------

    @property
    def tables(self) -> list[tuple[str, str]]:
        if self.fmt == "flux":
            return [("messages", "id")]
        return [("agent_sessions", "session_id"), ("agent_messages", "id")]

    async def raw(self) -> dict[str, list[tuple]]:
        """Every row of the store's tables, ids and times as stored."""
        out: dict[str, list[tuple]] = {}
        if self.where == "sqlite":
            conn = sqlite3.connect(self.path)
            try:
                for table, key in self.tables:
                    out[table] = conn.execute(f"SELECT * FROM {table} ORDER BY {key}").fetchall()
            finally:
                conn.close()
            return out
        conn = await asyncpg.connect(self.pg_dsn)
        try:
            for table, key in self.tables:
                out[table] = [tuple(r) for r in await conn.fetch(f"SELECT * FROM {table} ORDER BY {key}")]
        finally:
            await conn.close()
        return out


KINDS = [("flux", "sqlite"), ("agents", "sqlite"), ("agents", "postgres"), ("flux", "postgres")]


@pytest.fixture(params=KINDS, ids=[f"{f}-{w}" for f, w in KINDS])
async def kind(request, tmp_path) -> Kind:
    fmt, where = request.param
    target = str(tmp_path / "store.db") if where == "sqlite" else request.getfixturevalue("pg_url")
    k = Kind(fmt, where, target)
    entries, other = INITIAL[fmt], INITIAL_OTHER[fmt]
    # Three writes (three transactions; on Postgres three created_at values), the other
    # session's rows between the two halves of SID's.
    await k.write(SID, copy.deepcopy(entries[:3]))
    await k.write(OTHER, copy.deepcopy(other))
    await k.write(SID, copy.deepcopy(entries[3:]))
    k.initial = await k.read(SID)
    assert k.initial == entries, "the library should read back what it wrote"
    assert await k.read(OTHER) == other
    k.raw_initial = await k.raw()
    return k


async def message_ids(store, sid: str = SID) -> list[int]:
    return [int(m.id) for m in await all_messages(store, sid)]


def shown(kind: Kind, messages) -> list:
    """What fluxgui shows, in the shape the library reads (for comparing)."""
    if kind.fmt == "agents":
        return [m.raw for m in messages]
    return [(m.role, m.text, m.metadata) for m in messages]


def as_shown(kind: Kind, entries: list[dict]) -> list:
    if kind.fmt == "agents":
        return entries
    return [(e["role"], e["content"] or "", e.get("metadata")) for e in entries]


async def check_roundtrip(kind: Kind, store, change: Change, expected: list[dict]) -> None:
    """The edit, then undo, redo and undo again: after each, the library's read-back; after
    each undo the exact rows of before; after the redo the exact rows of the edit."""
    assert await kind.read(SID) == expected
    assert await kind.read(OTHER) == INITIAL_OTHER[kind.fmt]
    assert shown(kind, await all_messages(store, SID)) == as_shown(kind, expected)
    edited = await kind.raw()
    assert edited != kind.raw_initial

    await store.writer.apply_change(change.inverse())
    assert await kind.read(SID) == kind.initial
    assert await kind.raw() == kind.raw_initial
    assert shown(kind, await all_messages(store, SID)) == as_shown(kind, kind.initial)

    await store.writer.apply_change(change)
    assert await kind.read(SID) == expected
    assert await kind.raw() == edited

    await store.writer.apply_change(change.inverse())
    assert await kind.raw() == kind.raw_initial
    assert await kind.read(SID) == kind.initial


def session_rows(raw: dict, sid: str) -> list[tuple]:
    return [r for r in raw.get("agent_sessions", []) if r[0] == sid]


# --------------------------------------------------------------------------- removing


@pytest.mark.parametrize("edit", ["clear", "delete-session", "delete-messages", "pop"])
async def test_remove_undo_redo(kind, edit):
    async with await open_store(kind.target, writable=True) as store:
        ids = await message_ids(store)
        if edit == "clear":
            change = await store.writer.clear_messages(SID)
            expected: list[dict] = []
        elif edit == "delete-session":
            change = await store.writer.delete_session(SID)
            expected = []
        elif edit == "delete-messages":
            change = await store.editor.delete_messages(SID, [ids[3], ids[1]])
            expected = [kind.initial[0], kind.initial[2], kind.initial[4]]
        else:
            change = await store.editor.pop_message(SID)
            expected = kind.initial[:-1]
        assert change.session_id == SID
        assert len(change.removed) == len(kind.initial) - len(expected)
        assert change.added == ()
        # What stays of the session itself: the Agents SDK's session row stays on clear,
        # goes with delete; flux has no session row.
        raw = await kind.raw()
        info = await store.reader.session_info(SID)
        if kind.fmt == "agents" and edit != "delete-session":
            assert len(session_rows(raw, SID)) == 1
            assert info is not None and info.messages == len(expected)
        elif kind.fmt == "agents":
            assert session_rows(raw, SID) == []
            assert info is None
        else:
            assert (info is None) == (expected == [])
        if edit == "delete-session":
            assert [s.id for s in (await store.reader.list_sessions()).sessions] == [OTHER]
        await check_roundtrip(kind, store, change, expected)


# --------------------------------------------------------------------------- updating

#: case → (index of the message edited, the spec written: the library reads it back as it is)
UPDATES: dict[str, dict[str, tuple[int, Any]]] = {
    "flux": {
        "text": (2, {"role": "assistant", "content": "Dreizehn.", "metadata": {"model": "m1", "tokens": 3}}),
        "role": (1, {"role": "developer", "content": "Wie spät ist es? ⏰"}),
        "metadata": (2, {"role": "assistant", "content": "Zwölf.", "metadata": {"model": "m2", "ü": [1, None]}}),
        "other": (2, {"role": "assistant", "content": "Zwölf."}),  # metadata dropped
    },
    "agents": {
        "text": (3, {**AGENTS_S[3], "content": [{"type": "output_text", "text": "Edited: 23 °C.", "annotations": []}]}),
        "role": (0, {"role": "developer", "content": "Weather in Zürich?"}),
        "metadata": (1, {**AGENTS_S[1], "arguments": '{"city": "Bern", "unit": "C"}'}),  # the item's fields
        "other": (  # another shape of output
            2,
            {"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_text", "text": "21 °C"}]},
        ),
    },
}


@pytest.mark.parametrize("case", ["text", "role", "metadata", "other"])
async def test_update_undo_redo(kind, case):
    index, spec = UPDATES[kind.fmt][case]
    async with await open_store(kind.target, writable=True) as store:
        messages = await all_messages(store, SID)
        target = messages[index]
        change = await store.editor.update_message(SID, int(target.id), copy.deepcopy(spec), original=target)
        assert change.removed_ids == change.added_ids == [int(target.id)]
        expected = list(kind.initial)
        expected[index] = spec
        # The edited row keeps its id and its time.
        after = {r[0]: r for r in (await kind.raw())[kind.tables[-1][0]]}
        before = {r[0]: r for r in kind.raw_initial[kind.tables[-1][0]]}
        assert after.keys() == before.keys()
        assert after[int(target.id)][-1] == before[int(target.id)][-1]  # created_at
        await check_roundtrip(kind, store, change, expected)


# --------------------------------------------------------------------------- inserting

#: name → (index of the anchor or None, where, index the new message lands at)
INSERTS = {
    "before-first": (0, "before", 0),
    "after-first": (0, "after", 1),
    "before-middle": (2, "before", 2),
    "after-middle": (2, "after", 3),
    "before-last": (4, "before", 4),
    "after-last": (4, "after", 5),
    "append": (None, "after", 5),
}


@pytest.mark.parametrize("name", list(INSERTS))
async def test_insert_undo_redo(kind, name):
    anchor_index, where, lands = INSERTS[name]
    spec = reads = NEW[kind.fmt]
    async with await open_store(kind.target, writable=True) as store:
        ids = await message_ids(store)
        anchor = None if anchor_index is None else ids[anchor_index]
        change = await store.editor.insert_message(SID, copy.deepcopy(spec), anchor=anchor, where=where)
        expected = list(kind.initial)
        expected.insert(lands, reads)
        # Rows before the new one keep their ids; the new one and those after it come
        # after them (in the session's order), the moved ones with their own times.
        new_ids = await message_ids(store)
        assert new_ids[:lands] == ids[:lands]
        assert len(new_ids) == len(ids) + 1
        moved = {int(r["id"]): r for r in change.removed}
        assert set(moved) == set(ids[lands:])
        for old, new in zip(change.removed, change.added[1:], strict=True):
            assert {k: v for k, v in old.items() if k != "id"} == {k: v for k, v in new.items() if k != "id"}
        await check_roundtrip(kind, store, change, expected)


@pytest.mark.parametrize("where", ["before", "after"])
async def test_library_appends_after_an_insert_and_its_item_sorts_last(kind, where):
    spec = reads = NEW[kind.fmt]
    async with await open_store(kind.target, writable=True) as store:
        ids = await message_ids(store)
        await store.editor.insert_message(SID, copy.deepcopy(spec), anchor=ids[1], where=where)
    extra = (
        [{"role": "user", "content": "appended by the library"}]
        if kind.fmt == "flux"
        else [{"role": "user", "content": "appended by the SDK"}]
    )
    await kind.write(SID, copy.deepcopy(extra))  # flux-postgres: fluxgui's append
    expected = list(kind.initial)
    expected.insert(1 if where == "before" else 2, reads)
    assert await kind.read(SID) == expected + extra
    async with await open_store(kind.target) as store:
        got = await all_messages(store, SID)
        assert shown(kind, got) == as_shown(kind, expected + extra)
        assert len({m.id for m in got}) == len(got)
        assert int(got[-1].id) == max(int(m.id) for m in got)


# --------------------------------------------------------------------------- conflicts


async def other_update(kind: Kind, message_id: int, spec: dict) -> None:
    """Another fluxgui (another connection) edits a message."""
    async with await open_store(kind.target, writable=True) as other:
        await other.editor.update_message(SID, message_id, spec)


@pytest.mark.parametrize(
    "scenario", ["undo-update-after-library-clear", "undo-insert-after-other-edit", "redo-delete-after-other-edit"]
)
async def test_stale_undo_or_redo_raises_conflict_and_writes_nothing(kind, scenario):
    spec = NEW[kind.fmt]
    async with await open_store(kind.target, writable=True) as store:
        ids = await message_ids(store)
        if scenario == "undo-update-after-library-clear":
            messages = await all_messages(store, SID)
            change = await store.editor.update_message(SID, ids[2], copy.deepcopy(spec), original=messages[2])
            await kind.library_clear(SID)
            stale = change.inverse()
        elif scenario == "undo-insert-after-other-edit":
            change = await store.editor.insert_message(SID, copy.deepcopy(spec), anchor=ids[1], where="after")
            # One of the rows the insert moved is edited elsewhere.
            await other_update(kind, change.added_ids[-1], {"role": "user", "content": "changed elsewhere"})
            stale = change.inverse()
        else:
            change = await store.editor.delete_messages(SID, [ids[0]])
            await store.writer.apply_change(change.inverse())
            # The row the redo would delete is no longer the one that was deleted.
            await other_update(kind, ids[0], {"role": "user", "content": "changed elsewhere"})
            stale = change
        before = await kind.raw()
        view = await kind.read(SID)
        with pytest.raises(Conflict) as err:
            await store.writer.apply_change(stale)
        text = str(err.value)
        assert "\n" not in text and f'"{SID}"' in text and "nothing was written" in text
        assert await kind.raw() == before
        assert await kind.read(SID) == view


async def test_undo_of_delete_session_after_the_library_recreated_it_conflicts(tmp_path):
    """Agents SDK: the session row is part of the change; a new session of the same id
    (the SDK wrote to it again) is in the way of the undo."""
    kind = Kind("agents", "sqlite", str(tmp_path / "store.db"))
    await kind.write(SID, copy.deepcopy(AGENTS_S))
    async with await open_store(kind.target, writable=True) as store:
        change = await store.writer.delete_session(SID)
        await kind.write(SID, [{"role": "user", "content": "a new start"}])
        before = await kind.raw()
        with pytest.raises(Conflict):
            await store.writer.apply_change(change.inverse())
        assert await kind.raw() == before
    assert await kind.read(SID) == [{"role": "user", "content": "a new start"}]


# --------------------------------------------------------------------------- invalid input

INVALID = {
    "agents": {
        "function_call-without-call_id": {"type": "function_call", "name": "f", "arguments": "{}"},
        "role-wizard": {"role": "wizard", "content": "abracadabra"},
        "not-an-object": ["role", "user"],
        "text-not-an-object": "just text",
        "output-missing": {"type": "function_call_output", "call_id": "call_1"},
        "unknown-type": {"type": "made_up", "x": 1},
    },
    "flux": {
        "metadata-a-list": {"role": "user", "content": "x", "metadata": [1, 2]},
        "metadata-a-text": {"role": "user", "content": "x", "metadata": '{"a": 1}'},
        "metadata-a-number": {"role": "user", "content": "x", "metadata": 7},
        "not-an-object": ["role", "user"],
        "content-an-object": {"role": "user", "content": {"a": 1}},
        "role-empty": {"role": "", "content": "x"},
    },
}


@pytest.mark.parametrize("how", ["update", "insert"])
async def test_invalid_message_is_refused_and_nothing_written(kind, how):
    async with await open_store(kind.target, writable=True) as store:
        messages = await all_messages(store, SID)
        for name, spec in INVALID[kind.fmt].items():
            with pytest.raises(InvalidItem) as err:
                if how == "update":
                    await store.editor.update_message(SID, int(messages[1].id), spec, original=messages[1])
                else:
                    await store.editor.insert_message(SID, spec, anchor=int(messages[1].id))
            assert "\n" not in str(err.value), name
    assert await kind.raw() == kind.raw_initial
    assert await kind.read(SID) == kind.initial


async def test_invalid_item_messages_name_the_problem(tmp_path):
    kind = Kind("agents", "sqlite", str(tmp_path / "store.db"))
    await kind.write(SID, copy.deepcopy(AGENTS_S))
    async with await open_store(kind.target, writable=True) as store:
        for spec, words in [
            ({"type": "function_call", "name": "f", "arguments": "{}"}, ["function_call", "call_id"]),
            ({"role": "wizard", "content": "x"}, ["role", "wizard"]),
            ([1, 2], ["object"]),
        ]:
            with pytest.raises(InvalidItem) as err:
                await store.editor.insert_message(SID, spec)
            for word in words:
                assert word in str(err.value)


async def test_unknown_item_type_may_be_kept_when_it_was_that_type(tmp_path):
    kind = Kind("agents", "sqlite", str(tmp_path / "store.db"))
    future = {"type": "some_future_item", "payload": {"n": 1}}
    await kind.write(SID, [{"role": "user", "content": "hi"}, future])
    async with await open_store(kind.target, writable=True) as store:
        messages = await all_messages(store, SID)
        edited = {"type": "some_future_item", "payload": {"n": 2}}
        await store.editor.update_message(SID, int(messages[1].id), edited, original=messages[1])
        with pytest.raises(InvalidItem):  # not as a new item, not in place of a known type
            await store.editor.insert_message(SID, edited)
        with pytest.raises(InvalidItem):
            await store.editor.update_message(SID, int(messages[0].id), edited, original=messages[0])
    assert await kind.read(SID) == [{"role": "user", "content": "hi"}, edited]


async def test_unknown_session_and_message(kind):
    async with await open_store(kind.target, writable=True) as store:
        ids = await message_ids(store)
        other_ids = await message_ids(store, OTHER)
        spec = NEW[kind.fmt]
        for call in (
            lambda: store.writer.clear_messages("nope"),
            lambda: store.writer.delete_session("nope"),
            lambda: store.editor.pop_message("nope"),
            lambda: store.editor.insert_message("nope", copy.deepcopy(spec)),
            lambda: store.editor.delete_messages(SID, [ids[0], other_ids[0]]),
            lambda: store.editor.update_message(SID, other_ids[0], copy.deepcopy(spec)),
            lambda: store.editor.insert_message(SID, copy.deepcopy(spec), anchor=other_ids[0]),
        ):
            with pytest.raises(SessionNotFound) as err:
                await call()
            assert "\n" not in str(err.value)
    assert await kind.raw() == kind.raw_initial


# --------------------------------------------------------------------------- stores that refuse


def every_edit(store, ids: list[int], spec: dict) -> dict[str, Any]:
    """Each edit as a coroutine factory, as the services call it (a role the store does
    not play refused with its sentence)."""
    return {
        "clear": lambda: (store.writer or refuse(store, "writer")).clear_messages(SID),
        "delete-session": lambda: (store.writer or refuse(store, "writer")).delete_session(SID),
        "delete-messages": lambda: (store.editor or refuse(store, "editor")).delete_messages(SID, [ids[0]]),
        "pop": lambda: (store.editor or refuse(store, "editor")).pop_message(SID),
        "update": lambda: (store.editor or refuse(store, "editor")).update_message(SID, ids[0], copy.deepcopy(spec)),
        "insert": lambda: (store.editor or refuse(store, "editor")).insert_message(SID, copy.deepcopy(spec), anchor=ids[0]),
        "append": lambda: (store.editor or refuse(store, "editor")).insert_message(SID, copy.deepcopy(spec)),
        "apply": lambda: (store.writer or refuse(store, "writer")).apply_change(Change(SID, "x", added=({"id": 10**6, "message_data": "{}", "created_at": None},))),
    }


async def test_read_only_store_refuses_every_edit(kind):
    async with await open_store(kind.target) as store:
        assert store.can_write is False
        ids = await message_ids(store)
        for name, edit in every_edit(store, ids, NEW[kind.fmt]).items():
            with pytest.raises(ReadOnlyError) as err:
                await edit()
            assert "read-only" in str(err.value), name
    assert await kind.raw() == kind.raw_initial


async def test_advanced_sqlite_session_store_refuses_every_edit(tmp_path):
    path = tmp_path / "advanced.db"
    session = AdvancedSQLiteSession(session_id=SID, db_path=str(path), create_tables=True)
    try:
        await session.add_items(copy.deepcopy(AGENTS_S[:3]))
        await session.add_items(copy.deepcopy(AGENTS_S[3:]))
        ref = await session.get_items()
    finally:
        session.close()
    assert ref == AGENTS_S

    def dump() -> dict:
        conn = sqlite3.connect(path)
        try:
            return {
                t: conn.execute(f"SELECT * FROM {t}").fetchall()
                for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        finally:
            conn.close()

    before = dump()
    assert before["message_structure"], "the SDK should have written its structure rows"
    async with await open_store(str(path), writable=True) as store:
        assert "editor" in store.traits.why_not and store.can_write
        ids = await message_ids(store)
        for name, edit in every_edit(store, ids, {"role": "user", "content": "x"}).items():
            with pytest.raises(ReadOnlyError) as err:
                await edit()
            text = str(err.value)
            assert "AdvancedSQLiteSession" in text and "not supported" in text, (name, text)
            assert "\n" not in text
    assert dump() == before
    session = AdvancedSQLiteSession(session_id=SID, db_path=str(path))
    try:
        assert await session.get_items() == ref
    finally:
        session.close()


# --------------------------------------------------------------------------- details


async def test_flux_metadata_is_written_as_flux_writes_it(tmp_path):
    """An edited message's stored row equals the row flux writes for the same message."""
    ours, ref = tmp_path / "ours.db", tmp_path / "ref.db"
    messages = [
        {"role": "assistant", "content": "mit Metadaten", "metadata": {"ü": "ä", "n": [1, None]}},
        {"role": "user", "content": "leer", "metadata": {}},
        {"role": "user", "content": None},
    ]
    await FluxSQLiteSession(str(ours), session_id=SID).add_messages([{"role": "user", "content": "seed"}])
    await FluxSQLiteSession(str(ref), session_id=SID).add_messages([{"role": "user", "content": "seed"}] + messages)
    async with await open_store(str(ours), writable=True) as store:
        for m in messages:
            await store.editor.insert_message(SID, copy.deepcopy(m))
    query = "SELECT session_id, role, content, metadata FROM messages ORDER BY id"
    conn_a, conn_b = sqlite3.connect(ours), sqlite3.connect(ref)
    try:
        assert conn_a.execute(query).fetchall() == conn_b.execute(query).fetchall()
    finally:
        conn_a.close()
        conn_b.close()
    assert await FluxSQLiteSession(str(ours), session_id=SID).get_messages() == await FluxSQLiteSession(
        str(ref), session_id=SID
    ).get_messages()


async def test_agents_sqlite_item_json_is_written_as_the_sdk_writes_it(tmp_path):
    ours, ref = tmp_path / "ours.db", tmp_path / "ref.db"
    for path in (ours, ref):
        await Kind("agents", "sqlite", str(path)).write(SID, [{"role": "user", "content": "seed"}])
    await Kind("agents", "sqlite", str(ref)).write(SID, copy.deepcopy(AGENTS_S))
    async with await open_store(str(ours), writable=True) as store:
        for item in AGENTS_S:
            await store.editor.insert_message(SID, copy.deepcopy(item))
    query = "SELECT session_id, message_data FROM agent_messages ORDER BY id"
    conn_a, conn_b = sqlite3.connect(ours), sqlite3.connect(ref)
    try:
        assert conn_a.execute(query).fetchall() == conn_b.execute(query).fetchall()
    finally:
        conn_a.close()
        conn_b.close()


async def test_agents_postgres_insert_keeps_time_order(pg_url):
    """SQLAlchemySession reads by (created_at, id): an insert between two writes takes
    its neighbour's time, and the moved rows keep theirs."""
    kind = Kind("agents", "postgres", pg_url)
    await kind.write(SID, copy.deepcopy(AGENTS_S[:2]))
    await kind.write(SID, copy.deepcopy(AGENTS_S[2:]))
    conn = await asyncpg.connect(kind.pg_dsn)
    try:
        times = [r[0] for r in await conn.fetch("SELECT DISTINCT created_at FROM agent_messages ORDER BY 1")]
    finally:
        await conn.close()
    assert len(times) == 2, "two writes, two transaction times"
    async with await open_store(pg_url, writable=True) as store:
        ids = await message_ids(store)
        change = await store.editor.insert_message(SID, {"role": "user", "content": "between"}, anchor=ids[1])
        assert change.added[0]["created_at"] == times[0]
        assert [r["created_at"] for r in change.added[1:]] == [r["created_at"] for r in change.removed]
    assert await kind.read(SID) == AGENTS_S[:2] + [{"role": "user", "content": "between"}] + AGENTS_S[2:]


def test_change_inverse_is_an_involution():
    change = Change(SID, "label", removed=({"id": 1, "x": 1},), added=({"id": 2, "x": 2},))
    assert change.inverse().inverse() == change
    assert change.inverse().removed_ids == [2] and change.inverse().added_ids == [1]
    assert json.dumps(change.removed) == json.dumps(change.inverse().added)
