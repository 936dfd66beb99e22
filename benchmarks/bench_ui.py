"""How long does the window's event loop stall while it works on a 1,000,000-message store?

Runs the real window offscreen on one qasync loop, on the stores ``bench_store.py``
generates (written by the real libraries; generated here when missing), and prints for
each step the time it took and the longest stall of the UI event loop during it:

1. show the window (until its first paint, as the app does before it opens a store),
   then open the store until the first page of sessions is shown;
2. scroll the session list to the end (every page fetched the way the view fetches);
3. run a text search until its last result is in the list (scanning: the search index
   is still being built in the background), let the index finish, search again through
   it, and open a hit at its message;
4. open the largest session until its latest messages are shown;
5. scroll that session up until three earlier pages are loaded;

then, on stores of big content (``bench_ui_big.py``): "Show all" of a 2 MB message,
wheel steps over it, and resizing with 600 cards loaded — each next to its baseline.

A stall is the longest gap between two ticks of a 1 ms ``QTimer`` (PreciseTimer): while
the loop runs a handler, paints or waits, the timer cannot tick. One frame is 16 ms.

    .venv/bin/python benchmarks/bench_ui.py [--formats flux,agents] [--messages 1000000]
                                            [--only-big | --no-big]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import stalltrace  # noqa: E402

FRAME_MS = 16.0
TRACER: Any = None


class StallProbe:
    """Longest gap between ticks of a 1 ms timer, per named phase."""

    def __init__(self) -> None:
        from PySide6.QtCore import QElapsedTimer, Qt, QTimer

        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(1)
        self._timer.timeout.connect(self._tick)
        self.worst = 0.0
        self.over_frame = 0

    def start(self) -> None:
        self.worst, self.over_frame = 0.0, 0
        self._clock.start()
        self._timer.start()

    def stop(self) -> float:
        self._tick()
        self._timer.stop()
        return self.worst

    tracer: Any = None  # a stalltrace.StallTracer with --trace-stalls

    def _tick(self) -> None:
        if self.tracer is not None:
            self.tracer.tick()
        gap = self._clock.nsecsElapsed() / 1e6
        self._clock.restart()
        self.worst = max(self.worst, gap)
        if gap > FRAME_MS:
            self.over_frame += 1


async def until(predicate: Any, timeout: float = float(os.environ.get("BENCH_TIMEOUT", "600"))) -> None:
    """Let the loop run until ``predicate()`` holds (polling lightly, never blocking)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not finish in time")
        await asyncio.sleep(0.005)


#: lines printed after a format's table (the session list's repaint figures)
NOTES: list[str] = []


