"""Bulk review with a net (issue 37): the count shown and confirmed first, an empty
filter over the whole store asked explicitly, progress with Cancel, one undoable step —
over a store written by flux and a real review database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox
from qt_helpers import OFFSCREEN_NOISE, run_on, write_flux_store
from test_reviews_window import confirm_bulk

from fluxgui.services.reviews import ReviewDB

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)
N = 12


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    sessions = {f"s{i:02d}": [{"role": "user", "content": f"question {i}" + (" refund" if i % 3 == 0 else "")},
                              {"role": "assistant", "content": f"answer {i}"}] for i in range(N)}
    return write_flux_store(tmp_path / "flux.db", sessions)


def _open(qtbot: Any, window: Any, path: Path, tmp_path: Path) -> Any:
    with qtbot.waitSignal(window.reviews.ready, timeout=10_000):
        window.reviews.use(str(tmp_path / "reviews.db"), None)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        window.stores.open_target(str(path))
    qtbot.waitUntil(lambda: window.reviews.key is not None and not window.bridge.busy, timeout=10_000)
    return window.reviews


def _reviews(qtbot: Any, qloop: Any, tmp_path: Path, key: str) -> dict[str, Any]:
    db = run_on(qtbot, qloop, ReviewDB.open(str(tmp_path / "reviews.db")))
    try:
        return run_on(qtbot, qloop, db.reviews(key, [f"s{i:02d}" for i in range(N)]))
    finally:
        run_on(qtbot, qloop, db.close())


def test_all_matching_counts_first_and_a_cancelled_question_changes_nothing(qtbot, window, qloop, store_path, tmp_path):
    c = _open(qtbot, window, store_path, tmp_path)
    window.search("refund")  # s00, s03, s06, s09
    qtbot.waitUntil(lambda: not window.sessions.searching and window.sessions.rowCount() == 4, timeout=10_000)
    window.actions_by_name["review_all_flagged"].trigger()
    qtbot.waitUntil(lambda: c.bulk_box is not None and c.bulk_box.isVisible(), timeout=10_000)
    box = c.bulk_box
    assert "4 sessions matching" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: not box.isVisible())
    got = _reviews(qtbot, qloop, tmp_path, c.key)
    assert all(r.state == "unreviewed" for r in got.values())


def test_an_empty_filter_asks_for_all_n_sessions(qtbot, window, qloop, store_path, tmp_path):
    c = _open(qtbot, window, store_path, tmp_path)
    with qtbot.waitSignal(c.bulkDone, timeout=10_000) as done:
        window.actions_by_name["review_all_reviewed"].trigger()
        text = confirm_bulk(qtbot, c, f"all {N} sessions")
    assert "every session of the store" in text
    assert done.args == [N]
    assert all(r.state == "reviewed" for r in _reviews(qtbot, qloop, tmp_path, c.key).values())


def test_a_bulk_change_is_one_undoable_step(qtbot, window, qloop, store_path, tmp_path):
    from fluxgui.qt.reviews.bulk import bulk
    from fluxgui.services.reviews import Edit

    c = _open(qtbot, window, store_path, tmp_path)
    undo = window.actions_by_name["review_undo_bulk"]
    assert not undo.isEnabled()
    with qtbot.waitSignal(c.reviewChanged, timeout=10_000):  # one tagged before: keeps its tag
        c.change(Edit(add_tags=["billing"], state="flagged"))
    shown = window.current_session_id
    window.search("refund")
    qtbot.waitUntil(lambda: not window.sessions.searching and window.sessions.rowCount() == 4, timeout=10_000)
    with qtbot.waitSignal(c.bulkDone, timeout=10_000):
        bulk(c, Edit(add_tags=["billing"]), everything=True)
        confirm_bulk(qtbot, c, "4 sessions")
    with qtbot.waitSignal(c.bulkDone, timeout=10_000):
        bulk(c, Edit(state="reviewed"), everything=True)
        confirm_bulk(qtbot, c, "4 sessions")
    assert undo.isEnabled()
    with qtbot.waitSignal(c.bulkUndone, timeout=10_000) as back:
        undo.trigger()
    assert back.args == [4] and not undo.isEnabled()
    got = _reviews(qtbot, qloop, tmp_path, c.key)
    # the state put back (flagged for the one flagged before), the tags of the first run kept
    for sid in ("s00", "s03", "s06", "s09"):
        assert got[sid].state == ("flagged" if sid == shown else "unreviewed"), sid
        assert got[sid].tags == ["billing"]


def test_cancel_stops_between_two_sessions(qtbot, window, qloop, store_path, tmp_path, monkeypatch):
    from fluxgui.qt.reviews.bulk import bulk
    from fluxgui.services.reviews import Edit

    c = _open(qtbot, window, store_path, tmp_path)
    real, calls = c.db.change, []

    async def change(*args: Any, **kw: Any) -> Any:
        out = await real(*args, **kw)
        calls.append(args[1])
        if len(calls) == 3:  # the user presses Cancel while the third is written
            c.bulk_progress.cancel()
        return out

    monkeypatch.setattr(c.db, "change", change)
    with qtbot.waitSignal(c.bulkDone, timeout=10_000) as done:
        bulk(c, Edit(add_tags=["batch"]), everything=True)
        confirm_bulk(qtbot, c, f"all {N} sessions")
    assert done.args == [3]
    assert "cancelled after 3 of 12" in window.statusBar().currentMessage()
    got = _reviews(qtbot, qloop, tmp_path, c.key)
    assert sorted(s for s, r in got.items() if "batch" in r.tags) == sorted(calls)
