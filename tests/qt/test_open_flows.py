"""Opening stores: the URL form, recent stores without passwords, the keyring, drops,
the file dialog and the password prompt (offscreen, pytest-qt)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.errors
import pytest
from PySide6.QtCore import QMimeData, QPoint, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QWidget
from qt_helpers import OFFSCREEN_NOISE, run_async, when_modal
from sqlalchemy.engine import make_url

from fluxgui.qt.dialogs.files import (
    ALL_FILTER,
    SQLITE_FILTER,
    FileDropFilter,
    local_paths_from_mime,
    make_file_dialog,
    open_file_dialog,
)
from fluxgui.qt.dialogs.open_url import OpenUrlDialog
from fluxgui.qt.dialogs.opening import OpenRequest, ask_url, remember_opened, request_for_stored
from fluxgui.qt.dialogs.passwords import PasswordDialog, password_prompt
from fluxgui.services import credentials
from fluxgui.qt.settings import MAX_RECENT, RecentStores, resolve_target, startup_target

pytestmark = pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)

HOSTILE = [
    # (user, password, database)
    ("root", "p@ss:w/rd%", "test"),
    ("ünï cødé", "pässwörd ✓ 密码", "datenbank-ä"),
    ("a:b@c/d", "?#&=+ %25 %", "db?x=1#frag"),
    ("user", "spaces and 'quotes\" \\ ", "d b"),
]


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring that lives in a dict (never chosen by keyring's own detection)."""

    @keyring.backend.properties.classproperty
    def priority(cls) -> float:  # noqa: N805 - keyring's classproperty
        raise RuntimeError("test backend: only used through set_keyring")

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.store:
            raise keyring.errors.PasswordDeleteError("not found")
        del self.store[(service, username)]


class LockedKeyring(MemoryKeyring):
    """A keychain that refuses everything (locked, D-Bus gone)."""

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError("locked")

    def delete_password(self, service: str, username: str) -> None:
        raise RuntimeError("dbus went away")


@pytest.fixture(autouse=True)
def fail_keyring() -> Iterator[None]:
    """No test here touches the user's real keyring: the fail backend unless a test
    installs another; the previous backend is restored afterwards."""
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def memory_keyring() -> MemoryKeyring:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    return backend  # fail_keyring restores the previous backend


@pytest.fixture
def ini(tmp_path: Path) -> Path:
    return tmp_path / "fluxgui.ini"


@pytest.fixture
def recent(qapp: Any, ini: Path) -> RecentStores:
    return RecentStores(QSettings(str(ini), QSettings.Format.IniFormat))


@pytest.fixture
def dialog(qtbot: Any) -> OpenUrlDialog:
    d = OpenUrlDialog(keyring_ok=True)
    qtbot.addWidget(d)
    return d


def _fill(qtbot: Any, d: OpenUrlDialog, **fields: str) -> None:
    """Type into the form as a user would (keyClicks), clearing each field first."""
    for name, text in fields.items():
        edit = getattr(d, f"{name}_edit")
        edit.clear()
        if text:
            qtbot.keyClicks(edit, text)


# --------------------------------------------------------------------------- URL form


@pytest.mark.parametrize(("user", "password", "database"), HOSTILE)
def test_url_escapes_hostile_characters_and_round_trips(qtbot, dialog, user, password, database):
    dialog.user_edit.setText(user)
    dialog.password_edit.setText(password)
    dialog.database_edit.setText(database)
    dialog.host_edit.setText("db.example.com")
    dialog.port_edit.setText("6543")
    assert dialog.ok_button.isEnabled(), dialog.problem()

    url = make_url(dialog.url())
    assert url.drivername == "postgresql+asyncpg"
    assert (url.username, url.password, url.database) == (user, password, database)
    assert (url.host, url.port) == ("db.example.com", 6543)
    # The key and the display carry no password, and parse to the same place.
    key = make_url(dialog.url_key())
    assert key.password is None and key.username == user and key.database == database
    shown = make_url(dialog.display_url())
    assert shown.password == "***" and shown.database == database


