"""The ways a store gets opened: a file or folder dialog, a URL form, drag & drop, a
password prompt.

Nothing here opens a store; each piece hands back a *target* (a file or folder path, a
SQLAlchemy URL or a ``redis://`` URL) for :meth:`fluxgui.qt.window.MainWindow.open_target`,
and a *label* to show instead of it — a URL's password never reaches a label, a log line
or the settings. A Redis target travels with its key prefix (:attr:`OpenRequest.key_prefix`).

The modal helpers (:func:`open_file_dialog`, :func:`open_folder_dialog`,
:func:`password_prompt`, :func:`ask_url`, :func:`request_for_stored`) run a nested Qt event
loop; the qasync loop keeps running inside it. Call them from Qt slots (a menu action),
not from inside a coroutine.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

from PySide6.QtCore import QEvent, QMimeData, QObject, Qt, Signal
from PySide6.QtGui import QIntValidator, QTextOption
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from fluxgui.adapters.registry import DEFAULT_PREFIX

from . import secrets
from .settings import RecentStores

# --------------------------------------------------------------------------- drivers

POSTGRES = "postgresql+asyncpg"
SQLITE = "sqlite+aiosqlite"
REDIS = "redis"
#: (combo text, SQLAlchemy drivername or URL scheme; None = the "other" entry with its
#: own field)
DRIVERS: list[tuple[str, str | None]] = [
    ("PostgreSQL (asyncpg)", POSTGRES),
    ("SQLite file", SQLITE),
    ("Redis (Agents SDK RedisSession)", REDIS),
    ("Other SQLAlchemy async driver…", None),
]
#: default ports by SQLAlchemy backend name (and Redis)
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306, "mssql": 1433,
                 "oracle": 1521, "redis": 6379, "rediss": 6379}
#: URL schemes of Redis servers (``unix://`` sockets are typed as a target, not here)
REDIS_SCHEMES = {"redis", "rediss"}
#: drivernames the form shows as "PostgreSQL (asyncpg)" (parse_target maps them to asyncpg)
POSTGRES_ALIASES = {"postgresql", "postgres", "postgresql+asyncpg", "postgresql+psycopg2"}
SQLITE_ALIASES = {"sqlite", "sqlite+aiosqlite", "sqlite+pysqlite"}
_DRIVERNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\+[A-Za-z][A-Za-z0-9_]*)?$")

SQLITE_FILTER = "SQLite databases (*.db *.sqlite *.sqlite3 *.db3)"
ALL_FILTER = "All files (*)"


class UrlView(QTextEdit):
    """A read-only URL: plain text (never markup), wrapped (at spaces, else anywhere) so a
    long URL stays whole and readable, as tall as its lines, on the window's background."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setAcceptRichText(False)
        self.setAcceptDrops(False)
        self.setTabChangesFocus(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.viewport().setAutoFillBackground(False)
        self.document().setDocumentMargin(2)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self._fit()

    def text(self) -> str:
        return self.toPlainText()

    def setText(self, text: str) -> None:  # noqa: N802 - the QLineEdit name
        if text != self.toPlainText():
            self.setPlainText(text)

    def _fit(self, *_: object) -> None:
        lines = max(1.0, self.document().size().height())
        one_line = self.fontMetrics().lineSpacing() + 2 * self.document().documentMargin()
        self.setFixedHeight(int(max(lines, one_line)) + 2 * self.frameWidth())


def _default_port(drivername: str) -> int | None:
    return DEFAULT_PORTS.get(drivername.split("+", 1)[0].lower())


class OpenUrlDialog(QDialog):
    """A form that builds a SQLAlchemy URL: driver, host, port, database, user, password
    — or a ``redis://[user:password@]host:6379/<db number>`` URL and its key prefix.

    :meth:`url` is the URL to open (password included, escaped by
    ``sqlalchemy.engine.URL.create``); :meth:`display_url` the same with ``***``;
    :meth:`remember_password` whether the user asked for the keyring; :meth:`key_prefix`
    the Redis key prefix (``None`` for a database). *Open* stays disabled until the form
    is complete; :meth:`problem` says what is missing.
    """

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        initial: str | None = None,
        keyring_ok: bool | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open database URL")
        self.setModal(True)
        self._keyring_ok = secrets.keyring_available() if keyring_ok is None else keyring_ok
        self._port_default: int | None = None
        self._shape: tuple[bool, bool, bool] | None = None  # (sqlite, other, redis) shown

        self.driver_combo = QComboBox(self)
        for text, name in DRIVERS:
            self.driver_combo.addItem(text, name)
        self.driver_edit = QLineEdit(self)
        self.driver_edit.setPlaceholderText("e.g. mysql+aiomysql")

        self.host_edit = QLineEdit("localhost", self)
        self.host_edit.setPlaceholderText("localhost")
        self.port_edit = QLineEdit(self)
        self.port_edit.setValidator(QIntValidator(1, 65535, self.port_edit))
        self.port_edit.setMaxLength(5)
        self.port_edit.setFixedWidth(self.fontMetrics().horizontalAdvance("655350") + 24)
        host_row = QWidget(self)
        host_layout = QHBoxLayout(host_row)
        host_layout.setContentsMargins(0, 0, 0, 0)
        host_layout.addWidget(self.host_edit, 1)
        port_label = QLabel("Port:", host_row)
        port_label.setBuddy(self.port_edit)
        host_layout.addWidget(port_label)
        host_layout.addWidget(self.port_edit)
        self._host_row = host_row

        self.database_edit = QLineEdit(self)
        self.browse_button = QPushButton("Browse…", self)
        self.browse_button.setAutoDefault(False)
        self.browse_button.clicked.connect(self._browse)
        database_row = QWidget(self)
        database_layout = QHBoxLayout(database_row)
        database_layout.setContentsMargins(0, 0, 0, 0)
        database_layout.addWidget(self.database_edit, 1)
        database_layout.addWidget(self.browse_button)
        self._database_row = database_row

        self.user_edit = QLineEdit(self)
        self.password_edit = QLineEdit(self)
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.remember_check = QCheckBox("Remember password in the system keyring", self)
        if not self._keyring_ok:
            self.remember_check.setEnabled(False)
            self.remember_check.setToolTip(
                "No system keyring is available: the password is asked for each time."
            )
        else:
            self.remember_check.setToolTip(
                "Without this, the password is asked for each time the store is reopened."
            )
        self.options_edit = QLineEdit(self)
        self.options_edit.setPlaceholderText("optional, e.g. ssl=require")
        self.key_prefix_edit = QLineEdit(DEFAULT_PREFIX, self)
        self.key_prefix_edit.setPlaceholderText(DEFAULT_PREFIX)
        self.key_prefix_edit.setToolTip(
            "RedisSession's key_prefix: sessions are the hashes <prefix>:<session id> "
            f"(default {DEFAULT_PREFIX})"
        )

        self.preview = UrlView(self)
        self.preview.setToolTip("The URL that will be opened (the password is shown as ***).")

        self.hint = QLabel(self)
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setWordWrap(True)
        self._style_hint()

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("&Driver:", self.driver_combo)
        form.addRow("Driver &name:", self.driver_edit)
        form.addRow("&Host:", host_row)
        form.addRow("Data&base:", database_row)
        form.addRow("&User:", self.user_edit)
        form.addRow("&Password:", self.password_edit)
        form.addRow("", self.remember_check)
        form.addRow("Op&tions:", self.options_edit)
        form.addRow("&Key prefix:", self.key_prefix_edit)
        form.addRow("URL:", self.preview)
        self._form = form
        # Buddies for the composite rows so the mnemonics focus the right edit.
        for row_widget, edit in ((host_row, self.host_edit), (database_row, self.database_edit)):
            label = form.labelForField(row_widget)
            if isinstance(label, QLabel):
                label.setBuddy(edit)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.hint)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(520)

        for edit in (self.driver_edit, self.host_edit, self.port_edit, self.database_edit,
                     self.user_edit, self.password_edit, self.options_edit,
                     self.key_prefix_edit):
            edit.textChanged.connect(self._update)
        self.driver_combo.currentIndexChanged.connect(self._on_driver_changed)
        self.driver_edit.textChanged.connect(self._on_driver_changed)
        self._on_driver_changed()
        if initial:
            self.prefill(initial)

    # -- reading the form --------------------------------------------------------------

    @property
    def ok_button(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Open)

    def drivername(self) -> str:
        """The SQLAlchemy drivername the form is set to (``""`` when Other is empty)."""
        name = self.driver_combo.currentData()
        return name if name else self.driver_edit.text().strip()

    def is_sqlite(self) -> bool:
        return self.drivername().split("+", 1)[0].lower() == "sqlite"

    def is_redis(self) -> bool:
        """Whether the form names a Redis server (the Redis entry, or ``rediss`` typed
        as another driver)."""
        return self.drivername().lower() in REDIS_SCHEMES

    def key_prefix(self) -> str | None:
        """The Redis key prefix to open under (``None`` for a database)."""
        if not self.is_redis():
            return None
        return self.key_prefix_edit.text().strip() or DEFAULT_PREFIX

    def _port(self) -> int | None:
        text = self.port_edit.text().strip()
        if not text or not text.isdigit():
            return None
        port = int(text)
        return port if 1 <= port <= 65535 else None

    def _query(self) -> dict[str, str | list[str]] | None:
        text = self.options_edit.text().strip().lstrip("?")
        if not text:
            return {}
        try:
            pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=True)
        except ValueError:
            return None
        query: dict[str, str | list[str]] = {}
        for key, value in pairs:
            old = query.get(key)
            if old is None:
                query[key] = value
            else:
                query[key] = [*([old] if isinstance(old, str) else old), value]
        return query

    def problem(self) -> str | None:
        """What keeps the form from being opened, in one sentence; ``None`` when complete."""
        name = self.drivername()
        if not name:
            return "Enter the SQLAlchemy driver name, such as mysql+aiomysql."
        if not _DRIVERNAME.match(name):
            return "The driver name looks like backend+driver, such as mysql+aiomysql."
        if self._query() is None:
            return "Options are key=value pairs joined by &, such as ssl=require."
        if self.is_sqlite():
            if not self.database_edit.text().strip():
                return "Choose the SQLite file."
            return None
        port_text = self.port_edit.text().strip()
        if port_text and self._port() is None:
            return "The port is a number from 1 to 65535."
        if self.is_redis():
            if not self.host_edit.text().strip():
                return "Enter the host name or address of the Redis server."
            db = self.database_edit.text().strip()
            if db and not db.isdigit():
                return "The Redis database is a number (0 unless the server uses others)."
            if not self.key_prefix_edit.text().strip():
                return f"Enter the key prefix the sessions were written under ({DEFAULT_PREFIX} by default)."
            return None
        if not self.host_edit.text().strip():
            return "Enter the host name or address of the database server."
        if not self.database_edit.text().strip():
            return "Enter the name of the database."
        return None

    def is_valid(self) -> bool:
        return self.problem() is None

    def _url_object(self, *, with_password: bool = True):  # -> sqlalchemy URL
        from sqlalchemy.engine import URL

        name = self.drivername()
        if not _DRIVERNAME.match(name):
            name = "driver"  # only while the form is incomplete (OK is disabled)
        if self.is_sqlite():
            return URL.create(name, database=self.database_edit.text().strip() or None,
                              query=self._query() or {})
        if self.is_redis():
            db = self.database_edit.text().strip()
            password = self.password_edit.text() or None
            return URL.create(
                name,
                # Redis AUTH with a password only is redis://:password@host: an empty
                # user name, which SQLAlchemy writes only when it is "" rather than None.
                username=self.user_edit.text() or ("" if password else None),
                password=password if with_password else None,
                host=self.host_edit.text().strip() or None,
                port=self._port(),
                database=db if db.isdigit() else "0",
                query=self._query() or {},
            )
        return URL.create(
            name,
            username=self.user_edit.text() or None,
            password=(self.password_edit.text() or None) if with_password else None,
            host=self.host_edit.text().strip() or None,
            port=self._port(),
            database=self.database_edit.text().strip() or None,
            query=self._query() or {},
        )

    def url(self) -> str:
        """The URL to open, with its password (give it to ``open_target``, never show it)."""
        return self._url_object().render_as_string(hide_password=False)

    def display_url(self) -> str:
        """The URL with its password shown as ``***`` (for labels and titles)."""
        return self._url_object().render_as_string(hide_password=True)

    def url_key(self) -> str:
        """The URL without its password: the keyring key and what recent stores keep."""
        return self._url_object(with_password=False).render_as_string(hide_password=False)

    def password(self) -> str:
        return "" if self.is_sqlite() else self.password_edit.text()

    def remember_password(self) -> bool:
        """Whether the password should go to the keyring (once the store opened)."""
        return (
            self._keyring_ok
            and not self.is_sqlite()
            and bool(self.password())
            and self.remember_check.isChecked()
        )

    # -- filling the form --------------------------------------------------------------

    def prefill(self, url_string: str, key_prefix: str | None = None) -> bool:
        """Fill the form from a URL (or a SQLite file path) and, for Redis, its key
        prefix; ``False`` when it does not parse (the form is left as it was)."""
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        if not secrets.is_url(url_string):  # a file path
            self._set_driver(SQLITE)
            self.database_edit.setText(url_string)
            return True
        try:
            url = make_url(url_string)
        except (ArgumentError, ValueError, TypeError):
            return False
        name = url.drivername
        if name.lower() in POSTGRES_ALIASES:
            self._set_driver(POSTGRES)
        elif name.lower() in SQLITE_ALIASES:
            self._set_driver(SQLITE)
        elif name.lower() == REDIS:
            self._set_driver(REDIS)
        else:
            self._set_driver(None)
            self.driver_edit.setText(name)
        self.host_edit.setText(url.host or "")
        self._port_default = _default_port(self.drivername())  # keep the URL's port as is
        self.port_edit.setText(str(url.port) if url.port else "")
        self.database_edit.setText(url.database or "")
        self.user_edit.setText(url.username or "")
        self.password_edit.setText(url.password or "")
        self.options_edit.setText(urlencode(
            [(k, v) for k, vs in url.query.items()
             for v in ((vs,) if isinstance(vs, str) else vs)]
        ))
        self.key_prefix_edit.setText(key_prefix or DEFAULT_PREFIX)
        self._update()
        return True

    def _set_driver(self, name: str | None) -> None:
        index = self.driver_combo.findData(name) if name else len(DRIVERS) - 1
        self.driver_combo.setCurrentIndex(index)

    def _on_driver_changed(self, *_: object) -> None:
        sqlite = self.is_sqlite()
        other = self.driver_combo.currentData() is None
        redis = self.is_redis()
        shape = (sqlite, other, redis)
        if shape != self._shape:
            was_redis = self._shape is not None and self._shape[2]
            self._shape = shape
            form = self._form
            form.setRowVisible(self.driver_edit, other)
            for widget in (self._host_row, self.user_edit, self.password_edit,
                           self.remember_check):
                form.setRowVisible(widget, not sqlite)
            form.setRowVisible(self.key_prefix_edit, redis)
            self.browse_button.setVisible(sqlite)
            label = form.labelForField(self._database_row)
            if isinstance(label, QLabel):
                label.setText("&File:" if sqlite else "DB &number:" if redis else "Data&base:")
            self.database_edit.setPlaceholderText(
                "path to the .db file" if sqlite
                else "0 (the Redis database number)" if redis
                else "name of the database"
            )
            # A Redis database is a number; a database name does not carry over.
            database = self.database_edit.text().strip()
            if redis and not database.isdigit():
                self.database_edit.setText("0")
            elif was_redis and not redis and database.isdigit():
                self.database_edit.clear()
            self.adjustSize()
        # Follow the driver's default port unless the user typed another one.
        new_default = _default_port(self.drivername())
        current = self.port_edit.text().strip()
        if not current or (self._port_default is not None and current == str(self._port_default)):
            self.port_edit.setText(str(new_default) if new_default else "")
        self._port_default = new_default
        self._update()

    def _browse(self) -> None:
        path = open_file_dialog(self)
        if path:
            self.database_edit.setText(path)

    def _update(self, *_: object) -> None:
        self.preview.setText(self.display_url() if _DRIVERNAME.match(self.drivername()) else "")
        problem = self.problem()
        self.hint.setText(problem or "")  # always laid out: the form does not jump
        self.ok_button.setEnabled(problem is None)

    def _style_hint(self) -> None:
        # The hint in the placeholder colour of the current (light or dark) palette.
        palette = self.palette()
        hint_palette = self.hint.palette()
        hint_palette.setColor(
            self.hint.foregroundRole(), palette.color(palette.ColorRole.PlaceholderText)
        )
        self.hint.setPalette(hint_palette)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._style_hint()

    def accept(self) -> None:
        if self.is_valid():  # Enter in a field must not get past the validation
            super().accept()


