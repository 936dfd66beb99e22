"""A file with two Agents SDK stores (written by the real openai-agents library twice,
with different table names): the window offers the table pairs in a chooser and opens
the one chosen; the Open URL form has the table-name fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from qt_helpers import OFFSCREEN_NOISE, run_async

from fluxgui.qt.dialogs.open_url import OpenUrlDialog
from fluxgui.qt.dialogs.table_chooser import TableChooser

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)


def write_agents(path: Path, data: dict[str, list[dict[str, Any]]], **tables: str) -> None:
    """Sessions written by ``agents.SQLiteSession`` with these table names."""
    from agents import SQLiteSession

    async def run() -> None:
        for sid, items in data.items():
            session = SQLiteSession(sid, str(path), **tables)
            try:
                await session.add_items(items)  # type: ignore[arg-type]
            finally:
                session.close()

    run_async(run())


@pytest.fixture
def two_pairs(tmp_path: Path) -> Path:
    path = tmp_path / "two.db"
    write_agents(path, {"ticket-1": [{"role": "user", "content": "my order is late"}]},
                 sessions_table="support_sessions", messages_table="support_messages")
    write_agents(path, {"lead-1": [{"role": "user", "content": "a quote please"}],
                        "lead-2": [{"role": "user", "content": "pricing?"}]},
                 sessions_table="sales_sessions", messages_table="sales_messages")
    return path


def _chooser(window: Any) -> TableChooser | None:
    dialog = window.stores.table_chooser
    return dialog if dialog is not None and dialog.isVisible() else None


def test_two_table_pairs_open_through_the_chooser(qtbot, window, two_pairs):
    window.stores.open_target(str(two_pairs))
    qtbot.waitUntil(lambda: _chooser(window) is not None, timeout=10_000)
    dialog = _chooser(window)
    assert dialog is not None
    rows = [dialog.list.item(i).text() for i in range(dialog.list.count())]
    assert rows == ["2 sessions  ·  sales_sessions  +  sales_messages",
                    "1 session  ·  support_sessions  +  support_messages"]
    assert window.error_bar.isHidden()  # no "not a session store"
    dialog.choose(1)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000) as shown:
        dialog.accept()
    assert shown.args == ["ticket-1"]
    assert [window.sessions.session_at(r).id for r in range(window.sessions.rowCount())] == ["ticket-1"]
    assert window.stores.opened.options.sessions_table == "support_sessions"
    # the other one, through the chooser again
    window.stores.open_target(str(two_pairs))
    qtbot.waitUntil(lambda: _chooser(window) is not None, timeout=10_000)
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        _chooser(window).accept()  # the first row: sales
    qtbot.waitUntil(lambda: window.sessions.rowCount() == 2, timeout=10_000)
    assert {window.sessions.session_at(r).id for r in range(2)} == {"lead-1", "lead-2"}


def test_cancelling_the_chooser_keeps_the_open_store(qtbot, window, two_pairs, agents_db):
    with qtbot.waitSignal(window.messagesShown, timeout=10_000):
        window.stores.open_target(str(agents_db))
    window.stores.open_target(str(two_pairs))
    qtbot.waitUntil(lambda: _chooser(window) is not None, timeout=10_000)
    _chooser(window).reject()
    qtbot.waitUntil(lambda: window.stores.table_chooser is None)
    assert window.stores.target == str(agents_db)
    assert window.sessions.rowCount() == 3


def test_open_url_has_the_table_fields(qtbot, tmp_path):
    dialog = OpenUrlDialog(keyring_ok=True)
    qtbot.addWidget(dialog)
    dialog.driver_combo.setCurrentIndex(dialog.driver_combo.findData("sqlite+aiosqlite"))
    edits = dialog.option_fields.edits
    assert edits["sessions_table"].isVisibleTo(dialog) and edits["messages_table"].isVisibleTo(dialog)
    dialog.database_edit.setText(str(tmp_path / "two.db"))
    edits["sessions_table"].setText("sales_sessions")
    edits["messages_table"].setText("sales_messages")
    options = dialog.open_options()
    assert (options.sessions_table, options.messages_table) == ("sales_sessions", "sales_messages")


def test_a_default_pair_beside_another_says_so_and_offers_it(qtbot, window, tmp_path):
    path = tmp_path / "default-and-more.db"
    write_agents(path, {"default-1": [{"role": "user", "content": "in the default tables"}]})
    write_agents(path, {"audit-1": [{"role": "user", "content": "in the audit tables"}]},
                 sessions_table="audit_sessions", messages_table="audit_messages")
    with qtbot.waitSignal(window.messagesShown, timeout=10_000) as shown:
        window.stores.open_target(str(path))
    assert shown.args == ["default-1"]  # the default pair opens, as on the command line
    bar = window.tables_bar
    qtbot.waitUntil(bar.isVisible)
    assert "1 other Agents SDK store" in bar.text()
    assert "audit_sessions + audit_messages: 1 session" in bar.text()
    bar.button.click()
    qtbot.waitUntil(lambda: _chooser(window) is not None, timeout=5_000)
    assert _chooser(window).chosen() == ("audit_sessions", "audit_messages")
    rows = [_chooser(window).list.item(i).text() for i in range(_chooser(window).list.count())]
    assert rows == ["1 session  ·  audit_sessions  +  audit_messages"]
    with qtbot.waitSignal(window.messagesShown, timeout=10_000) as shown:
        _chooser(window).accept()
    assert shown.args == ["audit-1"]
    qtbot.waitUntil(lambda: "agent_sessions + agent_messages" in bar.text(), timeout=5_000)
