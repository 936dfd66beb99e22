"""View › Redact and the session ids the window shows (issue 39): a store keyed by user
(``alice@example.com``, ``user-+14155550123``) shows its ids redacted in the session
list (text and tooltip), the conversation's title, the window title, a Compare window,
the workspace's list and merged timeline, the status bar and the Undo text; Copy Session
Id copies the redacted id. The placeholder is the one the same address has in the
message text (one redactor for the window); a clean id is shown as it is; turning Redact
off shows the raw ids again at once. Stores are written by ``agents.SQLiteSession``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_async, write_agents_store

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

ALICE = "alice@example.com"
PHONE_ID = "user-+14155550123"
CLEAN = "conv-clean"


@pytest.fixture
def keyed_db(tmp_path: Path) -> Path:
    return write_agents_store(tmp_path / "keyed.db", {
        ALICE: [[{"role": "user", "content": f"please write to {ALICE} today"},
                 {"role": "assistant", "content": "Done."}]],
        PHONE_ID: [[{"role": "user", "content": "call me back"}]],
        CLEAN: [[{"role": "user", "content": "hi"}]],
    })


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.editor.running, timeout=20_000)


def _open(qtbot: Any, window: Any, path: Path, sid: str = ALICE) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), session_id=sid)
    _settle(qtbot, window)


def _redact(qtbot: Any, window: Any, on: bool) -> None:
    with qtbot.waitSignal(window.conversation.loaded, timeout=20_000):
        window.actions_by_name["redact"].setChecked(on)
    _settle(qtbot, window)


def _listed(window: Any, sid: str) -> tuple[str, str]:
    """The id cell's text and tooltip of ``sid``'s row in the session list."""
    from PySide6.QtCore import Qt

    row = window.sessions.row_of(sid)
    assert row is not None, sid
    index = window.sessions.index(row, window.sessions.ID)
    return index.data(Qt.ItemDataRole.DisplayRole), index.data(Qt.ItemDataRole.ToolTipRole)


def _copied(qtbot: Any, copy: Any) -> str:
    from PySide6.QtGui import QGuiApplication

    clipboard = QGuiApplication.clipboard()
    clipboard.setText("")
    copy()
    qtbot.waitUntil(lambda: clipboard.text() != "", timeout=5_000)
    return clipboard.text()


def _copy_key(window: Any) -> None:
    """Ctrl+Shift+C in the session list (its current row)."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QApplication

    mods = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    for kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
        QApplication.sendEvent(window.session_view, QKeyEvent(kind, Qt.Key.Key_C, mods))


def _menu_copy(window: Any, sid: str) -> Any:
    menu = window.session_list.build_menu(sid)
    return next(a for a in menu.actions() if a.text() == "Copy Session Id").trigger


def test_redact_shows_and_copies_session_ids_redacted_and_off_shows_them_again(qtbot, window, keyed_db):
    _open(qtbot, window, keyed_db)
    pane = window.conversation
    assert _listed(window, ALICE)[0] == ALICE and pane.title.full_text() == ALICE
    _redact(qtbot, window, True)
    # the placeholder the address has in the message text …
    found = re.search(r"please write to (\[EMAIL_\d+\]) today", pane.toPlainText())
    assert found is not None, pane.toPlainText()
    email = found.group(1)
    # … is the one its id has wherever the window shows it
    shown, tip = _listed(window, ALICE)
    assert shown == email and email in tip and ALICE not in tip
    phone, phone_tip = _listed(window, PHONE_ID)
    assert re.fullmatch(r"user-\[PHONE_\d+\]", phone) and "14155550123" not in phone + phone_tip
    assert _listed(window, CLEAN)[0] == CLEAN and CLEAN in _listed(window, CLEAN)[1]  # clean: unchanged
    assert pane.title.full_text() == email
    assert ALICE not in window.windowTitle()  # (it names the store, never a session)
    # every Copy Session Id copies the id as shown
    window.session_list.select_row(window.sessions.row_of(ALICE))
    assert _copied(qtbot, window.actions_by_name["review_copy_id"].trigger) == email
    assert _copied(qtbot, pane.copy_id_button.click) == email
    assert _copied(qtbot, lambda: _copy_key(window)) == email
    assert _copied(qtbot, _menu_copy(window, PHONE_ID)) == phone
    assert _copied(qtbot, _menu_copy(window, CLEAN)) == CLEAN
    # the status bar and the error bar name sessions as shown
    window.statusBar().showMessage(f'Delete session "{ALICE}" — done', 5000)
    assert window.statusBar().currentMessage() == f'Delete session "{email}" — done'
    # the list keeps the real ids: selection and sorting go by them
    assert window.session_list.selected_ids() == [ALICE] and window.current_session_id == ALICE
    # off: the raw ids again at once, everywhere
    _redact(qtbot, window, False)
    assert _listed(window, ALICE)[0] == ALICE and ALICE in _listed(window, ALICE)[1]
    assert _listed(window, PHONE_ID)[0] == PHONE_ID
    assert pane.title.full_text() == ALICE and f"please write to {ALICE}" in pane.toPlainText()
    assert _copied(qtbot, window.actions_by_name["review_copy_id"].trigger) == ALICE
    window.statusBar().showMessage(f'Delete session "{ALICE}" — done', 5000)
    assert ALICE in window.statusBar().currentMessage()