def list_repaint(window: Any, runs: int = 21) -> str:
    """The session list's full repaint (median ms): fluxgui's cell painter with its texts
    kept and with every text new (a page of rows just listed), against Qt's own item
    delegate, the baseline it paints the same pixels as."""
    from PySide6.QtWidgets import QStyledItemDelegate

    view = window.session_view
    viewport = view.viewport()
    own, first = view.itemDelegate(), view.itemDelegateForColumn(0)

    def median(forget: bool) -> float:
        times = []
        for _ in range(runs):
            if forget:
                own._texts.clear()
                first._texts.clear()
            t0 = time.perf_counter()
            viewport.repaint()
            times.append((time.perf_counter() - t0) * 1000)
        return sorted(times)[runs // 2]

    kept, new = median(False), median(True)
    view.setItemDelegate(QStyledItemDelegate(view))
    view.setItemDelegateForColumn(0, None)
    qt = median(False)
    view.setItemDelegate(own)
    view.setItemDelegateForColumn(0, first)
    rows = view.rowAt(viewport.height() - 1) - view.rowAt(0) + 1
    return (f"  session list repaint ({rows} rows shown, median of {runs}): cell painter "
            f"{kept:.1f} ms (texts kept), {new:.1f} ms (all texts new); Qt's item delegate "
            f"{qt:.1f} ms")


async def run_format(fmt: str, path: Path, largest: str) -> list[tuple[str, float, float, int]]:
    from fluxgui.qt.window import MainWindow

    from fluxgui.qt.launch import first_paint

    window = MainWindow()
    window.resize(1200, 800)
    probe = StallProbe()
    probe.tracer = TRACER
    rows: list[tuple[str, float, float, int]] = []
    # As the app starts: the window is shown and painted once, then the store opens.
    probe.start()
    t0 = time.perf_counter()
    window.show()
    await first_paint(window)
    rows.append(("show the window (its first paint)", (time.perf_counter() - t0) * 1000,
                 probe.stop(), probe.over_frame))

    def traced(name: str) -> None:
        if TRACER is not None:
            stalls = TRACER.take()
            if stalls:
                print(f"  stalls in: {name}")
                stalltrace.print_stalls(stalls)

    async def phase(name: str, start: Any, done: Any) -> None:
        probe.start()
        t0 = time.perf_counter()
        start()
        await until(done)
        elapsed = (time.perf_counter() - t0) * 1000
        rows.append((name, elapsed, probe.stop(), probe.over_frame))
        traced(name)

    sessions = window.sessions
    await phase(
        "open store, first page of sessions",
        lambda: window.stores.open_target(str(path)),
        lambda: window.stores.store is not None and sessions.rowCount() > 0 and not window.bridge.busy,
    )

    def scroll_list() -> None:
        window.session_view.scrollToBottom()

    async def scroll_to_end() -> None:
        while not sessions.at_end:
            scroll_list()
            await until(lambda: not sessions.loading)
            if sessions.canFetchMore(sessions.index(-1, -1)):
                sessions.fetchMore(sessions.index(-1, -1))
            await until(lambda: not sessions.loading)

    probe.start()
    t0 = time.perf_counter()
    await scroll_to_end()
    rows.append(
        (f"scroll session list to the end ({sessions.rowCount():,} rows)",
         (time.perf_counter() - t0) * 1000, probe.stop(), probe.over_frame)
    )
    traced("scroll session list")
    NOTES.append(list_repaint(window))

    await phase(
        'search "zanzibar" (all results listed)',
        lambda: window.search("zanzibar"),
        lambda: not sessions.searching and not window.bridge.busy,
    )
    found = sessions.rowCount()
    rows[-1] = (rows[-1][0] + f" -> {found:,} sessions", *rows[-1][1:])
    window.search("")
    await until(lambda: not window.bridge.busy)

    # The search index, built in the background since the store opened (the search
    # above scanned meanwhile): the stalls while it finishes, then the same search
    # through it, then a hit opened at its message.
    indexing = window.indexing
    await phase(
        "search index built in the background (the rest of it)",
        lambda: None,
        lambda: indexing.report is not None and not indexing.running,
    )
    await phase(
        'search "zanzibar" with the index (all results listed)',
        lambda: window.search("zanzibar"),
        lambda: not sessions.searching and not window.bridge.busy,
    )
    rows[-1] = (rows[-1][0] + f" -> {sessions.rowCount():,} sessions", *rows[-1][1:])
    pane = window.conversation
    # a hit other than the largest session (opened on its own next)
    found_ids = [info.id for info in map(sessions.session_at, range(sessions.rowCount())) if info]
    hit_id = next((sid for sid in found_ids if sid != largest), None)
    if hit_id is not None:
        await phase(
            "open a search hit at its message (highlighted)",
            lambda: window.open_at(hit_id, None, "zanzibar"),
            lambda: pane.session_id == hit_id and pane.delegate.find_current is not None
            and not window.bridge.busy,
        )
    window.search("")
    await until(lambda: not window.bridge.busy)

    await phase(
        "open the largest session (latest page)",
        lambda: window.show_session(largest),
        lambda: pane.session_id == largest and pane.loaded_count > 0 and not window.bridge.busy,
    )

    async def scroll_up(pages: int) -> None:
        for _ in range(pages):
            before = pane.loaded_count
            pane.view.scrollToTop()  # the way a user drags the scroll bar up
            await until(lambda: pane.loaded_count > before and not window.bridge.busy)

    probe.start()
    t0 = time.perf_counter()
    await scroll_up(3)
    rows.append(
        (f"scroll up 3 pages ({pane.loaded_count:,} messages loaded)",
         (time.perf_counter() - t0) * 1000, probe.stop(), probe.over_frame)
    )
    traced("scroll up")
    await window.aclose()
    window.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", default="flux,agents")
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--only-big", action="store_true", help="only the big-content steps")
    parser.add_argument("--no-big", action="store_true", help="leave the big-content steps out")
    parser.add_argument("--trace-stalls", type=float, metavar="MS",
                        help="print where the UI thread was in each stall longer than MS")
    args = parser.parse_args(argv)

    import bench_store
    import qasync

    global TRACER
    if args.trace_stalls:
        TRACER = stalltrace.StallTracer(args.trace_stalls)
    from PySide6.QtWidgets import QApplication

    import bench_ui_big

    metas = {} if args.only_big else {
        fmt: bench_store.ensure_store(fmt, fmt, args.messages, args.sessions, False)
        for fmt in args.formats.split(",")
    }
    big_path = None if args.no_big else bench_ui_big.ensure_big_store()
    from fluxgui.qt.launch import _drop_offscreen_noise

    _drop_offscreen_noise()
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    from fluxgui.qt.collector import MainThreadCollector
    from fluxgui.qt.launch import warm_start

    warm_start()  # imports and the collector's freeze, as fluxgui's launch does
    collector = MainThreadCollector(app)
    print(f"fluxgui window stalls (offscreen, {os.cpu_count()} CPUs); one frame = {FRAME_MS:.0f} ms")
    worst_all = first_paint_worst = 0.0
    for fmt, meta in metas.items():
        path = Path(meta["path"])
        params = meta["params"]
        print(f"\n== {fmt}: {path.name} ({params['messages']:,} messages, "
              f"{params['sessions']:,} sessions; largest session {meta['largest_size']:,}) ==")
        rows = loop.run_until_complete(run_format(fmt, path, meta["largest_session"]))
        width = max(len(r[0]) for r in rows)
        print(f"  {'step'.ljust(width)}  {'took ms':>9}  {'longest stall ms':>16}  {'stalls > 16 ms':>14}")
        for name, took, stall, over in rows:
            print(f"  {name.ljust(width)}  {took:>9.0f}  {stall:>16.1f}  {over:>14}")
            if name.startswith("show the window"):
                first_paint_worst = max(first_paint_worst, stall)
            else:
                worst_all = max(worst_all, stall)
        for note in NOTES:
            print(note)
        NOTES.clear()
    if metas:
        print(f"\nlongest stall over all steps: {worst_all:.1f} ms "
              f"({'within' if worst_all <= FRAME_MS else 'OVER'} one frame); the window's first "
              f"paint, at start-up (with the layout its construction left): "
              f"{first_paint_worst:.1f} ms ({'within' if first_paint_worst <= FRAME_MS else 'OVER'})")
    if big_path is not None:
        big_probe = StallProbe()
        big_probe.tracer = TRACER
        rows = loop.run_until_complete(bench_ui_big.run_big(big_probe, until, big_path))
        if TRACER is not None:
            stalltrace.print_stalls(TRACER.take())
        print("\n== big content: a 2 MB message of 30,000 lines; 600 cards ==")
        width = max(len(r[0]) for r in rows)
        print(f"  {'step'.ljust(width)}  {'took ms':>9}  {'longest stall ms':>16}  "
              f"{'baseline stall ms':>17}  {'stalls > 16 ms':>14}")
        worst_big = 0.0
        for (name, took, stall, over), baseline in zip(rows, bench_ui_big.BASELINES.values(),
                                                       strict=True):
            print(f"  {name.ljust(width)}  {took:>9.0f}  {stall:>16.1f}  {baseline:>17.0f}  {over:>14}")
            worst_big = max(worst_big, stall)
        print(f"\nlongest stall on big content: {worst_big:.1f} ms "
              f"({'within' if worst_big <= 100 else 'OVER'} the 100 ms target)")
    collector.stop()
    loop.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
