"""Export, import and copy from the window: the dialogs, progress, Cancel, results read
back by the real libraries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QPushButton
from qt_helpers import OFFSCREEN_NOISE, run_async, write_agents_store

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _items(path: Path, sid: str) -> list[dict[str, Any]]:
    from agents import SQLiteSession

    async def read() -> list[dict[str, Any]]:
        session = SQLiteSession(sid, path)
        try:
            return list(await session.get_items())  # type: ignore[arg-type]
        finally:
            session.close()

    return run_async(read())


def _open(qtbot: Any, window: Any, path: Path, sid: str, *, writable: bool = False) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), session_id=sid, writable=writable)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)


def _finish(qtbot: Any, window: Any, run: Any) -> Any:
    with qtbot.waitSignal(window.transferFinished, timeout=30_000) as done:
        run()
    return done.args[0]


def test_export_dialog_defaults_follow_the_selection_and_format(qtbot, window, agents_db, tmp_path):
    from fluxgui.qt.dialogs.transfer import ExportDialog

    dialog = ExportDialog(
        window, session_id="refund-1001", selected=["refund-1001"], store_sessions=3,
        default_dir=str(tmp_path),
    )
    qtbot.addWidget(dialog)
    assert dialog.scope() == "session" and dialog.session_ids() == ["refund-1001"]
    assert not dialog.scope_buttons["selection"].isEnabled()  # one session is no selection
    assert dialog.path() == tmp_path / "refund-1001.json"
    dialog.set_format("html")
    assert dialog.path() == tmp_path / "refund-1001.html"
    dialog.scope_buttons["store"].setChecked(True)
    assert dialog.session_ids() is None
    dialog.path_edit.setText(str(tmp_path / "missing" / "x.md"))
    assert "No such folder" in (dialog.problem() or "")


def test_export_the_selected_sessions_as_json_and_import_them_elsewhere(
    qtbot, window, agents_db, tmp_path
):
    _open(qtbot, window, agents_db, "refund-1001")
    selection = window.session_view.selectionModel()
    for sid in ("refund-1001", "bugfix-2002"):
        selection.select(
            window.sessions.index(window.sessions.row_of(sid), 0),
            QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
        )
    ids = window.selected_session_ids()
    assert sorted(ids) == ["bugfix-2002", "refund-1001"]
    out = tmp_path / "two.json"
    result = _finish(qtbot, window, lambda: window.transfers.run_export(out, "json", ids))
    assert result.sessions == 2 and out.is_file()
    data = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(s["id"] for s in data["sessions"]) == sorted(ids)
    assert "Exported 2 sessions" in window.statusBar().currentMessage()

    # Import the file into another store, opened writable; ids already there are renamed.
    other = write_agents_store(tmp_path / "other.db", {"refund-1001": [[{"role": "user", "content": "x"}]]})
    _open(qtbot, window, other, "refund-1001", writable=True)
    result = _finish(qtbot, window, lambda: window.transfers.run_import([str(out)]))
    assert dict(result.written) == {"refund-1001": "refund-1001-2", "bugfix-2002": "bugfix-2002"}
    assert "renamed: refund-1001 → refund-1001-2" in window.statusBar().currentMessage()
    for old, new in result.written:
        assert _items(other, new) == _items(agents_db, old)
    qtbot.waitUntil(lambda: window.sessions.row_of("refund-1001-2") is not None, timeout=10_000)


def test_import_into_a_read_only_store_says_how_to_enable_editing(
    qtbot, window, agents_db, tmp_path
):
    _open(qtbot, window, agents_db, "refund-1001")
    before = agents_db.read_bytes()
    window.transfers.run_import([str(tmp_path / "whatever.json")])
    assert "read-only" in window.error_bar.text()
    assert agents_db.read_bytes() == before


def test_copy_sessions_into_a_new_store_file(qtbot, window, agents_db, tmp_path):
    _open(qtbot, window, agents_db, "refund-1001")
    dest = tmp_path / "copy.db"
    result = _finish(
        qtbot, window, lambda: window.transfers.run_copy(str(dest), ["refund-1001", "hello-3003"])
    )
    assert result.sessions == 2
    for sid in ("refund-1001", "hello-3003"):
        assert _items(dest, sid) == _items(agents_db, sid)


def test_a_failed_export_shows_one_line_and_leaves_no_file(qtbot, window, agents_db, tmp_path):
    _open(qtbot, window, agents_db, "refund-1001")
    out = tmp_path / "x.json"
    window.transfers.run_export(out, "json", ["no-such-session"])
    qtbot.waitUntil(lambda: "no-such-session" in window.error_bar.text(), timeout=20_000)
    qtbot.waitUntil(lambda: not window.bridge.running("transfer"))
    assert list(tmp_path.glob("*.json")) == [] and list(tmp_path.glob(".x.json.*")) == []


def test_cancelling_an_export_leaves_no_file(qtbot, window, tmp_path):
    sessions = {
        f"s{n:03d}": [[{"role": "user", "content": f"message {n}-{i} " + "x" * 200} for i in range(200)]]
        for n in range(60)
    }
    db = write_agents_store(tmp_path / "big.db", sessions)
    _open(qtbot, window, db, "s000")
    out = tmp_path / "all.jsonl"
    window.transfers.run_export(out, "jsonl", None)
    dialog = window.transfers.progress
    assert dialog is not None
    seen: list[tuple[int, int]] = []

    def press_cancel(done: int, total: int) -> None:
        # Midway: the first page is written to the temporary file, the rest is not.
        seen.append((done, total))
        if len(seen) == 1:
            assert list(tmp_path.glob(".all.jsonl.*")) and not out.exists()
            dialog.findChild(QPushButton).click()  # the dialog's Cancel button

    dialog.advanced.connect(press_cancel)
    # (busy: a cancelled task is no longer running but unwinds, the temporary file's
    # removal last)
    qtbot.waitUntil(lambda: not window.bridge.running("transfer") and not window.bridge.busy, timeout=20_000)
    assert seen and seen[0][0] < seen[0][1] == 12_000
    assert not out.exists()
    assert list(tmp_path.glob(".all.jsonl.*")) == []
    assert "Cancelled" in window.statusBar().currentMessage()
