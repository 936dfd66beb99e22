"""The window on a Conversations server that fails, through a chaos proxy
(tests/chaos_proxy.py) in front of the loopback Conversations API: an error never makes
the window forget the ids it remembers for the server, and no status shows the key the
server echoes — not in the error bar, the status bar, any label, nor the settings.
Offscreen, pytest-qt; waits on conditions, never sleeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from chaos_proxy import ChaosProxy
from conversations_server import API_KEY, texts
from helpers import run_cli
from qt_helpers import OFFSCREEN_NOISE

from fluxgui.core.ports import OpenOptions
from fluxgui.qt.conversations import ConversationIds
from fluxgui.qt.dialogs.opening import OpenRequest

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

SCHEME = "openai-conversations:"
GATEWAY_KEY = "gateway-token-98765-abcdef"


@pytest.fixture
def proxy(conversations_api):
    with ChaosProxy(conversations_api) as p:
        conversations_api.seed("conv_a", texts(3, "a"))
        conversations_api.seed("conv_b", texts(241, "b"))
        yield p


def _location(proxy: ChaosProxy) -> str:
    return f"{SCHEME}http://localhost:{proxy.base_url.split(':')[2]}"


def _request(proxy: ChaosProxy, key: str = API_KEY) -> OpenRequest:
    options = OpenOptions(base_url=proxy.base_url, api_key=key, api_timeout=5)
    return OpenRequest(SCHEME + proxy.base_url, "through the proxy", options=options)


def _shown(window: Any) -> str:
    from PySide6.QtWidgets import QLabel

    texts_ = [window.windowTitle(), window.statusBar().currentMessage(), window.error_bar.text()]
    texts_ += [label.text() + label.toolTip() for label in window.findChildren(QLabel)]
    return "\n".join(texts_)


def _failed(qtbot: Any, window: Any, request: OpenRequest) -> str:
    """Open ``request`` and wait for its error in the error bar."""
    window.stores.open_request(request)
    qtbot.waitUntil(lambda: window.error_bar.isVisible() and bool(window.error_bar.text()), timeout=30_000)
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=30_000)
    return window.error_bar.text()


@pytest.mark.parametrize("fault", ["malformed", "500"])
def test_remembered_ids_survive_an_error(qtbot, window, proxy, fault):
    settings = window.recent.settings
    ConversationIds(settings).add(_location(proxy), ["conv_b", "conv_a"])
    if fault == "malformed":
        proxy.malformed_page = 1  # (the listing reads both ids at once: one of them fails)
    else:
        proxy.echo_status = 500
    error = _failed(qtbot, window, _request(proxy))
    assert "cannot read (not JSON)" in error if fault == "malformed" else "answered 500" in error
    # Before: the malformed answer read as "unknown conversation" and both ids were
    # forgotten (the settings said ids=@Invalid()).
    settings.sync()
    assert ConversationIds(settings).ids(_location(proxy)) == ["conv_b", "conv_a"]
    text = Path(settings.fileName()).read_text(encoding="utf-8")
    assert "@Invalid()" not in text and "conv_a" in text
    # The server answering again, both are listed.
    proxy.reset()
    with qtbot.waitSignal(window.messagesShown, timeout=30_000):
        window.stores.open_request(_request(proxy))
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=30_000)
    listed = [window.sessions.session_at(r).id for r in range(window.sessions.rowCount())]
    assert listed == ["conv_b", "conv_a"]


@pytest.mark.parametrize("status", (400, 401, 403, 429, 500))
@pytest.mark.parametrize("key", (API_KEY, GATEWAY_KEY))
def test_no_status_shows_the_key_the_server_echoes(qtbot, window, proxy, status, key):
    ConversationIds(window.recent.settings).add(_location(proxy), ["conv_a"])
    proxy.echo_status = status
    error = _failed(qtbot, window, _request(proxy, key))
    assert f"{status}" in error
    shown = _shown(window)
    assert key not in shown and key[:12] not in shown
    if status in (400, 500):
        assert "bad auth header Bearer ***" in error
    window.recent.settings.sync()
    assert key not in Path(window.recent.settings.fileName()).read_text(encoding="utf-8")


def test_an_unknown_id_echoed_with_the_key_shows_no_key(qtbot, window, proxy):
    # A 404 while reading one conversation (a listing skips such an id, as the API lost it)
    ConversationIds(window.recent.settings).add(_location(proxy), ["conv_a"])
    with qtbot.waitSignal(window.messagesShown, timeout=30_000):
        window.stores.open_request(_request(proxy))
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=30_000)
    proxy.echo_status = 404
    window.conversations_bar.edit.setText("conv_zz")
    window.conversations_bar.submit()
    qtbot.waitUntil(lambda: window.conversations_bar.hint.isVisible(), timeout=30_000)
    assert API_KEY not in _shown(window) and "conv_zz" in window.conversations_bar.hint.text()


@pytest.mark.parametrize("session", [(), ("--session", "conv_b")])
def test_a_screenshot_of_a_failing_server_is_one_line(proxy, tmp_path, monkeypatch, session):
    # Before: the listing's other reads were left running on the client's thread, and
    # the process ended with "Task was destroyed but it is pending!" after the error.
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    proxy.echo_status = 500
    out = tmp_path / "shot.png"
    proc = run_cli(SCHEME, "--conversation", "conv_a", "--conversation", "conv_b",
                   "--base-url", proxy.base_url, "--api-timeout", "5", *session,
                   "--screenshot", str(out))
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.splitlines() == [
        f"fluxgui: error: the Conversations API at {proxy.base_url} answered 500: "
        "bad auth header Bearer ***"
    ]
    assert not out.exists()
