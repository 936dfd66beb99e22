"""The Open URL form: a database or Redis server, field by field, or the OpenAI
Conversations API (its base URL, API key and conversation ids), and the store options its
kind declares.

The form holds the parts (:class:`~fluxgui.services.database_urls.UrlParts` says what
they make and what is missing) and one row per declared option of the chosen kind
(:mod:`.option_fields`): the Agents SDK table names for a database, the key prefix for
Redis. Nothing here opens anything: :func:`fluxgui.qt.dialogs.opening.ask_url` turns the
accepted form into an :class:`~fluxgui.qt.dialogs.opening.OpenRequest`.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QIntValidator
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.adapters.registry import CONVERSATIONS_SCHEME
from fluxgui.core.ports import OpenOptions
from fluxgui.core.redact import redact_url
from fluxgui.services.database_urls import (
    POSTGRES,
    REDIS,
    SQLITE,
    UrlParts,
    default_port,
    known_driver,
    parts_from_url,
    valid_drivername,
)

from ..screen_fit import fit_to_screen
from .buttons import StandardButton, ok_cancel
from .files import open_file_dialog
from .keyring_state import ask_keyring_available
from .option_fields import OptionFields, form_options
from .url_view import UrlView

#: (combo text, SQLAlchemy drivername or URL scheme; None = the "other" entry with its
#: own field)
DRIVERS: list[tuple[str, str | None]] = [
    ("PostgreSQL (asyncpg)", POSTGRES),
    ("SQLite file", SQLITE),
    ("Redis (Agents SDK RedisSession)", REDIS),
    ("OpenAI Conversations (OpenAIConversationsSession)", CONVERSATIONS_SCHEME),
    ("Other SQLAlchemy async driver…", None),
]
#: the mnemonics of the form's own rows (the option rows take other letters)
_MNEMONICS = {"d", "n", "h", "b", "f", "u", "p", "t"}
_NO_KEYRING = "No system keyring is available: the password is asked for each time."
_KEYRING = "Without this, the password is asked for each time the store is reopened."


def _row(parent: QWidget, *widgets: QWidget) -> QWidget:
    """Widgets side by side in one form row (the first one stretches)."""
    row = QWidget(parent)
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for i, widget in enumerate(widgets):
        layout.addWidget(widget, 1 if i == 0 else 0)
    return row


class OpenUrlDialog(QDialog):
    """A form that builds a SQLAlchemy URL: driver, host, port, database, user, password
    — or a ``redis://[user:password@]host:6379/<db number>`` URL and its key prefix.

    :meth:`url` is the URL to open (password included, escaped by
    ``sqlalchemy.engine.URL.create``); :meth:`display_url` the same with ``***``;
    :meth:`remember_password` whether the user asked for the keyring; :meth:`key_prefix`
    the Redis key prefix (``None`` for a database); :meth:`open_options` the declared
    options as typed. *Open* stays disabled until the form is complete; :meth:`problem`
    says what is missing. ``keyring_ok=None`` asks the keyring (off the UI thread when
    that could wait).
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
        self._keyring_ok = False
        self._port_default: int | None = None
        # (sqlite, other, redis, conversations) shown
        self._shape: tuple[bool, bool, bool, bool] | None = None

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
        port_label = QLabel("Port:", self)
        port_label.setBuddy(self.port_edit)
        self._host_row = _row(self, self.host_edit, port_label, self.port_edit)

        self.database_edit = QLineEdit(self)
        self.browse_button = QPushButton("Browse…", self)
        self.browse_button.setAutoDefault(False)
        self.browse_button.clicked.connect(self._browse)
        self._database_row = _row(self, self.database_edit, self.browse_button)

        self.user_edit = QLineEdit(self)
        self.password_edit = QLineEdit(self)
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.remember_check = QCheckBox("Remember password in the system keyring", self)
        self.remember_key_check = QCheckBox("Remember the API key in the system keyring", self)
        self.options_edit = QLineEdit(self)
        self.options_edit.setPlaceholderText("optional, e.g. ssl=require")

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
        form.addRow("&Host:", self._host_row)
        form.addRow("Data&base:", self._database_row)
        form.addRow("&User:", self.user_edit)
        form.addRow("&Password:", self.password_edit)
        form.addRow("", self.remember_check)
        form.addRow("Op&tions:", self.options_edit)
        self._form = form
        self.option_fields = OptionFields(self, form, form_options(), taken=_MNEMONICS)
        #: the Redis key prefix field (built from its declaration)
        self.key_prefix_edit = self.option_fields.edits["key_prefix"]
        form.addRow("", self.remember_key_check)
        form.addRow("URL:", self.preview)
        # Buddies for the composite rows so the mnemonics focus the right edit.
        for row_widget, edit in ((self._host_row, self.host_edit),
                                 (self._database_row, self.database_edit)):
            label = form.labelForField(row_widget)
            if isinstance(label, QLabel):
                label.setBuddy(edit)

        self.buttons = ok_cancel(self, StandardButton.Open)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.hint)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(520)

        for edit in (self.driver_edit, self.host_edit, self.port_edit, self.database_edit,
                     self.user_edit, self.password_edit, self.options_edit,
                     *self.option_fields.edits.values()):
            edit.textChanged.connect(self._update)
        self.driver_combo.currentIndexChanged.connect(self._on_driver_changed)
        self.driver_edit.textChanged.connect(self._on_driver_changed)
        self._set_keyring_ok(False, asking=keyring_ok is None)
        if keyring_ok is None:
            ask_keyring_available(self, self._set_keyring_ok)
        else:
            self._set_keyring_ok(keyring_ok)
        self._on_driver_changed()
        if initial:
            self.prefill(initial)
        fit_to_screen(self)  # never larger than its screen (issue 37)

    # -- reading the form --------------------------------------------------------------

    @property
    def ok_button(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Open)

    def drivername(self) -> str:
        """The SQLAlchemy drivername the form is set to (``""`` when Other is empty)."""
        name = self.driver_combo.currentData()
        return name if name else self.driver_edit.text().strip()

    def parts(self) -> UrlParts:
        """What the form holds."""
        return UrlParts(
            self.drivername(), self.host_edit.text(), self.port_edit.text(),
            self.database_edit.text(), self.user_edit.text(), self.password_edit.text(),
            self.options_edit.text(), self.key_prefix_edit.text(),
        )

    def is_sqlite(self) -> bool:
        return self.parts().is_sqlite

    def is_redis(self) -> bool:
        """Whether the form names a Redis server (the Redis entry, or ``rediss`` typed
        as another driver)."""
        return self.parts().is_redis

    def is_conversations(self) -> bool:
        """Whether the form names the OpenAI Conversations API."""
        return self.drivername() == CONVERSATIONS_SCHEME

    def kind(self) -> str:
        """The store kind the form names (``redis``, ``conversations`` or ``sql``), for
        its options."""
        if self.is_conversations():
            return "conversations"
        return "redis" if self.is_redis() else "sql"

    def key_prefix(self) -> str | None:
        """The Redis key prefix to open under (``None`` for a database)."""
        return self.parts().redis_prefix()

    def open_options(self) -> OpenOptions:
        """The declared options of the form's kind, as typed (empty: their defaults)."""
        values = self.option_fields.values(self.kind())
        if self.is_conversations():
            values.pop("base_url", None)  # the target names it
            return OpenOptions(**values)
        prefix = self.key_prefix()
        if prefix is not None:
            values["key_prefix"] = prefix
        return OpenOptions(**values)

    def problem(self) -> str | None:
        """What keeps the form from being opened, in one sentence; ``None`` when complete."""
        if self.is_conversations():
            base = self.option_fields.text("base_url")
            if base and not base.lower().startswith(("http://", "https://")):
                return "The base URL starts with https:// (or http://), such as https://api.openai.com/v1."
            return self.option_fields.problem(self.kind())
        return self.parts().problem() or self.option_fields.problem(self.kind())

    def is_valid(self) -> bool:
        return self.problem() is None

    def url(self) -> str:
        """The URL to open, with its password (give it to ``open_target``, never show it)."""
        if self.is_conversations():  # openai-conversations: and the base URL typed
            return CONVERSATIONS_SCHEME + self.option_fields.text("base_url")
        return self.parts().url()

    def display_url(self) -> str:
        """The URL with its password shown as ``***`` (for labels and titles)."""
        if self.is_conversations():
            return redact_url(self.url())
        return self.parts().display_url()

    def url_key(self) -> str:
        """The URL without its password: the keyring key and what recent stores keep."""
        if self.is_conversations():
            return self.display_url()
        return self.parts().url_key()

    def password(self) -> str:
        return "" if self.is_sqlite() or self.is_conversations() else self.password_edit.text()

    def remember_api_key(self) -> bool:
        """Whether the API key typed should go to the keyring (once the store opened)."""
        return (
            self._keyring_ok
            and self.is_conversations()
            and bool(self.option_fields.text("api_key"))
            and self.remember_key_check.isChecked()
        )

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
        parts = parts_from_url(url_string, key_prefix)
        if parts is None:
            return False
        driver = known_driver(parts.drivername)
        self._set_driver(driver)
        if driver is None:
            self.driver_edit.setText(parts.drivername)
        if driver == SQLITE and "://" not in url_string:  # a path: only the file
            self.database_edit.setText(parts.database)
            return True
        self.host_edit.setText(parts.host)
        self._port_default = default_port(self.drivername())  # keep the URL's port as is
        self.port_edit.setText(parts.port)
        self.database_edit.setText(parts.database)
        self.user_edit.setText(parts.user)
        self.password_edit.setText(parts.password)
        self.options_edit.setText(parts.options)
        self.option_fields.set_text("key_prefix", key_prefix)
        self._update()
        return True

    def _set_driver(self, name: str | None) -> None:
        index = self.driver_combo.findData(name) if name else len(DRIVERS) - 1
        self.driver_combo.setCurrentIndex(index)

    def _set_keyring_ok(self, ok: bool, *, asking: bool = False) -> None:
        self._keyring_ok = ok
        for check in (self.remember_check, self.remember_key_check):
            check.setEnabled(ok)
            check.setToolTip(
                _KEYRING if ok else "Looking for the system keyring…" if asking else _NO_KEYRING
            )

    def _on_driver_changed(self, *_: object) -> None:
        sqlite, other, redis = self.is_sqlite(), self.driver_combo.currentData() is None, self.is_redis()
        api = self.is_conversations()
        shape = (sqlite, other, redis, api)
        if shape != self._shape:
            was_redis = self._shape is not None and self._shape[2]
            self._shape = shape
            form = self._form
            form.setRowVisible(self.driver_edit, other)
            for widget in (self._host_row, self.user_edit, self.password_edit,
                           self.remember_check):
                form.setRowVisible(widget, not sqlite and not api)
            for widget in (self._database_row, self.options_edit):
                form.setRowVisible(widget, not api)
            form.setRowVisible(self.remember_key_check, api)
            self.option_fields.show_kind(self.kind())
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
        new_default = default_port(self.drivername())
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
        valid = self.is_conversations() or valid_drivername(self.drivername())
        self.preview.setText(self.display_url() if valid else "")
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
