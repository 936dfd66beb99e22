"""A merged timeline read from a store's rows (issue 36's merged counts): a row is read
as a Message only where it may open a turn, is a turn's first item or is compared or
shown; what comes out is exactly what reading every row as a Message gives."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from typing import Any

from doctor_helpers import answer, call, output, user
from workspace_helpers import agents_add, agents_replicas, flux_add, flux_replicas, minute

from fluxgui.core.jsonrecords import RowPage
from fluxgui.core.model import from_agents_row, from_flux_row
from fluxgui.services.workspace import Entry, Workspace
from fluxgui.services.workspace.timeline import merged_count, timeline
from fluxgui.services.workspace.turns import StoreTurn, store_turns


def _turn_facts(t: StoreTurn) -> tuple[Any, ...]:
    return (t.store, t.number, t.size, t.time, t.opens, t.quick(), t.key(), [m.to_dict() for m in t.messages])


async def _both_ways(ws: Workspace, sid: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Each store's turns of ``sid`` read from its rows and read as Messages."""
    by_rows, by_messages = [], []
    for m in ws.members:
        assert m.store.rows is not None
        by_rows += [_turn_facts(t) async for t in store_turns(m.label, m.store.rows.iter_row_pages(sid, batch=3))]
        by_messages += [_turn_facts(t) async for t in store_turns(m.label, m.store.reader.iter_messages(sid, batch=3))]
    return by_rows, by_messages


async def test_rows_and_messages_make_the_same_turns_on_agents_and_flux_replicas(tmp_path):
    for reps in (await agents_replicas(tmp_path / "agents"), await flux_replicas(tmp_path / "flux")):
        ws = await Workspace.open([Entry(str(p)) for p in reps.paths], keyring=False)
        try:
            for sid in reps.routes:
                by_rows, by_messages = await _both_ways(ws, sid)
                assert by_rows and by_rows == by_messages, sid
                # the merged count (with a merge only where a turn may be a copy) is the
                # merged timeline's
                line = await timeline(ws, sid)
                assert await merged_count(ws, sid, line.stores) == line.total, sid
                # read when first asked for, the items are the same
                later = await timeline(ws, sid, read=False)
                assert [p.to_dict() for p in later.placed()] == [p.to_dict() for p in line.placed()], sid
        finally:
            await ws.close()


