"""Live refresh across a workspace (issue 36: live refresh works per store): while the
all-stores list is shown, an agent writing to any store of the workspace — the current
one or another — shows up in the list (and in the merged timeline shown), written by
the real ``agents.SQLiteSession`` from another connection; one store's own list watches
only that store, as without a workspace."""

from __future__ import annotations

from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_async
from test_workspace_window import open_workspace
from doctor_helpers import answer, user
from workspace_helpers import agents_add, minute

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _ids(ws: Any) -> set[str]:
    return {ws.model.listed(r).id for r in range(ws.model.rowCount())}


def test_every_store_is_watched_while_the_all_stores_list_shows(qtbot, window, replicas):
    ws = open_workspace(qtbot, window, replicas.paths)
    current = window.stores.store
    # the current store has the window's own watcher; the other two have one each
    qtbot.waitUntil(lambda: sorted(ws.watchers.watched) == ["b/conversations.db", "c/conversations.db"])
    assert window.watcher.store is current
    # an agent writes a new session into replica c (not the current store)
    run_async(agents_add(replicas.paths[2], "late_c", [user("hello from c"), answer("hi", "msg_late_c")], minute(900)))
    qtbot.waitUntil(lambda: "late_c" in _ids(ws), timeout=10_000)
    # and into the current store (replica a)
    run_async(agents_add(replicas.paths[0], "late_a", [user("hello from a"), answer("hi", "msg_late_a")], minute(901)))
    qtbot.waitUntil(lambda: "late_a" in _ids(ws), timeout=10_000)


def test_the_merged_timeline_shown_follows_a_write_to_another_store(qtbot, window, replicas):
    ws = open_workspace(qtbot, window, replicas.paths)
    assert ws.select("user_123")  # (as a click on its row: its merged timeline shows)
    qtbot.waitUntil(lambda: ws.timeline.session_id == "user_123" and ws.timeline.line is not None, timeout=20_000)
    before = len(ws.timeline.model.placed)
    run_async(agents_add(replicas.paths[1], "user_123", [user("turn 5 on b"), answer("ok", "msg_u5")], minute(950)))
    qtbot.waitUntil(lambda: len(ws.timeline.model.placed) > before, timeout=10_000)
    assert [p.message.text for p in ws.timeline.model.placed][-2:] == ["turn 5 on b", "ok"]


def test_one_stores_list_watches_only_that_store(qtbot, window, replicas):
    ws = open_workspace(qtbot, window, replicas.paths)
    qtbot.waitUntil(lambda: len(ws.watchers.watched) == 2)
    ws.choose("b/conversations.db")
    qtbot.waitUntil(lambda: window.stores.store is ws.members.member("b/conversations.db").store)
    assert ws.watchers.watched == []
    assert window.watcher.store is window.stores.store
    ws.choose("")  # all stores again: the two others watched again
    qtbot.waitUntil(lambda: sorted(ws.watchers.watched) == ["a/conversations.db", "c/conversations.db"])