def test_typed_form_builds_the_url(qtbot, dialog):
    _fill(qtbot, dialog, host="127.0.0.1", database="test", user="root", password="s3cret")
    assert dialog.url() == "postgresql+asyncpg://root:s3cret@127.0.0.1:5432/test"
    assert dialog.display_url() == "postgresql+asyncpg://root:***@127.0.0.1:5432/test"
    assert dialog.url_key() == "postgresql+asyncpg://root@127.0.0.1:5432/test"


def test_ok_is_disabled_until_the_form_is_complete(qtbot, dialog):
    assert dialog.port_edit.text() == "5432"  # the PostgreSQL default
    assert not dialog.ok_button.isEnabled()  # no database yet
    assert "database" in dialog.hint.text()
    _fill(qtbot, dialog, database="test")
    assert dialog.ok_button.isEnabled()
    assert dialog.hint.text() == ""

    _fill(qtbot, dialog, host="")
    assert not dialog.ok_button.isEnabled()
    _fill(qtbot, dialog, host="localhost")
    assert dialog.ok_button.isEnabled()

    for bad in ("0", "65536", "70000", "-1", "12ab"):
        dialog.port_edit.setText(bad)  # setText skips the validator: the check must not
        assert not dialog.ok_button.isEnabled(), bad
        assert "1 to 65535" in dialog.hint.text()
    for good in ("1", "65535", ""):  # empty: the driver's default port
        dialog.port_edit.setText(good)
        assert dialog.ok_button.isEnabled(), good

    dialog.options_edit.setText("ssl")  # not key=value
    assert not dialog.ok_button.isEnabled()
    dialog.options_edit.setText("ssl=require&application_name=fluxgui")
    assert dialog.ok_button.isEnabled()
    assert make_url(dialog.url()).query == {"ssl": "require", "application_name": "fluxgui"}


def test_the_port_field_refuses_typed_junk(qtbot, dialog):
    dialog.port_edit.clear()
    qtbot.keyClicks(dialog.port_edit, "a1b2")
    assert dialog.port_edit.text() == "12"


def test_enter_cannot_accept_an_incomplete_form(qtbot, dialog):
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.keyClick(dialog.host_edit, Qt.Key.Key_Return)
    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted
    _fill(qtbot, dialog, database="test")
    with qtbot.waitSignal(dialog.accepted):
        qtbot.keyClick(dialog.database_edit, Qt.Key.Key_Return)


def test_sqlite_and_other_drivers(qtbot, dialog, tmp_path):
    dialog.driver_combo.setCurrentIndex(dialog.driver_combo.findData("sqlite+aiosqlite"))
    assert not dialog.host_edit.isVisibleTo(dialog)
    assert not dialog.password_edit.isVisibleTo(dialog)
    assert dialog.browse_button.isVisibleTo(dialog)
    assert not dialog.ok_button.isEnabled()
    path = str(tmp_path / "with space?.db")
    dialog.database_edit.setText(path)
    assert dialog.ok_button.isEnabled()
    assert make_url(dialog.url()).database == path
    assert dialog.url().startswith("sqlite+aiosqlite:///")

    dialog.driver_combo.setCurrentIndex(dialog.driver_combo.count() - 1)  # other
    assert dialog.driver_edit.isVisibleTo(dialog) and dialog.host_edit.isVisibleTo(dialog)
    assert not dialog.ok_button.isEnabled()
    assert dialog.preview.text() == ""  # nothing to show without a driver
    dialog.database_edit.setText("shop")
    for bad in ("mysql aiomysql", "+x", "my-sql"):
        dialog.driver_edit.setText(bad)
        assert not dialog.ok_button.isEnabled(), bad
    dialog.port_edit.clear()
    _fill(qtbot, dialog, driver="mysql+aiomysql")
    assert dialog.port_edit.text() == "3306"  # the driver's default port follows
    assert dialog.ok_button.isEnabled()
    assert dialog.url() == "mysql+aiomysql://localhost:3306/shop"

    # A port the user typed is kept when the driver changes.
    dialog.port_edit.setText("4000")
    dialog.driver_combo.setCurrentIndex(0)
    assert dialog.port_edit.text() == "4000"


