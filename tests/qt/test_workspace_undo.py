"""Undo across the stores of a workspace (issue 36: "editing … with the same undo"): an
edit written to one store can still be undone after another store became current — the
undo makes its store current again and writes there; a store that left the workspace
takes its edits off the stack with it. Replicas written by ``agents.SQLiteSession``."""

from __future__ import annotations

from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_async
from test_workspace_window import open_workspace
from workspace_helpers import agents_items

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

A, B = "a/conversations.db", "b/conversations.db"


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.editor.running, timeout=20_000)


def _pop_in_a(qtbot: Any, window: Any, ws: Any) -> None:
    ws.choose(A)
    qtbot.waitUntil(lambda: window.stores.store is ws.members.member(A).store, timeout=20_000)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.show_session("user_123")
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.actions_by_name["editing"].trigger()  # a reopened writable, in its place
    _settle(qtbot, window)
    assert window.stores.store.can_write
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        window.edits.pop_message()
    _settle(qtbot, window)


def test_an_edit_in_one_store_is_undone_after_another_became_current(qtbot, window, replicas):
    path_a = replicas.paths[0]
    before = run_async(agents_items(path_a, "user_123"))
    ws = open_workspace(qtbot, window, replicas.paths)
    _pop_in_a(qtbot, window, ws)
    assert run_async(agents_items(path_a, "user_123")) == before[:-1]
    ws.choose(B)  # another store current: read-only, the edit still on the stack
    qtbot.waitUntil(lambda: window.stores.store is ws.members.member(B).store, timeout=20_000)
    _settle(qtbot, window)
    assert not window.stores.store.can_write
    undo = window.actions_by_name["undo"]
    assert undo.isEnabled() and "Undo" in undo.text()
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        undo.trigger()
    _settle(qtbot, window)
    # written in a, which is current again (its chip chosen)
    assert run_async(agents_items(path_a, "user_123")) == before
    assert window.stores.store is ws.members.member(A).store
    assert ws.scope == A
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        window.actions_by_name["redo"].trigger()
    _settle(qtbot, window)
    assert run_async(agents_items(path_a, "user_123")) == before[:-1]


def test_a_store_that_leaves_the_workspace_takes_its_edits_off_the_stack(qtbot, window, replicas):
    ws = open_workspace(qtbot, window, replicas.paths)
    _pop_in_a(qtbot, window, ws)
    ws.choose(B)
    qtbot.waitUntil(lambda: window.stores.store is ws.members.member(B).store, timeout=20_000)
    assert window.editor.stack.canUndo()
    ws.remove(A)
    qtbot.waitUntil(lambda: ws.members.member(A) is None, timeout=20_000)
    assert window.editor.undo() is False  # its store is closed: nothing is written anywhere
    assert not window.editor.stack.canUndo()
    assert "no longer open" in str(window.last_error)
