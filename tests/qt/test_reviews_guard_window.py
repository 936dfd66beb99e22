"""The window keeps reviews where they belong (issue 33): a colleague's claim refuses
the reviewer's changes (one line naming them) until **Take over**, bulk actions leave
claimed sessions to their reviewer, and a review database that is the store — named
while it is open, while it is opening, or opened after the review database — is refused
with the store left byte-identical."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from helpers import snapshot
from qt_helpers import OFFSCREEN_NOISE, run_on, write_flux_store

from fluxgui.services.reviews import Edit, ReviewDB, claims

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    sessions = {f"s{i:02d}": [{"role": "user", "content": f"question {i}"},
                              {"role": "assistant", "content": f"answer {i}"}] for i in range(4)}
    return write_flux_store(tmp_path / "flux.db", sessions)


def _open(qtbot: Any, window: Any, path: Path, reviews: str) -> Any:
    with qtbot.waitSignal(window.reviews.ready, timeout=10_000):
        window.reviews.use(reviews, None)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        window.stores.open_target(str(path))
    c = window.reviews
    qtbot.waitUntil(lambda: c.key is not None and c.panel.review is not None and not window.bridge.busy, timeout=10_000)
    return c


def test_a_colleagues_claim_refuses_changes_until_taken_over(qtbot, window, qloop, store_path, team_reviews):
    c = _open(qtbot, window, store_path, team_reviews)
    shown = window.current_session_id
    db = run_on(qtbot, qloop, ReviewDB.open(team_reviews))
    try:
        assert run_on(qtbot, qloop, claims.claim(db, c.key, shown, "alice"))
        c.reload_shown()
        qtbot.waitUntil(lambda: c.panel.review.claimed_by == "alice", timeout=10_000)
        assert not c.panel.take_over.isHidden() and "alice" in c.panel.claim.text()
        c.panel.state_buttons["reviewed"].click()
        qtbot.waitUntil(lambda: window.error_bar.isVisible(), timeout=10_000)
        assert 'claimed by "alice"' in window.error_bar.text(), window.error_bar.text()
        c.panel.tag_edit.setText("mine")
        c.panel.tag_edit.returnPressed.emit()
        qtbot.waitUntil(lambda: not window.bridge.running("reviews:write") and not c._writing, timeout=10_000)
        held = run_on(qtbot, qloop, db.get(c.key, shown))
        assert (held.state, held.claimed_by, held.tags) == ("in-review", "alice", [])
        with qtbot.waitSignal(c.reviewChanged, timeout=10_000):
            c.panel.take_over.click()
        qtbot.waitUntil(lambda: c.panel.review.claimed_by == c.reviewer, timeout=10_000)
        assert c.panel.take_over.isHidden()
        with qtbot.waitSignal(c.reviewChanged, timeout=10_000):
            c.panel.state_buttons["reviewed"].click()
        done = run_on(qtbot, qloop, db.get(c.key, shown))
        assert (done.state, done.reviewer) == ("reviewed", c.reviewer)
        changes = run_on(qtbot, qloop, db.history(c.key, shown))
        assert ("claim", "alice", c.reviewer) in [(h.field, h.old, h.new) for h in changes]
        # a bulk action leaves alice's other session to her, and says so
        other = next(window.sessions.session_at(r).id for r in range(4) if window.sessions.session_at(r).id != shown)
        assert run_on(qtbot, qloop, claims.claim(db, c.key, other, "alice"))
        from fluxgui.qt.reviews.actions import bulk

        everyone = [window.sessions.session_at(r).id for r in range(4)]
        with qtbot.waitSignal(c.bulkDone, timeout=10_000) as finished:
            bulk(c, Edit(state="flagged"), ids=everyone)
        assert finished.args == [3]
        assert "1 claimed by other reviewers" in window.statusBar().currentMessage()
        left = run_on(qtbot, qloop, db.get(c.key, other))
        assert (left.state, left.claimed_by) == ("in-review", "alice")
    finally:
        run_on(qtbot, qloop, db.close())


def _same_store(path: Path, before: dict[str, str], mode: int) -> None:
    assert snapshot(path) == before
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_the_store_named_as_review_database_is_refused(qtbot, window, qloop, store_path, tmp_path):
    before, mode = snapshot(store_path), stat.S_IMODE(os.stat(store_path).st_mode)
    c = window.reviews
    # while the store opens (as `fluxgui flux.db --reviews flux.db` does it)
    with qtbot.waitSignal(c.ready, timeout=10_000) as opened:
        window.stores.open_target(str(store_path))
        c.use(str(store_path), None)
    assert "refusing the review database" in str(opened.args[0])
    qtbot.waitUntil(lambda: window.stores.store is not None and not window.bridge.busy, timeout=10_000)
    assert c.db is None and c.key is None
    # once it is open, named in the panel (a sqlite:/// URL of it this time)
    c.panel.database.setText(f"sqlite:///{store_path}")
    with qtbot.waitSignal(c.ready, timeout=10_000) as opened:
        c.panel.settingsEdited.emit()
    assert "refusing the review database" in str(opened.args[0]) and "store being reviewed" in window.error_bar.text()
    assert c.db is None
    run_on(qtbot, qloop, window.aclose())  # (the side files of the store being read go)
    _same_store(store_path, before, mode)


def test_a_store_opened_after_its_review_database_gets_no_reviews(qtbot, window, qloop, tmp_path):
    from json_helpers import hello_entry, hello_save

    folder = tmp_path / "sessions"
    hello_save(folder, "s1", [hello_entry("user", "hi"), hello_entry("assistant", "ok")])
    c = window.reviews
    with qtbot.waitSignal(c.ready, timeout=10_000) as opened:
        c.use(str(folder / "reviews.db"), None)  # (no store open yet: nothing to check against)
    assert opened.args[0] is None
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        window.stores.open_target(str(folder))
    qtbot.waitUntil(lambda: "inside the session folder" in window.error_bar.text(), timeout=10_000)
    assert c.key is None
    c.change(Edit(state="reviewed"))  # nothing to write to
    db = run_on(qtbot, qloop, ReviewDB.open(str(folder / "reviews.db")))
    try:
        assert run_on(qtbot, qloop, db.reviewers(f"folder:{folder}")) == []
    finally:
        run_on(qtbot, qloop, db.close())