def test_prefill_fills_the_form(qtbot, dialog):
    url = "postgresql://ro%40ot:p%40ss@db.example.com:6543/sup%2Fport?ssl=require"
    assert dialog.prefill(url)
    assert dialog.driver_combo.currentData() == "postgresql+asyncpg"
    assert dialog.user_edit.text() == "ro@ot"
    assert dialog.password_edit.text() == "p@ss"
    assert dialog.host_edit.text() == "db.example.com"
    assert dialog.port_edit.text() == "6543"
    assert dialog.database_edit.text() == "sup/port"
    assert dialog.options_edit.text() == "ssl=require"
    parsed = make_url(dialog.url())
    assert (parsed.username, parsed.password, parsed.database) == ("ro@ot", "p@ss", "sup/port")

    assert dialog.prefill("mysql+aiomysql://u@h/db")
    assert dialog.driver_combo.currentData() is None
    assert dialog.driver_edit.text() == "mysql+aiomysql"
    assert dialog.url() == "mysql+aiomysql://u@h/db"

    assert dialog.prefill("/data/my store?.db")  # a path
    assert dialog.is_sqlite() and dialog.database_edit.text() == "/data/my store?.db"

    before = dialog.url()
    assert not dialog.prefill("postgresql://u@h:notaport/db")
    assert dialog.url() == before


@pytest.mark.parametrize("password", [p for _, p, _ in HOSTILE] + ["hunter2"])
def test_the_preview_never_shows_the_password(qtbot, dialog, password):
    _fill(qtbot, dialog, user="root", database="test")
    dialog.password_edit.setText(password)
    forms = {password, quote(password, safe=""), quote_plus(password)}
    for text in (dialog.preview.text(), dialog.display_url(), dialog.url_key()):
        assert not any(form in text for form in forms), text
    assert ":***@" in dialog.preview.text()
    assert dialog.password_edit.echoMode() == dialog.password_edit.EchoMode.Password

    other = OpenUrlDialog(initial=dialog.url(), keyring_ok=False)
    qtbot.addWidget(other)
    assert other.password_edit.text() == password
    assert not any(form in other.preview.text() for form in forms)


def test_remember_checkbox_without_a_keyring(qtbot):
    d = OpenUrlDialog()  # asks keyring itself: the fail backend is installed
    qtbot.addWidget(d)
    assert not d.remember_check.isEnabled()
    assert "keyring" in d.remember_check.toolTip()
    d.remember_check.setChecked(True)
    d.password_edit.setText("pw")
    assert not d.remember_password()


def test_remember_checkbox_with_a_keyring(qtbot, memory_keyring):
    d = OpenUrlDialog()
    qtbot.addWidget(d)
    assert d.remember_check.isEnabled()
    d.remember_check.setChecked(True)
    assert not d.remember_password()  # no password, nothing to remember
    d.password_edit.setText("pw")
    assert d.remember_password()


def test_dialog_rendering_fits(qtbot, dialog, tmp_path):
    """The form lays out without clipping: every row is as tall as it asks to be."""
    _fill(qtbot, dialog, user="root", password="pw", database="test")
    dialog.show()
    qtbot.waitExposed(dialog)
    for widget in (dialog.host_edit, dialog.port_edit, dialog.ok_button):
        assert widget.height() >= widget.minimumSizeHint().height(), widget
        assert widget.width() > 0
    assert dialog.preview.height() >= dialog.preview.fontMetrics().lineSpacing()
    assert dialog.port_edit.width() >= dialog.port_edit.fontMetrics().horizontalAdvance("65535")
    image = dialog.grab().toImage()
    assert image.width() >= 520 and not image.isNull()

    # A long URL wraps in the preview instead of being cut off at the edge.
    one_line = dialog.preview.height()
    dialog.database_edit.setText("agent_sessions_" * 8)
    qtbot.waitUntil(lambda: dialog.preview.height() > one_line)
    assert dialog.preview.text().endswith("agent_sessions_")
    assert dialog.width() < 700


