"""Issue 37: a wrong OpenAI key shows the error bar with **Enter Another Key…**, which asks
for a key (the password prompt, with the keyring's offer) and opens the store again —
against the loopback Conversations API (tests/conversations_server.py), which answers
401 for a wrong key and 200 for the right one; the test chat's error line offers the
same against the loopback OpenAI chat server (tests/chat_servers.py, given the key it
accepts). The key is never logged, printed, shown or written to the settings.
Offscreen, pytest-qt; waits on conditions, never sleeps."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from conversations_server import API_KEY, ConversationsServer, memory_keyring, texts
from qt_helpers import OFFSCREEN_NOISE, when_modal

from fluxgui.core.ports import OpenOptions
from fluxgui.qt.dialogs.opening import OpenRequest
from fluxgui.qt.dialogs.passwords import PasswordDialog

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

SCHEME = "openai-conversations:"
WRONG = "sk-wrong-key-for-this-server-424242"


@pytest.fixture
def server(conversations_api):
    conversations_api.seed("conv_a", texts(3, "a"))
    return conversations_api


def _request(server: ConversationsServer, key: str | None) -> OpenRequest:
    options = OpenOptions(base_url=server.base_url, api_key=key, api_timeout=5, conversations=("conv_a",))
    return OpenRequest(SCHEME + server.base_url, "loopback conversations", options=options)


def _refused(qtbot: Any, window: Any, request: OpenRequest) -> str:
    window.stores.open_request(request)
    qtbot.waitUntil(lambda: window.error_bar.isVisible() and bool(window.error_bar.text()), timeout=30_000)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=30_000)
    return window.error_bar.text()


def _answer(key: str, *, remember: bool = False) -> None:
    def fill(dialog: PasswordDialog) -> None:
        assert dialog.windowTitle() == "API key needed"
        dialog.password_edit.setText(key)
        if remember:
            assert dialog.remember_check.isVisible()
            dialog.remember_check.setChecked(True)
        dialog.accept()

    when_modal(PasswordDialog, fill)


def _listed(window: Any) -> list[str]:
    return [window.sessions.session_at(r).id for r in range(window.sessions.rowCount())]


def test_enter_another_key_from_the_error_bar(qtbot, window, server, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    bar = window.error_bar
    error = _refused(qtbot, window, _request(server, WRONG))
    assert "refused the API key (401" in error
    assert bar.action_button.isVisible() and bar.action_button.text() == "Enter Another Key…"
    assert not _listed(window)
    # a cancelled prompt changes nothing: the bar and its button stay
    when_modal(PasswordDialog, lambda d: d.reject())
    bar.action_button.click()
    assert bar.isVisible() and bar.action_button.isVisible() and not window.bridge.busy
    # the right key: the store opens, the bar goes
    _answer(API_KEY)
    with qtbot.waitSignal(window.messagesShown, timeout=30_000):
        bar.action_button.click()
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=30_000)
    assert _listed(window) == ["conv_a"] and not bar.isVisible() and not bar.action_button.isVisible()
    # neither key was logged, printed or written to the settings
    out, err = capfd.readouterr()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    window.recent.settings.sync()
    settings = Path(window.recent.settings.fileName()).read_text(encoding="utf-8")
    for key in (WRONG, API_KEY):
        for where, text in (("stdout", out), ("stderr", err), ("log", logged), ("settings", settings)):
            assert key not in text and key[:12] not in text, where


def test_a_missing_key_offers_one_and_files_it_in_the_keyring_when_asked(qtbot, window, server, caplog):
    from fluxgui.services.credentials import API_KEY_KEYRING, SERVICE

    caplog.set_level(logging.DEBUG)  # (the event loop's executor logs each call's arguments)
    with memory_keyring() as values:
        error = _refused(qtbot, window, _request(server, None))
        assert "no API key" in error
        bar = window.error_bar
        assert bar.action_button.text() == "Enter Key…"
        _answer(API_KEY, remember=True)
        with qtbot.waitSignal(window.messagesShown, timeout=30_000):
            bar.action_button.click()
        qtbot.waitUntil(lambda: values.get((SERVICE, API_KEY_KEYRING)) == API_KEY, timeout=10_000)
    assert _listed(window) == ["conv_a"]
    window.recent.settings.sync()
    assert API_KEY not in Path(window.recent.settings.fileName()).read_text(encoding="utf-8")
    assert not [r for r in caplog.records if API_KEY in r.getMessage()]


def test_another_error_takes_the_button_away(qtbot, window, server):
    from fluxgui.core.errors import StoreUnavailable

    _refused(qtbot, window, _request(server, WRONG))
    assert window.error_bar.action_button.isVisible()
    window.show_error(StoreUnavailable("something else went wrong"))
    assert window.error_bar.isVisible() and not window.error_bar.action_button.isVisible()


def test_the_chat_offers_another_key_and_sends_again(qtbot, window, agents_db, monkeypatch, caplog, capfd):
    from chat_servers import ChatServer

    from fluxgui.services.chat import AgentConfig
    from fluxgui.services.credentials import API_KEY_KEYRING, SERVICE

    caplog.set_level(logging.DEBUG)
    right = "sk-chat-right-key-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", WRONG)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(agents_db), session_id="hello-3003", writable=True)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)
    window.actions_by_name["chat"].trigger()
    panel = window.chat_panel
    with memory_keyring() as values, ChatServer("openai", api_key=right) as server:
        panel.set_config(AgentConfig(provider="openai", model="m-test", base_url=server.base_url, timeout=5.0))
        panel.message.setPlainText("Hello?")
        with qtbot.waitSignal(panel.failed, timeout=30_000) as failed:
            panel.send_button.click()
        assert "refused the API key" in failed.args[0] and panel.key_button.isVisible()
        _answer(right, remember=True)
        with qtbot.waitSignal(panel.finished, timeout=30_000):
            panel.key_button.click()
        assert not panel.key_button.isVisible() and not panel.error_text()
        assert server.requests[-1]["headers"]["authorization"] == f"Bearer {right}"
        qtbot.waitUntil(lambda: values.get((SERVICE, API_KEY_KEYRING)) == right, timeout=10_000)
    qtbot.waitUntil(lambda: not window.bridge.busy and not window.editor.running, timeout=20_000)
    out, err = capfd.readouterr()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    window.recent.settings.sync()
    settings = Path(window.recent.settings.fileName()).read_text(encoding="utf-8")
    for key in (WRONG, right):
        for where, text in (("stdout", out), ("stderr", err), ("log", logged), ("settings", settings),
                            ("error line", failed.args[0])):
            assert key not in text and key[:12] not in text, where
