"""Session ids holding hidden characters, in the window's session list (issue 33.16): a
bidi override is shown as its marker, as in message text, never applied ("h2\\u202eevil"
must not read "h2live")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from qt_helpers import OFFSCREEN_NOISE, write_flux_store

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

HOSTILE = {
    "h2\u202eevil": "⟨U+202E⟩",  # right-to-left override
    "a\u2067b\u2069c": "⟨U+2067⟩",  # right-to-left isolate
    "zero\u200bwidth": "⟨U+200B⟩",
    "bell\x07here": "⟨BEL⟩",
}


def _open(qtbot: Any, window: Any, target: str) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(target)


def test_hidden_characters_in_ids_are_markers_in_the_session_list(qtbot, window, tmp_path: Path) -> None:
    db = write_flux_store(tmp_path / "ids.db", {sid: [{"role": "user", "content": "hi"}] for sid in HOSTILE})
    _open(qtbot, window, str(db))
    model = window.sessions
    qtbot.waitUntil(lambda: model.rowCount() == len(HOSTILE), timeout=20_000)
    for row in range(model.rowCount()):
        sid = model.session_at(row).id
        shown, _icon = model.cell(row, model.ID)
        display = model.data(model.index(row, model.ID), Qt.ItemDataRole.DisplayRole)
        tip = model.data(model.index(row, model.ID), Qt.ItemDataRole.ToolTipRole)
        assert shown == display
        assert HOSTILE[sid] in shown and HOSTILE[sid] in tip, (sid, shown)
        hidden = set("\u202e\u2067\u2069\u200b\x07")
        assert not hidden & set(shown) and not hidden & set(tip), (sid, shown)