# --------------------------------------------------------------------------- credentials


def test_secrets_without_a_keyring_never_raise():
    key = "postgresql+asyncpg://root@127.0.0.1:5432/test"
    assert not credentials.keyring_available()
    assert credentials.get_password(key) is None
    assert credentials.set_password(key, "pw") is False
    assert credentials.delete_password(key) is False


def test_secrets_with_a_locked_keychain_never_raise():
    keyring.set_keyring(LockedKeyring())
    key = "postgresql+asyncpg://root@127.0.0.1:5432/test"
    assert credentials.keyring_available()  # configured, but it refuses
    assert credentials.get_password(key) is None
    assert credentials.set_password(key, "pw") is False
    assert credentials.delete_password(key) is False


def test_secrets_round_trip_in_a_keyring(memory_keyring):
    key = "postgresql+asyncpg://root@127.0.0.1:5432/test"
    assert credentials.keyring_available()
    assert credentials.get_password(key) is None
    assert credentials.set_password(key, "p@ss:w/rd%")
    assert memory_keyring.store == {("fluxgui", key): "p@ss:w/rd%"}
    assert credentials.get_password(key) == "p@ss:w/rd%"
    assert credentials.delete_password(key)
    assert credentials.get_password(key) is None
    assert not credentials.delete_password(key)  # nothing left to delete


def test_url_helpers():
    url = "postgresql+asyncpg://ro%40ot:p%40ss@h:5432/db"
    assert credentials.split_password(url) == ("postgresql+asyncpg://ro%40ot@h:5432/db", "p@ss")
    assert credentials.split_password("/x/y.db") == ("/x/y.db", None)
    assert credentials.split_password("postgresql+asyncpg://u@h/db") == (
        "postgresql+asyncpg://u@h/db", None)
    assert credentials.split_password("postgresql+asyncpg://u:@h/db") == (
        "postgresql+asyncpg://u@h/db", None)
    assert credentials.with_password("postgresql+asyncpg://u@h/db", "a@b") == (
        "postgresql+asyncpg://u:a%40b@h/db")
    assert credentials.display_target(url) == "postgresql+asyncpg://ro%40ot:***@h:5432/db"
    with pytest.raises(ValueError) as info:
        credentials.split_password("postgresql://u:secret@h:port/db")
    assert "secret" not in str(info.value)


# --------------------------------------------------------------------------- recent stores


def test_recent_order_dedup_and_limit(recent, tmp_path):
    paths = [str(tmp_path / f"s{i}.db") for i in range(MAX_RECENT + 3)]
    for i, path in enumerate(paths):
        recent.add(path, f"store {i}")
    items = recent.items()
    assert len(items) == MAX_RECENT
    assert [t for t, _ in items] == paths[::-1][:MAX_RECENT]
    assert items[0] == (paths[-1], f"store {len(paths) - 1}")

    recent.add(paths[5], "again")  # an old one moves to the front, once
    items = recent.items()
    assert items[0] == (paths[5], "again")
    assert [t for t, _ in items].count(paths[5]) == 1
    assert len(items) == MAX_RECENT
    assert recent.last() == paths[5]

    recent.remove(paths[5])
    assert paths[5] not in [t for t, _ in recent.items()]
    recent.clear()
    assert recent.items() == [] and recent.last() is None


