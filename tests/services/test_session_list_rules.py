"""The session list's rules without Qt, over a real store: sort keys that match the
store's orders, the rotating window of rows a refresh re-checks, and a refresh's merge
plan after another process appended, created and deleted sessions."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession as AgentsSQLiteSession
from helpers import all_sessions

from fluxgui.adapters import open_store
from fluxgui.core.model import SessionInfo
from fluxgui.services.session_list import (
    REFRESH_SWEEP,
    Refresh,
    ids_to_check,
    insertion_runs,
    order_key,
    place,
    plan_merge,
    read_refresh,
    runs,
)


async def add(path: Path, sid: str, n: int) -> None:
    session = AgentsSQLiteSession(sid, str(path))
    try:
        await session.add_items([{"role": "user", "content": f"{sid} {i}"} for i in range(n)])
    finally:
        session.close()


async def delete(path: Path, sid: str) -> None:
    session = AgentsSQLiteSession(sid, str(path))
    try:
        await session.clear_session()
    finally:
        session.close()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[tuple[Path, Any]]:
    path = tmp_path / "agents.db"
    for i in range(6):
        await add(path, f"s{i}", i + 1)
    opened = await open_store(str(path))
    try:
        yield path, opened
    finally:
        await opened.close()


@pytest.mark.parametrize(("order", "descending"), [
    ("activity", True), ("activity", False), ("id", False), ("id", True),
    ("messages", True), ("messages", False),
])
async def test_order_keys_sort_as_the_store_does(
    store: tuple[Path, Any], order: Any, descending: bool
) -> None:
    _path, opened = store
    page = await opened.reader.list_sessions(limit=50, order=order, descending=descending)
    listed = [info.id for info in page.sessions]
    again = sorted(page.sessions, key=order_key(order), reverse=descending)
    assert [info.id for info in again] == listed


def test_place_runs_and_insertion_runs() -> None:
    assert place([1, 3, 3, 5], 3, False) == 3 and place([5, 3, 3, 1], 3, True) == 3
    assert runs([1, 2, 3, 7, 9, 10]) == [(1, 3), (7, 7), (9, 10)]
    rows = [SessionInfo(f"n{k}", k, None, None) for k in (2, 4, 4, 9)]
    keyed = [(row.messages, row) for row in rows]
    # shown keys (ascending) 1, 3, 5: 2 goes after 1, both 4s after 3, 9 at the end
    placed = insertion_runs([1, 3, 5], 3, keyed, False)
    assert [(pos, [r.id for r in run]) for pos, run in placed] == [
        (1, ["n2"]), (2, ["n4", "n4"]), (3, ["n9"])
    ]
    placed = insertion_runs([1, 3, 5], 3, list(reversed(keyed)), True)
    assert [(pos, [r.id for r in run]) for pos, run in placed] == [
        (0, ["n9"]), (1, ["n4", "n4"]), (2, ["n2"])
    ]


def test_the_checked_window_moves_on_at_each_refresh() -> None:
    loaded = [f"s{i}" for i in range(100 + REFRESH_SWEEP + 50)]
    ids, sweep = ids_to_check(loaded, 100, 0, {"x", "s3"})
    assert ids == loaded[: 100 + REFRESH_SWEEP] + ["x"] and sweep == 100 + REFRESH_SWEEP
    ids, sweep = ids_to_check(loaded, 100, sweep, set())
    assert ids == loaded[:100] + loaded[100 + REFRESH_SWEEP :] and sweep == 100


async def test_a_refresh_plan_after_another_writer(store: tuple[Path, Any]) -> None:
    path, opened = store
    shown = (await opened.reader.list_sessions(limit=4)).sessions  # s5 s4 s3 s2; s1 s0 to page
    assert [info.id for info in shown] == ["s5", "s4", "s3", "s2"]
    await add(path, "s2", 1)  # new activity: s2 moves to the top
    await add(path, "new", 1)  # a new session (most recent)
    await delete(path, "s4")
    await add(path, "s0", 1)  # s0 (not shown) becomes active: it lands on top
    check, _sweep = ids_to_check([info.id for info in shown], 100, 0, set())
    found = await read_refresh(
        opened, page_size=100, search=False, order="activity", descending=True, check=check
    )
    plan = plan_merge(
        shown,
        found,
        key_of=order_key("activity"),
        descending=True,
        search=False,
        known={info.id for info in shown},
        more=True,
    )
    assert plan.gone == {"s4"}
    assert [(row, info.id, info.messages) for row, info in plan.updated] == [(3, "s2", 4)]
    assert [info.id for info in plan.target] == ["s0", "new", "s2", "s5", "s3"]
    assert plan.placing == {"s0", "new", "s2"}
    assert [info.id for info in await all_sessions(opened)][:3] == ["s0", "new", "s2"]


async def test_a_moved_row_past_the_last_loaded_one_leaves(store: tuple[Path, Any]) -> None:
    _path, opened = store
    shown = (await opened.reader.list_sessions(limit=3, order="messages")).sessions  # s5 s4 s3
    # s5 loses messages (as if cleared and rewritten): in "messages" order it now sorts
    # after the last loaded row, where paging brings it back.
    fresh = [SessionInfo("s5", 1, shown[0].created_at, shown[0].updated_at, shown[0].sort_key)]

    def plan(more: bool) -> Any:
        return plan_merge(
            shown,
            Refresh(top=[], recent=[], asked=["s5"], checked=fresh),
            key_of=order_key("messages"),
            descending=True,
            search=False,
            known={info.id for info in shown},
            more=more,
        )

    paging = plan(more=True)
    assert paging.gone == {"s5"} and [info.id for info in paging.target] == ["s4", "s3"]
    complete = plan(more=False)
    assert complete.gone == set() and [info.id for info in complete.target] == ["s4", "s3", "s5"]
