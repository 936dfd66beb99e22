"""AdvancedSQLiteSession stores: branches, turns and usage, checked against the real library.

Every store here is written by ``agents.extensions.memory.AdvancedSQLiteSession`` (see
advanced_helpers.py). What fluxgui reads is compared with what the library answers on
the same file; what fluxgui writes is compared with what the library writes for the
same operation on a copy of the file, and read back through the library.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from advanced_helpers import (
    OTHER,
    SID,
    Library,
    answer,
    call,
    run_result,
    user,
    write_library_store,
)
from agents.extensions.memory import AdvancedSQLiteSession
from helpers import all_messages, all_sessions, snapshot

from fluxgui.adapters.sql.advanced.branches import AdvancedBranches
from fluxgui.adapters.registry import open_store
from fluxgui.adapters.sql.advanced import BranchError, BranchNotFound
from fluxgui.adapters.handle import OpenStore
from fluxgui.adapters.reading import ListingReader
from fluxgui.core.errors import Conflict, ReadOnlyError, SessionNotFound


@pytest.fixture
async def lib_db(tmp_path) -> Path:
    path = tmp_path / "advanced.db"
    await write_library_store(path)
    return path


async def fluxgui_view(
    store: OpenStore, sid: str = SID, batch: int = 500, current: str = "main"
) -> dict[str, Any]:
    """The same, read by fluxgui (each branch read by naming it; ``current`` is the one
    a library session object would be on)."""
    branches = [b.to_dict() for b in await store.branches.list_branches(sid, current=current)]
    out: dict[str, Any] = {"branches": branches, "per_branch": {}}
    for b in branches:
        bid = b["branch_id"]
        out["per_branch"][bid] = {
            "items": [m.raw for m in await all_messages(store, sid, batch=batch, branch=bid)],
            "turns": [t.to_dict() for t in await store.branches.conversation_turns(sid, branch=bid)],
            "turn_usage": [t.to_dict() for t in await store.usage.turn_usage(sid, bid)],
            "usage": _dict(await store.usage.branch_usage(sid, bid)),
        }
    out["current_items"] = [m.raw for m in await all_messages(store, sid, batch=batch, branch=current)]
    out["current_turn_usage"] = [t.to_dict() for t in await store.usage.turn_usage(sid, current)]
    out["session_usage"] = _dict(await store.usage.session_usage(sid))
    return out


def _dict(value: Any) -> Any:
    return value.to_dict() if value is not None else None


def dump(path: Path, *, times: bool = True) -> dict[str, list]:
    """Every row of every table (``created_at`` columns left out unless ``times``)."""
    conn = sqlite3.connect(str(path))
    try:
        out = {}
        for (table,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'sqlite_sequence' ORDER BY name"
        ):
            cols = [c[1] for c in conn.execute(f"PRAGMA table_info({table})")]
            keep = [c for c in cols if times or c != "created_at"]
            out[table] = conn.execute(f"SELECT {', '.join(keep)} FROM {table} ORDER BY rowid").fetchall()
        out["sqlite_sequence"] = conn.execute("SELECT * FROM sqlite_sequence ORDER BY name").fetchall()
        return out
    finally:
        conn.close()


def timeless(view: Any) -> Any:
    """A library view without times (and so without the order they give branches): for
    two files written in different seconds. Views of one file are compared whole."""
    if isinstance(view, dict):
        out = {k: timeless(v) for k, v in view.items() if k not in ("created_at", "timestamp")}
        if "branches" in out:
            out["branches"] = sorted(out["branches"], key=lambda b: b["branch_id"])
        return out
    if isinstance(view, list):
        return [timeless(v) for v in view]
    return view


def twin(path: Path, name: str) -> Path:
    """A copy of the store (the library's writes go to one, fluxgui's to the other)."""
    other = path.with_name(name)
    shutil.copyfile(path, other)
    return other


# --------------------------------------------------------------------------- reading


async def test_detected_as_advanced_with_capabilities(lib_db):
    async with await open_store(str(lib_db)) as store:
        assert isinstance(store.branches, AdvancedBranches)
        assert store.format == "agents"
        assert store.branches is not None and store.usage is not None
        assert store.writer is not None and store.forks is not None
        assert store.editor is None
        assert store.can_write is False and store.needs_key is False
        assert await store.branches.branch_exists(SID, "main")


async def test_plain_agents_store_is_not_advanced(tmp_path):
    from agents import SQLiteSession

    path = tmp_path / "plain.db"
    s = SQLiteSession(SID, str(path))
    try:
        await s.add_items([user("hi")])
    finally:
        s.close()
    async with await open_store(str(path)) as store:
        assert isinstance(store, OpenStore)
        assert store.branches is None and store.usage is None
        assert store.editor is not None and store.traits.encryption


async def test_everything_read_equals_the_library(lib_db):
    expected = await Library(lib_db).view()
    assert len(expected["branches"]) == 3
    assert {b["branch_id"] for b in expected["branches"] if b["is_current"]} == {"main"}
    async with await open_store(str(lib_db)) as store:
        assert await fluxgui_view(store) == expected
        # Paging in small keyset pages gives the same items.
        assert await fluxgui_view(store, batch=2) == expected


async def test_reads_equal_the_library_on_each_branch(lib_db):
    lib = Library(lib_db)
    async with await open_store(str(lib_db)) as store:
        for b in await store.branches.list_branches(SID):
            bid = b.branch_id
            expected = await lib.view(current=bid)
            assert await fluxgui_view(store, current=bid) == expected
            marked = [x.branch_id for x in await store.branches.list_branches(SID, current=bid)
                      if x.is_current]
            assert marked == [bid]
            # counts, the latest N (flux protocol) and backward paging
            items = expected["current_items"]
            assert await store.reader.count_messages(SID, branch=bid) == len(items)
            assert (await store.reader.session_info(SID, branch=bid)).messages == len(items)
            latest = await store.reader.latest_messages(SID, 3, branch=bid)
            assert [m.raw for m in latest] == items[-3:]
            s = lib.session()
            try:
                await s.switch_to_branch(b.branch_id)
                assert [m.raw for m in latest] == await s.get_items(limit=3)
            finally:
                s.close()
            back: list = []
            anchor = None
            while True:
                page = await store.reader.page_messages(SID, limit=2, anchor=anchor, branch=bid)
                if not page:
                    break
                back = page + back
                anchor = page[0].sort_key
            assert [m.raw for m in back] == items


async def test_message_ids_are_the_shared_message_rows(lib_db):
    rows = dict(sqlite3.connect(lib_db).execute("SELECT id, message_data FROM agent_messages").fetchall())
    async with await open_store(str(lib_db)) as store:
        main = await all_messages(store, SID)
        alt = await all_messages(store, SID, branch="alt")
    # the turn before the branch point is the same rows on both branches
    assert [m.id for m in alt[:4]] == [m.id for m in main[:4]]
    for m in main + alt:
        assert m.raw == json.loads(rows[m.id])


async def test_usage_per_turn_and_per_branch(lib_db):
    async with await open_store(str(lib_db)) as store:
        turns = await store.usage.turn_usage(SID)
        assert [t.user_turn_number for t in turns] == [1, 2, 3, 4]
        first = turns[0]
        assert (first.requests, first.input_tokens, first.output_tokens, first.total_tokens) == (2, 100, 20, 120)
        assert first.input_tokens_details["cached_tokens"] == 10
        assert first.output_tokens_details == {"reasoning_tokens": 5}
        alt = await store.usage.branch_usage(SID, "alt")
        assert alt is not None and (alt.requests, alt.total_tokens, alt.total_turns) == (4, 77, 2)
        # usage is not copied to a branch: alt has only its own turns
        assert [t.user_turn_number for t in await store.usage.turn_usage(SID, "alt")] == [2, 3]
        total = await store.usage.session_usage(SID)
        assert total is not None and total.total_turns == 7
        assert await store.usage.branch_usage(SID, "no-such-branch") is None
        assert await store.usage.turn_usage("nobody") == []


async def test_branches_are_checked_and_reads_take_them_explicitly(lib_db):
    async with await open_store(str(lib_db)) as store:
        with pytest.raises(BranchNotFound) as err:
            await store.branches.require_branch(SID, "gone")  # deleted by the library
        assert "gone" in str(err.value) and "\n" not in str(err.value)
        assert isinstance(err.value, SessionNotFound)
        with pytest.raises(SessionNotFound) as err:
            await store.branches.require_branch("nobody", "alt")
        assert "unknown session" in str(err.value)
        assert await store.branches.branch_exists(SID, "alt") and not await store.branches.branch_exists(SID, "gone")
        # reading a branch of one session changes nothing for any other read
        alt = await all_messages(store, SID, branch="alt")
        assert [m.text for m in await all_messages(store, OTHER)] == ["another session", "yes"]
        assert await all_messages(store, SID) != alt
        assert await all_messages(store, SID, branch="gone") == []


async def test_session_list_counts_main_and_search_reads_every_branch(lib_db):
    lib = Library(lib_db)
    main_count = len((await lib.view())["current_items"])
    async with await open_store(str(lib_db)) as store:
        listed = {s.id: s.messages for s in await all_sessions(store)}
        assert listed == {SID: main_count, OTHER: 2}
        by_count = await store.reader.list_sessions(order="messages")
        assert [s.id for s in by_count.sessions] == [SID, OTHER]
        assert [s.id for s in await store.reader.search_sessions("alt three")] == [SID]  # on alt
        assert [s.id for s in await store.reader.search_sessions("fourth")] == [SID]  # on main
        assert [s.id for s in await store.reader.search_sessions("another")] == [OTHER]
        info = {s.id: s.messages for s in await store.reader.sessions_by_ids([SID, OTHER])}
        assert info == {SID: main_count, OTHER: 2}


async def test_flux_session_protocol_reads_its_branch(lib_db):
    async with await open_store(str(lib_db)) as store:
        got = await store.session(SID, branch="alt").get_messages(2)
        assert got == [{"role": "user", "content": "alt three"},
                       {"role": "assistant", "content": "alt three answer"}]


async def test_turns_before_an_anchor_count_the_branch(lib_db):
    async with await open_store(str(lib_db)) as store:
        for branch in ("main", "alt"):
            for m in await all_messages(store, SID, branch=branch):
                assert await store.reader.count_turns_before(
                    SID, m.sort_key, branch=branch
                ) == await ListingReader.count_turns_before(store.reader, SID, m.sort_key, branch=branch)


async def test_read_only_open_changes_no_byte(lib_db):
    before = snapshot(lib_db)
    async with await open_store(str(lib_db)) as store:
        await fluxgui_view(store)
        await fluxgui_view(store, current="alt")
        await all_sessions(store)
        await store.reader.list_sessions(order="messages")
        await store.reader.search_sessions("sunny")
        for edit in (
            lambda: store.branches.create_branch_from_turn(SID, 2, "x"),
            lambda: store.branches.delete_branch(SID, "alt"),
        ):
            with pytest.raises(ReadOnlyError):
                await edit()
    assert snapshot(lib_db) == before


async def test_a_cleared_session_has_main_only(lib_db):
    async with await open_store(str(lib_db)) as store:
        assert await store.branches.branch_exists(SID, "alt")
        s = Library(lib_db).session()
        try:
            await s.clear_session()
            await s.add_items([user("fresh start")])
        finally:
            s.close()
        # a reader that was on "alt" finds it gone (the window then goes back to main)
        assert not await store.branches.branch_exists(SID, "alt")
        assert [m.text for m in await all_messages(store, SID)] == ["fresh start"]


# --------------------------------------------------------------------------- writing


async def lib_create(path: Path, sid: str, turn: int, name: str | None, current: str = "main") -> str:
    s = AdvancedSQLiteSession(session_id=sid, db_path=str(path))
    try:
        if current != "main":
            await s.switch_to_branch(current)
        return await s.create_branch_from_turn(turn, name)
    finally:
        s.close()


async def lib_delete(path: Path, sid: str, branch: str) -> None:
    s = AdvancedSQLiteSession(session_id=sid, db_path=str(path))
    try:
        await s.delete_branch(branch)
    finally:
        s.close()


@pytest.mark.parametrize(
    ("current", "turn"), [("main", 2), ("main", 4), ("alt", 3), ("alt", 1), ("main", 1)]
)
async def test_create_branch_writes_what_the_library_writes(lib_db, current, turn):
    ours, ref = twin(lib_db, "ours.db"), twin(lib_db, "ref.db")
    assert await lib_create(ref, SID, turn, "new", current) == "new"
    async with await open_store(str(ours), writable=True) as store:
        change = await store.branches.create_branch_from_turn(SID, turn, "new", branch=current)
        assert change.branch_id == "new"
    assert dump(ours, times=False) == dump(ref, times=False)
    # and the library reads fluxgui's branch as its own
    assert timeless(await Library(ours).view()) == timeless(await Library(ref).view())
    if turn > 1:
        async with await open_store(str(ours)) as store:
            assert await fluxgui_view(store) == await Library(ours).view()


async def test_auto_named_branch(lib_db):
    ours, ref = twin(lib_db, "ours.db"), twin(lib_db, "ref.db")
    theirs = await lib_create(ref, SID, 2, None)
    async with await open_store(str(ours), writable=True) as store:
        change = await store.branches.create_branch_from_turn(SID, 2)
    assert re.fullmatch(r"branch_from_turn_2_\d+", change.branch_id), change.branch_id
    assert re.fullmatch(r"branch_from_turn_2_\d+", theirs), theirs

    def renamed(path: Path, name: str) -> dict:
        d = dump(path, times=False)
        return {t: [tuple("NEW" if v == name else v for v in row) for row in rows] for t, rows in d.items()}

    assert renamed(ours, change.branch_id) == renamed(ref, theirs)


async def test_a_branch_made_by_fluxgui_grows_in_the_library(lib_db):
    async with await open_store(str(lib_db), writable=True) as store:
        await store.branches.create_branch_from_turn(SID, 3, "fg")
    s = Library(lib_db).session()
    try:
        await s.switch_to_branch("fg")
        await s.add_items([user("fg three"), answer("fg answer")])
        await s.store_run_usage(run_result(1, 7, 8))
        turns = await s.get_conversation_turns()
        assert [t["turn"] for t in turns] == [1, 2, 3]
        assert turns[-1]["content"] == "fg three"
        assert [u["user_turn_number"] for u in await s.get_turn_usage()] == [3]
    finally:
        s.close()
    async with await open_store(str(lib_db)) as store:
        assert await fluxgui_view(store, current="fg") == await Library(lib_db).view(current="fg")


@pytest.mark.parametrize(
    ("turn", "name", "error", "needle"),
    [
        (2, "   ", BranchError, "empty"),
        (2, "alt", BranchError, "already been used"),
        (2, "gone", BranchError, "already been used"),  # deleted, still reserved
        (2, "main", BranchError, "already been used"),
        (99, "x", BranchError, "does not contain a user message"),
    ],
)
async def test_create_branch_refusals_write_nothing(lib_db, turn, name, error, needle):
    before = dump(lib_db)
    s = Library(lib_db).session()
    try:
        with pytest.raises(ValueError):  # the library refuses the same
            await s.create_branch_from_turn(turn, name)
    finally:
        s.close()
    assert dump(lib_db) == before
    async with await open_store(str(lib_db), writable=True) as store:
        with pytest.raises(error) as err:
            await store.branches.create_branch_from_turn(SID, turn, name)
        assert needle in str(err.value) and "\n" not in str(err.value)
        with pytest.raises(SessionNotFound):
            await store.branches.create_branch_from_turn("nobody", 1, "x")
    assert dump(lib_db) == before


@pytest.mark.parametrize("branch", ["alt", None])
async def test_delete_branch_writes_what_the_library_writes(lib_db, branch):
    async with await open_store(str(lib_db)) as store:
        branch = branch or next(b.branch_id for b in await store.branches.list_branches(SID)
                                if b.branch_id.startswith("branch_from_turn_3_"))
    ours, ref = twin(lib_db, "ours.db"), twin(lib_db, "ref.db")
    await lib_delete(ref, SID, branch)
    async with await open_store(str(ours), writable=True) as store:
        change = await store.branches.delete_branch(SID, branch)
        assert change.count("structure", added=False) > 0
        assert change.count("messages", added=False) > 0  # its own items went too
    assert dump(ours) == dump(ref)
    assert await Library(ours).view() == await Library(ref).view()
    s = Library(ours).session()
    try:
        with pytest.raises(ValueError):  # the id stays reserved
            await s.create_branch_from_turn(2, branch)
    finally:
        s.close()


async def test_delete_branch_refusals(lib_db):
    before = dump(lib_db)
    async with await open_store(str(lib_db), writable=True) as store:
        with pytest.raises(BranchError, match="main"):
            await store.branches.delete_branch(SID, "main")
        with pytest.raises(BranchError, match="empty"):
            await store.branches.delete_branch(SID, " ")
        with pytest.raises(BranchNotFound):
            await store.branches.delete_branch(SID, "gone")
        with pytest.raises(SessionNotFound):
            await store.branches.delete_branch("nobody", "alt")
        with pytest.raises(BranchError, match="current branch"):
            await store.branches.delete_branch(SID, "alt", current="alt")
        assert dump(lib_db) == before
        # read from main, "alt" can go
        await store.branches.delete_branch(SID, "alt", current="main")
        assert "alt" not in [b.branch_id for b in await store.branches.list_branches(SID)]


async def test_undo_and_redo_branch_edits(lib_db):
    before = dump(lib_db)
    async with await open_store(str(lib_db), writable=True) as store:
        deleted = await store.branches.delete_branch(SID, "alt")
        after_delete = dump(lib_db)
        await store.branches.apply_branch_change(deleted.inverse())
        assert dump(lib_db) == before
        assert await Library(lib_db).view() == await fluxgui_view(store)
        await store.branches.apply_branch_change(deleted)
        assert dump(lib_db) == after_delete
        with pytest.raises(Conflict):
            await store.branches.apply_branch_change(deleted)  # nothing left to remove
        await store.branches.apply_branch_change(deleted.inverse())
        assert dump(lib_db) == before

        created = await store.branches.create_branch_from_turn(SID, 2, "fg")
        assert await store.branches.branch_exists(SID, "fg")
        await store.branches.apply_branch_change(created.inverse())
        assert not await store.branches.branch_exists(SID, "fg")
        undone = dump(lib_db)
        assert undone["message_structure"] == before["message_structure"]
        assert ("conv", "fg") in undone["branch_reservations"]  # the id stays used
    assert await Library(lib_db).view() == (await _view_of(lib_db))


async def _view_of(path: Path) -> dict:
    async with await open_store(str(path)) as store:
        return await fluxgui_view(store)


async def test_item_edits_stay_refused(lib_db):
    async with await open_store(str(lib_db), writable=True) as store:
        with pytest.raises(ReadOnlyError, match="AdvancedSQLiteSession"):
            await store.writer.clear_messages(SID)
        # Messages can be appended (tests/adapters/test_advanced_add.py); tool items not yet.
        with pytest.raises(Exception, match="AdvancedSQLiteSession"):
            await store.writer.add_messages(SID, [call("cx", "lookup", "{}")])