def test_recent_paths_are_stored_absolute(recent, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recent.add("rel.db")
    assert recent.last() == str(tmp_path / "rel.db")
    recent.add(str(tmp_path / "rel.db"))
    assert len(recent.items()) == 1


def test_recent_never_writes_a_password(recent, ini):
    password = "Zq9-p@ss:w/rd%-ünï"
    url = credentials.with_password("postgresql+asyncpg://root@db.example.com:5432/support", password)
    recent.add(url, url)  # even a label that is the whole URL
    recent.add("postgresql+asyncpg://other:Zq9-other@h/db")
    recent.add(url)  # the same store again: one entry
    assert recent.items()[0] == (
        "postgresql+asyncpg://root@db.example.com:5432/support",
        "postgresql+asyncpg://root:***@db.example.com:5432/support",
    )
    assert len(recent.items()) == 2
    assert recent.needs_password(recent.last())

    text = ini.read_bytes().decode("utf-8", "replace")
    assert "db.example.com" in text  # the entry is there…
    for form in {password, quote(password, safe=""), quote_plus(password), "Zq9"}:
        assert form not in text  # …its password is not, in any spelling
    # A fresh reader sees the same list.
    again = RecentStores(QSettings(str(ini), QSettings.Format.IniFormat))
    assert again.items() == recent.items()
    assert again.needs_password(again.last())


def test_recent_refuses_an_unparsable_url(recent, ini):
    assert not recent.add("postgresql://u:secret@h:port/db")
    assert recent.items() == []
    assert not ini.exists() or "secret" not in ini.read_text()


def test_recent_survives_junk_in_the_settings(qapp, ini):
    settings = QSettings(str(ini), QSettings.Format.IniFormat)
    settings.setValue("recent/stores/size", 3)
    settings.setValue("recent/stores/1/target", "/a.db")
    settings.setValue("recent/stores/3/target", "/a.db")
    settings.sync()
    assert RecentStores(settings).items() == [("/a.db", "/a.db")]


def test_resolve_target_puts_the_keyring_password_back(recent, memory_keyring):
    url = "postgresql+asyncpg://root:p%40ss@h:5432/db"
    key = "postgresql+asyncpg://root@h:5432/db"
    recent.add(url)
    assert recent.last() == key
    assert recent.resolve_target(key) is None  # needed, not known: ask the user
    assert startup_target(recent) is None  # … so the start opens the demo store

    credentials.set_password(key, "p@ss")
    resolved = recent.resolve_target(key)
    assert resolved is not None and make_url(resolved).password == "p@ss"
    assert startup_target(recent) == (resolved, "postgresql+asyncpg://root:***@h:5432/db")

    assert resolve_target("/some/file.db") == "/some/file.db"
    plain = "postgresql+asyncpg://root@other/db"
    assert resolve_target(plain) == plain  # no password needed, none found
    assert resolve_target(plain, needs_password=True) is None


def test_startup_target(recent, tmp_path):
    assert startup_target(recent) is None
    db = tmp_path / "a.db"
    recent.add(str(db), "A")
    assert startup_target(recent) is None  # the file is gone
    db.write_bytes(b"")
    assert startup_target(recent) == (str(db), "A")
    recent.add("postgresql+asyncpg://root@127.0.0.1:5432/test")
    assert startup_target(recent) == (
        "postgresql+asyncpg://root@127.0.0.1:5432/test",
        "postgresql+asyncpg://root@127.0.0.1:5432/test",
    )


def test_default_settings_are_fluxgui_ini(qapp, tmp_path):
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path))
    recent = RecentStores()
    recent.add(str(tmp_path / "x.db"))
    assert (tmp_path / "fluxgui" / "fluxgui.ini").is_file()


# --------------------------------------------------------------------------- flows


def test_remember_opened_files_the_password_in_the_keyring(recent, memory_keyring):
    request = OpenRequest("postgresql+asyncpg://root:pw%40x@h/db",
                          "postgresql+asyncpg://root:***@h/db", remember=True)
    assert "pw" not in repr(request)
    remember_opened(request, recent)
    assert recent.last() == "postgresql+asyncpg://root@h/db"
    assert memory_keyring.store == {("fluxgui", "postgresql+asyncpg://root@h/db"): "pw@x"}
    # Reopening needs no prompt now.
    again = request_for_stored(None, recent.last(), recent)
    assert again is not None and again.target == "postgresql+asyncpg://root:pw%40x@h/db"

    remember_opened(OpenRequest("postgresql+asyncpg://u:nope@h2/db", "x"), recent)
    assert ("fluxgui", "postgresql+asyncpg://u@h2/db") not in memory_keyring.store


