"""A huge item (over ``PARTIAL_BYTES``) in a session: the window reads only its start, and
its card shows that start and the item's size, with Open in Viewer, which reads the whole
text from the store. (First screen, stalls and memory: benchmarks/bench_huge_items.py.)

Stores are written by the real libraries (``agents.SQLiteSession.add_items``,
``flux.sessions.SQLiteSession``)."""

from __future__ import annotations

from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_on, write_agents_store, write_flux_store

from fluxgui.core.bodies import HEAD_CHARS, PARTIAL_BYTES
from fluxgui.core.display import size_label

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

LINE = "{:09d} tool output line, with a tab\tand a quote \" and a backslash \\\n"
OUTPUT = "".join(LINE.format(i) for i in range(PARTIAL_BYTES // 60 + 1000))


def ordinary(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(n)]


@pytest.mark.parametrize("kind", ["agents", "flux"])
def test_the_huge_card_shows_its_start_and_size_and_opens_in_the_viewer(
    kind: str, qtbot: Any, qloop: Any, pane: Any, tmp_path: Any
) -> None:
    from fluxgui.adapters import open_store

    if kind == "agents":
        path = write_agents_store(tmp_path / "huge.db", {"s": [ordinary(4), [
            {"type": "function_call", "call_id": "c1", "name": "dump_logs", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": OUTPUT},
        ], ordinary(3)]})
    else:
        path = write_flux_store(tmp_path / "huge.db", {"s": [
            *ordinary(4), {"role": "tool", "content": OUTPUT}, *ordinary(3)]})
    store = run_on(qtbot, qloop, open_store(str(path)))
    try:
        with qtbot.waitSignal(pane.loaded, timeout=20_000):
            pane.show_session(store, "s")
        qtbot.waitUntil(lambda: not pane.busy, timeout=20_000)
        row = next(r for r in range(pane.model.rowCount()) if pane.model.message(r).partial)
        m = pane.model.message(row)
        # only the start was read, and the stored size is known
        assert m.kind == "tool_output" and m.partial >= len(OUTPUT) > PARTIAL_BYTES
        assert OUTPUT.startswith(m.text) and 0 < len(m.text) <= HEAD_CHARS
        delegate, index = pane.delegate, pane.model.index(row, 0)
        # the card: collapsed, its start shown, its size and the viewer named below it
        assert delegate.is_collapsed(m) and delegate.long_size(m) == m.partial
        assert delegate.footer_text(m) == f"▾ Show the start ({size_label(m.partial)}: the whole in Open in Viewer)"
        pane.set_full(index, True)
        body = delegate.document(m)
        text = body.toPlainText()
        assert text.startswith(f"The start of a {size_label(m.partial)} message, as plain text")
        shown = text.rstrip("\n").split("\n")[1:]
        assert 1000 < len(shown) and shown == OUTPUT.split("\n")[: len(shown)]
        # the context menu offers the viewer, which reads the whole text from the store
        menu = pane.menus.build_context_menu(index)
        assert "Open in Viewer" in [a.text() for a in menu.actions()]
        viewer = pane.menus.open_viewer(index)
        assert "Reading the whole message" in viewer.status.text()
        qtbot.waitUntil(lambda: viewer.filled, timeout=60_000)
        assert viewer.edit.toPlainText() == OUTPUT
        viewer.close()
        # copying it copies the whole item, not its start
        from PySide6.QtGui import QGuiApplication

        pane.view.setCurrentIndex(index)
        assert pane.menus.copy_text()
        qtbot.waitUntil(lambda: QGuiApplication.clipboard().text() == OUTPUT, timeout=30_000)
    finally:
        run_on(qtbot, qloop, store.close())