# --------------------------------------------------------------------------- files


def make_file_dialog(parent: QWidget | None = None, directory: str = "") -> QFileDialog:
    """The (not yet shown) dialog :func:`open_file_dialog` runs."""
    dialog = QFileDialog(parent, "Open session store", directory)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    dialog.setNameFilters([SQLITE_FILTER, ALL_FILTER])
    dialog.selectNameFilter(SQLITE_FILTER)
    return dialog


def open_file_dialog(parent: QWidget | None = None, directory: str = "") -> str | None:
    """Ask for a SQLite session store file; its path, or ``None`` when cancelled.

    JSON session folders (one JSON file per session, HelloAgent's ``SessionStore``) are
    opened with :func:`open_folder_dialog` (File › Open Folder…) or by dropping the folder
    on the window.
    """
    dialog = make_file_dialog(parent, directory)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        files = dialog.selectedFiles()
        return files[0] if files else None
    finally:
        dialog.deleteLater()


def make_folder_dialog(parent: QWidget | None = None, directory: str = "") -> QFileDialog:
    """The (not yet shown) dialog :func:`open_folder_dialog` runs."""
    dialog = QFileDialog(parent, "Open JSON session folder", directory)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    dialog.setFileMode(QFileDialog.FileMode.Directory)
    dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
    return dialog