def test_ask_url(qtbot, memory_keyring, tmp_path):
    def fill(d: OpenUrlDialog) -> None:
        d.host_edit.setText("db.example.com")
        d.database_edit.setText("support")
        d.user_edit.setText("root")
        d.password_edit.setText("p@ss")
        d.remember_check.setChecked(True)
        d.ok_button.click()

    when_modal(OpenUrlDialog, fill)
    request = ask_url(None)
    assert request == OpenRequest(
        "postgresql+asyncpg://root:p%40ss@db.example.com:5432/support",
        "postgresql+asyncpg://root:***@db.example.com:5432/support",
        remember=True,
    )

    path = str(tmp_path / "a.db")
    when_modal(OpenUrlDialog, lambda d: d.ok_button.click())
    assert ask_url(None, initial=path) == OpenRequest(path, path)

    when_modal(OpenUrlDialog, lambda d: d.reject())
    assert ask_url(None) is None


def test_password_prompt(qtbot):
    def type_and_accept(d: PasswordDialog) -> None:
        assert d.url_field.text() == "postgresql+asyncpg://root:***@h/db"
        assert d.remember_check.isHidden()
        qtbot.keyClicks(d.password_edit, "p@ss")
        d.accept()

    when_modal(PasswordDialog, type_and_accept)
    assert password_prompt(None, "postgresql+asyncpg://root:***@h/db") == "p@ss"

    when_modal(PasswordDialog, lambda d: d.reject())
    assert password_prompt(None, "postgresql+asyncpg://root:***@h/db") is None


def test_password_prompt_shows_markup_as_text(qtbot):
    d = PasswordDialog(None, "postgresql+asyncpg://<b>x</b>:***@h/db")
    qtbot.addWidget(d)
    assert d.url_field.text() == "postgresql+asyncpg://<b>x</b>:***@h/db"


def test_request_for_stored_asks_when_the_keyring_has_nothing(qtbot, recent, memory_keyring):
    recent.add("postgresql+asyncpg://root:pw@h/db")

    def answer(d: PasswordDialog) -> None:
        assert not d.remember_check.isHidden()  # a keyring is there
        d.password_edit.setText("typed")
        d.remember_check.setChecked(True)
        d.accept()

    when_modal(PasswordDialog, answer)
    request = request_for_stored(None, recent.last(), recent)
    assert request is not None and request.remember
    assert make_url(request.target).password == "typed"
    assert request.label == "postgresql+asyncpg://root@h/db"


def test_file_dialog_filters_and_result(qtbot, tmp_path):
    db = tmp_path / "store.sqlite3"
    db.write_bytes(b"")
    d = make_file_dialog(None, str(tmp_path))
    qtbot.addWidget(d)
    assert d.nameFilters() == [SQLITE_FILTER, ALL_FILTER]
    assert d.fileMode() == QFileDialog.FileMode.ExistingFile

    def pick(dialog: QFileDialog) -> None:
        dialog.selectFile(str(db))
        dialog.accept()

    when_modal(QFileDialog, pick)
    assert open_file_dialog(None, str(tmp_path)) == str(db)
    when_modal(QFileDialog, lambda dialog: dialog.reject())
    assert open_file_dialog(None, str(tmp_path)) is None


# --------------------------------------------------------------------------- drag & drop


def _mime(*urls: QUrl) -> QMimeData:
    mime = QMimeData()
    mime.setUrls(list(urls))
    return mime


