"""Dialogs for export, import and copy: what to move and where (no I/O here).

:class:`ExportDialog` asks for the scope (the open session, the selected sessions, the
whole store), the format, whether to include metadata, and the file.
:class:`CopyDialog` asks for the destination store (a SQLite file, new or existing, or a
database URL) and the format of a new file. The window runs the transfer itself (see
:mod:`fluxgui.qt.window`) with a :class:`~fluxgui.qt.dialogs.progress.TransferProgress`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths, Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.export import SUFFIXES
from fluxgui.core.ports import OpenOptions
from fluxgui.core.text import plural, session_label

from ..screen_fit import fit_to_screen
from .buttons import ok_cancel
from .opening import ask_url

FORMAT_LABELS = {
    "json": "JSON — every message with its raw item (can be imported)",
    "jsonl": "JSONL — one message per line (can be imported)",
    "md": "Markdown — a readable transcript",
    "html": "HTML — one self-contained page",
}
FILE_FILTERS = {
    "json": "JSON (*.json)",
    "jsonl": "JSON Lines (*.jsonl)",
    "md": "Markdown (*.md)",
    "html": "HTML (*.html)",
}
IMPORT_FILTER = "Exports and session files (*.json *.jsonl);;All files (*)"
SCOPES = ("session", "selection", "store")


def export_folder(last: str | None = None) -> Path:
    """Where an export goes when nothing says otherwise: the folder of the last export
    (when it still exists), else the user's Documents folder, else their home — never
    the folder the app happened to be started from."""
    if last and Path(last).is_dir():
        return Path(last)
    docs = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    if docs and Path(docs).is_dir():
        return Path(docs)
    return Path.home()


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ExportDialog(QDialog):
    """Scope, format, metadata and file of an export."""

    def __init__(
        self,
        parent: QWidget | None,
        *,
        session_id: str | None,
        selected: list[str],
        store_sessions: int | None,
        default_dir: str = "",
        store_exact: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export")
        self._selected = list(selected)
        self._session_id = session_id
        self._default_dir = default_dir
        form = QFormLayout()

        scope_box = QWidget(self)
        scope_layout = QVBoxLayout(scope_box)
        scope_layout.setContentsMargins(0, 0, 0, 0)
        self.scope_group = QButtonGroup(self)
        self.scope_buttons: dict[str, QRadioButton] = {}
        labels = {
            "session": f"The open session ({_short(session_label(session_id))})"
            if session_id is not None
            else "The open session",
            "selection": f"The selected sessions ({len(self._selected)})",
            "store": "Every session in the store"
            + (
                f" ({store_sessions:,}{'' if store_exact else '+'})"
                if store_sessions
                else ""
            ),
        }
        for scope in SCOPES:
            button = QRadioButton(labels[scope], scope_box)
            button.setProperty("scope", scope)
            self.scope_group.addButton(button)
            scope_layout.addWidget(button)
            self.scope_buttons[scope] = button
        self.scope_buttons["session"].setEnabled(session_id is not None)
        self.scope_buttons["selection"].setEnabled(len(self._selected) > 1)
        default = "selection" if len(self._selected) > 1 else ("session" if session_id else "store")
        self.scope_buttons[default].setChecked(True)
        form.addRow("Export:", scope_box)

        self.format_combo = QComboBox(self)
        for fmt, label in FORMAT_LABELS.items():
            self.format_combo.addItem(label, fmt)
        self.format_combo.currentIndexChanged.connect(self._on_format)
        form.addRow("Format:", self.format_combo)

        self.metadata_check = QCheckBox("Include metadata", self)
        self.metadata_check.setChecked(True)
        form.addRow("", self.metadata_check)
        #: each session's review results (shown when reviews are on)
        self.reviews_check = QCheckBox("Include review results", self)
        self.reviews_check.setToolTip("State, scores, tags and notes: under each session's title "
                                      "(Markdown, HTML), as its \"review\" (JSON, JSONL)")
        self.reviews_check.hide()
        form.addRow("", self.reviews_check)

        path_row = QWidget(self)
        path_layout = QHBoxLayout(path_row)
        path_layout.setContentsMargins(0, 0, 0, 0)
        self.path_edit = QLineEdit(self)
        self.path_edit.setPlaceholderText("file to write")
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        path_layout.addWidget(self.path_edit, 1)
        path_layout.addWidget(browse)
        form.addRow("File:", path_row)

        self.problem_label = QLabel(self)
        self.problem_label.setTextFormat(Qt.TextFormat.PlainText)
        self.problem_label.setStyleSheet("color: #b02a37;")
        self.buttons = ok_cancel(self, text="Export")
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem_label)
        layout.addWidget(self.buttons)
        self.path_edit.textChanged.connect(self._update)
        folder = Path(default_dir).expanduser() if default_dir else export_folder()
        self._folder = folder.absolute()
        self._proposed = self._default_name()
        self.path_edit.setText(str(self._folder / self._proposed))
        # "Every session" must not keep the open session's file name (issue 37)
        self.scope_group.buttonToggled.connect(lambda _b, on: self._on_scope() if on else None)
        self.resize(max(self.minimumSizeHint().width(), 560), self.sizeHint().height())
        fit_to_screen(self)  # smaller on a small screen (2×): never cut off

    def _default_name(self) -> str:
        base = "export"
        if self.scope() == "session" and self._session_id:
            base = "".join(c if c.isalnum() or c in "-_." else "_" for c in self._session_id)[:60]
        return base + SUFFIXES[self.format()]

    def _on_scope(self) -> None:
        """Another scope: the file name proposed follows it, unless the user chose one."""
        text = self.path_edit.text().strip()
        if text and Path(text).name == self._proposed:
            self._proposed = self._default_name()
            self.path_edit.setText(str(Path(text).with_name(self._proposed)))

    def _on_format(self, _index: int) -> None:
        text = self.path_edit.text().strip()
        if text:
            path = Path(text)
            if path.suffix.lower() in SUFFIXES.values():
                proposed = path.name == self._proposed
                self.path_edit.setText(str(path.with_suffix(SUFFIXES[self.format()])))
                if proposed:
                    self._proposed = Path(self.path_edit.text()).name

    def _browse(self) -> None:
        path, _filter = QFileDialog.getSaveFileName(
            self, "Export to", self.path_edit.text(), FILE_FILTERS[self.format()]
        )
        if path:
            self.path_edit.setText(path)

    def scope(self) -> str:
        button = self.scope_group.checkedButton()
        return str(button.property("scope")) if button is not None else "store"

    def format(self) -> str:
        return str(self.format_combo.currentData())

    def set_format(self, fmt: str) -> None:
        self.format_combo.setCurrentIndex(self.format_combo.findData(fmt))

    def metadata(self) -> bool:
        return self.metadata_check.isChecked()

    def reviews(self) -> bool:
        return not self.reviews_check.isHidden() and self.reviews_check.isChecked()

    def path(self) -> Path:
        """The file to write, absolute (a bare name goes to the dialog's folder)."""
        path = Path(self.path_edit.text().strip()).expanduser()
        return path if path.is_absolute() else self._folder / path

    def session_ids(self) -> list[str] | None:
        """What to export: session ids, or ``None`` for the whole store."""
        scope = self.scope()
        if scope == "session" and self._session_id:
            return [self._session_id]
        if scope == "selection":
            return list(self._selected)
        return None

    def problem(self) -> str | None:
        text = self.path_edit.text().strip()
        if not text:
            return "Choose a file to write."
        path = self.path()
        if path.is_dir():
            return "That is a folder: choose a file name."
        if not path.parent.is_dir():
            return f"No such folder: {path.parent}"
        return None

    def _update(self, *_args: object) -> None:
        problem = self.problem()
        self.problem_label.setText(problem or "")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(problem is None)

    def accept(self) -> None:
        if self.problem() is None:
            super().accept()


class CopyDialog(QDialog):
    """The destination of a copy: a SQLite file (new or existing) or a database URL."""

    askUrl = Signal()

    def __init__(self, parent: QWidget | None, *, count: int, source_format: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Copy sessions")
        self._url: str | None = None
        self._url_label = ""
        self._url_options = OpenOptions()
        form = QFormLayout()
        form.addRow(QLabel(f"Copy {plural(count, 'session')} into another store.", self))
        row = QWidget(self)
        row_layout = QHBoxLayout(row)
        row_layout.setContentsMargins(0, 0, 0, 0)
        self.target_edit = QLineEdit(self)
        self.target_edit.setPlaceholderText("a SQLite file (created when new) or a database URL")
        browse = QPushButton("File…", self)
        browse.clicked.connect(self._browse)
        url = QPushButton("URL…", self)
        url.clicked.connect(self._ask_url)
        row_layout.addWidget(self.target_edit, 1)
        row_layout.addWidget(browse)
        row_layout.addWidget(url)
        form.addRow("Into:", row)
        self.format_combo = QComboBox(self)
        self.format_combo.addItem("Agents SDK (agent_sessions + agent_messages)", "agents")
        self.format_combo.addItem("flux (messages)", "flux")
        self.format_combo.setCurrentIndex(self.format_combo.findData(source_format))
        form.addRow("New store format:", self.format_combo)
        self.rename_check = QCheckBox("Give sessions that already exist there a new id", self)
        self.rename_check.setChecked(True)
        form.addRow("", self.rename_check)
        self.buttons = ok_cancel(self, text="Copy")
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.buttons)
        self.target_edit.textChanged.connect(self._update)
        self._update()
        self.resize(600, self.sizeHint().height())
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def _browse(self) -> None:
        path, _filter = QFileDialog.getSaveFileName(
            self,
            "Copy into",
            self.target_edit.text(),
            "SQLite session stores (*.db *.sqlite *.sqlite3);;All files (*)",
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        if path:
            self._url = None
            self.target_edit.setText(path)

    def _ask_url(self) -> None:
        request = ask_url(self)
        if request is not None:
            self._url = request.target
            self._url_label = request.label
            self._url_options = request.options
            self.target_edit.setText(request.label)

    def target(self) -> str:
        """The destination (a URL with its password when one was entered in the URL
        dialog; never shown)."""
        text = self.target_edit.text().strip()
        if self._url is not None and text == self._url_label:
            return self._url
        return text

    def options(self) -> OpenOptions:
        """The options the destination was given in the URL dialog (a Redis key prefix,
        table names); the defaults for a typed target."""
        if self._url is not None and self.target_edit.text().strip() == self._url_label:
            return self._url_options
        return OpenOptions()

    def new_format(self) -> str:
        return str(self.format_combo.currentData())

    def rename(self) -> bool:
        return self.rename_check.isChecked()

    def _update(self, *_args: object) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(
            bool(self.target_edit.text().strip())
        )
