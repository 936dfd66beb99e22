"""Search that lands on the message, F3 through the hits, the conversation's find bar,
"No session matches", the list's Home/End/Ctrl+End — in the window, over a store written
by the real openai-agents library."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from helpers import all_messages
from qt_helpers import OFFSCREEN_NOISE, run_on, write_agents_store

from fluxgui.qt.conversation.find_marks import CURRENT_MARK, find_ranges

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

N = 320  # messages in the long session
HITS = (20, 150, 290)  # the ones that mention the zebra
OTHERS = 60  # short sessions besides


def _long_session() -> list[list[dict[str, Any]]]:
    items = []
    for i in range(N):
        text = f"message {i}"
        if i in HITS:
            text = f"message {i}: a Zebra crossed the road"
        items.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return [items]


@pytest.fixture
def long_db(tmp_path: Path) -> Path:
    sessions: dict[str, list[list[dict[str, Any]]]] = {"long": _long_session()}
    for k in range(OTHERS):
        sessions[f"other-{k:02d}"] = [[{"role": "user", "content": f"hello {k}"}]]
    return write_agents_store(tmp_path / "long.db", sessions)


def _open(qtbot: Any, window: Any, target: str) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(target)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)


def _current_text(window: Any) -> str:
    m = window.conversation.current_message()
    return m.text if m is not None else ""


def _visible(pane: Any, message_id: int) -> bool:
    row = pane.model.row_of(message_id)
    if row is None:
        return False
    rect = pane.view.visualRect(pane.model.index(row, 0))
    return rect.intersects(pane.view.viewport().rect())


def _marked_pixels(pane: Any) -> int:
    """Pixels of the viewport painted in the current hit's highlight colour."""
    image = pane.view.viewport().grab().toImage()
    want = CURRENT_MARK.rgb()
    count = 0
    for y in range(0, image.height(), 2):
        for x in range(0, image.width(), 2):
            if image.pixel(x, y) == want:
                count += 1
    return count


def test_search_hit_opens_the_session_at_the_first_match(qtbot, window, long_db):
    _open(qtbot, window, str(long_db))
    pane = window.conversation
    window.activateWindow()
    window.search_box.setFocus()
    window.search_box.setText("zebra")
    with qtbot.waitSignal(window.sessions.searchFinished, timeout=10_000):
        qtbot.keyClick(window.search_box, Qt.Key.Key_Down)  # ↓: search now, into the results
    qtbot.waitUntil(lambda: window.session_view.hasFocus(), timeout=5_000)
    qtbot.waitUntil(lambda: window.current_session_id == "long", timeout=10_000)
    qtbot.waitUntil(lambda: not pane.busy and _current_text(window).startswith("message 20:"), timeout=10_000)
    current = pane.current_message()
    assert current is not None and _visible(pane, current.id)
    assert pane.view.selectionModel().isSelected(pane.model.index(pane.model.row_of(current.id), 0))
    qtbot.waitUntil(lambda: pane.finding.find_hits is not None, timeout=10_000)  # counted after landing
    assert pane.finding.find_text == "zebra" and len(pane.finding.find_hits) == 3 and pane.finding.find_index == 0
    assert "match 1 of 3" in pane.status.text()
    # the matched text is highlighted in the card
    assert find_ranges(pane.delegate.document(current), "zebra")
    assert pane.delegate.find_current == current.id
    qtbot.waitUntil(lambda: _marked_pixels(pane) > 20, timeout=5_000)
    # not the whole session: the page around the hit, newer ones on scroll
    assert not pane.finding.at_end and pane.loaded_count < N

    # F3 (a window shortcut) and Enter in the list step through the hits, paging as needed
    window.actions_by_name["find_next"].trigger()
    qtbot.waitUntil(lambda: not pane.busy and _current_text(window).startswith("message 150:"), timeout=10_000)
    assert pane.finding.find_index == 1 and _visible(pane, pane.current_message().id)
    window.session_view.setFocus()
    qtbot.keyClick(window.session_view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not pane.busy and _current_text(window).startswith("message 290:"), timeout=10_000)
    qtbot.keyClick(window.session_view, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: not pane.busy and _current_text(window).startswith("message 150:"), timeout=10_000)
    window.actions_by_name["find_previous"].trigger()
    qtbot.waitUntil(lambda: not pane.busy and _current_text(window).startswith("message 20:"), timeout=10_000)
    window.actions_by_name["find_previous"].trigger()  # wraps around to the last
    qtbot.waitUntil(lambda: not pane.busy and _current_text(window).startswith("message 290:"), timeout=10_000)


