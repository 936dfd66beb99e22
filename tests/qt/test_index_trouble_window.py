"""The window's background index on stores and cache folders that gave it trouble (issue
33): a lone surrogate in a stored item (33.4: the build failed and said nothing), a cache
folder that is full (33.5: said once, search still answers), a damaged index file (set
aside and built anew)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mounts import tmpfs
from qt_helpers import OFFSCREEN_NOISE, run_async, write_agents_store, write_flux_store

from fluxgui.adapters import open_store
from fluxgui.services.index import index_path, update_index

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

SESSIONS = {f"s{i:03d}": [{"role": "user", "content": f"message {j}: order A-{i:04d} " * 8} for j in range(5)]
            for i in range(100)}
NOTICE = "Search reads the whole store instead of its index"


def _open(qtbot: Any, window: Any, target: str) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(target)


def _search(qtbot: Any, window: Any, text: str) -> list[str]:
    with qtbot.waitSignal(window.sessions.searchFinished, timeout=20_000):
        window.sessions.set_search(text)
    return [window.sessions.session_at(r).id for r in range(window.sessions.rowCount())]


def test_a_lone_surrogate_is_indexed_in_the_background(qtbot, window, tmp_path: Path) -> None:
    db = write_agents_store(tmp_path / "agents.db", {
        "lone": [[{"role": "user", "content": "hello \udc80 world lone"}]],
        "plain": [[{"role": "user", "content": "plain words"}]],
    })
    _open(qtbot, window, str(db))
    qtbot.waitUntil(lambda: window.indexing.report is not None or not window.indexing.running, timeout=30_000)
    assert window.index_bar.isHidden()
    assert window.indexing.report.built and window.indexing.report.added == 2
    assert _search(qtbot, window, "world lone") == ["lone"]
    assert window.sessions.hit_message("lone") == 1  # found through the index


def test_a_full_cache_folder_is_said_once_and_search_still_works(
    qtbot, window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = write_flux_store(tmp_path / "flux.db", SESSIONS)
    with tmpfs(tmp_path / "small", "64k") as small:
        monkeypatch.setenv("FLUXGUI_CACHE_DIR", str(small / "cache"))
        _open(qtbot, window, str(db))
        qtbot.waitUntil(lambda: NOTICE in window.index_bar.text(), timeout=30_000)
        assert window.index_bar.isVisible()
        assert NOTICE in window.index_bar.text() and "database or disk is full" in window.index_bar.text()
        assert _search(qtbot, window, "a-0042") == ["s042"]
        # it fails again at the next update: not said again
        window.indexing._start(window.stores.store)
        qtbot.waitUntil(lambda: not window.indexing.running, timeout=30_000)
        assert window.index_bar.text().count(NOTICE) == 1
        assert _search(qtbot, window, "a-0077") == ["s077"]


def test_a_damaged_index_file_is_built_anew(qtbot, window, tmp_path: Path) -> None:
    db = write_flux_store(tmp_path / "flux.db", SESSIONS)

    async def build() -> Path:
        store = await open_store(str(db))
        try:
            await update_index(store)
        finally:
            await store.close()
        return index_path(store.store_key)

    path = run_async(build())
    path.write_bytes(b"not a database" * 400)
    _open(qtbot, window, str(db))
    qtbot.waitUntil(lambda: window.indexing.report is not None or not window.indexing.running, timeout=30_000)
    assert window.index_bar.isHidden()
    assert window.indexing.report.built and window.indexing.report.added == 500
    assert window.indexing.report.set_aside == str(path.with_name(path.name + ".corrupt"))
    assert _search(qtbot, window, "a-0042") == ["s042"]
    assert window.sessions.hit_message("s042") is not None
