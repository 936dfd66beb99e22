"""The window side of encrypted stores (Agents SDK ``EncryptedSession``), JSON session
folders (HelloAgent ``SessionStore``) and Redis (Agents SDK ``RedisSession``): the key
notice and dialog, encryption badges, the skipped-files notice, Open Folder and folder
drops, the Redis choice of the URL form. Every store is written by the real library (or,
for JSON folders, the way it writes). Offscreen, pytest-qt; waits on signals, never sleeps.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QMimeData, QPoint, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QHelpEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QToolTip
from qt_helpers import OFFSCREEN_NOISE, run_async, when_modal

from json_helpers import hello_entry, hello_save  # tests/ (on the path through its conftest)

from fluxgui.core.errors import WrongKey
from fluxgui.qt.dialogs.files import make_folder_dialog
from fluxgui.qt.dialogs.open_url import OpenUrlDialog
from fluxgui.qt.dialogs.opening import OpenRequest, remember_opened, request_for_stored
from fluxgui.services.database_urls import REDIS
from fluxgui.qt.settings import RecentStores, startup_target
from fluxgui.qt.window import KEY_NOTICE

from helpers import REDIS_URL  # the server of tests/conftest.py's ``redis_prefix``

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

KEY = "fluxgui-test-master-key-7f3a9c"  # a raw string key, as the library accepts
SHOTS = Path("/tmp/fluxgui_shots")

ENC_SESSIONS = {
    "vault-1": [
        {"role": "user", "content": "What is the vault code?"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "The vault code is 4417."}],
        },
    ],
    "vault-2": [{"role": "user", "content": "Remind me of the <b>launch</b> window."}],
}


# --------------------------------------------------------------------------- writers


def write_encrypted(path: Path, sessions: dict[str, list[dict[str, Any]]], key: str = KEY) -> Path:
    """Sessions written by ``EncryptedSession`` around ``agents.SQLiteSession``."""
    from agents import SQLiteSession
    from agents.extensions.memory import EncryptedSession

    async def write() -> None:
        for sid, items in sessions.items():
            underlying = SQLiteSession(sid, path)
            try:
                s = EncryptedSession(session_id=sid, underlying_session=underlying, encryption_key=key)
                await s.add_items(items)  # type: ignore[arg-type]
            finally:
                underlying.close()

    run_async(write())
    return path


def write_expired(path: Path, sid: str, item: dict[str, Any], age: int, key: str = KEY) -> None:
    """An envelope encrypted ``age`` seconds ago (the library's own key derivation and
    envelope), stored through the real ``SQLiteSession.add_items``."""
    from agents import SQLiteSession
    from agents.extensions.memory.encrypt_session import (
        _derive_session_fernet_key,
        _ensure_fernet_key_bytes,
    )

    fernet = _derive_session_fernet_key(_ensure_fernet_key_bytes(key), sid)
    token = fernet.encrypt_at_time(
        json.dumps(item, separators=(",", ":")).encode("utf-8"), int(time.time()) - age
    )
    envelope = {"__enc__": 1, "v": 1, "kid": "hkdf-v1", "payload": token.decode("ascii")}

    async def write() -> None:
        session = SQLiteSession(sid, path)
        try:
            await session.add_items([envelope])  # type: ignore[list-item]
        finally:
            session.close()

    run_async(write())


def write_folder(folder: Path) -> Path:
    """Two HelloAgent session files and one that is not valid JSON."""
    hello_save(folder, "travel", [
        hello_entry("user", "Book a train to Lyon", "2025-03-01T09:00:00"),
        hello_entry("assistant", "Booked the 10:04 to Lyon.", "2025-03-01T09:00:05"),
    ])
    hello_save(folder, "recipes", [hello_entry("user", "A soup with leeks?", "2025-03-02T18:00:00")])
    (folder / "broken.json").write_text('{\n  "session_id": "x",\n  "history": [\n', encoding="utf-8")
    return folder


@pytest.fixture
def enc_db(tmp_path: Path) -> Path:
    return write_encrypted(tmp_path / "vault.db", ENC_SESSIONS)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_folder(tmp_path / "sessions")


# --------------------------------------------------------------------------- helpers


def _settle(qtbot: Any, window: Any) -> None:
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=20_000)


def _open(qtbot: Any, window: Any, target: Any, **kw: Any) -> str:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000) as blocker:
        window.stores.open_target(str(target), **kw)
    _settle(qtbot, window)
    return blocker.args[0]


def _open_request(qtbot: Any, window: Any, request: OpenRequest) -> str:
    with qtbot.waitSignal(window.messagesShown, timeout=20_000) as blocker:
        window.stores.open_request(request)
    _settle(qtbot, window)
    return blocker.args[0]


def _give_key(qtbot: Any, window: Any, key: str, ttl: int | None = None) -> Any:
    """Drive the key dialog as a user would: File › Enter Encryption Key…, type the key,
    OK."""
    action = window.actions_by_name["enter_key"]
    assert action.isEnabled()
    action.trigger()
    dialog = window.stores.key_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.key_edit.echoMode() == dialog.key_edit.EchoMode.Password
    assert not dialog.ok_button.isEnabled()  # no key typed yet
    qtbot.keyClicks(dialog.key_edit, key)
    if ttl is not None:
        dialog.ttl_spin.setValue(ttl)
    assert dialog.ok_button.isEnabled()
    dialog.ok_button.click()
    return dialog


def _settings_text() -> str:
    """Every settings file the window may have written (the private settings folder)."""
    root = Path(os.environ["XDG_CONFIG_HOME"])
    texts = []
    for path in root.rglob("*"):
        if path.is_file():
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def _drop(target: Any, path: Path) -> bool:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    pos = QPoint(5, 5)
    enter = QDragEnterEvent(pos, Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, enter)
    drop = QDropEvent(pos.toPointF(), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, drop)
    return enter.isAccepted() and drop.isAccepted()


def _headers(window: Any) -> list[str]:
    delegate = window.conversation.delegate
    return [delegate.header_text(m) for m in window.conversation.model.messages]


# --------------------------------------------------------------------------- encrypted stores


def test_an_encrypted_store_opens_locked_with_the_key_notice(qtbot, window, enc_db):
    _open(qtbot, window, enc_db, session_id="vault-1")
    assert window.stores.store.needs_key and window.stores.locked
    assert window.key_bar.isVisible() and window.key_bar.text() == KEY_NOTICE
    assert window.key_bar.button is not None and window.key_bar.button.text() == "Enter Key…"
    assert window.actions_by_name["enter_key"].isEnabled()
    assert "locked" in window.format_label.text()
    # The sessions list; the items stay locked, badged in their headers.
    assert window.sessions.rowCount() == 2
    text = window.conversation.toPlainText()
    assert "vault code" not in text
    messages = window.conversation.model.messages
    assert len(messages) == 2
    for m in messages:
        badge = window.conversation.delegate.badge(m)
        assert badge is not None and badge[0] == "🔒 locked" and badge[2] == "locked"
    assert all("🔒 locked" in h for h in _headers(window))


def test_plain_stores_show_no_key_notice(qtbot, window, agents_db):
    _open(qtbot, window, agents_db, session_id="hello-3003")
    assert not window.key_bar.isVisible() and not window.stores.locked
    assert not window.actions_by_name["enter_key"].isEnabled()
    assert window.stores.enter_key() is None
    assert window.format_label.text() == "agents format"
    assert all(window.conversation.delegate.badge(m) is None
               for m in window.conversation.model.messages)


def test_the_right_key_decrypts_and_survives_the_editing_switch(qtbot, window, enc_db):
    _open(qtbot, window, enc_db, session_id="vault-1")
    locked_store = window.stores.store
    with qtbot.waitSignal(window.messagesShown, timeout=20_000) as shown:
        _give_key(qtbot, window, KEY)
    _settle(qtbot, window)
    assert shown.args == ["vault-1"]  # stays on the session that was shown
    assert window.stores.store is not locked_store and window.stores.store.has_key
    assert window.stores.key_dialog is None
    assert not window.key_bar.isVisible()
    assert window.format_label.text() == "agents format · decrypted"
    text = window.conversation.toPlainText()
    assert "The vault code is 4417." in text and "What is the vault code?" in text
    assert all(window.conversation.delegate.badge(m) is None
               for m in window.conversation.model.messages)
    assert not window.stores.store.can_write  # still read-only, as before

    # Reopening writable keeps the key: the items stay readable.
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.set_editing(True)
    _settle(qtbot, window)
    assert window.stores.store.can_write and window.stores.store.has_key
    assert "The vault code is 4417." in window.conversation.toPlainText()
    assert not window.key_bar.isVisible()


def test_a_wrong_key_says_so_and_the_locked_store_stays(qtbot, window, enc_db):
    _open(qtbot, window, enc_db, session_id="vault-1")
    locked_store = window.stores.store
    _give_key(qtbot, window, "not the key")
    qtbot.waitUntil(lambda: window.stores.open_error is not None, timeout=20_000)
    _settle(qtbot, window)
    assert isinstance(window.stores.open_error, WrongKey)
    line = window.error_bar.text()
    assert window.error_bar.isVisible() and line == str(window.stores.open_error)
    assert "\n" not in line and "wrong key" in line
    assert "not the key" not in line
    # The locked store is still the open one, listed and shown as before.
    assert window.stores.store is locked_store and window.stores.locked
    assert window.current_session_id == "vault-1"
    assert window.sessions.rowCount() == 2 and window.count_label.text() == "2 sessions"
    assert window.key_bar.isVisible()
    assert window.stores.opened.options.key is None  # the wrong key was not kept
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(SHOTS / "encrypted_wrong_key.png"))
    # The notice offers the dialog again, and the right key still works.
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        _give_key(qtbot, window, KEY)
    _settle(qtbot, window)
    assert "The vault code is 4417." in window.conversation.toPlainText()


def test_the_key_is_nowhere_in_the_settings(qtbot, window, enc_db):
    request = OpenRequest(str(enc_db), str(enc_db))
    _open_request(qtbot, window, request)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        _give_key(qtbot, window, KEY)
    _settle(qtbot, window)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.set_editing(True)
    _settle(qtbot, window)
    assert window.stores.store.has_key
    window.recent._settings.sync()
    saved = _settings_text()
    assert str(enc_db) in saved  # the recent store was written …
    assert KEY not in saved  # … without its key
    assert all(KEY not in (e.target + e.label + (e.key_prefix or ""))
               for e in window.recent.entries())
    assert KEY not in repr(request)


@pytest.mark.qt_log_ignore(OFFSCREEN_NOISE, r"^This plugin does not support raise\(\)$")
def test_expired_items_show_with_an_expired_badge(qtbot, window, tmp_path):
    db = write_encrypted(tmp_path / "ttl.db", {"ttl-1": [{"role": "user", "content": "fresh item"}]})
    write_expired(db, "ttl-1", {"role": "user", "content": "an hour-old secret"}, age=3600)
    _open(qtbot, window, db, session_id="ttl-1")
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        _give_key(qtbot, window, KEY, ttl=600)
    _settle(qtbot, window)
    messages = {m.text: m for m in window.conversation.model.messages}
    assert set(messages) == {"fresh item", "an hour-old secret"}  # the content is shown
    delegate = window.conversation.delegate
    assert delegate.badge(messages["fresh item"]) is None
    badge = delegate.badge(messages["an hour-old secret"])
    assert badge is not None and badge[0] == "expired"
    assert badge[1].startswith("encrypted ")
    assert badge[1].endswith("older than the TTL: the Agents SDK no longer returns this item")
    assert delegate.header_text(messages["an hour-old secret"]).split(" · ")[:2] == ["user", "expired"]
    assert "expired" not in delegate.header_text(messages["fresh item"])
    # Hovering the header shows the badge's explanation (as text, not markup).
    view = window.conversation.view
    row = window.conversation.model.row_of(messages["an hour-old secret"].id)
    index = window.conversation.model.index(row, 0)
    view.scrollTo(index)
    rows = delegate.layout_rows(view.visualRect(index), messages["an hour-old secret"])
    [part] = [p for p in delegate.header_parts(rows.header, messages["an hour-old secret"])
              if p.name == "badge"]
    pos = part.rect.center()  # the badge itself
    QApplication.sendEvent(
        view.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos))
    )
    qtbot.waitUntil(lambda: "older than the TTL" in QToolTip.text(), timeout=5_000)
    QToolTip.hideText()
    # A longer TTL makes it an ordinary item again.
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        _give_key(qtbot, window, KEY, ttl=7200)
    _settle(qtbot, window)
    assert all(delegate.badge(m) is None for m in window.conversation.model.messages)


def test_the_key_dialog_refuses_an_empty_key(qtbot):
    from fluxgui.qt.dialogs.encryption_key import KeyDialog

    dialog = KeyDialog(None, where="vault.db <b>x</b>", ttl=900)
    qtbot.addWidget(dialog)
    assert dialog.ttl() == 900 and dialog.ttl_spin.suffix() == " s"
    assert not dialog.ok_button.isEnabled()
    dialog.accept()  # Enter in an empty field
    assert dialog.result() != KeyDialog.DialogCode.Accepted
    dialog.show_check.setChecked(True)
    assert dialog.key_edit.echoMode() == dialog.key_edit.EchoMode.Normal
    qtbot.keyClicks(dialog.key_edit, "k")
    assert dialog.ok_button.isEnabled()
    dialog.forget()
    assert dialog.key() == ""


def test_render_an_unlocked_store_with_an_expired_item(qtbot, window, tmp_path):
    db = write_encrypted(tmp_path / "shot.db", ENC_SESSIONS)
    write_expired(db, "vault-1", {"role": "user", "content": "Yesterday's code was 0919."}, age=86_400)
    _open(qtbot, window, db, session_id="vault-1")
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.resize(1200, 760)
    assert window.grab().save(str(SHOTS / "encrypted_locked.png"))
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        _give_key(qtbot, window, KEY)
    _settle(qtbot, window)
    states = [window.conversation.delegate.badge(m) for m in window.conversation.model.messages]
    assert [b[0] for b in states if b] == ["expired"]
    image = window.grab()
    assert not image.isNull() and image.save(str(SHOTS / "encrypted_unlocked.png"))


# --------------------------------------------------------------------------- JSON folders


def test_a_folder_with_a_corrupt_file_lists_the_rest_and_names_the_file(qtbot, window, folder):
    _open(qtbot, window, folder)
    assert window.stores.store.format != "agents"
    ids = {window.sessions.session_at(r).id for r in range(window.sessions.rowCount())}
    assert len(ids) == 2 and not any("broken" in i for i in ids)
    qtbot.waitUntil(window.problems_bar.isVisible, timeout=5_000)
    text = window.problems_bar.text()
    assert text.startswith("Skipped 1 file that could not be read: broken.json")
    assert "\n" not in text
    assert "broken.json" in window.problems_bar.label.toolTip()
    assert not window.error_bar.isVisible()  # a notice, not an error
    # One line, elided to the bar's width.
    label = window.problems_bar.label
    assert label.height() < 2 * label.fontMetrics().height() + 8
    window.problems_bar.close_button.click()
    assert not window.problems_bar.isVisible()


def test_render_a_folder_with_a_skipped_file(qtbot, window, folder):
    (folder / "notes.json").write_text("[1, 2", encoding="utf-8")
    _open(qtbot, window, folder)
    qtbot.waitUntil(window.problems_bar.isVisible, timeout=5_000)
    assert window.problems_bar.text().startswith("Skipped 2 files that could not be read: ")
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.resize(1200, 760)
    image = window.grab()
    assert not image.isNull() and image.save(str(SHOTS / "json_folder_skipped.png"))


def test_dropping_a_folder_opens_it_and_recent_stores_remember_it(qtbot, window, folder):
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        assert _drop(window.session_view.viewport(), folder)
    _settle(qtbot, window)
    assert window.sessions.rowCount() == 2
    assert window.recent.last() == os.path.abspath(folder)
    assert startup_target(window.recent) == (os.path.abspath(folder), str(folder))


def test_open_folder_from_the_file_menu(qtbot, window, folder, monkeypatch):
    action = window.actions_by_name["open_folder"]
    assert action.text() == "Open &Folder…"
    assert action.shortcut() == QKeySequence("Ctrl+K, Ctrl+O")
    shortcuts = [a.shortcut().toString() for a in window.actions_by_name.values()
                 if not a.shortcut().isEmpty()]
    assert len(shortcuts) == len(set(shortcuts)), shortcuts  # no clash (Ctrl+Shift+O is Open URL)
    import fluxgui.qt.window.store_controller as stores

    monkeypatch.setattr(stores, "open_folder_dialog", lambda parent: str(folder))
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        action.trigger()
    _settle(qtbot, window)
    assert window.sessions.rowCount() == 2
    assert window.recent.last() == os.path.abspath(folder)


def test_the_folder_dialog_picks_folders(qtbot, tmp_path):
    dialog = make_folder_dialog(None, str(tmp_path))
    qtbot.addWidget(dialog)
    assert dialog.fileMode() == QFileDialog.FileMode.Directory
    assert dialog.testOption(QFileDialog.Option.ShowDirsOnly)


def test_a_writable_folder_says_why_messages_cannot_be_edited(qtbot, window, folder):
    _open(qtbot, window, folder)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.set_editing(True)
    _settle(qtbot, window)
    assert window.stores.store.can_write
    reason = window.edits.edit_reason()
    assert reason is not None
    assert window.mode_label.text() != "✎ editing"
    assert "no message edits" in window.mode_label.text()
    tip = QTextDocumentText(window.mode_label.toolTip())
    assert "cannot be edited" in tip
    for name in ("edit_message", "insert_after", "delete_messages", "pop_message"):
        assert not window.actions_by_name[name].isEnabled(), name
    # Whole sessions: a folder clears (the file stays), deletes and forks them.
    for name in ("clear_session", "delete_session"):
        assert window.actions_by_name[name].isEnabled(), name
    assert window.actions_by_name["editing"].isChecked()


def QTextDocumentText(html: str) -> str:  # noqa: N802 - reads like the Qt class
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setHtml(html)
    return doc.toPlainText()


# --------------------------------------------------------------------------- Redis


@pytest.fixture
def url_dialog(qtbot: Any) -> OpenUrlDialog:
    d = OpenUrlDialog(keyring_ok=False)
    qtbot.addWidget(d)
    return d


def test_the_url_form_builds_a_redis_url_and_prefix(qtbot, url_dialog):
    d = url_dialog
    form = d._form
    assert not form.isRowVisible(d.key_prefix_edit)  # PostgreSQL first
    d.driver_combo.setCurrentIndex(d.driver_combo.findData(REDIS))
    assert form.isRowVisible(d.key_prefix_edit)
    assert d.port_edit.text() == "6379" and d.database_edit.text() == "0"
    assert d.key_prefix_edit.text() == "agents:session"
    assert d.url() == "redis://localhost:6379/0" and d.key_prefix() == "agents:session"
    d.host_edit.setText("cache.internal")
    d.user_edit.setText("app")
    d.password_edit.setText("s3cr:t@")
    d.database_edit.setText("3")
    d.key_prefix_edit.setText("support:sessions")
    assert d.ok_button.isEnabled(), d.problem()
    assert d.url() == "redis://app:s3cr%3At%40@cache.internal:6379/3"
    assert d.display_url() == "redis://app:***@cache.internal:6379/3"
    assert "s3cr" not in d.preview.text()
    assert d.key_prefix() == "support:sessions"
    # A password without a user name is Redis AUTH: redis://:password@host.
    d.user_edit.clear()
    assert d.url() == "redis://:s3cr%3At%40@cache.internal:6379/3"
    d.database_edit.setText("main")
    assert not d.ok_button.isEnabled() and "number" in (d.problem() or "")
    d.database_edit.setText("3")
    d.key_prefix_edit.clear()
    assert not d.ok_button.isEnabled() and "prefix" in (d.problem() or "")
    # Back to PostgreSQL: no prefix, the db number does not become a database name.
    d.driver_combo.setCurrentIndex(0)
    assert not form.isRowVisible(d.key_prefix_edit) and d.key_prefix() is None
    assert d.database_edit.text() == "" and d.port_edit.text() == "5432"
    assert d.prefill("redis://:pw@h:6380/2", "x:y") and d.is_redis()
    assert (d.url(), d.key_prefix()) == ("redis://:pw@h:6380/2", "x:y")


def test_ask_url_and_recent_stores_carry_the_prefix(qtbot, tmp_path):
    from fluxgui.qt.dialogs.opening import ask_url

    recent = RecentStores(QSettings(str(tmp_path / "r.ini"), QSettings.Format.IniFormat))

    def fill(d: OpenUrlDialog) -> None:
        d.driver_combo.setCurrentIndex(d.driver_combo.findData(REDIS))
        d.password_edit.setText("pw!")
        d.key_prefix_edit.setText("team:s")
        d.ok_button.click()

    when_modal(OpenUrlDialog, fill)
    request = ask_url(None)
    assert request == OpenRequest(
        "redis://:pw%21@localhost:6379/0", "redis://:***@localhost:6379/0 · team:s",
        key_prefix="team:s",
    )
    remember_opened(request, recent)
    remember_opened(OpenRequest("redis://localhost:6379/0", "redis://localhost:6379/0"), recent)
    entries = recent.entries()
    assert [(e.target, e.key_prefix) for e in entries] == [
        ("redis://localhost:6379/0", None),
        ("redis://@localhost:6379/0", "team:s"),
    ]
    assert "pw" not in (tmp_path / "r.ini").read_text()
    assert "team:s" in (tmp_path / "r.ini").read_text()
    assert startup_target(recent) == ("redis://localhost:6379/0", "redis://localhost:6379/0")
    # Reopening the prefixed entry asks for the password (no keyring) and keeps the prefix.
    from fluxgui.qt.dialogs.passwords import PasswordDialog

    def answer(d: PasswordDialog) -> None:
        d.password_edit.setText("pw!")
        d.accept()

    when_modal(PasswordDialog, answer)
    again = request_for_stored(None, entries[1].target, recent, entries[1].label, entries[1].key_prefix)
    assert again is not None and again.key_prefix == "team:s"
    assert again.target == "redis://:pw%21@localhost:6379/0"


def _write_redis(prefix: str, sessions: dict[str, list[dict[str, Any]]]) -> None:
    from agents.extensions.memory import RedisSession

    async def write() -> None:
        for sid, items in sessions.items():
            session = RedisSession.from_url(sid, url=REDIS_URL, key_prefix=prefix)
            try:
                await session.add_items(items)  # type: ignore[arg-type]
            finally:
                await session.close()

    run_async(write())


def test_a_redis_store_lists_its_sessions(qtbot, window, redis_prefix):
    _write_redis(redis_prefix, {
        "chat:1": [{"role": "user", "content": "Hello from Redis"}],
        "chat:2": [
            {"role": "user", "content": "Second session"},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "Second answer"}]},
        ],
    })
    request = OpenRequest(REDIS_URL, f"{REDIS_URL} · {redis_prefix}", key_prefix=redis_prefix)
    _open_request(qtbot, window, request)
    ids = {window.sessions.session_at(r).id for r in range(window.sessions.rowCount())}
    assert ids == {"chat:1", "chat:2"}
    text = window.conversation.toPlainText()
    assert "Hello from Redis" in text or "Second answer" in text
    assert window.recent.entries()[0].key_prefix == redis_prefix
    assert window.stores.opened.options.key_prefix == redis_prefix
    # The editing switch reopens under the same prefix and says what cannot be done.
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.set_editing(True)
    _settle(qtbot, window)
    assert window.stores.store.can_write and window.sessions.rowCount() == 2
    assert window.edits.edit_reason() is not None and "no message edits" in window.mode_label.text()
    assert not window.actions_by_name["edit_message"].isEnabled()
    assert window.actions_by_name["clear_session"].isEnabled()


# --------------------------------------------------------------------------- whole-session edits


@pytest.fixture
def confirm_yes(monkeypatch: Any) -> list[str]:
    """Answer the clear/delete confirmations with yes, recording which were asked."""
    import fluxgui.qt.dialogs.confirm as dialogs

    asked: list[str] = []
    for name in ("confirm_clear", "confirm_delete_session"):
        monkeypatch.setattr(dialogs, name, lambda *_a, n=name: asked.append(n) or True)
    return asked


def _apply(qtbot: Any, window: Any, run: Any) -> None:
    with qtbot.waitSignal(window.editor.applied, timeout=20_000):
        run()
    _settle(qtbot, window)


def test_a_folder_session_is_cleared_deleted_and_put_back_by_undo(qtbot, window, folder, confirm_yes):
    from json_helpers import hello_load

    sid = _open(qtbot, window, folder)
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.set_editing(True)
    _settle(qtbot, window)
    path = folder / f"{sid}.json"
    before = hello_load(path)
    _apply(qtbot, window, lambda: window.edits.clear_session())
    assert confirm_yes == ["confirm_clear"]
    assert hello_load(path)["history"] == [] and path.exists()
    assert "Clear session" in window.editor.stack.undoText()
    _apply(qtbot, window, window.editor.undo)
    assert hello_load(path) == before
    _apply(qtbot, window, lambda: window.edits.delete_session())
    assert not path.exists()
    _apply(qtbot, window, window.editor.undo)
    assert hello_load(path) == before


def test_a_redis_session_is_cleared_and_undone_in_the_window(qtbot, window, redis_prefix, confirm_yes):
    from agents.extensions.memory import RedisSession
    import redis.asyncio as aioredis

    items = [{"role": "user", "content": "Where is my parcel?"},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "On its way."}]}]

    async def write_and_read(sid: str, add: list | None) -> list:
        client = aioredis.from_url(REDIS_URL)
        try:
            session = RedisSession(sid, redis_client=client, key_prefix=redis_prefix)
            if add:
                await session.add_items(add)
            return await session.get_items()
        finally:
            await client.aclose()

    run_async(write_and_read("parcel", items))
    _open_request(qtbot, window, OpenRequest(REDIS_URL, REDIS_URL, key_prefix=redis_prefix))
    with qtbot.waitSignal(window.messagesShown, timeout=20_000):
        window.stores.set_editing(True)
    _settle(qtbot, window)
    _apply(qtbot, window, lambda: window.edits.clear_session("parcel"))
    assert run_async(write_and_read("parcel", None)) == []
    _apply(qtbot, window, window.editor.undo)
    assert run_async(write_and_read("parcel", None)) == items
