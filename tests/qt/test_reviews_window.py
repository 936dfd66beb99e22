"""The review workflow in the window (issue 17): the filter bar over a paged list, the
keyboard queue, bulk actions, Copy Session Id, notes on messages, and other reviewers'
changes appearing — offscreen, over a store written by flux and a real review database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import snapshot
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QGuiApplication
from qt_helpers import OFFSCREEN_NOISE, run_on, write_flux_store

from fluxgui.services.reviews import Edit, ReviewDB, ReviewFilter, review_key

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)
N = 12


def confirm_bulk(qtbot: Any, c: Any, count: str) -> str:
    """Answer the bulk action's confirmation (it shows ``count``); its text."""
    from PySide6.QtWidgets import QMessageBox

    qtbot.waitUntil(lambda: c.bulk_box is not None and c.bulk_box.isVisible(), timeout=10_000)
    box, c.bulk_box = c.bulk_box, None
    text = box.text()
    assert count in text, text
    go = next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole)
    go.click()
    return text


def _ids(model: Any) -> list[str]:
    return [model.session_at(r).id for r in range(model.rowCount())]


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    sessions = {f"s{i:02d}": [{"role": "user", "content": f"question {i}" + (" refund" if i % 3 == 0 else "")},
                              {"role": "assistant", "content": f"answer {i}"}] for i in range(N)}
    return write_flux_store(tmp_path / "flux.db", sessions)


@pytest.fixture
def reviews(tmp_path: Path) -> str:
    return str(tmp_path / "reviews" / "team.db")


def _open(qtbot: Any, window: Any, path: Path, reviews: str) -> None:
    with qtbot.waitSignal(window.reviews.ready, timeout=10_000):
        window.reviews.use(reviews, None)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        window.stores.open_target(str(path))
    qtbot.waitUntil(lambda: window.reviews.key is not None and not window.bridge.busy, timeout=10_000)


def _open_polled(qtbot: Any, window: Any, path: Path, reviews: str) -> tuple[Any, str]:
    """Opened as :func:`_open`, the review database polled once: the controller and the
    session shown."""
    _open(qtbot, window, path, reviews)
    c = window.reviews
    qtbot.waitUntil(lambda: c._marker is not None, timeout=10_000)
    return c, window.current_session_id


def _db(qtbot: Any, qloop: Any, url: str) -> ReviewDB:
    return run_on(qtbot, qloop, ReviewDB.open(url))


def test_filters_combine_with_search_and_the_list_pages(qtbot, window, qloop, store_path, reviews):
    before = snapshot(store_path)
    _open(qtbot, window, store_path, reviews)
    key = window.reviews.key
    assert key == review_key(window.stores.store.store_key, None)
    db = _db(qtbot, qloop, reviews)
    try:
        for i, state in [(0, "reviewed"), (3, "reviewed"), (4, "flagged"), (6, "reviewed")]:
            run_on(qtbot, qloop, db.change(key, f"s{i:02d}", Edit(state=state, add_tags=["vip"] if i < 4 else [],
                                                                  note="n" if i == 6 else None), reviewer="ann"))
    finally:
        run_on(qtbot, qloop, db.close())
    window.reviews.filter_bar.state.setCurrentText("reviewed")
    qtbot.waitUntil(lambda: sorted(_ids(window.sessions)) == ["s00", "s03", "s06"], timeout=10_000)
    # with the text search: both apply
    window.search("refund")
    qtbot.waitUntil(lambda: not window.sessions.searching and sorted(_ids(window.sessions)) == ["s00", "s03", "s06"],
                    timeout=10_000)
    window.search("question 6")
    qtbot.waitUntil(lambda: not window.sessions.searching and _ids(window.sessions) == ["s06"], timeout=10_000)
    window.search("")
    bar = window.reviews.filter_bar
    bar.set_value(ReviewFilter(tag="vip"))
    qtbot.waitUntil(lambda: sorted(_ids(window.sessions)) == ["s00", "s03"], timeout=10_000)
    bar.set_value(ReviewFilter(flagged=True))
    qtbot.waitUntil(lambda: _ids(window.sessions) == ["s04"], timeout=10_000)
    bar.set_value(ReviewFilter(has_notes=True, reviewer="ann"))
    qtbot.waitUntil(lambda: _ids(window.sessions) == ["s06"], timeout=10_000)
    # unreviewed: the store's pages, reviewed sessions dropped, still a page at a time
    window.sessions._page_size = 3
    bar.set_value(ReviewFilter(state="unreviewed"))
    root = window.sessions.index(-1, -1)

    def all_paged() -> bool:
        if window.sessions.canFetchMore(root):
            window.sessions.fetchMore(root)  # as the view does when the last row shows
            return False
        return not window.bridge.busy

    qtbot.waitUntil(all_paged, timeout=10_000)
    assert sorted(_ids(window.sessions)) == sorted({f"s{i:02d}" for i in range(N)} - {"s00", "s03", "s04", "s06"})
    # the list marks state and tags
    bar.set_value(ReviewFilter())
    qtbot.waitUntil(lambda: window.sessions.rowCount() == N, timeout=10_000)
    row = window.sessions.row_of("s03")
    qtbot.waitUntil(lambda: "#vip" in window.sessions.data(window.sessions.index(row, 0)), timeout=10_000)
    assert window.sessions.data(window.sessions.index(row, 0), Qt.ItemDataRole.DecorationRole) is not None
    run_on(qtbot, qloop, window.aclose())
    assert snapshot(store_path) == before  # the agent's store is never written


