"""The cycle collector runs on the UI thread only (a Qt object freed by another thread
crashes the process)."""

from __future__ import annotations

import gc
import threading
from typing import Any

from fluxgui.qt.collector import MainThreadCollector


class _Marker:
    """Garbage in a cycle that says which thread freed it."""

    freed_by: list[str] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        _Marker.freed_by.append(threading.current_thread().name)


def test_cycles_made_anywhere_are_freed_on_the_ui_thread(qtbot: Any) -> None:
    collector = MainThreadCollector(interval_ms=5)
    try:
        assert not gc.isenabled()
        _Marker.freed_by.clear()
        _Marker()  # unreachable at once, but in a cycle: only the collector frees it

        kept: list[Any] = []

        def churn() -> None:
            # far more new container objects than a young collection's threshold: with
            # the automatic collector on, this thread would run it and free the marker
            kept.extend([i] for i in range(20 * gc.get_threshold()[0]))

        worker = threading.Thread(target=churn, name="worker")
        worker.start()
        worker.join()
        assert _Marker.freed_by == []
        qtbot.waitUntil(lambda: _Marker.freed_by != [], timeout=5_000)
        assert _Marker.freed_by == [threading.main_thread().name]
        kept.clear()
    finally:
        collector.stop()
        collector.deleteLater()


def test_stop_hands_collection_back(qtbot: Any) -> None:
    before = gc.isenabled()
    collector = MainThreadCollector()
    collector.stop()
    assert gc.isenabled() == before


def test_the_due_generation_follows_the_thresholds() -> None:
    gc.collect()
    assert MainThreadCollector.due() in (None, 0)
    was = gc.isenabled()
    gc.disable()
    try:
        keep = [[i] for i in range(2 * gc.get_threshold()[0])]
        assert MainThreadCollector.due() is not None
        del keep
    finally:
        if was:
            gc.enable()