def test_local_paths_from_mime(qapp, tmp_path):
    a, b = str(tmp_path / "a b.db"), str(tmp_path / "ü.sqlite")
    mime = _mime(
        QUrl.fromLocalFile(a),
        QUrl("http://127.0.0.1:9/x.db"),
        QUrl("https://example.com/y.db"),
        QUrl("ftp://example.com/z.db"),
        QUrl("file://remotehost/share/r.db"),
        QUrl.fromLocalFile(b),
        QUrl.fromLocalFile(a),
    )
    expected = [a, b]
    if os.name == "nt":  # pragma: no cover - a UNC path is local on Windows
        expected = [a, "//remotehost/share/r.db", b]
    assert local_paths_from_mime(mime) == expected
    assert local_paths_from_mime(_mime(QUrl("http://127.0.0.1:9/x.db"))) == []
    text_only = QMimeData()
    text_only.setText(a)
    assert local_paths_from_mime(text_only) == []


def _send_drop(qtbot: Any, target: QWidget, mime: QMimeData) -> tuple[bool, bool]:
    pos = QPoint(5, 5)
    enter = QDragEnterEvent(pos, Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, enter)
    drop = QDropEvent(pos.toPointF(), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, drop)
    return enter.isAccepted(), drop.isAccepted()


def test_drop_filter_on_a_window_and_its_text_view(qtbot, tmp_path):
    from PySide6.QtWidgets import QTextBrowser, QVBoxLayout

    window = QWidget()
    qtbot.addWidget(window)
    view = QTextBrowser(window)  # takes drops itself: the filter must sit in front
    QVBoxLayout(window).addWidget(view)
    drops = FileDropFilter(window)
    drops.watch(window)
    got: list[list[str]] = []
    drops.filesDropped.connect(got.append)

    path = str(tmp_path / "dropped.db")
    for target in (window, view.viewport()):
        assert _send_drop(qtbot, target, _mime(QUrl.fromLocalFile(path))) == (True, True)
    assert got == [[path], [path]]

    got.clear()
    entered, _ = _send_drop(qtbot, window, _mime(QUrl("http://127.0.0.1:9/x.db")))
    assert not entered and got == []


# --------------------------------------------------------------------------- a real server


@pytest.mark.postgres  # (also set by tests/conftest.py from its fixtures)
def test_the_form_opens_the_local_postgres(qtbot, dialog, pg_available):
    from fluxgui.adapters import open_store
    from fluxgui.core.errors import NotASessionStore

    server = make_url(os.environ.get("FLUXGUI_TEST_PG", "postgresql://root@127.0.0.1:5432/test"))
    _fill(
        qtbot,
        dialog,
        host=server.host or "127.0.0.1",
        database=server.database or "test",
        user=server.username or "",
        password=server.password or "",
    )
    dialog.port_edit.setText(str(server.port or 5432))
    assert dialog.ok_button.isEnabled(), dialog.problem()
    url = dialog.url()
    assert url.startswith("postgresql+asyncpg://")

    async def attempt() -> str:
        try:
            store = await open_store(url)
        except NotASessionStore as exc:
            return str(exc)
        await store.close()
        return "store"

    outcome = run_async(attempt())
    assert outcome == "store" or "is not a session store" in outcome, outcome


def test_drop_filter_on_the_main_window(qtbot, window, tmp_path):
    """The wiring the window uses: drops on the list or the conversation reach it."""
    drops = FileDropFilter(window)
    drops.watch(window)
    got: list[list[str]] = []
    drops.filesDropped.connect(got.append)
    path = str(tmp_path / "dropped.db")
    targets = [window, window.conversation.view.viewport(), window.session_view.viewport()]
    for target in targets:
        entered, dropped = _send_drop(qtbot, target, _mime(QUrl.fromLocalFile(path)))
        assert entered and dropped, target
    assert got == [[path]] * len(targets)


# --------------------------------------------------------------------------- declared options