def test_open_at_a_message_id_and_paging_down(qtbot, qloop, window, long_db):
    _open(qtbot, window, str(long_db))
    pane = window.conversation
    messages = run_on(qtbot, qloop, all_messages(window.stores.store, "long"))
    target = messages[100]
    window.open_at("long", target.id)  # an index hit: a message id, no text
    qtbot.waitUntil(lambda: not pane.busy and pane.current_message() is not None and pane.current_message().id == target.id, timeout=10_000)
    assert window.current_session_id == "long"
    assert window.sessions.session_at(window.session_view.currentIndex().row()).id == "long"
    assert not pane.at_start and not pane.finding.at_end
    # paging down until the newest message: in order, no duplicates
    while not pane.finding.at_end:
        with qtbot.waitSignal(pane.laterLoaded, timeout=10_000):
            assert pane.finding.load_later()
        qtbot.waitUntil(lambda: not pane.busy, timeout=10_000)
    ids = [m.id for m in pane.model.messages]
    assert ids == sorted(set(ids)) and ids[-1] == messages[-1].id
    # Ctrl+End while landed loads the latest page
    window.open_at("long", messages[10].id)
    qtbot.waitUntil(lambda: not pane.busy and pane.current_message() is not None and pane.current_message().id == messages[10].id, timeout=10_000)
    with qtbot.waitSignal(pane.loaded, timeout=10_000):
        qtbot.keyClick(pane.view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not pane.busy and pane.finding.at_end, timeout=10_000)
    assert pane.model.messages[-1].id == messages[-1].id


def test_find_bar_finds_within_the_conversation(qtbot, window, long_db):
    _open(qtbot, window, str(long_db))
    pane = window.conversation
    window.activateWindow()
    row = window.sessions.row_of("long")
    with qtbot.waitSignal(pane.loaded, timeout=10_000):
        window.session_list.select_row(row)
    qtbot.waitUntil(lambda: not pane.busy, timeout=10_000)
    assert pane.finding.at_end
    pane.view.setFocus()
    qtbot.waitUntil(pane.view.hasFocus)
    window.actions_by_name["find"].trigger()  # Ctrl+F with the focus in the conversation
    bar = pane.find_bar
    qtbot.waitUntil(lambda: bar.isVisible() and bar.edit.hasFocus(), timeout=5_000)
    assert not window.search_box.hasFocus()
    qtbot.keyClicks(bar.edit, "ZEBRA")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    # from the end, the nearest hit is the latest one (loaded, in the last page)
    qtbot.waitUntil(lambda: bar.result.text() == "3 of 3", timeout=10_000)
    assert _current_text(window).startswith("message 290:")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)  # wraps to the first: an older page
    qtbot.waitUntil(lambda: not pane.busy and bar.result.text() == "1 of 3", timeout=10_000)
    assert _current_text(window).startswith("message 20:")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: not pane.busy and bar.result.text() == "3 of 3", timeout=10_000)
    qtbot.keyClick(bar.edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(bar.edit, "no such words")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bar.result.text() == "no match", timeout=10_000)
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert not bar.isVisible() and pane.finding.find_text == "" and pane.delegate.find_text == ""


def test_no_match_says_so_not_an_empty_store(qtbot, window, long_db):
    _open(qtbot, window, str(long_db))
    with qtbot.waitSignal(window.sessions.searchFinished, timeout=10_000):
        window.search("quagga")
    qtbot.waitUntil(lambda: "quagga" in window.conversation.view.placeholder, timeout=5_000)
    assert window.conversation.view.placeholder == "No session matches “quagga”."
    assert "no sessions" not in window.conversation.view.placeholder


def test_session_list_home_end_and_ctrl_end_fetches_to_the_end(qtbot, window, long_db):
    window.sessions._page_size = 5  # many pages
    window.resize(900, 420)
    _open(qtbot, window, str(long_db))
    view = window.session_view
    qtbot.waitUntil(lambda: window.sessions.rowCount() >= 5, timeout=10_000)
    assert window.sessions.canFetchMore(view.rootIndex())
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.currentIndex().row() == window.sessions.rowCount() - 1
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.currentIndex().row() == 0
    qtbot.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    total = OTHERS + 1
    qtbot.waitUntil(lambda: window.sessions.rowCount() == total and view.currentIndex().row() == total - 1, timeout=10_000)
    assert not window.sessions.canFetchMore(view.rootIndex())


def test_messages_written_while_landed_arrive_once_paged_to_the_end(qtbot, qloop, window, long_db):
    from agents import SQLiteSession

    from qt_helpers import run_async

    _open(qtbot, window, str(long_db))
    pane = window.conversation
    messages = run_on(qtbot, qloop, all_messages(window.stores.store, "long"))
    window.open_at("long", messages[200].id)
    qtbot.waitUntil(lambda: not pane.busy and pane.current_message() is not None
                    and pane.current_message().id == messages[200].id, timeout=10_000)

    async def append() -> None:
        session = SQLiteSession("long", str(long_db))
        try:
            await session.add_items([{"role": "user", "content": "written while landed"}])
        finally:
            session.close()

    run_async(append())
    before = [m.id for m in pane.model.messages]
    pane.live.catch_up()  # the watcher's call: nothing is appended below a gap
    assert [m.id for m in pane.model.messages] == before
    while not pane.finding.at_end:
        with qtbot.waitSignal(pane.laterLoaded, timeout=10_000):
            pane.finding.load_later()
        qtbot.waitUntil(lambda: not pane.busy, timeout=10_000)
    qtbot.waitUntil(lambda: not pane.busy and not pane._catching, timeout=10_000)
    texts = [m.text for m in pane.model.messages]
    assert texts[-1] == "written while landed" and texts.count("written while landed") == 1
    ids = [m.id for m in pane.model.messages]
    assert ids == sorted(set(ids))
