"""No stall from big content (issue 19, point 5): a message of 30,000 lines shown whole
is laid out a piece at a time and painted only where it is seen; a resize lays out the
cards in view at once and the rest in the background. (The stalls themselves are
measured by benchmarks/bench_ui.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_on, write_agents_store

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

LINES = [f"10:00:{i % 60:02d} w{i % 7} INFO req-{i:06d} GET /orders/{i} 200 \u202e" for i in range(30_000)]
BIG = "\n".join(LINES)


def open_session(qtbot, qloop, pane, path, sid) -> Any:
    from fluxgui.adapters import open_store

    store = run_on(qtbot, qloop, open_store(str(path)))
    with qtbot.waitSignal(pane.loaded, timeout=20_000):
        pane.show_session(store, sid)
    qtbot.waitUntil(lambda: not pane.busy, timeout=20_000)
    return store


def test_a_huge_message_shown_whole_is_laid_out_in_pieces(qtbot, qloop, pane, tmp_path) -> None:
    from fluxgui.qt.conversation.chunks import ChunkedBody

    path = write_agents_store(tmp_path / "big.db", {"s": [[
        {"role": "user", "content": "the log?"},
        {"role": "assistant", "content": BIG},
    ]]})
    store = open_session(qtbot, qloop, pane, path, "s")
    try:
        delegate = pane.delegate
        row = pane.model.rowCount() - 1
        m = pane.model.message(row)
        assert delegate.is_collapsed(m) and not delegate.is_huge(m)  # a preview first
        index = pane.model.index(row, 0)
        pane.set_full(index, True)
        body = delegate.document(m)
        assert isinstance(body, ChunkedBody) and body.cut and len(body.pieces) > 10
        assert not body.done  # not laid out at once …
        pane.view.scrollTo(index)
        pane.view.viewport().grab()  # … painting lays out only what is seen
        assert 0 < sum(h is not None for h in body._heights) < len(body.pieces) // 2
        qtbot.waitUntil(lambda: delegate.settled(m), timeout=60_000)  # … the rest in slices
        assert body.done
        text = body.toPlainText()
        assert text.startswith("Shown as plain text (") and "30,000 lines" in text
        shown = text.rstrip("\n").split("\n")[1:]
        assert 1000 < len(shown) < 2000  # the card holds the start (a row is < 32,767 px)
        assert shown == [line.replace("\u202e", "⟨U+202E⟩") for line in LINES[: len(shown)]]
        # The card's height is the pieces' heights, and the view knows it.
        height = pane.view.visualRect(index).height()
        assert height >= body.height() > len(shown) * pane.fontMetrics().lineSpacing() * 0.5
        # Wheel steps paint only the pieces in view (none is built twice).
        built = pane.delegate.built
        for step in range(5):
            pane.view.verticalScrollBar().setValue(pane.view.verticalScrollBar().value() + 2000)
            pane.view.viewport().grab()
        assert pane.delegate.built == built
        # The whole text: in a viewer, filled a piece at a time.
        viewer = pane.menus.open_viewer(index)
        qtbot.waitUntil(lambda: viewer.filled, timeout=30_000)
        assert viewer.edit.toPlainText().split("\n") == [
            line.replace("\u202e", "⟨U+202E⟩") for line in LINES]
        viewer.close()
        pane.set_full(index, False)
        assert not delegate.is_huge(m)
    finally:
        run_on(qtbot, qloop, store.close())


def test_resizing_lays_out_the_cards_in_view_first_and_the_rest_later(
    qtbot, qloop, pane, tmp_path
) -> None:
    path = write_agents_store(tmp_path / "many.db", {"s": [[
        {"role": "user" if i % 2 == 0 else "assistant",
         "content": f"message {i}: " + "words of an ordinary answer " * (4 + i % 9)}
        for i in range(300)
    ]]})
    pane.page_size = 300
    store = open_session(qtbot, qloop, pane, path, "s")
    try:
        delegate, view = pane.delegate, pane.view
        assert pane.model.rowCount() == 300
        view.scrollToBottom()
        pane.resize(600, 700)
        qtbot.waitUntil(lambda: view.viewport().width() < 600)
        width = view.viewport().width()
        seen = view.seen_ids(0)
        assert seen and all(delegate._sizes[i][0] == width for i in seen)
        stale = [m.id for m in pane.model.messages if delegate._sizes.get(m.id, (width,))[0] != width]
        assert stale  # the cards out of view wait …
        qtbot.waitUntil(delegate.settled_all, timeout=20_000)  # … and get their heights
        assert all(delegate._sizes[m.id][0] == width for m in pane.model.messages)
        bar = view.verticalScrollBar()
        assert bar.value() == bar.maximum()  # still at the end
        # The heights are those of a fresh layout at this width.
        for m in pane.model.messages[:5]:
            size = delegate._sizes[m.id][1]
            assert size == delegate._size(m, width)
    finally:
        run_on(qtbot, qloop, store.close())
