"""The edit commands (fluxgui.services.edits) on stores the real libraries wrote: each
command's Change, its undo and redo read back with the library, whether a command may
run, what the window shows afterwards, and the branch bar's reads and words
(fluxgui.services.branches)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advanced_helpers import SID, Library, write_library_store
from agents import SQLiteSession as AgentsSQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession
from helpers import all_messages

from fluxgui.adapters import open_store
from fluxgui.core.branches import MAIN, BranchChange, BranchInfo, TurnUsage, UsageTotals
from fluxgui.core.changes import Change
from fluxgui.core.errors import FluxguiError, ReadOnlyError
from fluxgui.services import edits
from fluxgui.services.branches import (
    branch_text,
    delete_question,
    load_branch_state,
    short_tokens,
    turn_tokens,
    usage_text,
)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


CHAT = [user("one"), answer("two"), user("three")]


async def write_agents(path: Path, sessions: dict[str, list[dict[str, Any]]]) -> Path:
    for sid, items in sessions.items():
        session = AgentsSQLiteSession(sid, path)
        try:
            await session.add_items(items)  # type: ignore[arg-type]
        finally:
            session.close()
    return path


async def agents_items(path: Path, sid: str) -> list[dict[str, Any]]:
    session = AgentsSQLiteSession(sid, path)
    try:
        return list(await session.get_items())  # type: ignore[arg-type]
    finally:
        session.close()


@pytest.fixture
async def agents_db(tmp_path: Path) -> Path:
    return await write_agents(tmp_path / "agents.db", {"chat": CHAT, "other": [user("x")]})


@pytest.fixture
async def writable(agents_db: Path):
    store = await open_store(str(agents_db), writable=True)
    try:
        yield store
    finally:
        await store.close()


# --------------------------------------------------------------------------- may it run


async def test_read_only_and_missing_stores_say_why(agents_db):
    assert edits.blocked_reason(None) == edits.NO_STORE
    assert edits.edit_reason(None) == edits.NO_STORE
    store = await open_store(str(agents_db))
    try:
        reason = edits.blocked_reason(store)
        assert reason == edits.READ_ONLY and "Ctrl+Shift+E" in reason
        assert edits.blocked_reason(store, need="fork") == edits.READ_ONLY
        assert edits.edit_reason(store) is not None  # check_editable says no
        with pytest.raises(ReadOnlyError, match="read-only"):
            edits.check_writable(store)
    finally:
        await store.close()


async def test_a_writable_store_may_be_edited(writable):
    assert edits.blocked_reason(writable) is None
    assert edits.edit_reason(writable) is None
    assert edits.check_writable(writable) is writable


async def test_an_advanced_store_forks_but_does_not_edit_messages(tmp_path):
    path = tmp_path / "advanced.db"
    await write_library_store(path)
    store = await open_store(str(path), writable=True)
    try:
        reason = edits.blocked_reason(store)
        assert reason is not None and "AdvancedSQLiteSession" in reason
        assert edits.blocked_reason(store, need="fork") is None
        assert edits.is_branchable(store)
        assert edits.branch_problem(store, SID) is None
        assert edits.branch_problem(store, None) is not None  # no session shown
    finally:
        await store.close()


async def test_branching_needs_a_store_with_branches_and_a_user_turn(agents_db, tmp_path):
    store = await open_store(str(agents_db), writable=True)
    try:
        assert not edits.is_branchable(store) and not edits.is_branchable(None)
        problem = edits.branch_problem(store, "chat")
        assert problem is not None and "AdvancedSQLiteSession" in str(problem)
        messages = await all_messages(store, "chat")
    finally:
        await store.close()
    assert "select a user message" in str(edits.no_turn_error(None))
    assert "select a user message" in str(edits.no_turn_error(messages[1]))  # an answer
    assert "still being counted" in str(edits.no_turn_error(messages[0]))  # a user message

    path = tmp_path / "advanced.db"
    await write_library_store(path)
    read_only = await open_store(str(path))
    try:
        problem = edits.branch_problem(read_only, SID)
        assert isinstance(problem, ReadOnlyError) and "Ctrl+Shift+E" in str(problem)
    finally:
        await read_only.close()


def test_names_typed_for_new_sessions_and_branches():
    assert edits.new_name("  alt ") == "alt"
    assert edits.new_name("   ") is None and edits.new_name(None) is None


# --------------------------------------------------------------------------- commands


async def test_clear_undo_redo_read_back_by_the_library(writable, agents_db):
    original = await agents_items(agents_db, "chat")
    change = await edits.clear_session(writable, "chat")
    assert isinstance(change, Change) and change.session_id == "chat"
    assert len(change.removed) == 3 and not change.added
    assert await agents_items(agents_db, "chat") == []

    undone = await edits.undo(writable, change)
    assert undone.session_id == "chat"
    assert await agents_items(agents_db, "chat") == original
    await edits.redo(writable, change)
    assert await agents_items(agents_db, "chat") == []
    await edits.undo(writable, change)
    assert await agents_items(agents_db, "chat") == original


async def test_delete_messages_pop_and_delete_session(writable, agents_db):
    messages = await all_messages(writable, "chat")
    with pytest.raises(FluxguiError, match="no message"):
        await edits.delete_messages(writable, "chat", [])
    change = await edits.delete_messages(writable, "chat", [messages[1].id])
    assert change.removed_ids == [messages[1].id]
    assert await agents_items(agents_db, "chat") == [user("one"), user("three")]

    popped = await edits.pop_message(writable, "chat")
    assert popped.removed_ids == [messages[2].id]
    assert await agents_items(agents_db, "chat") == [user("one")]
    await edits.undo(writable, popped)
    await edits.undo(writable, change)
    assert await agents_items(agents_db, "chat") == CHAT

    gone = await edits.delete_session(writable, "other")
    assert await agents_items(agents_db, "other") == []
    assert "other" not in {s.id for s in (await writable.reader.list_sessions()).sessions}
    await edits.undo(writable, gone)
    assert await agents_items(agents_db, "other") == [user("x")]


async def test_update_and_insert(writable, agents_db):
    messages = await all_messages(writable, "chat")
    edited = await edits.update_message(writable, "chat", messages[0], user("ONE"))
    assert edited.removed_ids == [messages[0].id] and edited.added
    inserted = await edits.insert_message(
        writable, "chat", user("between"), anchor=messages[1].id, where="before"
    )
    assert "between" in inserted.added[0]["message_data"]  # (the rows after it move up)
    assert await agents_items(agents_db, "chat") == [user("ONE"), user("between"), *CHAT[1:]]
    at_end = await edits.insert_message(writable, "chat", user("last"), anchor=None)
    assert (await agents_items(agents_db, "chat"))[-1] == user("last")
    for change in (at_end, inserted, edited):
        await edits.undo(writable, change)
    assert await agents_items(agents_db, "chat") == CHAT


async def test_fork_makes_a_session_and_leaves_the_origin(tmp_path):
    path = tmp_path / "flux.db"
    for message in ({"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
                    {"role": "user", "content": "q2"}):
        await FluxSQLiteSession(db_path=str(path), session_id="src").add_messages([message])
    store = await open_store(str(path), writable=True)
    try:
        messages = await all_messages(store, "src")
        change = await edits.fork_session(store, "src", messages[1].id, "  copy ")
        assert change.session_id == "copy"
        forked = await FluxSQLiteSession(db_path=str(path), session_id="copy").get_messages()
        assert [m["content"] for m in forked] == ["q", "a"]
        origin = await FluxSQLiteSession(db_path=str(path), session_id="src").get_messages()
        assert len(origin) == 3
        plan = edits.after_edit(change, "src", open_result=True)
        assert plan.open == "copy" and plan.refresh == ("copy",) and not plan.reload
        await edits.undo(store, change)
        assert await FluxSQLiteSession(db_path=str(path), session_id="copy").get_messages() == []
    finally:
        await store.close()


# --------------------------------------------------------------------------- afterwards


async def test_what_the_window_shows_after_each_edit(writable):
    messages = await all_messages(writable, "chat")
    cleared = await edits.clear_session(writable, "chat")
    plan = edits.after_edit(cleared, "chat")
    assert plan.reload and plan.maybe_gone and plan.open is None and plan.select is None
    restored = await edits.undo(writable, cleared)
    plan = edits.after_edit(restored, "chat")
    assert plan.reload and not plan.maybe_gone
    assert plan.select == restored.added[0]["id"]  # the first message back

    inserted = await edits.insert_message(writable, "chat", user("new"), anchor=messages[0].id)
    assert edits.after_edit(inserted, "chat").select == inserted.added[0]["id"]
    # An edit asked to select its own message: that stays.
    edited = await edits.update_message(writable, "chat", messages[0], user("ONE"))
    assert edits.after_edit(edited, "chat", select=messages[0].id).select == messages[0].id
    # The session edited is not the one shown, or none is shown.
    assert edits.after_edit(edited, None).open == "chat"
    elsewhere = edits.after_edit(edited, "other")
    assert elsewhere.open is None and not elsewhere.reload and elsewhere.refresh == ("chat",)


def test_enabled_actions_follow_the_state():
    none = edits.enabled_actions(edits.EditState(False, False, True, True, True, True))
    assert not any(none.values())
    writable = edits.EditState(
        writable=True, editable=False, has_session=True, has_message=True,
        can_undo=True, can_redo=False, can_fork=True,
    )
    on = edits.enabled_actions(writable)
    assert on["undo"] and not on["redo"] and on["fork"]
    assert not on["edit_message"] and not on["clear_session"] and not on["branch_from_turn"]
    full = edits.enabled_actions(edits.EditState(True, True, True, False, False, False, True, True, True))
    assert full["insert_after"] and full["pop_message"] and full["delete_session"]
    assert not full["edit_message"] and not full["delete_messages"] and full["branch_from_turn"]


def test_mode_descriptions():
    assert edits.mode_description(False, None)[0] == "read-only"
    assert edits.mode_description(True, None)[0] == "✎ editing"
    text, tip = edits.mode_description(True, "a JSON session folder")
    assert text == "✎ writable, no message edits" and "a JSON session folder" in tip


# --------------------------------------------------------------------------- branches


async def test_branch_from_turn_delete_and_undo_read_back_by_the_library(tmp_path):
    path = tmp_path / "advanced.db"
    await write_library_store(path)
    library = Library(path)
    before = await library.view()
    store = await open_store(str(path), writable=True)
    try:
        made = await edits.branch_from_turn(store, SID, 2, " mine ", branch=MAIN)
        assert isinstance(made, BranchChange) and made.branch_id == "mine"
        plan = edits.after_edit(made, SID)
        assert plan.branches and plan.refresh == (SID,) and not plan.reload
        view = await library.view()
        assert "mine" in [b["branch_id"] for b in view["branches"]]
        assert view["per_branch"]["mine"]["items"] == before["per_branch"]["main"]["items"][:4]

        state = await load_branch_state(store, SID, "mine")
        assert state.current == "mine" and state.info("mine") is not None
        assert [b.branch_id for b in state.rows()] == [b["branch_id"] for b in view["branches"]]

        deleted = await edits.delete_branch(store, SID, "mine")
        assert "mine" not in [b["branch_id"] for b in (await library.view())["branches"]]
        assert (await load_branch_state(store, SID, "mine")).current == MAIN  # gone: main
        await edits.undo(store, deleted)
        assert "mine" in [b["branch_id"] for b in (await library.view())["branches"]]
        await edits.undo(store, made)
        assert [b["branch_id"] for b in (await library.view())["branches"]] == [
            b["branch_id"] for b in before["branches"]
        ]
    finally:
        await store.close()


async def test_branch_state_matches_the_library(tmp_path):
    path = tmp_path / "advanced.db"
    await write_library_store(path)
    view = await Library(path).view(SID, "alt")
    store = await open_store(str(path))
    try:
        state = await load_branch_state(store, SID, "alt")
    finally:
        await store.close()
    assert state.current == "alt"
    assert [(b.branch_id, b.message_count, b.user_turns) for b in state.branches] == [
        (b["branch_id"], b["message_count"], b["user_turns"]) for b in view["branches"]
    ]
    usage = view["per_branch"]["alt"]["usage"]
    assert state.usage is not None and state.usage.total_tokens == usage["total_tokens"]
    assert turn_tokens(state.turn_usage) == {
        int(u["user_turn_number"]): int(u["total_tokens"])
        for u in view["per_branch"]["alt"]["turn_usage"]
    }
    # A branch made from turn 1 has no rows yet: listed as the current one all the same.
    made = await load_branch_state_made(path)
    assert made.current == "fresh" and made.rows()[-1].branch_id == "fresh"


async def load_branch_state_made(path: Path):
    store = await open_store(str(path))
    try:
        return await load_branch_state(store, SID, "fresh", made="fresh")
    finally:
        await store.close()


def test_branch_words():
    info = BranchInfo("alt", 1, 3, None)
    assert branch_text(info) == "alt — 1 message, 3 turns"
    assert usage_text(None) == ""
    assert usage_text(UsageTotals(4, 1234, 567, 1801, 2)) == (
        "tokens: 1,234 in / 567 out / 1,801 total · 4 requests"
    )
    assert short_tokens(950) == "950 tokens" and short_tokens(1234) == "1.2k tokens"
    assert short_tokens(3_400_000) == "3.4M tokens" and short_tokens(150_000) == "150k tokens"
    assert turn_tokens([TurnUsage(1, 1, 2, 3, 5), TurnUsage(2, 1, 2, 3, None)]) == {1: 5}
    question = delete_question("conv", info)
    assert "“alt”" in question and "“conv”" in question and "Undo" in question
