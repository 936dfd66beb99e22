"""The window's stalls on big content (issue 19, point 5), for ``bench_ui.py``.

Two stores written by the real Agents SDK (``agents.SQLiteSession``) in
``benchmarks/data/``: one session holding a 2 MB message of 30,000 lines (an assistant's
log dump, Markdown) between small ones, and one of 600 ordinary messages. Steps:

1. open the 2 MB session (the message starts collapsed) and "Show all" of it, until the
   whole message is laid out;
2. wheel steps over it (20 steps of the mouse wheel, each painted);
3. with 600 cards loaded, resize the window's width 10 times (1200 ↔ 1000 px).

Each prints the longest stall of the UI event loop next to its baseline (the window
before the fix, issue 19: 4 s for show-all, 2.5 s per wheel step, 32 ms per resize).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

#: (step name, baseline ms) in the order they run
BASELINES = {
    "show all of a 2 MB message (30,000 lines)": 4000.0,
    "20 wheel steps over it": 2500.0,
    "resize 10 times with 600 cards loaded": 32.0,
}
BIG_LINES = 30_000


def big_text() -> str:
    """About 2 MB of log lines, 30,000 of them."""
    lines = []
    for i in range(BIG_LINES):
        lines.append(
            f"10:{i // 600 % 60:02d}:{i % 60:02d}.{i % 1000:03d} w{i % 7} INFO "
            f"req-{i:06d} GET /api/v1/orders/{i * 7919 % 100000} 200 12ms"
        )
    return "\n".join(lines)


def ensure_big_store() -> Path:
    path = DATA / "ui-big.db"
    if path.exists():
        return path
    DATA.mkdir(exist_ok=True)
    from agents import SQLiteSession

    async def write() -> None:
        big = SQLiteSession("big-message", str(path))
        many = SQLiteSession("six-hundred", str(path))
        try:
            await big.add_items([
                {"role": "user", "content": "Paste the whole log, please."},
                {"role": "assistant", "content": big_text()},
                {"role": "user", "content": "Thanks."},
            ])
            items = []
            for i in range(600):
                text = (f"Message {i}: " + "some words of an ordinary answer " * (3 + i % 9)
                        + ("\n\n- a list item\n- another one" if i % 5 == 0 else ""))
                items.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
            await many.add_items(items)
        finally:
            big.close()
            many.close()

    asyncio.run(write()) if not _loop_running() else None
    return path


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def run_big(probe: Any, until: Any, path: Path) -> list[tuple[str, float, float, int]]:
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    from fluxgui.qt.window import MainWindow

    window = MainWindow()
    window.resize(1200, 800)
    window.show()
    rows: list[tuple[str, float, float, int]] = []
    pane = window.conversation

    def record(name: str, t0: float) -> None:
        rows.append((name, (time.perf_counter() - t0) * 1000, probe.stop(), probe.over_frame))

    window.stores.open_target(str(path))
    await until(lambda: window.stores.store is not None and not window.bridge.busy)
    window.show_session("big-message")
    await until(lambda: pane.session_id == "big-message" and pane.loaded_count > 0
                and not window.bridge.busy)
    big_row = next(r for r in range(pane.model.rowCount())
                   if len(pane.model.message(r).text) > 1_000_000)
    index = pane.model.index(big_row, 0)
    delegate = pane.delegate

    names = list(BASELINES)
    probe.start()
    t0 = time.perf_counter()
    pane.set_full(index, True)
    await until(lambda: delegate.settled(pane.model.message(big_row)))
    await asyncio.sleep(0.05)  # its paints
    record(names[0], t0)

    pane.view.scrollTo(index, pane.view.ScrollHint.PositionAtTop)
    await asyncio.sleep(0.05)
    viewport = pane.view.viewport()
    probe.start()
    t0 = time.perf_counter()
    for _ in range(20):
        centre = QPointF(viewport.width() / 2, viewport.height() / 2)
        event = QWheelEvent(centre, QPointF(viewport.mapToGlobal(QPoint(0, 0))) + centre,
                            QPoint(0, 0), QPoint(0, -120), Qt.MouseButton.NoButton,
                            Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(viewport, event)
        await asyncio.sleep(0.02)  # the paint of this step
    record(names[1], t0)

    window.show_session("six-hundred")
    await until(lambda: pane.session_id == "six-hundred" and not window.bridge.busy)
    while not pane.at_start:  # load every page: 600 cards
        before = pane.loaded_count
        pane.view.scrollToTop()  # the way a user pages back
        pane.paging.load_earlier()
        await until(lambda: not window.bridge.busy and (pane.at_start or pane.loaded_count > before))
    loaded = pane.loaded_count
    await asyncio.sleep(0.1)
    probe.start()
    t0 = time.perf_counter()
    for i in range(10):
        window.resize(1000 if i % 2 == 0 else 1200, 800)
        await asyncio.sleep(0.03)
    await until(lambda: delegate.settled_all())
    record(names[2] + f" ({loaded} loaded)", t0)
    await window.aclose()
    window.close()
    return rows
