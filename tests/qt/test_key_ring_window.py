"""Two keys at once in the window: sessions of one store sealed by the real openai-agents
EncryptedSession with two different keys; entering the second key keeps the first, every
session reads; an item in clear inside an encrypted session is badged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from qt_helpers import OFFSCREEN_NOISE, run_async

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

KEY_A = Fernet.generate_key().decode()
KEY_B = "bob's own passphrase"


def write_two_keys(path: Path) -> Path:
    from agents import SQLiteSession
    from agents.extensions.memory import EncryptedSession

    async def run() -> None:
        for sid, text, key in (("alice", "alice's invoice question", KEY_A),
                               ("bob", "bob's shipping question", KEY_B)):
            under = SQLiteSession(sid, str(path))
            try:
                await EncryptedSession(sid, under, encryption_key=key).add_items(
                    [{"role": "user", "content": text}])
                if sid == "alice":
                    await under.add_items([{"role": "user", "content": "typed in clear"}])
            finally:
                under.close()

    run_async(run())
    return path


@pytest.fixture
def two_keys_db(tmp_path: Path) -> Path:
    return write_two_keys(tmp_path / "two-keys.db")


def _show(qtbot: Any, window: Any, sid: str) -> str:
    row = window.sessions.row_of(sid)
    if window.current_session_id != sid:
        with qtbot.waitSignal(window.conversation.loaded, timeout=10_000):
            window.session_list.select_row(row)
    qtbot.waitUntil(lambda: not window.conversation.busy, timeout=10_000)
    return window.conversation.toPlainText()


def test_second_key_keeps_the_first(qtbot, window, two_keys_db):
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.open_target(str(two_keys_db), key=KEY_A, session_id="alice")
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=10_000)
    assert "alice's invoice question" in _show(qtbot, window, "alice")
    assert "bob's shipping question" not in _show(qtbot, window, "bob")  # unreadable with A
    assert "keys" not in window.format_label.text()

    action = window.actions_by_name["enter_key"]
    assert action.isEnabled()
    action.trigger()
    dialog = window.stores.key_dialog
    assert dialog is not None and "added to the one already given" in dialog.intro.text()
    assert dialog.windowTitle() == "Add an encryption key"
    qtbot.keyClicks(dialog.key_edit, KEY_B)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        dialog.ok_button.click()
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=10_000)
    assert window.error_bar.isHidden()
    assert window.stores.key_count == 2 and "2 keys" in window.format_label.text()
    assert "bob's shipping question" in _show(qtbot, window, "bob")
    alice = _show(qtbot, window, "alice")
    assert "alice's invoice question" in alice and "typed in clear" in alice
    # the item in clear is badged
    pane = window.conversation
    plain = [m for m in pane.model.messages if m.text == "typed in clear"][0]
    badge = pane.delegate.badge(plain)
    assert badge is not None and badge[0] == "plaintext" and "skips" in badge[1]
    assert pane.delegate.badge(pane.model.messages[0]) is None  # decrypted: no badge
