"""Layouts that hold (issue 16, point 6): card headers whose parts never overlap at
0.5×–2× widths and at 2× scale, a pane header that elides a 200-character id, and a
window that fits its screen and is not widened by a long id."""

from __future__ import annotations

import os
from typing import Any

import pytest
from PySide6.QtCore import QRect, Qt
from qt_helpers import OFFSCREEN_NOISE, pytest_in_child, run_on, write_agents_store, write_flux_store

from fluxgui.core.display import short_time
from fluxgui.core.visible import visible
from fluxgui.qt.conversation.header import _shorter_times

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

LONG_ID = "support-ticket-" + "x" * 170 + "-2026-12-01-0042"
LONG_ROLE = "customer-support-escalation-assistant-with-a-long-name"
SESSION = [[
    {"role": "user", "content": "Where is my order?"},
    {"type": "function_call", "call_id": "call_" + "9" * 60,
     "name": "lookup_order_status_in_the_warehouse_management_system", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "call_" + "9" * 60, "output": "shipped"},
    {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}]},
    {"role": LONG_ROLE, "content": "evil \u202eoverride and zero\u200bwidth"},
    {"role": "assistant", "content": "It shipped."},
]]


def check_header(delegate: Any, header: QRect, m: Any) -> dict[str, Any]:
    parts = delegate.header_parts(header, m)
    names = [p.name for p in parts]
    for i, a in enumerate(parts):
        assert a.rect.left() >= header.left() and a.rect.right() <= header.right(), (a, header)
        for b in parts[i + 1:]:
            assert not a.rect.intersects(b.rect), (m.role, header.width(), a, b)
    assert names[0] == "icon"
    if header.width() >= 200:
        assert "role" in names  # the role stays longest
    by = {p.name: p for p in parts}
    # the time, or a shorter form of it in a narrow line (no seconds, no year, the hour)
    forms = _shorter_times(visible(short_time(m.created_at), keep_layout=False, pictures=False))
    if "middle" in by and by["middle"].text.endswith("…") and "right" in by:
        assert by["right"].text in forms  # the id went before the middle was elided
    if header.width() >= 200 and forms[0]:
        # the time is never dropped before the id, the middle or the badges (issue 37)
        assert "right" in by and any(by["right"].text.startswith(f) for f in forms), (header.width(), by)
    return by


@pytest.mark.parametrize("scale", [0.5, 0.7, 1.0, 1.4, 2.0])
def test_card_header_parts_never_overlap(qtbot, bridge, qloop, tmp_path, scale) -> None:
    from fluxgui.adapters import open_store
    from fluxgui.qt.conversation import ConversationPane

    if os.environ.get("FLUXGUI_TEST_SCALE"):  # run again by the 2× test below
        from PySide6.QtGui import QGuiApplication

        assert QGuiApplication.primaryScreen().devicePixelRatio() == 2.0
    path = write_agents_store(tmp_path / "a.db", {LONG_ID: SESSION})
    store = run_on(qtbot, qloop, open_store(str(path)))
    try:
        pane = ConversationPane(bridge)
        qtbot.addWidget(pane)
        pane.inspector.hide()
        pane.resize(int(900 * scale), 600)
        pane.show()
        qtbot.waitExposed(pane)
        with qtbot.waitSignal(pane.loaded, timeout=20_000):
            pane.show_session(store, LONG_ID)
        qtbot.waitUntil(lambda: not pane.busy, timeout=20_000)
        pane.view.viewport().grab()  # paints every header
        delegate, view = pane.delegate, pane.view
        widths = set()
        for row in range(pane.model.rowCount()):
            m = pane.model.message(row)
            rows = delegate.layout_rows(view.visualRect(pane.model.index(row, 0)), m)
            widths.add(rows.header.width())
            by = check_header(delegate, rows.header, m)
            if m.role == LONG_ROLE:
                assert "hidden" in by  # the warning badge keeps its room
            # and narrower still, down to a sliver
            for narrow in (320, 200, 120, 40):
                header = rows.header
                check_header(delegate, QRect(header.left(), header.top(), narrow, header.height()), m)
        assert widths
        # The pane header: the 200-character id is elided, never under the status.
        title, status = pane.title, pane.status
        if title.fontMetrics().horizontalAdvance(LONG_ID) > title.contentsRect().width():
            assert "…" in title.shown_text()
            assert title.shown_text().endswith("0042")  # the distinguishing end is kept
        else:
            assert title.shown_text() == LONG_ID
        assert title.geometry().right() < status.geometry().left()
        assert LONG_ID in title.toolTip()
    finally:
        run_on(qtbot, qloop, store.close())


def test_card_headers_hold_at_2x_scale() -> None:
    env = {"QT_SCALE_FACTOR": "2", "FLUXGUI_TEST_SCALE": "2", "QT_QPA_PLATFORM": "offscreen"}
    pytest_in_child([f"{__file__}::test_card_header_parts_never_overlap"], env, passed=5)