def _compare_alice_and_clean(qtbot: Any, window: Any) -> Any:
    """The Compare window of the two sessions, both selected in the list."""
    selection = window.session_view.selectionModel()
    for sid in (ALICE, CLEAN):
        selection.select(window.sessions.index(window.sessions.row_of(sid), 0),
                         selection.SelectionFlag.Select | selection.SelectionFlag.Rows)
    dialog = window.comparing.compare_sessions()
    assert dialog is not None
    qtbot.addWidget(dialog)
    return dialog


def test_compare_opened_while_redacted_names_its_sessions_redacted(qtbot, window, keyed_db):
    _open(qtbot, window, keyed_db)
    _redact(qtbot, window, True)
    email = _listed(window, ALICE)[0]
    assert email.startswith("[EMAIL_")
    dialog = _compare_alice_and_clean(qtbot, window)
    assert ALICE not in dialog.view.header_a.full_text() + dialog.view.header_b.full_text()
    with qtbot.waitSignal(dialog.view.compared, timeout=20_000) as got:
        pass
    comparison = got.args[0]
    title = dialog.windowTitle()
    assert ALICE not in title and email in title and CLEAN in title and title.endswith("(redacted)")
    headers = dialog.view.header_a.full_text() + dialog.view.header_b.full_text()
    assert ALICE not in headers and email in headers
    # the placeholder of the id is the one of the address in the compared text
    texts = "\n".join(m.text for t in comparison.turns for side in (t.a, t.b) if side for m in side.messages)
    assert f"please write to {email} today" in texts and ALICE not in texts
    dialog.close()


def test_a_compare_window_open_when_redact_is_turned_on_names_its_sessions_redacted(qtbot, window, keyed_db):
    _open(qtbot, window, keyed_db)
    dialog = _compare_alice_and_clean(qtbot, window)
    qtbot.waitUntil(lambda: ALICE in dialog.windowTitle(), timeout=20_000)
    with qtbot.waitSignal(dialog.view.compared, timeout=20_000):
        _redact(qtbot, window, True)
    email = _listed(window, ALICE)[0]
    headers = dialog.view.header_a.full_text() + dialog.view.header_b.full_text()
    assert ALICE not in headers + dialog.windowTitle() and email in headers and email in dialog.windowTitle()
    dialog.close()


def test_an_edit_on_a_keyed_session_is_named_redacted_in_the_status_bar_and_undo(qtbot, window, keyed_db, monkeypatch):
    import fluxgui.qt.dialogs.confirm as dialogs

    monkeypatch.setattr(dialogs, "confirm_delete_session", lambda *_a: True)
    _open(qtbot, window, keyed_db, CLEAN)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.actions_by_name["editing"].trigger()
    _settle(qtbot, window)
    _redact(qtbot, window, True)
    email = _listed(window, ALICE)[0]
    menu = window.session_list.build_menu(ALICE)
    delete = next(a for a in menu.actions() if a.text() == "Delete Session…")
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        delete.trigger()
    _settle(qtbot, window)
    status, undo = window.statusBar().currentMessage(), window.actions_by_name["undo"].text()
    assert email in status and ALICE not in status, status
    assert undo == f'&Undo Delete session "{email}"'
    # Redact off: the Undo text names the session as stored again
    window.actions_by_name["redact"].setChecked(False)
    assert window.actions_by_name["undo"].text() == f'&Undo Delete session "{ALICE}"'