def open_folder_dialog(parent: QWidget | None = None, directory: str = "") -> str | None:
    """Ask for a folder of JSON session files; its path, or ``None`` when cancelled."""
    dialog = make_folder_dialog(parent, directory)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        folders = dialog.selectedFiles()
        return folders[0] if folders else None
    finally:
        dialog.deleteLater()


# --------------------------------------------------------------------------- drag & drop


def local_paths_from_mime(mime: QMimeData) -> list[str]:
    """The local file and folder paths of a drag & drop, in order, without duplicates.

    Remote URLs (``http:``, ``ftp:``, ``file://otherhost/…`` outside Windows) are ignored:
    a drop never makes anything be fetched.
    """
    paths: list[str] = []
    if mime is None or not mime.hasUrls():
        return paths
    for url in mime.urls():
        if not url.isLocalFile():
            continue
        if url.host() not in ("", "localhost") and sys.platform != "win32":
            continue
        path = url.toLocalFile()
        if path and path not in paths:
            paths.append(path)
    return paths


class FileDropFilter(QObject):
    """Accepts drops of local files on the widgets it watches; emits their paths.

    ``watch(window)`` covers the window and every descendant that takes drops itself
    (a text view swallows drops it cannot paste, so it must be watched too).
    """

    filesDropped = Signal(list)

    def watch(self, widget: QWidget) -> None:
        widget.setAcceptDrops(True)
        widget.installEventFilter(self)
        for child in widget.findChildren(QWidget):
            if child.acceptDrops():
                child.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop):
            paths = local_paths_from_mime(event.mimeData())  # type: ignore[attr-defined]
            if not paths:
                return False
            event.acceptProposedAction()  # type: ignore[attr-defined]
            if kind == QEvent.Type.Drop:
                self.filesDropped.emit(paths)
            return True
        return False


