"""The session doctor in the window: badges in the session list, markers on the cards,
the Doctor panel's preview/apply/undo, Preflight, the ledger, and Test-chat's warning.
Stores are written by the real Agents SDK; results are read back through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from doctor_helpers import HEALTHY, SHAPES
from PySide6.QtWidgets import QMessageBox
from qt_helpers import OFFSCREEN_NOISE, run_async, when_modal, write_agents_store

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def _store(tmp_path: Path) -> Path:
    sessions = {sid: [items] for sid, (items, _p) in SHAPES.items() if sid in (
        "healthy", "orphan-call", "dangling-reasoning", "duplicate-id")}
    return write_agents_store(tmp_path / "agents.db", sessions)


def _items(path: Path, sid: str) -> list[Any]:
    from agents import SQLiteSession

    async def read() -> list[Any]:
        s = SQLiteSession(sid, str(path))
        try:
            return list(await s.get_items())
        finally:
            s.close()

    return run_async(read())


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.editor.running, timeout=20_000)


def _open(qtbot: Any, window: Any, path: Path, sid: str, **kw: Any) -> None:
    with qtbot.waitSignal(window.doctor.checked, timeout=20_000):
        window.stores.open_target(str(path), session_id=sid, **kw)
    _settle(qtbot, window)


def _open_doctor(qtbot: Any, window: Any, path: Path, sid: str) -> Any:
    """Open ``sid`` writable with the Doctor panel shown; its Problems tab once checked."""
    _open(qtbot, window, path, sid, writable=True)
    window.actions_by_name["doctor"].trigger()
    doctor = window.doctor
    qtbot.waitUntil(lambda: doctor.report is not None and doctor.report.session_id == sid,
                    timeout=20_000)
    return doctor.problems


def test_badges_appear_lazily_for_listed_sessions(qtbot, window, tmp_path):
    path = _store(tmp_path)
    _open(qtbot, window, path, "healthy")
    badges = window.doctor.badges
    qtbot.waitUntil(lambda: all(badges.count(s) is not None for s in
                                ("healthy", "orphan-call", "dangling-reasoning", "duplicate-id")),
                    timeout=20_000)
    assert badges.count("healthy") == 0
    assert badges.count("orphan-call") == 1 and badges.count("duplicate-id") == 1
    window.grab().save(str(tmp_path / "badges.png"))


def test_checks_on_the_event_loop_stay_small(qtbot, window, tmp_path, monkeypatch):
    """A badge check runs on the window's event loop: a session over MAX_MESSAGES gets no
    badge (nor an automatic check when shown, until the Doctor opens), one at the bound
    is checked, read CHECK_BATCH messages at a time."""
    from fluxgui.qt.doctor.badges import CHECK_BATCH, MAX_MESSAGES

    user = {"role": "user", "content": "again"}
    path = write_agents_store(tmp_path / "sizes.db", {
        "at-the-bound": [[user] * MAX_MESSAGES],
        "over-the-bound": [[user] * (MAX_MESSAGES + 1)],
    })
    pages: list[int] = []
    from fluxgui.adapters.sql.agents.reading import AgentsReader

    real = AgentsReader.page_messages

    async def page_messages(self, *args, **kwargs):  # records each page's size
        page = await real(self, *args, **kwargs)
        if kwargs.get("direction") == "forward":
            pages.append(kwargs.get("limit"))
        return page

    monkeypatch.setattr(AgentsReader, "page_messages", page_messages)
    window.stores.open_target(str(path), session_id="over-the-bound")
    badges = window.doctor.badges
    qtbot.waitUntil(lambda: badges.count("at-the-bound") is not None, timeout=20_000)
    _settle(qtbot, window)
    assert badges.count("at-the-bound") == 0
    assert badges.count("over-the-bound") is None  # never checked, not queued
    assert "over-the-bound" not in badges._queue
    assert window.doctor.problems.summary.text() == "A large session: open the Doctor to check it."
    assert pages and set(pages) == {CHECK_BATCH}


def test_markers_on_the_cards_involved(qtbot, window, tmp_path):
    path = _store(tmp_path)
    _open(qtbot, window, path, "duplicate-id")
    pane = window.conversation
    ids = [m.id for m in pane.model.messages]
    assert set(pane.markers) == {ids[1], ids[3]}
    text, sentence = pane.markers[ids[1]]
    assert text == "duplicate id" and "Duplicate item found with id msg_dup" in sentence
    m = pane.model.messages[1]
    assert "duplicate id" in pane.delegate.header_text(m)
    assert "duplicate id" not in pane.delegate.header_text(pane.model.messages[0])


def test_doctor_panel_preview_apply_undo(qtbot, window, tmp_path):
    path = _store(tmp_path)
    tab = _open_doctor(qtbot, window, path, "orphan-call")
    doctor = window.doctor
    assert tab.list.count() == 1 and tab.chosen() == ["orphan_call"]
    with qtbot.waitSignal(doctor.planned, timeout=20_000):
        tab.preview_button.click()
    preview = tab.preview.toPlainText()
    assert "+ new tool output: The call was cancelled" in preview
    assert tab.apply_button.isEnabled()
    window.grab().save(str(tmp_path / "doctor-preview.png"))
    before = _items(path, "orphan-call")
    with qtbot.waitSignal(doctor.checked, timeout=20_000) as checked:
        tab.apply_button.click()
    assert checked.args[0].problems == ()
    _settle(qtbot, window)
    repaired = _items(path, "orphan-call")
    assert repaired[3]["type"] == "function_call_output" and len(repaired) == len(before) + 1
    assert window.editor.stack.undoText().startswith("Repair session")
    with qtbot.waitSignal(doctor.checked, timeout=20_000) as again:
        tab.undo_button.click()
    assert [p.code for p in again.args[0].problems] == ["orphan_call"]
    _settle(qtbot, window)
    assert _items(path, "orphan-call") == before


def test_read_only_store_previews_but_does_not_apply(qtbot, window, tmp_path):
    path = _store(tmp_path)
    _open(qtbot, window, path, "dangling-reasoning")
    doctor = window.doctor
    with qtbot.waitSignal(doctor.planned, timeout=20_000):
        doctor.preview_repair()
    assert not doctor.problems.apply_button.isEnabled()
    assert "read-only" in doctor.problems.status.text()


def test_preflight_and_ledger_views(qtbot, window, tmp_path):
    path = _store(tmp_path)
    _open(qtbot, window, path, "healthy")
    doctor = window.doctor
    window.actions_by_name["doctor"].trigger()
    doctor.tabs.setCurrentWidget(doctor.preflight_view)
    with qtbot.waitSignal(doctor.preflighted, timeout=30_000) as done:
        doctor.preflight_view.run_button.click()
    result = done.args[0]
    assert list(result.input) == HEALTHY
    view = doctor.preflight_view
    assert view.table.rowCount() == len(HEALTHY)
    assert view.table.item(2, 1).text().startswith("function_call")
    assert f"{result.total:,} tokens" in view.total.text()
    window.grab().save(str(tmp_path / "preflight.png"))
    doctor.tabs.setCurrentWidget(doctor.ledger_view)
    doctor.ledger_view.model.setText("gpt-4o")
    with qtbot.waitSignal(doctor.ledgered, timeout=30_000) as led:
        doctor.ledger_view.run_button.click()
    ledger = led.args[0]
    assert len(ledger.turns) == 2 and doctor.ledger_view.table.rowCount() == 2
    assert doctor.ledger_view.table.item(0, 2).text() == "get_weather"
    assert doctor.ledger_view.table.item(0, 6).text().startswith("$")
    assert "largest context" in doctor.ledger_view.gauge.format()
    window.grab().save(str(tmp_path / "ledger.png"))


def test_test_chat_warns_before_sending_a_broken_session(qtbot, window, tmp_path):
    path = _store(tmp_path)
    _open(qtbot, window, path, "duplicate-id", writable=True)
    panel = window.chat_panel
    window.chat.show(True)
    panel.message.setPlainText("hello")
    asked: list[str] = []

    def say_no(box: QMessageBox) -> None:
        asked.append(box.text())
        box.button(QMessageBox.StandardButton.No).click()

    when_modal(QMessageBox, say_no)
    assert panel.send() is False
    assert asked and "duplicate_id" in asked[0]
    assert not panel.running
    assert len(_items(path, "duplicate-id")) == 4  # nothing was sent or saved


def test_differing_outputs_shown_both_and_the_picked_one_kept(qtbot, window, tmp_path):
    from doctor_helpers import call, output, user

    path = write_agents_store(tmp_path / "twice.db", {"twice": [
        [user("weather in Bergen?"), call("call_twice", "get_weather")],
        [output("call_twice", "rain, 9 °C")],
        [output("call_twice", "rain, 11 °C"), {"role": "assistant", "content": "Rain."}],
    ]})
    tab = _open_doctor(qtbot, window, path, "twice")
    doctor = window.doctor
    assert tab.list.count() == 1 and not tab.choice.isVisible()
    tab.list.setCurrentRow(0)
    qtbot.waitUntil(tab.choice.isVisible, timeout=5_000)
    # Both outputs in full, the last (the one the Agents SDK sends) chosen until picked.
    assert [t.toPlainText() for t in tab.choice.texts] == ["rain, 9 °C", "rain, 11 °C"]
    assert [o.isChecked() for o in tab.choice.options] == [False, True]
    window.grab().save(str(tmp_path / "doctor-outputs.png"))
    tab.choice.options[0].click()
    with qtbot.waitSignal(doctor.planned, timeout=20_000) as planned:
        tab.preview_button.click()
    assert "- #4 tool output: rain, 11 °C" in tab.preview.toPlainText()
    assert planned.args[0].delete == (4,)
    with qtbot.waitSignal(doctor.checked, timeout=20_000) as checked:
        tab.apply_button.click()
    assert checked.args[0].problems == ()
    _settle(qtbot, window)
    assert [i.get("output") for i in _items(path, "twice") if "output" in i] == ["rain, 9 °C"]
