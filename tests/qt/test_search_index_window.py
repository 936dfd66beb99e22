"""The window builds the open store's search index in the background (a small progress
bar in the status bar, never "busy"), searches through it once it is ready, and opens a
found session at its hit; a Postgres store missing an index says so once, with the
CREATE INDEX a DBA could run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import sha256, sqlite_rows
from qt_helpers import OFFSCREEN_NOISE, write_flux_store

from fluxgui.services.index import index_path

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

SESSIONS = {
    f"s{i:03d}": [{"role": "user", "content": f"hello {i}"},
                  {"role": "assistant", "content": f"order A-{i:04d} shipped to Straße {i}"}]
    for i in range(300)
}


def _open(qtbot: Any, window: Any, target: str) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(target)


def test_the_index_is_built_in_the_background_and_used_by_search(qtbot, window, tmp_path: Path):
    db = write_flux_store(tmp_path / "flux.db", SESSIONS)
    _open(qtbot, window, str(db))
    qtbot.waitUntil(lambda: window.indexing.report is not None, timeout=30_000)
    assert window.indexing.report.added == 600 and window.indexing.report.built
    assert window.indexing.progress.isHidden() and window.indexing.label.isHidden()
    assert index_path(window.stores.store.store_key).exists()
    with qtbot.waitSignal(window.sessions.searchFinished, timeout=20_000):
        window.sessions.set_search("a-0042")
    assert [window.sessions.session_at(r).id for r in range(window.sessions.rowCount())] == ["s042"]
    [(row_id,)] = sqlite_rows(db, "SELECT id FROM messages WHERE content LIKE '%A-0042%'")
    assert window.sessions.hit_message("s042") == row_id  # the assistant row of s042
    window.session_list.select_row(0)
    qtbot.waitUntil(lambda: window.last_hit == ("s042", row_id, "a-0042"), timeout=10_000)
    # a store change updates the index (another process appends)
    import asyncio

    from flux.sessions import SQLiteSession

    import threading  # the library writes with its own loop, in another thread

    def write() -> None:
        asyncio.run(SQLiteSession(str(db), session_id="late").add_messages(
            [{"role": "user", "content": "a late Zanzibar order"}]))

    t = threading.Thread(target=write)
    t.start()
    t.join()
    qtbot.waitUntil(lambda: window.indexing.report is not None and window.indexing.report.added == 1,
                    timeout=30_000)
    with qtbot.waitSignal(window.sessions.searchFinished, timeout=20_000):
        window.sessions.set_search("zanzibar")
    assert window.sessions.session_at(0).id == "late"
    assert window.sessions.hit_message("late") is not None


def test_the_first_build_runs_in_a_child_process(qtbot, window, tmp_path: Path):
    """The window's UI thread does none of the build (a process of its own); the store
    travels on its stdin, not its command line; later updates run in the window."""
    db = write_flux_store(tmp_path / "flux.db", SESSIONS)
    before = sha256(db)
    _open(qtbot, window, str(db))
    qtbot.waitUntil(lambda: window.indexing.child is not None or window.indexing.report is not None,
                    timeout=20_000)
    child = window.indexing.child
    assert child is not None, "the build did not run in a child process"
    assert str(db) not in " ".join(child.process.arguments())
    qtbot.waitUntil(lambda: window.indexing.report is not None, timeout=30_000)
    assert window.indexing.report.built and window.indexing.report.added == 600
    assert window.indexing.child is None
    # an update: in the window, nothing to add
    window.indexing.store_changed()
    qtbot.waitUntil(lambda: not window.indexing.running, timeout=20_000)
    assert sha256(db) == before  # the agent's store is only read


def test_a_child_that_cannot_open_the_store_leaves_the_build_to_the_window(qtbot, window, tmp_path: Path):
    """The child fails (here: it is told another target than the store opened): the
    window builds the index itself, and says nothing in the user's way."""
    db = write_flux_store(tmp_path / "flux.db", SESSIONS)
    _open(qtbot, window, str(db))
    qtbot.waitUntil(lambda: window.indexing.report is not None, timeout=30_000)
    for suffix in ("", "-wal", "-shm"):
        Path(str(index_path(window.stores.store.store_key)) + suffix).unlink(missing_ok=True)
    window.stores.opened = window.stores.opened.__class__(
        str(tmp_path / "elsewhere.db"), window.stores.opened.options, "elsewhere")
    window.indexing.report = None
    window.indexing.set_store(window.stores.store)
    qtbot.waitUntil(lambda: window.indexing.report is not None, timeout=30_000)
    assert window.indexing.report.added == 600 and window.indexing.child is None
    assert not window.error_bar.isVisible()