# --------------------------------------------------------------------------- passwords


class PasswordDialog(QDialog):
    """Asks for the password of a URL (shown with ``***``, as plain text)."""

    def __init__(
        self,
        parent: QWidget | None,
        display_url: str,
        *,
        offer_remember: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Password needed")
        self.setModal(True)
        label = QLabel("&Password for", self)
        self.url_field = UrlView(self)  # a URL is data: plain text, never markup
        self.url_field.setText(display_url)
        self.password_edit = QLineEdit(self)
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        label.setBuddy(self.password_edit)
        self.remember_check = QCheckBox("Remember password in the system keyring", self)
        self.remember_check.setVisible(offer_remember)
        self._offer_remember = offer_remember
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.url_field)
        layout.addWidget(self.password_edit)
        layout.addWidget(self.remember_check)
        layout.addWidget(buttons)
        self.setMinimumWidth(420)

    def password(self) -> str:
        return self.password_edit.text()

    def remember_password(self) -> bool:
        return self._offer_remember and self.remember_check.isChecked()


def password_prompt(parent: QWidget | None, display_url: str) -> str | None:
    """Ask for the password of ``display_url``; ``None`` when cancelled. Used when the
    keyring has none (or there is no keyring): the user is asked each time."""
    dialog = PasswordDialog(parent, display_url)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.password()
    finally:
        dialog.deleteLater()