async def test_a_turn_is_opened_only_by_a_user_message_however_its_item_is_spelled(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    system = {"role": "system", "content": "be brief"}
    await agents_add(a, "s", [system, user("order PO-1"), call("c1", args='{"user": "bob"}'),
                              output("c1", "the user bob"), answer("ok", "msg_1")], minute(0))
    await agents_add(b, "s", [user("and ship it"), answer("shipped", "msg_2")], minute(1))
    await agents_add(a, "s", [user("escaped"), answer("noted", "msg_3")], minute(2))
    # the last user message as another writer may spell it: "role": "\u0075ser"
    conn = sqlite3.connect(a)
    with conn:
        conn.execute(
            """UPDATE agent_messages SET message_data = ?
               WHERE id = (SELECT max(id) FROM agent_messages WHERE message_data LIKE '%escaped%')""",
            ('{"role": "\\u0075ser", "content": "escaped"}',),
        )
    conn.close()
    ws = await Workspace.open([Entry(str(a)), Entry(str(b))], keyring=False)
    try:
        by_rows, by_messages = await _both_ways(ws, "s")
        assert by_rows == by_messages
        line = await timeline(ws, "s")
        assert [(t.store_turns, t.size) for t in line.turns] == [
            ({"a.db": 0}, 1), ({"a.db": 1}, 4), ({"b.db": 1}, 2), ({"a.db": 2}, 2)]
        assert line.total == 9 and line.split
        assert [p.message.text for p in line.placed()][-2:] == ["escaped", "noted"]
    finally:
        await ws.close()


async def test_a_merged_count_reads_as_messages_only_what_may_open_a_turn(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for n in range(4):
        await agents_add(a if n % 2 else b, "s", [user(f"turn {n}"), call(f"c{n}"), output(f"c{n}"),
                                                   answer(f"answer {n}", f"msg_{n}")], minute(n))
    ws = await Workspace.open([Entry(str(a)), Entry(str(b))], keyring=False)
    read: list[Any] = []
    try:
        for m in ws.members:
            rows = m.store.rows
            assert rows is not None
            original = rows.iter_row_pages

            async def counted(sid: str, *, batch: int = 500, _original: Any = original) -> Any:
                async for page in _original(sid, batch=batch):
                    assert isinstance(page, RowPage)
                    inner = page.read
                    yield replace(page, read=lambda row, _inner=inner: (read.append(row[0]), _inner(row))[1])

            rows.iter_row_pages = counted  # type: ignore[method-assign]
        assert await merged_count(ws, "s", ["a.db", "b.db"]) == 16
        assert len(read) == 4  # the four user messages, nothing else
        read.clear()
        line = await timeline(ws, "s", read=False)  # (the list's split flag, check's split_session)
        assert (line.total, line.split, len(read)) == (16, True, 4)
        assert [p.message.text for p in line.placed()][::4] == [f"turn {n}" for n in range(4)]
    finally:
        await ws.close()


def test_surely_not_user_never_rules_out_a_row_that_reads_as_a_user_message():
    agents_rows = [
        (1, '{"role": "user", "content": "hi"}', None),
        (2, '{"role": "\\u0075ser", "content": "hi"}', None),
        (3, '{"type": "message", "role": "assistant", "content": []}', None),
        (4, '{"type": "function_call", "arguments": "{\\"user\\": 1}"}', None),
        (5, 'not json', None),
        (6, '"user"', None),
    ]
    page = RowPage("agents", agents_rows, lambda r: from_agents_row(r[0], r[1], r[2]))
    told = {r[0]: page.surely_not_user(r) for r in agents_rows}
    assert told == {1: False, 2: False, 3: True, 4: False, 5: True, 6: False}
    for row in agents_rows:
        if page.read(row).role == "user":
            assert not told[row[0]]
    flux_rows = [(1, "user", "a", None, None), (2, "", "b", None, None), (3, None, "c", None, None),
                 (4, "assistant", "d", None, None), (5, "tool", "e", None, None), (6, b"user", "f", None, None)]
    page = RowPage("flux", flux_rows, lambda r: from_flux_row(*r))
    told = {r[0]: page.surely_not_user(r) for r in flux_rows}
    assert told == {1: False, 2: False, 3: False, 4: True, 5: True, 6: False}
    for row in flux_rows:
        if page.read(row).role == "user":
            assert not told[row[0]]


async def test_flux_rows_whose_role_is_empty_open_a_turn_as_flux_reads_them(tmp_path):
    a = tmp_path / "a.db"
    await flux_add(a, "s", [{"role": "user", "content": "first"}, {"role": "assistant", "content": "one"}], minute(0))
    await flux_add(a, "s", [{"role": "", "content": "second"}, {"role": "assistant", "content": "two"}], minute(1))
    ws = await Workspace.open([Entry(str(a))], keyring=False)
    try:
        by_rows, by_messages = await _both_ways(ws, "s")
        assert by_rows == by_messages and [t[1] for t in by_rows] == [1, 2]
    finally:
        await ws.close()


async def test_a_merged_count_folds_copies_and_only_copies(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    first = [user("start"), answer("started", "msg_0")]
    await agents_add(a, "s", first, minute(0))
    await agents_add(b, "s", first, minute(5))  # a copy of a's first turn
    await agents_add(a, "s", [user("yes"), answer("shipped", "msg_1")], minute(1))
    await agents_add(b, "s", [user("yes"), answer("refunded", "msg_2")], minute(6))  # same start, not a copy
    ws = await Workspace.open([Entry(str(a)), Entry(str(b))], keyring=False)
    try:
        line = await timeline(ws, "s")
        assert (line.total, line.folded) == (6, 2)
        assert await merged_count(ws, "s", line.stores) == 6
        assert await merged_count(ws, "s", ["a.db"]) == 4
    finally:
        await ws.close()
