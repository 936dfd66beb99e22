"""The window never shows or stores a URL's secret (issue 13 point 3): not in the error
bar, the title, the status bar, the store label, the recent list or the settings file."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from helpers import closed_port
from qt_helpers import OFFSCREEN_NOISE


pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

SECRET = "S3cr3tValue"


def _everything_shown(window: Any) -> str:
    from PySide6.QtWidgets import QLabel

    texts = [window.windowTitle(), window.statusBar().currentMessage(), window.error_bar.text()]
    texts += [label.text() for label in window.findChildren(QLabel)]
    texts += [action.text() + action.toolTip() for action in window.findChildren(type(window.menuBar().actions()[0]))]
    return "\n".join(texts)


def _settings_text(tmp_path_factory: Any) -> str:
    from PySide6.QtCore import QSettings

    path = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "fluxgui", "fluxgui").fileName()
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql+asyncpg://u:{SECRET}@127.0.0.1:CLOSED/x",
        f"postgresql+asyncpg://u@127.0.0.1:CLOSED/x?password={SECRET}",
        f"redis://127.0.0.1:CLOSED/0?password={SECRET}",
        f"unix:///nonexistent.sock?password={SECRET}",
    ],
)
def test_a_failed_open_shows_no_secret(qtbot, window, url, caplog, tmp_path_factory):
    caplog.set_level(logging.DEBUG)
    # the port is found here, not at collection, so the test ids match in every worker
    url = url.replace("CLOSED", str(closed_port()))
    window.stores.open_target(url)
    qtbot.waitUntil(lambda: window.stores.open_error is not None, timeout=20_000)
    shown = _everything_shown(window)
    assert "***" in window.error_bar.text()
    assert SECRET not in shown
    assert SECRET not in caplog.text
    assert SECRET not in _settings_text(tmp_path_factory)


def _write_pg_store(url: str) -> None:
    """An Agents SDK store written by the real ``SQLAlchemySession`` (in a thread: the
    test thread's qasync loop is marked running)."""
    import asyncio
    import concurrent.futures

    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession

    async def write() -> None:
        session = SQLAlchemySession.from_url("conv", url=url, create_tables=True)
        await session.add_items([{"role": "user", "content": "hello"}])
        await session.engine.dispose()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, write()).result()


def test_an_opened_url_keeps_its_secret_out_of_title_labels_and_settings(qtbot, window, pg_url, tmp_path_factory):
    _write_pg_store(pg_url)
    # Trust auth: the server ignores the password, the URL still carries it.
    url = pg_url + f"?password={SECRET}"
    from fluxgui.qt.dialogs.opening import OpenRequest

    with qtbot.waitSignal(window.settled, timeout=20_000):
        window.stores.open_request(OpenRequest(url, url, remember=True))  # as Open URL does
    assert window.stores.open_error is None
    shown = _everything_shown(window)
    assert "password=***" in shown
    assert SECRET not in shown
    settings = _settings_text(tmp_path_factory)
    assert "127.0.0.1" in settings  # the store is in the recent list …
    assert SECRET not in settings  # … without its secret
