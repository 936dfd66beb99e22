"""Issue 37: the side panels' contents fit the tabbed side dock's width — at 900×560, at
1× and 2× (the second run in a child process with ``QT_SCALE_FACTOR=2``).

Rows of buttons wrap (:class:`fluxgui.qt.flow.FlowLayout`), sentences wrap, long ids
elide: no panel shows a horizontal scroll bar, and every button lies inside the dock,
both at the width a panel opens at and at the narrowest the dock can be made. Data
tables (Preflight, Ledger) are the exception: their columns scroll, inside the table."""

from __future__ import annotations

import os
from typing import Any

import pytest
from doctor_helpers import SHAPES
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea, QTableView, QWidget
from qt_helpers import OFFSCREEN_NOISE, pytest_in_child, write_agents_store

from fluxgui.qt.window.side_docks import SIDE_MIN

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

SID = "orphan-call"


def _dock_rect(dock: Any, widget: QWidget) -> QRect:
    return QRect(widget.mapTo(dock, QPoint(0, 0)), widget.size())


def _offenders(dock: Any) -> list[str]:
    """What scrolls sideways or sticks out of ``dock`` (its shown contents)."""
    out = []
    for area in dock.findChildren(QAbstractScrollArea):
        if area.isVisible() and not isinstance(area, QTableView) and area.horizontalScrollBar().isVisible():
            out.append(f"{area.objectName() or type(area).__name__} scrolls sideways")
    inside = dock.rect()
    for button in dock.findChildren(QAbstractButton):
        if not button.isVisible() or button.parent() is dock or button.window() is not dock.window():
            continue  # (the dock's own title buttons are drawn in its title bar)
        rect = _dock_rect(dock, button)
        # every enclosing scroll area's viewport clips what is seen of it
        clip = inside
        parent = button.parentWidget()
        while parent is not None and parent is not dock:
            if isinstance(parent, QAbstractScrollArea):
                clip = clip.intersected(_dock_rect(dock, parent.viewport()))
            parent = parent.parentWidget()
        if rect.left() < clip.left() or rect.right() > clip.right():
            out.append(f"button {button.text()!r} at {rect.left()}..{rect.right()} outside {clip.left()}..{clip.right()}")
    return out


def _tabs(dock: Any) -> list[Any]:
    """The Doctor's tabs each in front in turn (other docks: one look)."""
    from PySide6.QtWidgets import QTabWidget

    tabs = dock.findChild(QTabWidget, "doctorTabs")
    return [tabs] * tabs.count() if tabs is not None else [None]


def test_side_panels_reflow_in_the_dock(qtbot, window, tmp_path):
    path = write_agents_store(tmp_path / "agents.db", {SID: [SHAPES[SID][0]]})
    with qtbot.waitSignal(window.reviews.ready, timeout=10_000):
        window.reviews.use(str(tmp_path / "reviews.db"), None)
    with qtbot.waitSignal(window.doctor.checked, timeout=20_000):
        window.stores.open_target(str(path), session_id=SID, writable=True)
    window.resize(900, 560)
    # (Review is open already: use() opened it, and its action would close it)
    window.actions_by_name["doctor"].trigger()
    window.actions_by_name["chat"].trigger()
    reviews, doctor = window.reviews, window.doctor
    qtbot.waitUntil(lambda: reviews.on and reviews.panel.isEnabled() and reviews.panel.rubric is not None,
                    timeout=20_000)
    qtbot.waitUntil(lambda: doctor.report is not None and doctor.report.session_id == SID, timeout=20_000)
    # a tag button and a filled preview (its long lines wrap at the dock's width)
    reviews.panel.tagAdded.emit("a-tag-with-a-rather-long-name-for-a-narrow-dock")
    qtbot.waitUntil(lambda: reviews.panel.review is not None and bool(reviews.panel.review.tags), timeout=10_000)
    with qtbot.waitSignal(doctor.planned, timeout=20_000):
        doctor.problems.preview_button.click()
    assert "The call was cancelled" in doctor.problems.preview.toPlainText()
    window.resize(900, 560)
    qtbot.waitUntil(lambda: window.width() == 900 and window.height() == 560)
    docks = [reviews.dock, doctor.dock, window.chat_dock]

    for width in (None, SIDE_MIN.width()):
        if width is not None:  # the narrowest the user can drag the dock to
            window.resizeDocks([reviews.dock], [width], Qt.Orientation.Horizontal)
            qtbot.waitUntil(lambda w=width: abs(reviews.dock.width() - w) <= 2)
        for dock in docks:
            dock.raise_()
            qtbot.waitUntil(dock.isVisible)
            for n, tabs in enumerate(_tabs(dock)):
                if tabs is not None:
                    tabs.setCurrentIndex(n)
                # laid out again at this width (no signal for "layout settled": poll)
                try:
                    qtbot.waitUntil(lambda d=dock: not _offenders(d), timeout=3_000)
                except qtbot.TimeoutError:
                    pass
                assert not _offenders(dock), (dock.objectName(), n, width, _offenders(dock))
            buttons = [b for b in dock.findChildren(QAbstractButton) if b.isVisible()]
            assert buttons, dock.objectName()
    # the rows wrapped: the four state buttons are not all on one row in the narrow dock
    reviews.dock.raise_()
    qtbot.waitUntil(lambda: len({b.mapTo(reviews.dock, QPoint(0, 0)).y()
                                 for b in reviews.panel.state_buttons.values()}) > 1)

def test_side_panels_reflow_at_2x_scale() -> None:
    if os.environ.get("QT_SCALE_FACTOR") == "2":
        pytest.skip("this is the 2× run")
    env = {"QT_SCALE_FACTOR": "2", "QT_QPA_PLATFORM": "offscreen"}
    pytest_in_child([f"{__file__}::test_side_panels_reflow_in_the_dock"], env, passed=1)
