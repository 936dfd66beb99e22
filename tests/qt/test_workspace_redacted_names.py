"""Store names under View › Redact (issue 39 held to issue 36's views): a store kept in a
folder named after a customer (``alice@example.com/conversations.db``) is shown with the
window's placeholder in the title, the status bar, the workspace's chips, its Store
column and tooltips, the merged timeline's tags and header, Compare ▾ and the
Consolidate preview; turning Redact off shows the name again at once. The stores are
only read, under their real paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from doctor_helpers import answer, user
from qt_helpers import OFFSCREEN_NOISE, run_async
from test_workspace_window import open_workspace
from workspace_helpers import agents_add, minute

from PySide6.QtCore import Qt

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

EMAIL = "alice@example.com"


@pytest.fixture
def named(tmp_path: Path) -> list[Path]:
    paths = [tmp_path / EMAIL / "conversations.db", tmp_path / "b" / "conversations.db"]
    for n, p in enumerate(paths):
        p.parent.mkdir()
        run_async(agents_add(p, "s", [user(f"turn {n}"), answer("ok", f"msg_{n}")], minute(n)))
    return paths


def _shown(window: Any, ws: Any) -> str:
    """Every place a store's name is shown, as one text."""
    chips = [f"{ws.bar.chips.item(i).text()} {ws.bar.chips.item(i).toolTip()}" for i in range(ws.bar.chips.count())]
    cells = [ws.model.index(r, c).data(role) for r in range(ws.model.rowCount())
             for c in range(ws.model.columnCount()) for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)]
    delegate = ws.timeline.cards.itemDelegate()
    tags = [delegate._shown(label) for p in ws.timeline.model.placed for label in p.stores]
    menu = [a.text() for a in ws.timeline.compare_button.menu().actions()]
    return "\n".join(map(str, [window.windowTitle(), window.status.store_label.toolTip(), *chips, *cells,
                               ws.timeline.header.text(), *tags, *menu]))


def test_a_store_named_after_a_customer_is_shown_redacted_and_back(qtbot, window, named):
    ws = open_workspace(qtbot, window, named)
    assert ws.select("s")
    qtbot.waitUntil(lambda: ws.timeline.line is not None and ws.timeline.session_id == "s", timeout=20_000)
    assert EMAIL in _shown(window, ws)
    window.actions_by_name["redact"].setChecked(True)
    qtbot.waitUntil(lambda: ws.timeline.line is not None and ws.timeline.redacted, timeout=20_000)
    shown = _shown(window, ws)
    assert EMAIL not in shown and "[EMAIL_1]/conversations.db" in shown
    assert "[EMAIL_1]/conversations.db" in window.windowTitle()
    dialog = ws.files.consolidate(["s"])
    try:
        assert EMAIL not in dialog.summary.text() and "[EMAIL_1]" in dialog.summary.text()
    finally:
        dialog.close()
    window.actions_by_name["redact"].setChecked(False)
    qtbot.waitUntil(lambda: ws.timeline.line is not None and not ws.timeline.redacted, timeout=20_000)
    assert EMAIL in window.windowTitle() and EMAIL in ws.bar.chips.item(1).toolTip()
    assert all(p.exists() for p in named)


def test_one_store_s_path_is_shown_redacted_in_the_title_and_the_status_bar(qtbot, window, named):
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(named[0]), session_id="s")

    def names() -> str:
        return f"{window.windowTitle()}\n{window.status.store_label.text()}\n{window.status.store_label.toolTip()}"

    assert EMAIL in names()
    window.actions_by_name["redact"].setChecked(True)
    qtbot.waitUntil(lambda: EMAIL not in names(), timeout=20_000)
    assert "[EMAIL_1]" in window.windowTitle() and window.windowTitle().endswith(" — fluxgui")
    window.actions_by_name["redact"].setChecked(False)
    assert EMAIL in names()


def test_a_long_store_label_is_cut_in_its_chip_not_clipped(qtbot, window, named):
    from fluxgui.qt.workspace.store_bar import FULL_ROLE

    ws = open_workspace(qtbot, window, named)
    long = "replica-" + "x" * 120
    assert ws.members.rename("b/conversations.db", long) is None
    ws.rename_done("b/conversations.db", long)
    item = next(ws.bar.chips.item(i) for i in range(ws.bar.chips.count())
                if ws.bar.chips.item(i).data(FULL_ROLE) == long)
    qtbot.waitUntil(lambda: "…" in item.text(), timeout=5_000)
    assert item.text().startswith("replica-") and long in item.toolTip()
    fm = ws.bar.chips.fontMetrics()
    assert fm.horizontalAdvance(item.text()) < ws.bar.chips.viewport().width()