def test_queue_keys(qtbot, window, qloop, store_path, team_reviews):
    reviews = team_reviews
    _open(qtbot, window, store_path, reviews)
    c = window.reviews
    c.queue_action.trigger()
    assert c.queue.on
    qtbot.waitUntil(lambda: c.panel.rubric is not None, timeout=10_000)
    view = window.session_view
    view.setFocus()
    first = window.current_session_id
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_J)
    assert window.session_view.currentIndex().row() == 1
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_K)
    assert window.current_session_id == first
    qtbot.waitUntil(lambda: c.panel.review is not None and c.panel.review.session_id == first, timeout=10_000)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_Right)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        qtbot.keyClick(view, Qt.Key.Key_Left)
    qtbot.waitUntil(lambda: c.panel.review is not None and c.panel.review.session_id == first, timeout=10_000)
    qtbot.keyClick(view, Qt.Key.Key_1)  # resolution: solved
    qtbot.keyClick(view, Qt.Key.Key_3)  # accuracy: wrong
    qtbot.keyClick(view, Qt.Key.Key_Tab)  # skip tone
    qtbot.keyClick(view, Qt.Key.Key_2)  # policy: no
    qtbot.waitUntil(lambda: c.panel.review.scores == {"resolution": "solved", "accuracy": "wrong", "policy": False},
                    timeout=10_000)
    qtbot.keyClick(view, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: c.panel.review.state == "flagged", timeout=10_000)
    qtbot.keyClick(view, Qt.Key.Key_N)
    assert c.panel.note_edit.hasFocus()
    qtbot.keyClicks(c.panel.note_edit, "J and K stay text")
    assert window.current_session_id == first
    with qtbot.waitSignal(window.messagesShown, timeout=10_000) as shown:
        qtbot.keyClick(c.panel.note_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    nxt = shown.args[0]
    assert nxt != first
    assert window.sessions.session_at(view.currentIndex().row()).id == nxt  # the list follows
    qtbot.waitUntil(lambda: c.panel.review is not None and c.panel.review.session_id == nxt, timeout=10_000)
    # the new session's scorecard is its own: nothing checked, the first criterion current
    assert not any(b.isChecked() for g in c.panel._score_groups.values() for b in g.buttons())
    assert c.panel.current == 0
    db = _db(qtbot, qloop, reviews)
    try:
        done = run_on(qtbot, qloop, db.get(c.key, first))
        assert done.state == "reviewed" and [n.text for n in done.notes] == ["J and K stay text"]
        claimed = run_on(qtbot, qloop, db.get(c.key, nxt))
        assert claimed.state == "in-review" and claimed.claimed_by == c.reviewer
    finally:
        run_on(qtbot, qloop, db.close())
    qtbot.keyClick(view, Qt.Key.Key_T)
    assert c.panel.tag_edit.hasFocus()
    qtbot.keyClick(c.panel.tag_edit, Qt.Key.Key_Escape)
    assert view.hasFocus()
    qtbot.keyClick(view, Qt.Key.Key_Question, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: c.cheat is not None and c.cheat.isVisible(), timeout=5_000)
    c.cheat.hide()
    # the position is remembered across restarts
    assert c.settings.value("reviews/position/" + c.key) == nxt


def test_the_queue_resumes_where_it_was(qtbot, window, qloop, store_path, reviews):
    _open(qtbot, window, store_path, reviews)
    c = window.reviews
    c.set_queue(True)
    c.settings.setValue("reviews/position/" + c.key, "s05")
    run_on(qtbot, qloop, window.aclose())
    from fluxgui.qt.window import MainWindow

    second = MainWindow()
    second.show()
    try:
        assert second.reviews.queue.on
        with qtbot.waitSignal(second.reviews.ready, timeout=10_000):
            second.reviews.use(reviews, None)
        second.stores.open_target(str(store_path))
        qtbot.waitUntil(lambda: second.current_session_id == "s05", timeout=10_000)
    finally:
        run_on(qtbot, qloop, second.aclose())
        second.close()
        second.deleteLater()


def test_bulk_actions_on_the_selection_and_on_all_matching(qtbot, window, qloop, store_path, reviews):
    from fluxgui.qt.reviews.actions import bulk

    _open(qtbot, window, store_path, reviews)
    c = window.reviews
    view = window.session_view
    from PySide6.QtCore import QItemSelection, QItemSelectionModel

    picked = QItemSelection()
    for row in (0, 2):
        picked.select(window.sessions.index(row, 0), window.sessions.index(row, 2))
    view.selectionModel().select(picked, QItemSelectionModel.SelectionFlag.ClearAndSelect)
    chosen = window.session_list.selected_ids()
    assert len(chosen) == 2
    with qtbot.waitSignal(c.bulkDone, timeout=10_000) as done:
        bulk(c, Edit(state="flagged"))
    assert done.args == [2]
    with qtbot.waitSignal(c.bulkDone, timeout=10_000):
        bulk(c, None, ids=[window.sessions.session_at(5).id])  # claim
    c.filter_bar.set_value(ReviewFilter(state="unreviewed"))
    qtbot.waitUntil(lambda: window.sessions.rowCount() == N - 3 and not window.bridge.busy, timeout=10_000)
    with qtbot.waitSignal(c.bulkDone, timeout=10_000) as done:
        bulk(c, Edit(add_tags=["batch-7"]), everything=True)
        confirm_bulk(qtbot, c, f"{N - 3} sessions")
    assert done.args == [N - 3]
    db = _db(qtbot, qloop, reviews)
    try:
        got = run_on(qtbot, qloop, db.reviews(c.key, [f"s{i:02d}" for i in range(N)]))
    finally:
        run_on(qtbot, qloop, db.close())
    assert sorted(s for s, r in got.items() if r.state == "flagged") == sorted(chosen)
    assert sum(r.state == "in-review" for r in got.values()) == 1
    assert sorted(s for s, r in got.items() if "batch-7" in r.tags) == sorted(
        s for s, r in got.items() if r.state == "unreviewed")


def test_copy_session_id(qtbot, window, store_path, reviews):
    _open(qtbot, window, store_path, reviews)
    clip = QGuiApplication.clipboard()
    view = window.session_view
    view.setFocus()
    window.session_list.select_row(3)
    qtbot.waitUntil(lambda: window.current_session_id == window.sessions.session_at(3).id, timeout=10_000)
    clip.setText("")
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert clip.text() == window.sessions.session_at(3).id
    menu = window.session_list.build_menu("s07")
    [copy] = [a for a in menu.actions() if a.text() == "Copy Session Id"]
    copy.trigger()
    assert clip.text() == "s07"
    menu.deleteLater()
    clip.setText("")
    window.conversation.copy_id_button.click()
    assert clip.text() == window.current_session_id


def test_notes_on_messages_are_kept_and_marked_on_their_cards(qtbot, window, qloop, store_path, reviews):
    _open(qtbot, window, store_path, reviews)
    c = window.reviews
    pane = window.conversation
    pane.view.setCurrentIndex(pane.model.index(1, 0))
    message = pane.current_message()
    assert message is not None and c.panel.message_id == str(message.id)
    c.panel.message_note_edit.setText("this answer is wrong")
    with qtbot.waitSignal(c.reviewChanged, timeout=10_000):
        qtbot.keyClick(c.panel.message_note_edit, Qt.Key.Key_Return)
    review = c.panel.review
    assert [(n.message_id, n.text, n.reviewer) for n in review.notes] == [(str(message.id), "this answer is wrong", c.reviewer)]
    assert "this answer is wrong" in c.panel.message_notes_view.text()
    assert pane.note_marks[message.id] == ("✎ 1", f"{c.reviewer}: this answer is wrong")
    assert pane.delegate.badge(message)[2] == "note"


def test_other_reviewers_changes_appear_within_seconds(qtbot, window, qloop, store_path, team_reviews):
    reviews = team_reviews
    c, shown = _open_polled(qtbot, window, store_path, reviews)
    db = _db(qtbot, qloop, reviews)
    try:
        run_on(qtbot, qloop, db.change(c.key, shown, Edit(state="flagged", add_tags=["from-bob"]), reviewer="bob"))
    finally:
        run_on(qtbot, qloop, db.close())
    qtbot.waitUntil(lambda: c.panel.review is not None and c.panel.review.state == "flagged", timeout=6_000)
    row = window.sessions.row_of(shown)
    qtbot.waitUntil(lambda: "#from-bob" in window.sessions.data(window.sessions.index(row, 0)), timeout=6_000)
    assert "bob" in c.panel.claim.text()
    qtbot.waitUntil(lambda: "bob: tag – → from-bob" in c.panel.claim.toolTip(), timeout=6_000)


def test_a_list_the_review_database_answers_sorts_by_the_column_chosen(qtbot, window, qloop, store_path, reviews):
    from fluxgui.qt.sessions.model import SessionListModel as M

    _open(qtbot, window, store_path, reviews)
    key = window.reviews.key
    model = window.sessions
    reviewed = ["s07", "s02", "s10", "s05", "s11"]  # in this order: s11 reviewed last
    qtbot.waitUntil(lambda: model.rowCount() == N, timeout=10_000)
    by_activity = [sid for sid in _ids(model) if sid in reviewed]  # the header's order: Last active ▼
    db = _db(qtbot, qloop, reviews)
    try:
        for sid in reviewed:
            run_on(qtbot, qloop, db.change(key, sid, Edit(state="reviewed"), reviewer="ann"))
    finally:
        run_on(qtbot, qloop, db.close())
    model._page_size = 2  # pages of two (the view fetches them all): later ones land where they sort
    seen: list[list[str]] = []
    model.pageLoaded.connect(lambda _added, _more: seen.append(_ids(model)))
    window.reviews.filter_bar.state.setCurrentText("reviewed")
    qtbot.waitUntil(lambda: model.rowCount() == len(reviewed) and not model.loading
                    and not model.canFetchMore(QModelIndex()), timeout=10_000)
    assert _ids(model) == by_activity  # as the header says, not in the review database's order
    assert seen[0] == [sid for sid in by_activity if sid in ("s11", "s05")]  # its first page
    assert len(seen) >= 3 and all(ids == [s for s in by_activity if s in ids] for ids in seen), seen
    window.session_view.sortByColumn(M.ID, Qt.SortOrder.AscendingOrder)
    assert _ids(model) == sorted(reviewed)  # sorted in place, not read again
    window.session_view.sortByColumn(M.ID, Qt.SortOrder.DescendingOrder)
    assert _ids(model) == sorted(reviewed, reverse=True)
    model.sort(-1)  # no column: the order the rows came in, last reviewed first
    assert _ids(model) == reviewed[::-1]


def test_the_shown_claim_is_kept_alive_and_no_one_elses(qtbot, window, qloop, store_path, team_reviews):
    from datetime import datetime, timedelta

    from fluxgui.services.reviews import claims
    from fluxgui.services.reviews.model import now

    reviews = team_reviews
    c, shown = _open_polled(qtbot, window, store_path, reviews)
    db = _db(qtbot, qloop, reviews)
    try:
        # the reviewer's own claim on the shown session, about to run out (a minute left)
        assert run_on(qtbot, qloop, claims.claim(db, c.key, shown, c.reviewer, seconds=60))
        history = run_on(qtbot, qloop, db.history(c.key, shown))

        def until(sid: str) -> datetime:
            return datetime.fromisoformat(run_on(qtbot, qloop, db.get(c.key, sid)).claimed_until)

        qtbot.waitUntil(lambda: c.lease.renewed >= 1, timeout=10_000)  # seen by the poll, renewed
        assert until(shown) > now() + timedelta(minutes=25)
        qtbot.waitUntil(lambda: c.panel.review is not None and c.panel.review.claimed_until is not None
                        and datetime.fromisoformat(c.panel.review.claimed_until) > now() + timedelta(minutes=25),
                        timeout=10_000)  # the panel shows the new time
        assert run_on(qtbot, qloop, db.history(c.key, shown)) == history  # no history row
        # bob's claim on the shown session (after the reviewer's was released) is his
        assert run_on(qtbot, qloop, db.release(c.key, shown, c.reviewer))
        assert run_on(qtbot, qloop, claims.claim(db, c.key, shown, "bob", seconds=60))
        qtbot.waitUntil(lambda: c.panel.review is not None and c.panel.review.claimed_by == "bob", timeout=10_000)
        renewed, bobs = c.lease.renewed, until(shown)
        c.lease.check()  # the minute's tick
        qtbot.waitUntil(lambda: not window.bridge.running("reviews:renew"), timeout=5_000)
        assert c.lease.renewed == renewed and until(shown) == bobs
    finally:
        run_on(qtbot, qloop, db.close())


def test_an_export_carries_the_reviews_when_asked(qtbot, window, qloop, store_path, reviews, tmp_path):
    _open(qtbot, window, store_path, reviews)
    c = window.reviews
    shown = window.current_session_id
    with qtbot.waitSignal(c.reviewChanged, timeout=10_000):
        c.change(Edit(state="flagged", note="check the refund"))
    for asked, name in ((True, "with.html"), (False, "without.html")):
        with qtbot.waitSignal(window.transferFinished, timeout=10_000):
            window.transfers.run_export(tmp_path / name, "html", [shown], reviews=asked)
    assert "check the refund" in (tmp_path / "with.html").read_text()
    assert "Review:" not in (tmp_path / "without.html").read_text()
    dialog = window.transfers.make_export_dialog()  # File › Export offers it, unticked
    try:
        assert not dialog.reviews_check.isHidden() and not dialog.reviews()
        dialog.reviews_check.setChecked(True)
        assert dialog.reviews()
    finally:
        dialog.deleteLater()


def test_a_review_database_password_never_reaches_the_settings(qtbot, window, store_path, tmp_path):
    c = window.reviews
    c.set_on(True)
    qtbot.waitUntil(lambda: c.on, timeout=10_000)
    c.panel.database.setText("postgresql://ann:s3cret@127.0.0.1:1/nowhere17")
    with qtbot.waitSignal(c.ready, timeout=20_000) as opened:
        c.panel.settingsEdited.emit()
    assert isinstance(opened.args[0], Exception)  # nothing listens there: one line, shown
    assert "s3cret" not in str(opened.args[0])
    stored = str(c.settings.value("reviews/url"))
    assert stored == "postgresql://ann@127.0.0.1:1/nowhere17"


def test_the_review_menu_sets_the_state_of_all_matching(qtbot, window, qloop, store_path, reviews):
    _open(qtbot, window, store_path, reviews)
    c = window.reviews
    window.search("refund")  # s00, s03, s06, s09
    qtbot.waitUntil(lambda: not window.sessions.searching and window.sessions.rowCount() == 4, timeout=10_000)
    with qtbot.waitSignal(c.bulkDone, timeout=10_000) as done:
        window.actions_by_name["review_all_flagged"].trigger()
        confirm_bulk(qtbot, c, "4 sessions")
    assert done.args == [4]
    db = _db(qtbot, qloop, reviews)
    try:
        got = run_on(qtbot, qloop, db.reviews(c.key, [f"s{i:02d}" for i in range(N)]))
    finally:
        run_on(qtbot, qloop, db.close())
    assert sorted(s for s, r in got.items() if r.state == "flagged") == ["s00", "s03", "s06", "s09"]


def test_switching_reviews_off_shows_the_whole_list_again(qtbot, window, qloop, store_path, reviews):
    _open(qtbot, window, store_path, reviews)
    c = window.reviews
    c.filter_bar.set_value(ReviewFilter(state="reviewed"))
    qtbot.waitUntil(lambda: window.sessions.rowCount() == 0 and not window.bridge.busy, timeout=10_000)
    window.actions_by_name["review_panel"].trigger()  # off
    assert not c.on and c.dock.isHidden() and c.filter_bar.isHidden()
    qtbot.waitUntil(lambda: window.sessions.rowCount() == N, timeout=10_000)
    assert window.sessions.row_marks is None
    assert c.settings.value("reviews/on") in (False, "false")


def test_the_store_label_field_files_reviews_under_the_label(qtbot, window, qloop, store_path, reviews):
    _open(qtbot, window, store_path, reviews)
    c = window.reviews
    c.panel.label.setText("team  archive")
    c.panel.settingsEdited.emit()
    assert c.key == "label:team archive"
    qtbot.waitUntil(lambda: c.panel.review is not None and not window.bridge.busy, timeout=10_000)
    with qtbot.waitSignal(c.reviewChanged, timeout=10_000):
        c.change(Edit(add_tags=["labelled"]))
    db = _db(qtbot, qloop, reviews)
    try:
        r = run_on(qtbot, qloop, db.get("label:team archive", window.current_session_id))
        assert r.tags == ["labelled"]
        other = run_on(qtbot, qloop, db.get(review_key(window.stores.store.store_key, None), window.current_session_id))
        assert other.tags == []
    finally:
        run_on(qtbot, qloop, db.close())
    assert c.settings.value("reviews/label/" + window.stores.store.store_key) == "team  archive"