def test_the_workspace_list_and_merged_timeline_show_ids_redacted(qtbot, window, tmp_path):
    from PySide6.QtCore import Qt
    from test_workspace_window import open_workspace
    from workspace_helpers import agents_add, agents_replicas, minute

    replicas = run_async(agents_replicas(tmp_path / "reps"))
    for n, path in enumerate(replicas.paths[:2]):
        run_async(agents_add(path, ALICE, [{"role": "user", "content": f"turn {n} from {ALICE}"}], minute(900 + n)))
    ws = open_workspace(qtbot, window, replicas.paths)
    window.actions_by_name["redact"].setChecked(True)
    row = ws.model.row_of(ALICE)
    assert row is not None
    index = ws.model.index(row, ws.model.ID)
    shown, tip = index.data(Qt.ItemDataRole.DisplayRole), index.data(Qt.ItemDataRole.ToolTipRole)
    assert re.fullmatch(r"\[EMAIL_\d+\]", shown) and ALICE not in tip and shown in tip
    assert ws.model.index(ws.model.row_of("user_123"), ws.model.ID).data() == "user_123"
    assert ws.select(ALICE)
    qtbot.waitUntil(lambda: ws.timeline.line is not None and ws.timeline.session_id == ALICE, timeout=20_000)
    header = ws.timeline.header.text()
    assert ALICE not in header and f"<b>{shown}</b>" in header
    texts = "\n".join(p.message.text for p in ws.timeline.model.placed)
    assert f"from {shown}" in texts and ALICE not in texts
    consolidate = ws.files.consolidate([ALICE])  # (its plan keeps the real id)
    consolidate.dest.setText(str(tmp_path / "merged.db"))
    with qtbot.waitSignal(consolidate.planned, timeout=30_000) as planned:
        consolidate.preview_button.click()
    assert [p.session_id for p in planned.args[0].sessions] == [ALICE]
    assert consolidate.windowTitle() == f"Consolidate {shown}"
    assert consolidate.table.item(0, 0).text().startswith(shown)
    consolidate.close()
    window.actions_by_name["redact"].setChecked(False)
    assert ws.model.index(ws.model.row_of(ALICE), ws.model.ID).data() == ALICE
    qtbot.waitUntil(lambda: ws.timeline.line is not None and ALICE in ws.timeline.header.text(), timeout=20_000)


def test_an_id_a_detector_fails_on_is_not_shown(qtbot, window, tmp_path):
    """Fail closed: an id the detectors break on is shown (and copied) as a note, never
    as stored; the other ids are redacted as usual."""
    from fluxgui.qt.shown_ids import NOT_SHOWN
    from fluxgui.services.redaction import Detectors

    class Failing(Detectors):
        def find(self, text: str, *, disjoint: bool = True) -> Any:
            if "BOOM" in text:
                raise RuntimeError("detector broke")
            return super().find(text, disjoint=disjoint)

    path = write_agents_store(tmp_path / "boom.db", {
        "BOOM-bob@example.com": [[{"role": "user", "content": "hi"}]],
        ALICE: [[{"role": "user", "content": "hello"}]],
    })
    _open(qtbot, window, path)
    window.redaction.detectors = lambda: Failing(("secrets", "pii"))
    _redact(qtbot, window, True)
    shown, tip = _listed(window, "BOOM-bob@example.com")
    assert shown == NOT_SHOWN and "bob@" not in tip
    assert _copied(qtbot, _menu_copy(window, "BOOM-bob@example.com")) == NOT_SHOWN
    assert re.fullmatch(r"\[EMAIL_\d+\]", _listed(window, ALICE)[0])


def test_an_error_shown_before_redact_is_shown_again_redacted(qtbot, window, keyed_db):
    """An error naming a session, on the bar before Redact is turned on (then a
    screenshot is taken), is shown again redacted at once; off, as it was."""
    from fluxgui.core.errors import FluxguiError

    _open(qtbot, window, keyed_db)
    window.show_error(FluxguiError(f"session {ALICE} could not be written"))
    assert ALICE in window.error_bar.text()
    _redact(qtbot, window, True)
    shown = window.error_bar.text()
    assert ALICE not in shown and "[EMAIL_" in shown and "could not be written" in shown
    _redact(qtbot, window, False)
    assert ALICE in window.error_bar.text()