def test_the_store_options_are_built_from_the_declarations(qtbot, dialog):
    from fluxgui.adapters.registry import options_for
    from fluxgui.core.ports import OpenOptions
    from fluxgui.qt.dialogs.option_fields import KEY_OPTIONS

    form = dialog._form
    fields = dialog.option_fields.edits
    # Every declared option of a database or Redis store has a row, but the key and its
    # TTL (the Key dialog asks for them once the store says it holds encrypted items).
    declared = {o.name for kind in ("sql", "redis") for o in options_for(kind)}
    assert set(fields) == declared - KEY_OPTIONS
    for name in ("sessions_table", "messages_table"):  # a database: its table names
        assert form.isRowVisible(fields[name]), name
        assert fields[name].text() == "" and fields[name].toolTip()
    assert not form.isRowVisible(dialog.key_prefix_edit)
    label = form.labelForField(fields["sessions_table"])
    assert label.text() == "&Sessions table:" and label.buddy() is fields["sessions_table"]

    _fill(qtbot, dialog, database="test")
    assert dialog.open_options() == OpenOptions()  # empty: found in the database
    fields["sessions_table"].setText("support_sessions")
    fields["messages_table"].setText("support_messages")
    assert dialog.open_options() == OpenOptions(
        sessions_table="support_sessions", messages_table="support_messages"
    )

    dialog.driver_combo.setCurrentIndex(dialog.driver_combo.findData("redis"))
    assert form.isRowVisible(dialog.key_prefix_edit)
    assert not form.isRowVisible(fields["sessions_table"])
    assert dialog.open_options() == OpenOptions(key_prefix="agents:session")


def test_ask_url_carries_the_typed_options(qtbot, tmp_path):
    from fluxgui.core.ports import OpenOptions

    path = str(tmp_path / "renamed.db")

    def fill(d: OpenUrlDialog) -> None:
        d.option_fields.edits["sessions_table"].setText("s_tab")
        d.option_fields.edits["messages_table"].setText("m_tab")
        d.ok_button.click()

    when_modal(OpenUrlDialog, fill)
    request = ask_url(None, initial=path)
    assert request == OpenRequest(
        path, path, options=OpenOptions(sessions_table="s_tab", messages_table="m_tab")
    )
    # The key prefix is one value, given either way.
    a = OpenRequest("redis://h/0", "r", key_prefix="p:q")
    b = OpenRequest("redis://h/0", "r", options=OpenOptions(key_prefix="p:q"))
    assert a == b and a.options.key_prefix == "p:q" and b.key_prefix == "p:q"


def test_the_keyring_is_asked_off_the_ui_thread_when_that_could_wait(
    qtbot, qloop, memory_keyring, monkeypatch
):
    """keyring has not chosen its backend yet (the first question may take seconds): the
    dialogs ask on a worker thread and offer "Remember" when the answer comes."""
    import threading

    from fluxgui.services import credentials as creds

    monkeypatch.setattr(creds, "backend_chosen", lambda: False)
    asked: list[str] = []
    real = creds.keyring_available

    def keyring_available() -> bool:
        asked.append(threading.current_thread().name)
        return real()

    monkeypatch.setattr(creds, "keyring_available", keyring_available)
    d = OpenUrlDialog()
    qtbot.addWidget(d)
    assert not d.remember_check.isEnabled() and "Looking" in d.remember_check.toolTip()
    qtbot.waitUntil(d.remember_check.isEnabled, timeout=5_000)
    p = PasswordDialog(None, "postgresql+asyncpg://root:***@h/db", offer_remember=None)
    qtbot.addWidget(p)
    assert p.remember_check.isHidden()
    qtbot.waitUntil(lambda: not p.remember_check.isHidden(), timeout=5_000)
    assert len(asked) == 2 and threading.current_thread().name not in asked


def test_remember_opened_files_the_password_off_the_ui_thread(qtbot, qloop, recent, memory_keyring):
    request = OpenRequest("postgresql+asyncpg://root:pw@h/db", "x", remember=True)
    remember_opened(request, recent)
    assert recent.last() == "postgresql+asyncpg://root@h/db"  # the list: at once
    qtbot.waitUntil(lambda: memory_keyring.store != {}, timeout=5_000)  # the keyring: a task
    assert memory_keyring.store == {("fluxgui", "postgresql+asyncpg://root@h/db"): "pw"}
