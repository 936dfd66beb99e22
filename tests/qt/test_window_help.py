"""Help › Keyboard Shortcuts read from the actions, the View menu's side panels, the
first-run hint, and the export dialog's file name following its scope (issue 37)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE, r"^This plugin does not support raise\(\)$")


def test_keyboard_shortcuts_lists_every_action_and_searches(qtbot, window):
    window.actions_by_name["shortcuts"].trigger()
    dialog = window.help.dialog
    qtbot.waitUntil(dialog.isVisible)
    rows = dialog.shown_rows()
    for name in ("Review Panel", "Doctor", "Chat", "Open", "Keyboard Shortcuts", "Inspector"):
        assert name in rows, name
    # every action with a shortcut is listed (generated, not a hand-kept list)
    with_keys = [a for a in window.actions_by_name.values() if not a.shortcut().isEmpty()]
    assert len(rows) >= len(with_keys)
    qtbot.keyClicks(dialog.search, "ctrl+shift+r")
    assert dialog.shown_rows() == ["Review Panel"]
    dialog.search.setText("write a note on the selected")  # the queue's M key too
    assert len(dialog.shown_rows()) == 1


def test_every_side_panel_is_in_the_view_menu(window):
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    texts = [a.text() for a in view.actions()]
    for text in ("Review &Panel", "&Doctor", "C&hat", "&Inspector"):
        assert text in texts


def test_the_first_run_hint_shows_once(qtbot, window):
    from fluxgui.qt.window import MainWindow
    from fluxgui.qt.window.shortcuts import HINT, HINT_SHOWN

    assert window.recent.settings.value(HINT_SHOWN) in (True, "true")
    again = MainWindow()
    qtbot.addWidget(again)
    assert again.statusBar().currentMessage() != HINT


def test_every_session_export_does_not_propose_the_open_sessions_name(qtbot, tmp_path: Path):
    from fluxgui.qt.dialogs.transfer import ExportDialog

    dialog = ExportDialog(None, session_id="ticket-48213", selected=["ticket-48213"], store_sessions=5,
                          default_dir=str(tmp_path))
    qtbot.addWidget(dialog)
    assert dialog.path().name.startswith("ticket-48213")
    dialog.scope_buttons["store"].setChecked(True)
    assert dialog.path().name.startswith("export")
    dialog.path_edit.setText(str(tmp_path / "mine.json"))  # the user's own name stays
    dialog.scope_buttons["session"].setChecked(True)
    assert dialog.path().name == "mine.json"
