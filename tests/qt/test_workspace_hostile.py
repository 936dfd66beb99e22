"""Hostile content in the workspace's own views (issue 36 held to the window's bars): a
session id and message text holding hidden characters (a right-to-left override that
makes "exe.png" read as "gnp.exe", a zero-width space, ESC) are shown with markers in the
all-stores list, the merged timeline's cards and header and the consolidation preview,
as in the conversation pane; a 3 MB message's card holds its start only (measuring and
painting it whole would freeze the window)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from doctor_helpers import answer, user
from qt_helpers import OFFSCREEN_NOISE, run_async
from workspace_helpers import agents_add, minute

from fluxgui.core.visible import hidden_characters

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

EVIL_ID = "invoice\u202egnp.exe\u200b"
HOSTILE = "pay \u202eevil\u202c now \x1b[31mred\u200b"
HUGE = "A" * 3_000_000


def _hidden(text: Any) -> list[str]:
    return hidden_characters(str(text))


@pytest.fixture
def hostile(tmp_path: Path) -> list[Path]:
    """Two replicas, each holding a turn of ``EVIL_ID`` (a split session)."""
    paths = [tmp_path / "a" / "conversations.db", tmp_path / "b" / "conversations.db"]
    for p in paths:
        p.parent.mkdir()
    run_async(agents_add(paths[0], EVIL_ID, [user(HOSTILE), answer("ok \u202e" + "done", "msg_a1")], minute(1)))
    run_async(agents_add(paths[1], EVIL_ID, [user("and the log"), answer(HUGE, "msg_b1")], minute(2)))
    return paths


def test_hidden_characters_are_markers_and_a_huge_card_holds_its_start(qtbot, window, hostile):
    from fluxgui.core.ports import OpenOptions
    from fluxgui.qt.workspace.timeline_view import CARD_CHARS, card_text
    from fluxgui.services.workspace import Entry

    ws = window.workspace
    ws.open_entries([Entry(str(p)) for p in hostile], OpenOptions())
    qtbot.waitUntil(lambda: len(ws.members) == 2 and ws.model.rowCount() == 1 and not ws.model.loading,
                    timeout=30_000)
    # the all-stores list: the id's display and tooltip
    row = ws.model.index(0, ws.model.ID)
    assert ws.model.listed(0).id == EVIL_ID  # (the real id is what is read and written)
    for role in (0, 3):  # display, tooltip
        shown = row.data(role)
        assert "⟨U+202E⟩" in shown and _hidden(shown) == [], (role, shown)
    # the merged timeline: its header and every card
    ws.select(EVIL_ID)
    qtbot.waitUntil(lambda: ws.timeline.session_id == EVIL_ID and bool(ws.timeline.model.placed), timeout=20_000)
    header = ws.timeline.header.text()
    assert "⟨U+202E⟩" in header and _hidden(header) == []
    cards = [card_text(p.message) for p in ws.timeline.model.placed]
    assert [c for c in cards if _hidden(c)] == []
    assert "⟨U+202E⟩evil⟨U+202C⟩" in cards[0] and "⟨ESC⟩[31m" in cards[0]
    huge = next(c for p, c in zip(ws.timeline.model.placed, cards, strict=True) if p.message.text == HUGE)
    assert huge.startswith("AAAA") and len(huge) <= CARD_CHARS + 1
    # the consolidation preview: its title and the session's row
    dialog = ws.files.consolidate([EVIL_ID])
    assert _hidden(dialog.windowTitle()) == [] and "⟨U+202E⟩" in dialog.windowTitle()
    dialog.dest.setText(str(hostile[0].parent.parent / "merged.db"))
    with qtbot.waitSignal(dialog.planned, timeout=30_000):
        dialog.preview_button.click()
    cell = dialog.table.item(0, 0).text()
    assert "⟨U+202E⟩" in cell and _hidden(cell) == []
    dialog.close()