# --------------------------------------------------------------------------- whole flows


@dataclass(frozen=True)
class OpenRequest:
    """What to open and how to show it. ``target`` may hold a password: pass it to
    ``open_target`` and nowhere else (it is left out of ``repr``)."""

    target: str = field(repr=False)
    label: str
    #: file the target's password in the keyring once the store has opened
    remember: bool = False
    #: a Redis store's key prefix (``None``: the default, ``agents:session``); not secret,
    #: so it is remembered with the recent entry
    key_prefix: str | None = None


def redis_label(display_url: str, key_prefix: str | None) -> str:
    """The label of a Redis store: its URL (password as ``***``) and a prefix that is not
    the default."""
    if key_prefix and key_prefix != DEFAULT_PREFIX:
        return f"{display_url} · {key_prefix}"
    return display_url


def ask_url(parent: QWidget | None, initial: str | None = None) -> OpenRequest | None:
    """Run :class:`OpenUrlDialog`; the request, or ``None`` when cancelled. A plain
    SQLite file comes back as its path (recent stores keep paths absolute)."""
    dialog = OpenUrlDialog(parent, initial=initial)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        if dialog.drivername() == SQLITE and not dialog.options_edit.text().strip():
            path = dialog.database_edit.text().strip()
            return OpenRequest(path, path)
        prefix = dialog.key_prefix()
        if prefix is not None:
            return OpenRequest(
                dialog.url(), redis_label(dialog.display_url(), prefix),
                dialog.remember_password(), key_prefix=prefix,
            )
        return OpenRequest(dialog.url(), dialog.display_url(), dialog.remember_password())
    finally:
        dialog.deleteLater()