def test_window_fits_the_screen_and_a_long_id_does_not_widen_it(qtbot, window, tmp_path) -> None:
    from PySide6.QtGui import QGuiApplication

    area = QGuiApplication.primaryScreen().availableGeometry()
    assert window.frameGeometry().width() <= area.width()
    assert window.frameGeometry().height() <= area.height()
    db = write_flux_store(tmp_path / "f.db", {LONG_ID: [{"role": "user", "content": "hi"}],
                                              "short": [{"role": "user", "content": "yo"}]})
    before = window.size()
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(db))
    window.show_session(LONG_ID)
    qtbot.waitUntil(lambda: window.conversation.session_id == LONG_ID and not window.bridge.busy,
                    timeout=20_000)
    qtbot.wait(50)  # let layouts settle (no condition to wait for: nothing may change)
    assert window.size() == before
    assert window.minimumSizeHint().width() <= area.width()
    assert window.session_view.textElideMode().name == "ElideLeft"


def test_placement_clamps_a_saved_geometry_to_the_screen(qtbot, tmp_path) -> None:
    from PySide6.QtCore import QRect as Rect

    from fluxgui.qt.window.placement import clamp, first_size

    area = Rect(0, 0, 800, 500)  # a 1600×1000 screen at 2×
    size = first_size(area)
    assert size.width() <= 800 and size.height() <= 500
    assert clamp(Rect(1500, -40, 1200, 800), area) == Rect(0, 0, 800, 500)
    assert clamp(Rect(100, 50, 400, 300), area) == Rect(100, 50, 400, 300)
    assert clamp(Rect(700, 400, 400, 300), area) == Rect(400, 200, 400, 300)


def test_a_narrow_session_list_hides_its_columns_before_the_ids(qtbot, window, tmp_path) -> None:
    """With the list squeezed (the chat dock open, 2× scale) the ids keep a fair share of
    its width: Last active goes first, then Messages; both come back when widened, and
    the default window shows them all."""
    from fluxgui.qt.sessions import SessionListModel

    db = write_flux_store(tmp_path / "f.db", {LONG_ID: [{"role": "user", "content": "hi"}]})
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(db))
    view = window.session_view
    header = view.horizontalHeader()

    def shown(width: int) -> tuple[bool, bool, int]:
        view.resize(width, view.height())
        return (not header.isSectionHidden(SessionListModel.UPDATED),
                not header.isSectionHidden(SessionListModel.COUNT),
                header.sectionSize(SessionListModel.ID))

    assert shown(380)[:2] == (True, True)  # the list of the default window
    assert shown(600)[:2] == (True, True)
    for width in (240, 120):
        updated, count, id_width = shown(width)
        assert not updated
        assert id_width >= width * 0.3  # the id column keeps its share
    assert shown(120)[1] is False  # very narrow: the count goes too
    assert shown(600)[:2] == (True, True)
    tip = view.model().index(0, SessionListModel.ID).data(Qt.ItemDataRole.ToolTipRole)
    assert LONG_ID in tip and "1 message" in tip  # what the hidden columns said


def test_a_card_holds_several_badges_and_keeps_its_time(qtbot, bridge, qloop, tmp_path) -> None:
    """Issue 37: a reviewer's note (✎) beside a doctor marker and the hidden-characters
    warning on one card; a tool card keeps its time when the pane narrows (the id goes)."""
    from fluxgui.adapters import open_store
    from fluxgui.qt.conversation import ConversationPane

    path = write_agents_store(tmp_path / "a.db", {LONG_ID: SESSION})
    store = run_on(qtbot, qloop, open_store(str(path)))
    try:
        pane = ConversationPane(bridge)
        qtbot.addWidget(pane)
        pane.inspector.hide()
        pane.resize(900, 600)
        pane.show()
        qtbot.waitExposed(pane)
        with qtbot.waitSignal(pane.loaded, timeout=20_000):
            pane.show_session(store, LONG_ID)
        qtbot.waitUntil(lambda: not pane.busy, timeout=20_000)
        messages = list(pane.model.messages)
        hidden = next(m for m in messages if m.role == LONG_ROLE)
        call = next(m for m in messages if m.kind == "tool_call")
        pane.set_markers({hidden.id: ("orphan", "a call without output")})
        pane.set_note_marks({hidden.id: ("✎ 1", "ann: wrong amount")})
        delegate, view = pane.delegate, pane.view
        rows = delegate.layout_rows(view.visualRect(pane.model.index(messages.index(hidden), 0)), hidden)
        by = check_header(delegate, rows.header, hidden)
        assert {"doctor", "note", "hidden"} <= set(by)
        assert by["note"].text == "✎ 1" and by["doctor"].text == "orphan"
        assert "✎ 1" in delegate.header_text(hidden) and "orphan" in delegate.header_text(hidden)
        # a tool card in a pane narrowed by a side panel: the time stays, the id goes first
        rows = delegate.layout_rows(view.visualRect(pane.model.index(messages.index(call), 0)), call)
        time = visible(short_time(call.created_at), keep_layout=False, pictures=False)
        for width in (560, 420):
            by = check_header(delegate, QRect(rows.header.left(), rows.header.top(), width, rows.header.height()), call)
            assert by["right"].text.startswith(time), (width, by)  # whole while it fits
    finally:
        run_on(qtbot, qloop, store.close())
