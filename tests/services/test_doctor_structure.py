"""``broken_structure`` on AdvancedSQLiteSession stores: the library's own store is clean;
items the plain SQLiteSession wrote into it, and a structure row whose item a plain
``pop_item`` removed, are found."""

from __future__ import annotations

import sqlite3

from advanced_helpers import OTHER, SID, write_library_store
from agents import SQLiteSession
from doctor_helpers import user

from fluxgui.adapters import open_store
from fluxgui.services.doctor import check_session, check_sessions


async def test_library_store_is_clean(tmp_path):
    path = tmp_path / "adv.db"
    await write_library_store(path)
    store = await open_store(str(path))
    try:
        reports = [r async for r in check_sessions(store)]
    finally:
        await store.close()
    assert {r.session_id for r in reports} == {SID, OTHER}
    assert all(r.problems == () for r in reports), [r.to_dict() for r in reports]


async def test_plain_writes_into_an_advanced_store(tmp_path):
    path = tmp_path / "adv.db"
    await write_library_store(path)
    # The plain session adds items without structure rows: no branch holds them.
    plain = SQLiteSession(SID, str(path))
    await plain.add_items([user("written by the plain session")])
    plain.close()
    # The plain session's pop_item removes OTHER's last item, leaving its structure row.
    other = SQLiteSession(OTHER, str(path))
    popped = await other.pop_item()
    other.close()
    assert popped is not None
    conn = sqlite3.connect(path)
    (loose,) = conn.execute("SELECT MAX(id) FROM agent_messages WHERE session_id = ?", (SID,)).fetchone()
    (dangling,) = conn.execute(
        "SELECT MAX(message_id) FROM message_structure WHERE session_id = ?", (OTHER,)
    ).fetchone()
    conn.close()
    store = await open_store(str(path))
    try:
        conv = await check_session(store, SID)
        oth = await check_session(store, OTHER)
    finally:
        await store.close()
    assert [(p.code, p.message_ids) for p in conv.problems] == [("broken_structure", (loose,))]
    assert "never reads" in conv.problems[0].detail
    assert [(p.code, p.message_ids) for p in oth.problems] == [("broken_structure", (dangling,))]
    assert "does not exist" in oth.problems[0].detail


async def test_turn_numbers_out_of_order(tmp_path):
    path = tmp_path / "adv.db"
    await write_library_store(path)
    conn = sqlite3.connect(path)
    # A structure row renumbered by hand (a damaged store): turn 9 before turn 2's items.
    (first,) = conn.execute(
        "SELECT MIN(id) FROM message_structure WHERE session_id = ? AND branch_id = 'main'", (OTHER,)
    ).fetchone()
    conn.execute("UPDATE message_structure SET branch_turn_number = 9 WHERE id = ?", (first,))
    conn.commit()
    conn.close()
    store = await open_store(str(path))
    try:
        report = await check_session(store, OTHER)
    finally:
        await store.close()
    assert [p.code for p in report.problems] == ["broken_structure"]
    assert "out of order" in report.problems[0].detail
