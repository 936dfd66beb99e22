"""The window's workspace (issue 36) over three replicas written by the real
``agents.SQLiteSession`` (tests/workspace_helpers.py): the store chips, the all-stores
list with its badges, the merged timeline with store tags, an edit in the merged view
written to its own store only (and undone), the search over every store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from qt_helpers import OFFSCREEN_NOISE, run_async
from workspace_helpers import PO, agents_items, digests, user_texts

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def open_workspace(qtbot: Any, window: Any, paths: list[Path], **options: Any) -> Any:
    from fluxgui.core.ports import OpenOptions
    from fluxgui.services.workspace import Entry

    ws = window.workspace
    ws.open_entries([Entry(str(p)) for p in paths], OpenOptions(**options))
    qtbot.waitUntil(lambda: len(ws.members) == len(paths) and ws.model.rowCount() > 0
                    and not ws.model.loading and not ws.model.splitting, timeout=30_000)
    return ws


def _label(reps: Any, index: int) -> str:
    return f"{'abc'[index]}/conversations.db"


def test_a_workspace_of_three_stores_lists_every_session_with_its_stores(qtbot, window, replicas):
    ws = open_workspace(qtbot, window, replicas.paths)
    assert ws.bar.isVisible()
    assert window.windowTitle() == "3 stores · a/conversations.db — fluxgui"
    assert [ws.bar.chips.item(i).text() for i in range(ws.bar.chips.count())] == [
        "All stores (3)", "a/conversations.db", "b/conversations.db", "c/conversations.db"]
    assert ws.lists.currentWidget() is ws.view
    rows = {ws.model.listed(r).id: ws.model.listed(r) for r in range(ws.model.rowCount())}
    assert set(rows) == set(replicas.routes)
    for sid, item in rows.items():
        holders = sorted({_label(replicas, i) for _t, i in replicas.routes[sid]})
        if sid == "copied_9":
            holders = ["a/conversations.db", "c/conversations.db"]
        assert item.labels == holders, sid
        assert item.split == (sid in replicas.split()), sid
    assert rows["user_123"].badge() == "split across 3 stores"
    assert rows["copied_9"].badge() == "in 2 stores"
    assert rows["sticky_7"].badge() is None
    store_col = ws.model.index(ws.model.row_of("user_123"), ws.model.STORE)
    assert store_col.data() == "split across 3 stores"
    assert "a/conversations.db" in ws.model.index(store_col.row(), 0).data(3)  # tooltip names them


def test_the_merged_timeline_tags_each_card_with_its_store_in_the_true_order(qtbot, window, replicas):
    ws = open_workspace(qtbot, window, replicas.paths)
    ws.select("user_123")
    qtbot.waitUntil(lambda: ws.timeline.session_id == "user_123", timeout=20_000)
    assert ws.panes.currentWidget() is ws.timeline
    placed = ws.timeline.model.placed
    users = [p for p in placed if p.message.role == "user"]
    assert [p.message.text for p in users] == replicas.texts("user_123")
    assert [p.store for p in users] == [_label(replicas, i) for _t, i in replicas.routes["user_123"]]
    assert PO in users[0].message.text
    assert "Split:" in ws.timeline.header.text()
    # Compare: the session as two of its stores hold it
    pairs = [a.text() for a in ws.timeline.compare_button.menu().actions()]
    assert pairs[0] == "a/conversations.db  ↔  b/conversations.db" and len(pairs) == 3
    dialog = ws.compare("a/conversations.db", "b/conversations.db")
    with qtbot.waitSignal(dialog.view.compared, timeout=20_000):
        pass
    dialog.close()
    # a copy is one card naming both stores
    ws.select("copied_9")
    qtbot.waitUntil(lambda: ws.timeline.session_id == "copied_9", timeout=20_000)
    first = ws.timeline.model.placed[0]
    assert first.stores == ["a/conversations.db", "c/conversations.db"]
    # a session in one store opens in the conversation pane, its store current
    ws.select("sticky_7")
    qtbot.waitUntil(lambda: window.conversation.session_id == "sticky_7", timeout=20_000)
    assert ws.panes.currentWidget() is window.conversation
    assert window.stores.store is ws.members.member("b/conversations.db").store


def test_an_edit_in_the_merged_view_changes_only_its_own_store_and_undoes(qtbot, window, replicas):
    ws = open_workspace(qtbot, window, replicas.paths)
    ws.select("user_123")
    qtbot.waitUntil(lambda: ws.timeline.session_id == "user_123", timeout=20_000)
    second = [p for p in ws.timeline.model.placed if p.message.role == "user"][1]
    assert second.store == "b/conversations.db"
    # read-only as opened: b is reopened for editing in its place
    assert not ws.members.member("b/conversations.db").store.can_write
    reopened: list[bool] = []
    ws.open_writable("b/conversations.db", lambda: reopened.append(True))
    qtbot.waitUntil(lambda: reopened == [True], timeout=20_000)
    assert ws.members.member("b/conversations.db").store.can_write
    assert not ws.members.member("a/conversations.db").store.can_write
    before = {p: digests([p])[0] for p in replicas.paths}
    original = run_async(agents_items(replicas.paths[1], "user_123"))
    with qtbot.waitSignal(ws.editor.applied, timeout=20_000):
        assert ws.editor.update(second, "user_123", {"role": "user", "content": "edited in b"})
    after = run_async(agents_items(replicas.paths[1], "user_123"))
    assert "edited in b" in user_texts(after)
    assert digests([replicas.paths[0]])[0] == before[replicas.paths[0]]
    assert digests([replicas.paths[2]])[0] == before[replicas.paths[2]]
    qtbot.waitUntil(lambda: any(p.message.text == "edited in b" for p in ws.timeline.model.placed), timeout=20_000)
    # Ctrl+Z on the cards undoes it (the merged view's stack, not the window's)
    ws.timeline.cards.setFocus()
    with qtbot.waitSignal(ws.editor.applied, timeout=20_000):
        qtbot.keyClick(ws.timeline.cards, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert run_async(agents_items(replicas.paths[1], "user_123")) == original
    assert digests([replicas.paths[0]])[0] == before[replicas.paths[0]]


def test_the_search_box_searches_every_store_and_names_where_each_hit_is(qtbot, window, replicas):
    ws = open_workspace(qtbot, window, replicas.paths)
    window.search(PO)
    qtbot.waitUntil(lambda: ws.model.search_text == PO and not ws.model.loading and ws.model.rowCount() == 1
                    and not ws.model.splitting, timeout=20_000)
    hit = ws.model.listed(0)
    assert hit.id == "user_123" and hit.hits == ["a/conversations.db"]
    assert "found in a/conversations.db" in ws.model.index(0, 0).data(3)
    assert ws.model.index(0, ws.model.STORE).data() == "a/conversations.db"
    qtbot.waitUntil(lambda: ws.timeline.session_id == "user_123", timeout=20_000)  # the first hit shown
    window.search("")
    qtbot.waitUntil(lambda: ws.model.rowCount() == len(replicas.routes) and not ws.model.loading, timeout=20_000)


def test_one_store_is_the_window_as_before_and_add_makes_a_workspace(qtbot, window, replicas, monkeypatch):
    import fluxgui.qt.window.store_controller as opening

    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(replicas.paths[0]))
    ws = window.workspace
    assert len(ws.members) == 1 and not ws.bar.isVisible()
    assert ws.lists.currentWidget() is window.session_view
    # File › Add Store › Add File… (the file dialog answers the second replica)
    monkeypatch.setattr(opening, "open_file_dialog", lambda _parent: str(replicas.paths[1]))
    file_menu = window.menuBar().actions()[0].menu()
    add = next(a.menu() for a in file_menu.actions() if a.text() == "Add Store")
    next(a for a in add.actions() if a.text() == "Add &File…").trigger()
    qtbot.waitUntil(lambda: len(ws.members) == 2, timeout=20_000)
    assert ws.bar.isVisible()
    ws.bar.chips.setCurrentRow(2)  # the b chip, as a click chooses it
    assert ws.scope == "b/conversations.db" and ws.lists.currentWidget() is window.session_view
    qtbot.waitUntil(lambda: window.sessions.rowCount() > 0 and window.stores.store is ws.members.member("b/conversations.db").store, timeout=20_000)
    ws.choose("")
    qtbot.waitUntil(lambda: ws.model.rowCount() > 0 and not ws.model.loading, timeout=20_000)
    assert {ws.model.listed(r).labels[0] for r in range(ws.model.rowCount())} >= {"a/conversations.db", "b/conversations.db"}
    qtbot.waitUntil(lambda: not ws.model.splitting, timeout=20_000)
    ws.remove("b/conversations.db")
    assert ws.members.labels == ["a/conversations.db"] and not ws.bar.isVisible()
    assert ws.lists.currentWidget() is window.session_view
    in_a = {sid for sid, turns in replicas.routes.items() if any(i == 0 for _t, i in turns)}
    qtbot.waitUntil(lambda: window.sessions.rowCount() == len(in_a) and not window.bridge.busy, timeout=20_000)
    assert window.stores.store is ws.members.members[0].store


def test_a_flux_trio_shows_the_split_session_in_its_true_order(qtbot, window, tmp_path):
    from workspace_helpers import flux_replicas

    reps = run_async(flux_replicas(tmp_path / "flux"))
    ws = open_workspace(qtbot, window, reps.paths)
    row = ws.model.listed(ws.model.row_of("user_123"))
    assert row.badge() == "split across 3 stores"
    assert ws.model.listed(ws.model.row_of("sticky_7")).badge() is None
    ws.select("user_123")
    qtbot.waitUntil(lambda: ws.timeline.session_id == "user_123", timeout=20_000)
    users = [p for p in ws.timeline.model.placed if p.message.role == "user"]
    assert [p.message.text for p in users] == reps.texts("user_123")
    assert [p.store for p in users] == [f"{'abc'[i]}/flux.db" for _t, i in reps.routes["user_123"]]


def test_turns_of_two_stores_in_the_same_second_are_marked_order_uncertain(qtbot, window, tmp_path):
    from doctor_helpers import answer, user
    from workspace_helpers import agents_add, minute

    x, y = tmp_path / "x" / "s.db", tmp_path / "y" / "s.db"
    for p in (x, y):
        p.parent.mkdir()

    async def write() -> None:
        await agents_add(x, "tie", [user("first, on x"), answer("ok x", "msg_x1")], minute(1))
        await agents_add(y, "tie", [user("same second, on y"), answer("ok y", "msg_y1")], minute(1))
        await agents_add(x, "tie", [user("later, on x"), answer("ok x2", "msg_x2")], minute(5))

    run_async(write())
    ws = open_workspace(qtbot, window, [x, y])
    ws.select("tie")
    qtbot.waitUntil(lambda: ws.timeline.session_id == "tie", timeout=20_000)
    marks = [(p.message.text, p.order_uncertain) for p in ws.timeline.model.placed if p.message.role == "user"]
    assert marks == [("first, on x", True), ("same second, on y", True), ("later, on x", False)]
    assert "order uncertain" in ws.timeline.header.text()
    index = ws.timeline.model.index(0)
    assert "order uncertain" in index.data(Qt.ItemDataRole.ToolTipRole)
    # another process adds a turn to y; F5 reads every store again, the session kept
    run_async(agents_add(y, "tie", [user("news on y"), answer("ok y2", "msg_y2")], minute(9)))
    window.actions_by_name["reload"].trigger()
    qtbot.waitUntil(lambda: any(p.message.text == "news on y" for p in ws.timeline.model.placed), timeout=20_000)
    qtbot.waitUntil(lambda: not ws.model.loading and ws.model.rowCount() == 1, timeout=20_000)
    assert ws.model.listed(ws.view.currentIndex().row()).id == "tie"
