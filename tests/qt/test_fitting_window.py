"""Issue 37: side panels that fit any screen, and a geometry that comes back exactly.

Offscreen (no window manager): the minimum size with every combination of side panels,
the conversation's width, the window not grown by a panel, save/restore cycles. The
window manager's part (the frame, the creep by the title bar) is measured by
``scripts/relaunch_geometry.sh`` under Xvfb + openbox."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from PySide6.QtCore import QRect
from qt_helpers import OFFSCREEN_NOISE

from fluxgui.qt.window.placement import GEOMETRY, clamp

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _docks(window: Any) -> dict[str, Any]:
    return {"review": window.reviews.dock, "doctor": window.doctor.dock, "chat": window.chat_dock}


@pytest.mark.parametrize("combo", [c for n in range(1, 4) for c in itertools.combinations(["review", "doctor", "chat"], n)])
@pytest.mark.parametrize("inspector", [True, False])
def test_every_panel_combination_fits_a_small_laptop(qtbot, window, combo, inspector):
    window.actions_by_name["inspector"].setChecked(inspector)
    window.resize(900, 560)
    for name in combo:
        _docks(window)[name].show()
    qtbot.waitUntil(lambda: all(_docks(window)[n].isVisible() or window.tabifiedDockWidgets(_docks(window)[n])
                                for n in combo))
    hint = window.minimumSizeHint()
    assert hint.width() <= 900 and hint.height() <= 560, (combo, hint)
    window.resize(900, 560)
    qtbot.waitUntil(lambda: window.width() == 900 and window.height() == 560)
    # the conversation is the view that stretches: it keeps the most of the width
    qtbot.waitUntil(lambda: window.conversation.view.width() >= 300)
    assert window.conversation.width() > window.session_view.width()


def test_opening_panels_does_not_grow_the_window(qtbot, window):
    window.resize(900, 700)
    qtbot.waitUntil(lambda: window.width() == 900)
    window.actions_by_name["review_panel"].trigger()
    window.doctor.dock.show()
    qtbot.waitUntil(lambda: window.doctor.dock.isVisible() or window.reviews.dock.isVisible())
    qtbot.waitUntil(lambda: window.reviews.on)
    assert window.width() == 900 and window.height() == 700
    # side panels share one tabbed dock: opening the Doctor does not take the width twice
    assert window.doctor.dock in window.tabifiedDockWidgets(window.reviews.dock)
    assert window.conversation.view.width() >= 300


def test_ten_save_restore_cycles_keep_the_geometry(qtbot, window):
    from fluxgui.qt.window.placement import WindowPlacement

    window.resize(700, 500)
    window.move(60, 70)
    qtbot.waitUntil(lambda: window.width() == 700)
    first = window.geometry()
    settings = window.recent.settings
    for _ in range(10):
        window.placement.save()
        window.resize(400, 300)
        window.move(0, 0)
        WindowPlacement(window, settings)
        assert window.geometry() == first


def test_a_saved_geometry_off_the_screen_is_brought_back_on(qtbot, window):
    from fluxgui.qt.window.placement import WindowPlacement, available_area

    area = available_area(window)
    window.resize(600, 400)
    window.move(area.right() - 100, area.bottom() - 50)
    window.recent.settings.setValue(GEOMETRY, window.saveGeometry())
    WindowPlacement(window, window.recent.settings)
    assert area.contains(window.geometry())


def test_clamp_keeps_a_rect_that_fits():
    area = QRect(0, 0, 800, 500)
    assert clamp(QRect(10, 20, 300, 200), area) == QRect(10, 20, 300, 200)
    assert clamp(QRect(700, 450, 300, 200), area) == QRect(500, 300, 300, 200)


def test_the_inspector_folds_in_a_narrow_conversation_and_comes_back(qtbot, window):
    inner = window.conversation.splitter
    window.resize(1100, 700)
    qtbot.waitUntil(lambda: window.width() == 1100)
    qtbot.waitUntil(lambda: window.conversation.width() >= 560)
    qtbot.waitUntil(lambda: inner.sizes()[1] > 0)  # room: the inspector is shown
    window.resize(900, 560)
    window.reviews.dock.show()
    qtbot.waitUntil(lambda: window.conversation.width() < 560)
    qtbot.waitUntil(lambda: inner.sizes()[1] == 0)  # folded: the messages keep the width
    window.reviews.dock.hide()
    qtbot.waitUntil(lambda: window.conversation.width() >= 560)
    qtbot.waitUntil(lambda: inner.sizes()[1] > 0)
