"""The smaller things a reviewer trips over (issue 16, point 9), in the window over stores
written by the real libraries: where exports go, exact counts, a status line after a
delete, the empty session id, times with their zone, the notice bar's close button in
dark mode, branches in the session list."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from advanced_helpers import SID, write_library_store
from PySide6.QtGui import QColor, QPalette
from qt_helpers import OFFSCREEN_NOISE, run_async, write_agents_store

from fluxgui.core.display import set_time_zone
from fluxgui.qt.window.transfer_controller import LAST_EXPORT_DIR

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _open(qtbot: Any, window: Any, target: Any, **kw: Any) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(target), **kw)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)


@pytest.fixture(autouse=True)
def _local_times() -> Any:
    yield
    set_time_zone("local")


def test_export_goes_to_the_last_folder_or_documents_with_the_exact_count(
    qtbot, window, agents_db, tmp_path, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "Documents").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)  # the folder the app was started from: never the default
    _open(qtbot, window, agents_db)
    qtbot.waitUntil(lambda: not window.sessions.canFetchMore(window.session_view.rootIndex()))
    transfers = window.transfers
    dialog = transfers.make_export_dialog()
    qtbot.addWidget(dialog)
    assert dialog.scope_buttons["store"].text() == "Every session in the store (3)"  # not 3+
    path = dialog.path()
    assert path.is_absolute() and dialog.path_edit.text() == str(path)  # the full path shown
    assert path.parent != tmp_path
    assert path.parent in (tmp_path / "home" / "Documents", tmp_path / "home")
    # a bare file name goes to that folder too, not to the current directory
    dialog.path_edit.setText("bare.md")
    assert dialog.path() == path.parent / "bare.md"
    # the folder of the last export is the next default
    out = tmp_path / "exports"
    out.mkdir()
    transfers.remember_export_dir(out)
    assert window.recent.settings.value(LAST_EXPORT_DIR) == str(out)
    again = transfers.make_export_dialog()
    qtbot.addWidget(again)
    assert again.path().parent == out


def test_export_count_is_a_bound_while_pages_remain(qtbot, window, agents_db):
    window.sessions._page_size = 2
    window.resize(900, 300)
    _open(qtbot, window, agents_db)
    model = window.sessions
    # (the view fetches more while its last row shows: count what is listed now)
    dialog = window.transfers.make_export_dialog()
    qtbot.addWidget(dialog)
    more = model.canFetchMore(window.session_view.rootIndex())
    assert dialog.scope_buttons["store"].text().endswith(f"({model.rowCount()}{'+' if more else ''})")


def test_deleting_a_message_says_so(qtbot, window, flux_db):
    _open(qtbot, window, flux_db, session_id="flux-a", writable=True)
    pane = window.conversation
    first = pane.model.message(0)
    pane.select_message(first.id)
    with qtbot.waitSignal(window.editor.applied, timeout=10_000):
        window.actions_by_name["delete_messages"].trigger()
    qtbot.waitUntil(lambda: "Delete message" in window.statusBar().currentMessage(), timeout=5_000)
    assert str(first.id) in window.statusBar().currentMessage()
    assert "Ctrl+Z" in window.statusBar().currentMessage()
    with qtbot.waitSignal(window.editor.applied, timeout=10_000):
        window.actions_by_name["undo"].trigger()
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith("Undone:"), timeout=5_000)


def test_the_empty_session_id_is_a_visible_placeholder(qtbot, window, tmp_path):
    # (flux names a session given "" itself; the Agents SDK keeps the empty id)
    db = write_agents_store(tmp_path / "empty-id.db", {
        "": [[{"role": "user", "content": "a session without a name"}]],
        "named": [[{"role": "user", "content": "hello"}]],
    })
    _open(qtbot, window, db, session_id="")
    model = window.sessions
    row = model.row_of("")
    assert row is not None
    assert model.index(row, model.ID).data() == "(empty id)"
    assert window.conversation.title.text() == "(empty id)"
    assert "a session without a name" in window.conversation.toPlainText()


def test_card_times_show_the_zone_and_follow_the_utc_setting(qtbot, window, flux_db, local_zone):
    _open(qtbot, window, flux_db, session_id="flux-a")
    pane = window.conversation
    m = pane.model.message(0)
    local = pane.delegate.header_text(m)
    assert local.split(" · ")[-2].endswith(("EST", "EDT"))  # New York, named
    action = window.actions_by_name["utc_times"]
    assert not action.isChecked()
    action.trigger()
    utc = pane.delegate.header_text(m)
    assert utc.split(" · ")[-2].endswith(" UTC")
    # the stored time (UTC) and the card say the same instant
    stored = m.created_at  # ISO with +00:00
    assert utc.split(" · ")[-2] == stored[:10] + " " + stored[11:19] + " UTC"
    assert window.recent.settings.value("view/timesUtc") == "true"
    action.trigger()
    assert pane.delegate.header_text(m) == local


def _dark_palette() -> QPalette:
    p = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, "#1e1e1e"), (QPalette.ColorRole.WindowText, "#e6e6e6"),
        (QPalette.ColorRole.Base, "#121212"), (QPalette.ColorRole.Text, "#e6e6e6"),
        (QPalette.ColorRole.Button, "#2d2d2d"), (QPalette.ColorRole.ButtonText, "#f0f0f0"),
    ):
        p.setColor(role, QColor(colour))
    return p


def test_notice_bar_close_button_is_visible_in_dark_mode(qtbot, window):
    window.setPalette(_dark_palette())
    bar = window.key_bar
    bar.show_notice("This store holds encrypted sessions.")
    qtbot.waitUntil(bar.isVisible)
    image = bar.close_button.grab().toImage()
    dark = 0
    for y in range(image.height()):
        for x in range(image.width()):
            if QColor(image.pixel(x, y)).lightnessF() < 0.45:
                dark += 1
    assert dark > 8  # the ✕ is painted dark on the light bar, not light on light


def test_session_list_shows_branches_and_the_shown_branchs_count(qtbot, window, tmp_path):
    path = tmp_path / "advanced.db"
    run_async(write_library_store(path))
    with qtbot.waitSignal(window.branch_bar.loaded, timeout=20_000):
        window.stores.open_target(str(path), session_id=SID)
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.branch_bar.busy, timeout=20_000)
    model = window.sessions
    state = window.branch_bar.state
    n = len(state.rows())
    assert n > 1
    row = model.row_of(SID)
    # the listing itself tells how many branches each session has (one query a page)
    assert model.session_at(row).branches == n
    other_row = model.row_of("other")
    if other_row is not None:
        assert "⑂" not in model.index(other_row, model.ID).data()
    assert model.index(row, model.ID).data().endswith(f"⑂{n}")
    main = state.info("main")
    assert model.index(row, model.COUNT).data() == str(main.message_count)
    other = next(b for b in state.rows() if b.branch_id != "main" and b.message_count != main.message_count)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.branch_bar.combo.setCurrentIndex(window.branch_bar.branch_ids().index(other.branch_id))
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.branch_bar.busy, timeout=20_000)
    assert model.index(row, model.COUNT).data() == str(other.message_count)
    assert f"showing branch {other.branch_id}" in model.index(row, model.ID).data(0x03)  # tooltip
