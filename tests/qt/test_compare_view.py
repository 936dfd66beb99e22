"""The Compare view on two forks written by the real ``agents.SQLiteSession``
(offscreen, pytest-qt; no sleeps)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtGui import QColor
from qt_helpers import OFFSCREEN_NOISE, run_on, write_agents_store

from fluxgui.core.errors import SessionNotFound

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

HOSTILE = (
    "Sorry, shipping is <b>not</b> refundable <img src='http://127.0.0.1:9/x.png'>.\n"
    "\u202eevil override\u202c · שלום עולם · <script>alert(1)</script>"
)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(text: str, item_id: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


ORIGIN: list[list[dict[str, Any]]] = [
    [{"role": "system", "content": "You are a support agent. Be brief."}],
    [user("Where is my order 1001?")],
    [
        {"type": "function_call", "call_id": "c1", "name": "lookup_order", "arguments": '{"order": 1001}'},
        {"type": "function_call_output", "call_id": "c1", "output": '{"status": "shipped"}'},
        answer("It shipped yesterday; tracking number 1Z999.", "msg_a"),
    ],
    [user("Can you refund the shipping?")],
    [answer("Yes — I refunded the $5 shipping fee.", "msg_b")],
    [user("Thanks!")],
    [answer("You're welcome.", "msg_c")],
]
# the same conversation, turn 2's answer changed (hostile text), and one more turn
FORK = [*ORIGIN[:4], [answer(HOSTILE, "msg_x")], *ORIGIN[5:], [user("One more thing: the invoice?")],
        [answer("Sent to your e-mail.", "msg_d")]]


@pytest.fixture
def forks_db(tmp_path: Path) -> Path:
    return write_agents_store(tmp_path / "forks.db", {"origin": ORIGIN, "fork": FORK})


@pytest.fixture
def store(forks_db: Path, qtbot: Any, qloop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    from fluxgui.adapters import open_store

    s = run_on(qtbot, qloop, open_store(str(forks_db)))
    try:
        yield s
    finally:
        run_on(qtbot, qloop, s.close())


@pytest.fixture
def view(qtbot: Any, bridge: Any) -> Any:
    from fluxgui.qt.compare import CompareView

    v = CompareView(bridge)
    qtbot.addWidget(v)
    v.resize(1100, 700)
    v.show()
    qtbot.waitExposed(v)
    return v


def compare(qtbot: Any, view: Any, *args: Any) -> Any:
    with qtbot.waitSignal(view.compared, timeout=20_000) as blocker:
        view.compare(*args)
    return blocker.args[0]


class WithUsage:
    """A real store that plays the usage role (``store.usage``), from a table."""

    def __init__(self, store: Any, usage: dict[str, Any]) -> None:
        self._store, self._usage = store, usage

    @property
    def usage(self) -> WithUsage:
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def turn_usage(self, session_id: str, branch: str | None = None) -> Any:
        return self._usage.get(session_id)


USAGE = {
    "origin": {1: {"total_tokens": 420}, 2: {"total_tokens": 180}, 3: {"total_tokens": 95}},
    "fork": {1: {"total_tokens": 420}, 2: {"total_tokens": 260}, 3: {"total_tokens": 95}, 4: {"total_tokens": 130}},
}


# --------------------------------------------------------------------------- model


def test_model_passes_the_model_tester(qtmodeltester: Any) -> None:
    from fluxgui.core.diff import compare_messages
    from fluxgui.core.model import Message
    from fluxgui.qt.compare import CompareModel

    model = CompareModel()
    qtmodeltester.check(model)
    a = [Message(1, "user", "message", "q"), Message(2, "assistant", "message", "a")]
    b = [Message(1, "user", "message", "q"), Message(2, "assistant", "message", "b")]
    model.set_comparison(compare_messages(a, b + [Message(3, "user", "message", "more")]))
    qtmodeltester.check(model)
    assert model.rowCount() == 2


# --------------------------------------------------------------------------- the view


def test_two_forks_differing_in_one_turn(qtbot: Any, view: Any, store: Any) -> None:
    from fluxgui.qt.compare import HIGHLIGHT_ROLE, MARKER_ROLE, STATUS_ROLE, TURN_ROLE

    comparison = compare(qtbot, view, store, "origin", store, "fork")
    assert view.comparison is comparison and not view.busy
    model = view.model
    # aligned: turn 0 (the system prompt), 1, 2, 3 on both sides, 4 only in B
    assert model.rowCount() == 5
    rows = [model.index(r, 0) for r in range(5)]
    assert [i.data(TURN_ROLE).number for i in rows] == [0, 1, 2, 3, 4]
    assert [i.data(STATUS_ROLE) for i in rows] == ["same", "same", "differs", "same", "only_b"]
    assert [i.data(MARKER_ROLE) for i in rows] == ["=", "=", "≠", "=", "+"]
    # exactly the differing turn is highlighted: tint, marker, label
    assert view.highlighted_turns() == [2]
    assert [i.data(HIGHLIGHT_ROLE) for i in rows] == [False, False, True, False, False]
    assert [isinstance(i.data(Qt.ItemDataRole.BackgroundRole), QColor) for i in rows] == [
        False, False, True, False, False,
    ]
    assert rows[2].data() == "Turn 2 differs"
    assert rows[1].data() == "Turn 1 — same on both sides"
    assert rows[4].data() == "Turn 4 — only in B"
    # inside turn 2 only the answer is marked; the user's question is not
    a_blocks, b_blocks = model.blocks(2)
    assert [b.mark for b in a_blocks] == ["", "changed"]
    assert [b.mark for b in b_blocks] == ["", "changed"]
    assert b_blocks[1].role == "assistant" and b_blocks[1].lines[0].startswith("Sorry")
    # the extra turn stands against an empty cell
    t4 = rows[4].data(TURN_ROLE)
    assert t4.a is None and [m.text for m in t4.messages_b][0] == "One more thing: the invoice?"
    a4, b4 = model.blocks(4)
    assert a4 == [] and [b.role for b in b4] == ["user", "assistant"]
    # identical turns are one line until opened; differing ones show their messages
    assert [view.list.is_collapsed(r) for r in range(5)] == [True, True, False, True, False]
    heights = [view.list.visualRect(i).height() for i in rows]
    assert heights[0] == heights[1] == heights[3] < heights[4] < heights[2]
    view.list.toggle(1)
    assert not view.list.is_collapsed(1)
    qtbot.waitUntil(lambda: view.list.visualRect(rows[1]).height() > heights[0])
    view.list.toggle(2)  # a differing turn cannot be closed
    assert not view.list.is_collapsed(2)
    view.same_check.setChecked(True)
    assert not any(view.list.is_collapsed(r) for r in range(5))
    view.same_check.setChecked(False)
    view.list.toggle(1)
    assert view.list.is_collapsed(1)
    # headers name the sessions, as plain text
    assert view.header_a.full_text().startswith("A: origin")
    assert view.header_b.full_text().startswith("B: fork")
    assert view.header_a.textFormat() == Qt.TextFormat.PlainText
    assert "1 turn differs, 1 only in B, 3 same — first difference: turn 2." in view.summary.text()


def test_next_and_previous_difference(qtbot: Any, view: Any, store: Any) -> None:
    compare(qtbot, view, store, "origin", store, "fork")
    assert view.next_action.shortcut().toString() == "F7"
    assert view.prev_action.shortcut().toString() == "Shift+F7"
    assert view.next_action.isEnabled() and not view.prev_action.isEnabled()
    assert view.current_turn() is None

    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    view.list.setFocus()
    qtbot.keyClick(view.list, Qt.Key.Key_F7)
    assert view.current_turn() == 2
    assert view.list.selectionModel().isSelected(view.model.index(2, 0))
    assert view.list.visualRect(view.model.index(2, 0)).intersects(view.list.viewport().rect())
    # no difference before turn 2
    assert view.next_action.isEnabled() and not view.prev_action.isEnabled()
    view.next_button.click()
    assert view.current_turn() == 4
    assert not view.next_action.isEnabled() and view.prev_action.isEnabled()
    assert view.next_difference() is None and view.current_turn() == 4
    qtbot.keyClick(view.list, Qt.Key.Key_F7, Qt.KeyboardModifier.ShiftModifier)
    assert view.current_turn() == 2
    assert view.previous_difference() is None and view.current_turn() == 2
    assert not view.prev_action.isEnabled()


def test_hostile_text_is_plain_text(qtbot: Any, view: Any, store: Any) -> None:
    from PySide6.QtWidgets import QLabel

    compare(qtbot, view, store, "origin", store, "fork")
    _, b_blocks = view.model.blocks(2)
    # the text is kept as it was written (tags and all), one line at a time
    assert b_blocks[1].lines == HOSTILE.split("\n")
    # every label of the view is plain text; tooltips are HTML we wrote, data escaped
    for label in view.findChildren(QLabel):
        assert label.textFormat() == Qt.TextFormat.PlainText
    tip = view.model.index(2, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("<p style='white-space:pre-wrap'>")
    # painting it loads nothing and raises nothing
    pixmap = view.grab()
    assert not pixmap.isNull()


def test_hostile_session_ids_in_headers(qtbot: Any, view: Any, tmp_path: Path, qloop: Any) -> None:
    from fluxgui.adapters import open_store

    weird = "<b>fork</b> \u202eevil"
    path = write_agents_store(tmp_path / "w.db", {weird: [[user("hi")]], "plain": [[user("hi")]]})
    s = run_on(qtbot, qloop, open_store(str(path)))
    try:
        c = compare(qtbot, view, s, weird, s, "plain")
    finally:
        run_on(qtbot, qloop, s.close())
    assert c.identical
    assert view.header_a.full_text().startswith(f"A: {weird}")
    assert "&lt;b&gt;fork&lt;/b&gt;" in view.header_a.toolTip()
    assert "Identical" in view.summary.text()


def test_usage_differences_are_shown(qtbot: Any, view: Any, store: Any) -> None:
    from fluxgui.qt.compare import USAGE_ROLE

    compare(qtbot, view, WithUsage(store, USAGE), "origin", None, "fork")
    usage = [view.model.index(r, 0).data(USAGE_ROLE) for r in range(5)]
    assert usage == [
        "",
        "tokens A 420 · B 420 (+0)",
        "tokens A 180 · B 260 (+80)",
        "tokens A 95 · B 95 (+0)",
        "tokens A ? · B 130",
    ]
    assert "Tokens A 695 · B 905 (+210)" in view.summary.text()


def test_unknown_session_fails_with_one_sentence(qtbot: Any, view: Any, store: Any) -> None:
    with qtbot.waitSignal(view.failed, timeout=20_000) as blocker:
        view.compare(store, "origin", store, "nope")
    assert isinstance(blocker.args[0], SessionNotFound)
    assert view.summary.text().startswith("Could not compare: unknown session id \"nope\"")
    assert view.model.rowCount() == 0


def test_a_second_comparison_replaces_the_first(qtbot: Any, view: Any, store: Any) -> None:
    seen: list[Any] = []
    view.compared.connect(seen.append)
    view.compare(store, "origin", store, "fork")
    with qtbot.waitSignal(view.compared, timeout=20_000):
        view.compare(store, "origin", store, "origin")
    qtbot.waitUntil(lambda: not view.busy)
    assert len(seen) == 1 and seen[0].identical
    assert view.highlighted_turns() == []


# --------------------------------------------------------------------------- dialog


def test_dialog_opens_non_modal_and_renders(qtbot: Any, bridge: Any, store: Any) -> None:
    from fluxgui.qt.compare import CompareDialog, open_compare

    dialog = open_compare(None, bridge, WithUsage(store, USAGE), "origin", "fork")
    assert isinstance(dialog, CompareDialog)
    try:
        assert dialog.isVisible() and not dialog.isModal()
        # the comparison runs on the loop, which advances only inside waitSignal
        with qtbot.waitSignal(dialog.view.compared, timeout=20_000):
            pass
        assert dialog.windowTitle() == "Compare origin ↔ fork"
        assert dialog.view.highlighted_turns() == [2]
        dialog.resize(1200, 640)
        dialog.view.next_difference()
        QCoreApplication.processEvents()
        dialog.view.list.scrollToTop()
        assert dialog.grab().save("/tmp/compare_view.png")
    finally:
        dialog.close_button.click()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert not bridge.busy