def request_for_stored(
    parent: QWidget | None,
    stored: str,
    recent: RecentStores,
    label: str | None = None,
    key_prefix: str | None = None,
) -> OpenRequest | None:
    """The request for a recent store: its password from the keyring, else asked for
    (``None`` when the user cancels). ``key_prefix`` (a Redis store's): the one given,
    else the one the recent list remembers for ``stored``."""
    label = label or secrets.display_target(stored)
    prefix = key_prefix or recent.key_prefix(stored)
    target = recent.resolve_target(stored)
    if target is not None:
        return OpenRequest(target, label, key_prefix=prefix)
    dialog = PasswordDialog(
        parent, secrets.display_target(stored), offer_remember=secrets.keyring_available()
    )
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return OpenRequest(
            secrets.with_password(stored, dialog.password()), label,
            dialog.remember_password(), key_prefix=prefix,
        )
    finally:
        dialog.deleteLater()


def remember_opened(request: OpenRequest, recent: RecentStores) -> None:
    """After ``request`` opened: put it first in the recent stores (without its password,
    with its key prefix) and, when asked, file its password in the keyring. (An encryption
    key is never part of a request: it stays in the window's memory.)"""
    recent.add(request.target, request.label, key_prefix=request.key_prefix)
    if request.remember and secrets.is_url(request.target):
        key, password = secrets.split_password(request.target)
        if password:
            secrets.set_password(key, password)
