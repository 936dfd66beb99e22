"""Branches of AdvancedSQLiteSession stores in the window: the branch bar (list, switch,
usage, Delete Branch…), Edit › Branch from This Turn… on the one undo stack, and each
user turn's token usage in its header.

Stores are written by the real ``AdvancedSQLiteSession`` (tests/advanced_helpers.py), and
every result is read back with the library, from a fresh session object in a worker
thread."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advanced_helpers import SID, Library, write_library_store
from qt_helpers import OFFSCREEN_NOISE, run_async

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


@pytest.fixture
def advanced_db(tmp_path: Path) -> Path:
    path = tmp_path / "advanced.db"
    run_async(write_library_store(path))
    return path


def _library(path: Path, current: str | None = None) -> dict[str, Any]:
    return run_async(Library(path).view(SID, current))


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.waitUntil(
        lambda: not window.bridge.busy and not window.editor.running and not window.branch_bar.busy,
        timeout=20_000,
    )


def _open(qtbot: Any, window: Any, path: Path, sid: str = SID) -> None:
    with qtbot.waitSignal(window.branch_bar.loaded, timeout=20_000):
        window.stores.open_target(str(path), session_id=sid)
    _settle(qtbot, window)


def _enable_editing(qtbot: Any, window: Any) -> None:
    with qtbot.waitSignal(window.branch_bar.loaded, timeout=20_000):
        window.actions_by_name["editing"].trigger()
    _settle(qtbot, window)
    assert window.stores.store.can_write


def _items(window: Any) -> list[Any]:
    pane = window.conversation
    return [pane.raw_of(m) for m in pane.model.messages]


def _listed(window: Any) -> list[tuple[str, int, int]]:
    state = window.branch_bar.state
    return [(b.branch_id, b.message_count, b.user_turns) for b in state.branches]


def _library_listed(view: dict[str, Any]) -> list[tuple[str, int, int]]:
    return [(b["branch_id"], b["message_count"], b["user_turns"]) for b in view["branches"]]


def _switch(qtbot: Any, window: Any, branch: str) -> None:
    bar = window.branch_bar
    row = bar.branch_ids().index(branch)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        bar.combo.setCurrentIndex(row)  # as picking it in the list does
    _settle(qtbot, window)
    assert bar.current_branch() == branch


def _edit(qtbot: Any, window: Any, run: Any) -> None:
    """Run a branch edit (or undo/redo) and wait until the bar and conversation follow."""
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        run()
    _settle(qtbot, window)


def _usage_text(usage: dict[str, int] | None) -> str:
    if usage is None:
        return ""
    return (
        f"tokens: {usage['input_tokens']:,} in / {usage['output_tokens']:,} out / "
        f"{usage['total_tokens']:,} total · {usage['requests']:,} "
        f"request{'' if usage['requests'] == 1 else 's'}"
    )


def _user_message(window: Any, turn: int) -> Any:
    pane = window.conversation
    found = [m for m in pane.model.messages if pane.turn_of(m) == turn and m.role == "user"]
    assert found, f"no user message for turn {turn}"
    return found[0]


@pytest.fixture
def name_branch(monkeypatch: Any) -> dict[str, Any]:
    """Answer the branch-name question with ``["name"]``; ``["asked"]``: the titles."""
    from PySide6.QtWidgets import QInputDialog

    state: dict[str, Any] = {"name": "mine", "asked": []}

    def ask(_parent: Any, title: str, *_args: Any) -> tuple[str, bool]:
        state["asked"].append(title)
        return state["name"], True

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(ask))
    return state


@pytest.fixture
def confirm_yes(monkeypatch: Any) -> list[tuple[Any, ...]]:
    import fluxgui.qt.branches.bar as branches

    asked: list[tuple[Any, ...]] = []

    def yes(_parent: Any, sid: str, info: Any) -> bool:
        asked.append((sid, info.branch_id))
        return True

    monkeypatch.setattr(branches, "confirm_delete_branch", yes)
    return asked


# --------------------------------------------------------------------------- listing


def test_the_bar_lists_the_library_branches_with_the_current_one_marked(
    qtbot, window, advanced_db
):
    _open(qtbot, window, advanced_db)
    bar = window.branch_bar
    assert bar.isVisible()
    view = _library(advanced_db)
    assert _listed(window) == _library_listed(view)
    assert bar.branch_ids() == [b["branch_id"] for b in view["branches"]]
    assert bar.current_branch() == "main"
    assert [b.is_current for b in bar.state.branches] == [b["is_current"] for b in view["branches"]]
    # The list shows the current branch, marked.
    assert bar.combo.currentText().startswith("main — ")
    assert bar.combo.currentText().endswith("(current)")
    main = next(b for b in view["branches"] if b["branch_id"] == "main")
    assert bar.combo.currentText() == (
        f"main — {main['message_count']} messages, {main['user_turns']} turns  (current)"
    )
    assert sum(text.endswith("(current)") for text in map(bar.combo.itemText,
                                                            range(bar.combo.count()))) == 1
    # Usage of the current branch, as the library sums it.
    assert bar.usage_label.text() == _usage_text(view["per_branch"]["main"]["usage"])
    assert bar.usage_label.text() == "tokens: 700 in / 140 out / 840 total · 5 requests"
    assert "All branches: " + _usage_text(view["session_usage"]) in bar.usage_label.toolTip()
    # main cannot be deleted.
    assert not bar.delete_button.isEnabled()


def test_switching_branch_shows_that_branch_and_its_usage(qtbot, window, advanced_db):
    _open(qtbot, window, advanced_db)
    assert _items(window) == _library(advanced_db)["per_branch"]["main"]["items"]
    view = _library(advanced_db)
    for branch in [b["branch_id"] for b in view["branches"]][::-1]:
        if branch == window.branch_bar.current_branch():
            continue
        _switch(qtbot, window, branch)
        assert window.conversation.branch == branch
        assert _items(window) == view["per_branch"][branch]["items"]
        assert window.branch_bar.usage_label.text() == _usage_text(
            view["per_branch"][branch]["usage"]
        )
        marked = [b.branch_id for b in window.branch_bar.state.branches if b.is_current]
        assert marked == [branch]
        # Each user turn's usage, for its header.
        expected = {
            u["user_turn_number"]: u["total_tokens"] for u in view["per_branch"][branch]["turn_usage"]
        }
        assert window.conversation.turn_tokens == expected
    # The library, switched the same way, reads the same.
    assert _library(advanced_db, current="alt")["current_items"] == (
        _library(advanced_db)["per_branch"]["alt"]["items"]
    )


def test_turn_headers_show_the_turn_usage(qtbot, window, advanced_db):
    from fluxgui.qt.branches import short_tokens

    _open(qtbot, window, advanced_db)
    pane = window.conversation
    turns = _library(advanced_db)["per_branch"]["main"]["turn_usage"]
    qtbot.waitUntil(lambda: pane.turn_of(pane.model.messages[0]) == 1, timeout=10_000)
    assert pane.turn_tokens == {u["user_turn_number"]: u["total_tokens"] for u in turns}
    assert pane.turn_tokens[1] == 120 and short_tokens(120) == "120 tokens"
    assert short_tokens(1234) == "1.2k tokens" and short_tokens(2_000_000) == "2M tokens"
    pane.view.viewport().grab()  # paints every header with its note


# --------------------------------------------------------------------------- editing


def test_branch_from_this_turn_undo_and_redo(qtbot, window, advanced_db, name_branch):
    _open(qtbot, window, advanced_db)
    actions = window.actions_by_name
    second = _user_message(window, 2)
    window.conversation.select_message(second.id)
    assert not actions["branch_from_turn"].isEnabled()  # read-only
    _enable_editing(qtbot, window)
    window.conversation.select_message(second.id)
    assert actions["branch_from_turn"].isEnabled()
    # Not for an answer.
    answer = next(m for m in window.conversation.model.messages if m.role == "assistant")
    window.conversation.select_message(answer.id)
    assert not actions["branch_from_turn"].isEnabled()
    # The context menu of a user message offers it.
    window.conversation.select_message(second.id)
    index = window.conversation.view.currentIndex()
    menu = window.conversation.menus.build_context_menu(index)
    assert actions["branch_from_turn"] in menu.actions()
    menu.deleteLater()

    main_items = _library(advanced_db)["per_branch"]["main"]["items"]
    with qtbot.waitSignal(window.branch_bar.switched, timeout=20_000):
        _edit(qtbot, window, actions["branch_from_turn"].trigger)
    _settle(qtbot, window)
    assert name_branch["asked"] == ["Branch from this turn"]
    view = _library(advanced_db)
    assert "mine" in [b["branch_id"] for b in view["branches"]]
    assert _listed(window) == _library_listed(view)
    assert window.branch_bar.current_branch() == "mine"
    # The library reads the new branch as main up to turn 2, and so does the window.
    before_turn_2 = main_items[: main_items.index(window.conversation.raw_of(second))]
    assert view["per_branch"]["mine"]["items"] == before_turn_2
    qtbot.waitUntil(lambda: _items(window) == view["per_branch"]["mine"]["items"], timeout=10_000)
    assert actions["undo"].text().startswith("&Undo Branch")
    # Its turns' usage is not copied (as the library does): no usage line.
    assert view["per_branch"]["mine"]["usage"] is None
    assert window.branch_bar.usage_label.text() == "" and window.branch_bar.usage_label.isHidden()
    assert window.conversation.turn_tokens == {}

    # Undo: the library no longer lists it; the window is back on main.
    with qtbot.waitSignal(window.branch_bar.switched, timeout=20_000):
        _edit(qtbot, window, window.edits.undo)
    _settle(qtbot, window)
    view = _library(advanced_db)
    assert "mine" not in [b["branch_id"] for b in view["branches"]]
    assert _listed(window) == _library_listed(view)
    assert window.branch_bar.current_branch() == "main"
    assert _items(window) == main_items

    # Redo: back, and shown.
    with qtbot.waitSignal(window.branch_bar.switched, timeout=20_000):
        _edit(qtbot, window, window.edits.redo)
    _settle(qtbot, window)
    view = _library(advanced_db)
    assert "mine" in [b["branch_id"] for b in view["branches"]]
    assert view["per_branch"]["mine"]["items"] == before_turn_2
    assert window.branch_bar.current_branch() == "mine"
    assert _items(window) == before_turn_2


def test_a_used_branch_name_is_refused_and_nothing_is_written(
    qtbot, window, advanced_db, name_branch
):
    _open(qtbot, window, advanced_db)
    _enable_editing(qtbot, window)
    name_branch["name"] = "gone"  # deleted in the library, still reserved
    before = _library(advanced_db)
    window.conversation.select_message(_user_message(window, 3).id)
    with qtbot.waitSignal(window.editor.failed, timeout=20_000):
        window.actions_by_name["branch_from_turn"].trigger()
    _settle(qtbot, window)
    assert "already been used" in window.error_bar.text()
    assert _library_listed(_library(advanced_db)) == _library_listed(before)
    assert window.branch_bar.current_branch() == "main"


def test_delete_branch_and_undo(qtbot, window, advanced_db, confirm_yes):
    _open(qtbot, window, advanced_db)
    _switch(qtbot, window, "alt")
    assert not window.branch_bar.delete_button.isEnabled()  # read-only
    _enable_editing(qtbot, window)
    assert window.branch_bar.current_branch() == "alt"  # reopening kept the branch
    before = _library(advanced_db)
    assert window.branch_bar.delete_button.isEnabled()
    with qtbot.waitSignal(window.branch_bar.switched, timeout=20_000):
        _edit(qtbot, window, window.branch_bar.delete_button.click)
    _settle(qtbot, window)
    assert confirm_yes == [(SID, "alt")]
    view = _library(advanced_db)
    assert "alt" not in [b["branch_id"] for b in view["branches"]]
    assert _listed(window) == _library_listed(view)
    assert window.branch_bar.current_branch() == "main"
    assert _items(window) == view["per_branch"]["main"]["items"]
    assert not window.branch_bar.delete_button.isEnabled()

    # Undo brings it back, exactly, and shows it again.
    with qtbot.waitSignal(window.branch_bar.switched, timeout=20_000):
        _edit(qtbot, window, window.edits.undo)
    _settle(qtbot, window)
    view = _library(advanced_db)
    assert view["branches"] == before["branches"]
    assert view["per_branch"]["alt"] == before["per_branch"]["alt"]
    assert window.branch_bar.current_branch() == "alt"
    assert _items(window) == before["per_branch"]["alt"]["items"]


# --------------------------------------------------------------------------- other stores


def test_the_bar_is_hidden_for_plain_stores(qtbot, window, agents_db, advanced_db):
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(agents_db), session_id="refund-1001")
    _settle(qtbot, window)
    assert window.branch_bar.isHidden()
    assert window.conversation.turn_tokens == {}
    assert not window.actions_by_name["branch_from_turn"].isEnabled()
    menu = window.conversation.menus.build_context_menu(window.conversation.view.currentIndex())
    assert window.actions_by_name["branch_from_turn"] not in menu.actions()
    menu.deleteLater()
    # An Advanced store shows it; another plain store hides it again.
    _open(qtbot, window, advanced_db)
    assert window.branch_bar.isVisible()
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(agents_db), session_id="hello-3003")
    _settle(qtbot, window)
    assert window.branch_bar.isHidden()


def test_render_the_window_with_the_branch_bar(qtbot, window, advanced_db):
    _open(qtbot, window, advanced_db)
    _switch(qtbot, window, "alt")
    window.resize(1280, 760)
    qtbot.waitUntil(lambda: window.conversation.turn_of(window.conversation.model.messages[0]) == 1)
    image = window.grab().toImage()
    assert image.save("/tmp/branches_window.png")


def test_compare_a_branch_with_main(qtbot, window, advanced_db):
    _open(qtbot, window, advanced_db)
    _switch(qtbot, window, "alt")
    dialog = window.comparing.compare_sessions()
    assert dialog is not None
    with qtbot.waitSignal(dialog.view.compared, timeout=20_000) as got:
        pass
    comparison = got.args[0]
    assert (comparison.a.branch, comparison.b.branch) == ("main", "alt")
    assert comparison.first_difference == 2  # "alt" was branched from turn 2
    assert dialog.view.highlighted_turns()[0] == 2
    dialog.close()
