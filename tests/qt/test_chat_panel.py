"""The chat panel (View › Chat): send a message to an agent in the open session, watch
the reply stream in, stop it, fail with one line, try it on a copy; the agent's settings
are remembered per store. Results are read back with ``agents.SQLiteSession``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import json

import pytest
from PySide6.QtCore import Qt
from qt_helpers import OFFSCREEN_NOISE, run_async, run_on

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

pytest.importorskip("fluxgui.services.chat")

SID = "hello-3003"


def _agents_items(path: Path, sid: str) -> list[dict[str, Any]]:
    from agents import SQLiteSession

    async def read() -> list[dict[str, Any]]:
        session = SQLiteSession(sid, path)
        try:
            return list(await session.get_items())  # type: ignore[arg-type]
        finally:
            session.close()

    return run_async(read())


def _agents_ids(path: Path) -> set[str]:
    import sqlite3

    with sqlite3.connect(path) as db:
        return {r[0] for r in db.execute("SELECT session_id FROM agent_sessions")}


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.editor.running, timeout=20_000)


def _open(qtbot: Any, window: Any, path: Path, sid: str, *, writable: bool = True) -> None:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(path), session_id=sid, writable=writable)
    _settle(qtbot, window)
    window.actions_by_name["chat"].trigger()  # View › Chat
    assert window.chat_dock.isVisible() and window.actions_by_name["chat"].isChecked()


def _texts(window: Any) -> list[str]:
    return [m.text for m in window.conversation.model.messages]


def _type(qtbot: Any, panel: Any, text: str) -> None:
    panel.message.setFocus()
    panel.message.clear()
    qtbot.keyClicks(panel.message, text)


def _offline(**changes: Any) -> Any:
    from fluxgui.services.chat import AgentConfig

    return AgentConfig(**{"provider": "offline", "model": "offline", **changes})


def test_send_streams_the_reply_and_the_conversation_shows_it(qtbot, window, agents_db):
    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel
    panel.set_config(_offline())
    before = _agents_items(agents_db, SID)
    shown_before = window.conversation.model.rowCount()
    deltas: list[str] = []
    panel.delta.connect(deltas.append)

    _type(qtbot, panel, "What is 2 + 2?")
    assert panel.send_button.isEnabled() and not panel.stop_button.isEnabled()
    with qtbot.waitSignal(panel.finished, timeout=20_000) as done:
        # Ctrl+Return in the message box sends (not the window's Insert Message action).
        qtbot.keyClick(panel.message, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        assert panel.running and panel.stop_button.isEnabled()
    result = done.args[0]
    assert result.session_id == SID and result.reply
    assert len(deltas) >= 1
    assert "".join(deltas) == panel.streamed_text() == result.reply
    assert result.reply in panel.reply.toPlainText()
    assert panel.message.toPlainText() == ""  # sent: the box is empty again
    assert not panel.error_label.isVisible()

    # The conversation catches up with the new user + assistant messages.
    qtbot.waitUntil(
        lambda: window.conversation.model.rowCount() == shown_before + result.added,
        timeout=20_000,
    )
    texts = _texts(window)
    assert "What is 2 + 2?" in texts[shown_before]
    assert result.reply in texts[-1]
    qtbot.waitUntil(
        lambda: window.sessions.session_at(window.sessions.row_of(SID)).messages
        == len(before) + result.added,
        timeout=20_000,
    )

    # The real library reads what was written.
    items = _agents_items(agents_db, SID)
    assert items[: len(before)] == before
    added = items[len(before):]
    assert len(added) == result.added >= 2
    assert added[0]["role"] == "user" and "What is 2 + 2?" in str(added[0]["content"])
    assert result.reply in str(added[-1])


def test_a_read_only_store_offers_allow_editing(qtbot, window, agents_db):
    _open(qtbot, window, agents_db, SID, writable=False)
    panel = window.chat_panel
    before = agents_db.read_bytes()
    assert panel.readonly_bar.isVisible()
    _type(qtbot, panel, "hi")
    assert not panel.send_button.isEnabled()
    assert not panel.send()  # Ctrl+Return does not write either
    assert agents_db.read_bytes() == before
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        qtbot.mouseClick(panel.allow_button, Qt.MouseButton.LeftButton)
    _settle(qtbot, window)
    assert window.stores.store.can_write
    assert not panel.readonly_bar.isVisible()
    assert panel.send_button.isEnabled()


def test_stop_during_a_stream_persists_nothing(qtbot, window, agents_db, monkeypatch):
    from chat_servers import ChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel
    before = _agents_items(agents_db, SID)
    ids_before = _agents_ids(agents_db)
    with ChatServer("openai", "stall", reply="one two three four", chunks=4) as server:
        panel.set_config(_offline(provider="openai", model="gpt-test", base_url=server.base_url))
        _type(qtbot, panel, "Please stall")
        with qtbot.waitSignal(panel.delta, timeout=20_000):  # the first piece arrived
            panel.send_button.click()
        assert panel.running and panel.streamed_text()
        assert server.first_sent.is_set()
        with qtbot.waitSignal(panel.stopped, timeout=5_000):
            qtbot.mouseClick(panel.stop_button, Qt.MouseButton.LeftButton)
        assert not panel.running
        assert "nothing was saved" in panel.status.text()
        assert panel.message.toPlainText() == "Please stall"
        qtbot.waitUntil(lambda: not window.bridge.running("chat"), timeout=10_000)
        _settle(qtbot, window)
    assert _agents_items(agents_db, SID) == before
    assert _agents_ids(agents_db) == ids_before
    assert not panel.error_label.isVisible()


def test_an_error_shows_one_line_and_keeps_the_message(qtbot, window, agents_db, monkeypatch):
    from chat_servers import closed_port

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    port = closed_port()  # connection refused
    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel
    panel.set_config(
        _offline(provider="openai", model="gpt-test", base_url=f"http://127.0.0.1:{port}/v1")
    )
    before = _agents_items(agents_db, SID)
    _type(qtbot, panel, "Are you there?")
    with qtbot.waitSignal(panel.failed, timeout=60_000) as failed:
        panel.send_button.click()
    line = failed.args[0]
    assert line and "\n" not in line
    assert panel.error_label.isVisible() and panel.error_label.text() == line
    assert panel.error_label.textFormat() == Qt.TextFormat.PlainText
    assert "sk-test-not-real" not in line
    assert panel.message.toPlainText() == "Are you there?"  # kept for a retry
    assert not panel.running and panel.send_button.isEnabled()
    assert _agents_items(agents_db, SID) == before

    # A retry with the offline agent works and clears the error line.
    panel.set_config(_offline())
    with qtbot.waitSignal(panel.finished, timeout=20_000):
        panel.send_button.click()
    assert not panel.error_label.isVisible()


def test_try_on_a_copy_leaves_the_original_and_shows_the_fork(qtbot, window, agents_db):
    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel
    panel.set_config(_offline())
    before = _agents_items(agents_db, SID)
    ids_before = _agents_ids(agents_db)
    panel.copy_box.setChecked(True)
    _type(qtbot, panel, "Try this on a copy")
    with qtbot.waitSignal(panel.finished, timeout=20_000) as done:
        panel.send_button.click()
    result = done.args[0]
    fork = result.session_id
    assert fork != SID and fork not in ids_before
    assert _agents_items(agents_db, SID) == before  # the original is unchanged
    forked = _agents_items(agents_db, fork)
    assert forked[: len(before)] == before and len(forked) == len(before) + result.added
    # The window switches to the fork and lists it.
    qtbot.waitUntil(lambda: window.current_session_id == fork, timeout=20_000)
    qtbot.waitUntil(
        lambda: window.conversation.model.rowCount() == len(forked), timeout=20_000
    )
    qtbot.waitUntil(lambda: window.sessions.row_of(fork) is not None, timeout=20_000)
    assert "Try this on a copy" in " ".join(_texts(window))


def test_agent_settings_persist_per_store_without_the_key(
    qtbot, qloop, window, agents_db, flux_db, tmp_path, monkeypatch
):
    from fluxgui.qt.window import MainWindow

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-key")
    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel
    config = _offline(
        name="refund-bot", instructions="Be brief.", model="gpt-x", temperature=0.3,
        provider="openai", base_url="http://127.0.0.1:9/v1",
    )
    panel.set_config(config)
    assert "refund-bot" in panel.agent_label.text()

    # Another store has its own (default) settings.
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(flux_db), session_id="flux-a")
    _settle(qtbot, window)
    assert panel.config.name == "assistant" and panel.config.provider == "offline"

    # A new window on the first store finds them again; the key was never written.
    other = MainWindow()
    try:
        with qtbot.waitSignal(other.messagesShown, timeout=20_000):
            other.stores.open_target(str(agents_db), session_id=SID)
        qtbot.waitUntil(lambda: not other.bridge.busy, timeout=20_000)
        again = other.chat_panel.config
        assert (again.name, again.instructions, again.model, again.temperature) == (
            "refund-bot", "Be brief.", "gpt-x", 0.3,
        )
        assert (again.provider, again.base_url) == ("openai", "http://127.0.0.1:9/v1")
        assert again.api_key is None
    finally:
        run_on(qtbot, qloop, other.aclose())
        other.close()
        other.deleteLater()
    inis = [p.read_text(errors="replace") for p in tmp_path.parent.rglob("*.ini")]
    assert any("refund-bot" in text for text in inis)
    assert not any("sk-secret-key" in text for text in inis)


def test_the_agent_form_edits_the_settings(qtbot, window, agents_db, monkeypatch):
    from fluxgui.qt.chat import AgentDialog

    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel

    def fill(dialog: AgentDialog) -> int:
        dialog.name.setText("helper")
        dialog.instructions.setPlainText("Answer in French.")
        dialog.provider.setCurrentIndex(dialog.provider.findData("ollama"))
        dialog.model.setText("llama3")
        dialog.temperature.setValue(1.2)
        dialog.base_url.setText("http://127.0.0.1:11434/v1")
        return 1

    monkeypatch.setattr(AgentDialog, "exec", fill)
    assert panel.edit_agent()
    c = panel.config
    assert (c.name, c.instructions, c.provider, c.model, c.temperature, c.base_url) == (
        "helper", "Answer in French.", "ollama", "llama3", 1.2, "http://127.0.0.1:11434/v1",
    )
    assert panel.agent_label.text() == "helper · llama3 · Ollama"


def test_view_chat_toggles_the_dock(qtbot, window, agents_db):
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(agents_db), session_id=SID)
    action = window.actions_by_name["chat"]
    assert action.shortcut().toString() == "Ctrl+Shift+T"
    assert not window.chat_dock.isVisible()
    action.trigger()
    assert window.chat_dock.isVisible()
    action.trigger()
    assert not window.chat_dock.isVisible()


def test_tool_calls_show_as_stored_tool_call_cards(qtbot, window, agents_db):
    """A model that calls a tool (the loopback server's "tool" mode): the call and the
    tool's output appear as the cards stored function_call/function_call_output items
    get, paired by call id; the reply stays plain text; the library saves only the user
    message and the final answer (as flux's Runner does)."""
    from chat_servers import ChatServer

    from fluxgui.services.chat import AgentConfig

    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel
    before = _agents_items(agents_db, SID)
    with ChatServer("openai", "tool", reply="<b>not bold</b> sunny") as server:
        panel.set_config(AgentConfig(provider="openai", model="m", base_url=server.base_url))
        _type(qtbot, panel, "Weather?")
        with qtbot.waitSignal(panel.finished, timeout=20_000):
            panel.send_button.click()
    call, output = panel.tool_messages()
    assert (call.kind, call.role) == ("tool_call", "assistant")
    assert call.raw == {
        "type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": '{"q": "weather"}',
    }
    assert output.kind == "tool_output" and output.raw["call_id"] == "call_1"
    # The agent has no such tool: flux answers the model with its error, shown as output.
    assert output.text == "Error: Tool 'lookup' not found"
    assert panel.tool_view.isVisible()
    delegate = panel.tool_view.itemDelegate()
    assert delegate.pair_text(call) == f"→ output #{output.id}"
    assert delegate.pair_text(output) == f"← lookup #{call.id}"
    # Drawn as the conversation draws a stored call: the same delegate and card.
    from fluxgui.qt.conversation import MessageDelegate

    assert isinstance(delegate, MessageDelegate)
    assert panel.reply.toPlainText() == "<b>not bold</b> sunny"
    assert _agents_items(agents_db, SID)[len(before):] == [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "<b>not bold</b> sunny"},
    ]
    # A new chat starts with no cards.
    panel.set_config(_offline())
    _type(qtbot, panel, "again")
    with qtbot.waitSignal(panel.finished, timeout=20_000):
        panel.send_button.click()
    assert panel.tool_messages() == () and not panel.tool_view.isVisible()


def test_new_session_from_the_chat_panel(qtbot, window, agents_db):
    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel
    panel.set_config(_offline())
    before = _agents_ids(agents_db)
    original = _agents_items(agents_db, SID)
    panel.start_new_session("brand-new-chat")
    assert "new session brand-new-chat" in panel.agent_label.text()
    assert not panel.copy_box.isEnabled()
    _type(qtbot, panel, "Hello, new session")
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        with qtbot.waitSignal(panel.finished, timeout=20_000) as done:
            panel.send_button.click()
    assert done.args[0].session_id == "brand-new-chat"
    assert _agents_ids(agents_db) == before | {"brand-new-chat"}
    items = _agents_items(agents_db, "brand-new-chat")
    assert items[0] == {"role": "user", "content": "Hello, new session"} and len(items) == 2
    # The window switched to it, and the panel goes on in it.
    qtbot.waitUntil(lambda: window.current_session_id == "brand-new-chat", timeout=20_000)
    assert panel.new_session is None and "new session" not in panel.agent_label.text()
    assert _agents_items(agents_db, SID) == original  # the session that was open: untouched

def test_render_the_window_with_the_chat_panel(qtbot, window, agents_db):
    window.resize(1400, 820)
    _open(qtbot, window, agents_db, "refund-1001")
    panel = window.chat_panel
    panel.set_config(_offline(name="support-bot"))
    _type(qtbot, panel, "Did the refund go through?")
    with qtbot.waitSignal(panel.finished, timeout=20_000):
        panel.send_button.click()
    _settle(qtbot, window)
    _type(qtbot, panel, "And when will it arrive?")
    image = window.grab().toImage()
    assert image.save("/tmp/chat_panel.png")


@pytest.mark.parametrize("mode", ["401", "malformed", "hang", "truncated"])
def test_each_provider_error_shows_one_line_and_saves_nothing(
    qtbot, window, agents_db, monkeypatch, mode
):
    from chat_servers import ChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel
    before = _agents_items(agents_db, SID)
    with ChatServer("openai", mode) as server:
        config = _offline(provider="openai", model="m-test", base_url=server.base_url)
        if hasattr(config, "timeout"):
            config.timeout = 2.0  # the hanging server: a short wait
        panel.set_config(config)
        _type(qtbot, panel, "Hello?")
        with qtbot.waitSignal(panel.failed, timeout=30_000) as failed:
            panel.send_button.click()
    line = failed.args[0]
    expected = {"401": "refused the API key", "malformed": "malformed", "hang": "did not answer",
                "truncated": "malformed"}[mode]
    assert expected in line and "\n" not in line and "sk-test-not-real" not in line
    assert panel.error_label.text() == line and panel.message.toPlainText() == "Hello?"
    assert _agents_items(agents_db, SID) == before


@pytest.mark.parametrize("kind", ["openai", "ollama"])
def test_chat_through_a_loopback_server_streams_and_persists(
    qtbot, window, agents_db, monkeypatch, kind
):
    from chat_servers import ChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    _open(qtbot, window, agents_db, SID)
    panel = window.chat_panel
    before = _agents_items(agents_db, SID)
    with ChatServer(kind, "ok", reply="Refund sent, arriving Friday.", chunks=4) as server:
        panel.set_config(_offline(provider=kind, model="m-test", base_url=server.base_url))
        _type(qtbot, panel, "Where is my refund?")
        deltas: list[str] = []
        panel.delta.connect(deltas.append)
        with qtbot.waitSignal(panel.finished, timeout=30_000) as done:
            panel.send_button.click()
        # The server got the stored history with the new message.
        body = json.dumps(server.requests[-1]["body"])
        assert json.dumps(before[0]["content"]) in body and "Where is my refund?" in body
    result = done.args[0]
    assert result.reply == "Refund sent, arriving Friday." == panel.streamed_text()
    assert len(deltas) > 1 and "".join(deltas) == result.reply
    after = _agents_items(agents_db, SID)
    assert after[: len(before)] == before
    assert len(after) == len(before) + 2
    assert after[len(before)] == {"role": "user", "content": "Where is my refund?"}
    qtbot.waitUntil(lambda: "Refund sent, arriving Friday." in _texts(window), timeout=10_000)


def test_chat_dock_opens_as_the_user_left_it(qtbot, window, qloop):
    from fluxgui.qt.window import MainWindow

    def another_window() -> Any:
        win = MainWindow()
        win.show()
        return win

    action = window.actions_by_name["chat"]
    assert not window.chat_dock.isVisible()
    action.trigger()  # View › Chat: shown
    assert window.chat_dock.isVisible()
    second = another_window()
    try:
        assert second.chat_dock.isVisible()
        second.actions_by_name["chat"].trigger()  # hidden there
        assert not second.chat_dock.isVisible()
    finally:
        run_on(qtbot, qloop, second.aclose())
        second.close()
        second.deleteLater()
    third = another_window()
    try:
        assert not third.chat_dock.isVisible()
    finally:
        run_on(qtbot, qloop, third.aclose())
        third.close()
        third.deleteLater()


def test_the_agent_form_looks_for_the_key_off_the_ui_thread(qtbot, qloop, monkeypatch):
    """The keyring may block: the form says it is looking and answers when the worker
    thread does; the environment variable answers at once."""
    from fluxgui.qt.chat import AgentDialog

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    dialog = AgentDialog(_offline(provider="openai", model="m"))
    qtbot.addWidget(dialog)
    assert "(looking…)" in dialog.key_note.text()
    qtbot.waitUntil(lambda: "(none found)" in dialog.key_note.text(), timeout=5_000)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    dialog.provider.setCurrentIndex(dialog.provider.findData("ollama"))
    assert dialog.key_note.text() == "Ollama needs no API key."
    dialog.provider.setCurrentIndex(dialog.provider.findData("openai"))
    assert "(found)" in dialog.key_note.text() and "sk-test" not in dialog.key_note.text()


def test_the_reply_and_tool_cards_are_shown_redacted_while_redact_is_on(qtbot, window, agents_db):
    """View › Redact on (a screen shared): the streamed reply and the tool cards show the
    window's placeholders, a value arriving in pieces included; turning it off shows them
    as received. What is kept (``streamed_text``, the store) is what the agent sent."""
    from chat_servers import ChatServer

    from fluxgui.services.chat import AgentConfig

    email, key = "alice@example.com", "sk-proj-" + "Ab3d" * 10
    _open(qtbot, window, agents_db, SID)
    with qtbot.waitSignal(window.conversation.loaded, timeout=20_000):
        window.actions_by_name["redact"].setChecked(True)
    panel = window.chat_panel
    reply = f"Mail {email} the key {key} today."
    with ChatServer("openai", "tool", reply=reply, chunks=7, tool_arguments=json.dumps({"to": email})) as server:
        panel.set_config(AgentConfig(provider="openai", model="m", base_url=server.base_url))
        _type(qtbot, panel, "Send it")
        with qtbot.waitSignal(panel.finished, timeout=20_000):
            panel.send_button.click()
    shown = panel.reply.toPlainText()
    assert email not in shown and key not in shown and "[EMAIL_" in shown and "[OPENAI_KEY_" in shown
    call = panel.tool_messages()[0]
    assert email not in json.dumps(call.raw) + call.text and "[EMAIL_" in call.text
    assert panel.streamed_text() == reply  # kept as sent
    window.actions_by_name["redact"].setChecked(False)
    assert panel.reply.toPlainText() == reply
    assert email in panel.tool_messages()[0].text
    assert any(reply == i.get("content") for i in _agents_items(agents_db, SID))
