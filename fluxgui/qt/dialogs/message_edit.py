"""The message editor: edit one stored message, or write a new one to insert.

A pure widget: nothing here reads or writes a store or touches asyncio. The window runs
:class:`MessageEditDialog` (or :func:`edit_message`) to get the dict it hands to
``Store.update_message`` / ``Store.insert_message``. The form's text is parsed by
:mod:`fluxgui.core.jsontext` (strict JSON, one-line errors) and checked by the store's
own ``validate`` as the user types.

Stored data is never shown as markup: every label is plain text, and invisible or
direction-changing characters in JSON strings are shown as escapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QKeySequence,
    QPalette,
    QShortcut,
    QTextCharFormat,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.errors import FluxguiError, InvalidItem
from fluxgui.core.jsontext import (
    FieldProblem,
    flux_spec,
    item_spec,
    item_text,
    json_text,
    metadata_text,
    one_line,
)
from fluxgui.core.model import Message

from ..screen_fit import fit_to_screen
from .buttons import StandardButton, ok_cancel

FLUX_ROLES = ("user", "assistant", "system", "tool")

#: (combo text, item) for a new Agents SDK item
TEMPLATES: list[tuple[str, dict[str, Any]]] = [
    ("User message", {"role": "user", "content": ""}),
    (
        "Assistant message",
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ""}]},
    ),
    ("System message", {"role": "system", "content": ""}),
    ("Function call", {"type": "function_call", "call_id": "", "name": "", "arguments": "{}"}),
    ("Function call output", {"type": "function_call_output", "call_id": "", "output": ""}),
]

#: debounce of the live check while typing, in milliseconds
CHECK_DELAY_MS = 250

Validate = Callable[[dict[str, Any]], Any]
#: (spec or None, problem or None, editor to mark, line to mark)
_Evaluation = tuple[dict[str, Any] | None, str | None, QPlainTextEdit | None, int | None]


def editor_text(editor: QPlainTextEdit) -> str:
    """The text of an editor exactly as typed."""
    # Not toPlainText(): it turns no-break spaces into spaces and U+2028 into newlines.
    return editor.document().toRawText().replace("\u2029", "\n")


def _replace_text(editor: QPlainTextEdit, text: str) -> None:
    """Replace the whole text as one undoable edit (a template chosen)."""
    cursor = QTextCursor(editor.document())
    cursor.select(QTextCursor.SelectionType.Document)
    cursor.insertText(text)


def _mono_editor(parent: QWidget) -> QPlainTextEdit:
    editor = QPlainTextEdit(parent)
    editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    editor.setTabStopDistance(editor.fontMetrics().horizontalAdvance(" ") * 2)
    return editor


def _cursor_in_first_string(editor: QPlainTextEdit) -> None:
    """Put the cursor inside the first empty string of a template (where typing goes)."""
    at = editor_text(editor).find('""')
    cursor = editor.textCursor()
    cursor.setPosition(at + 1 if at >= 0 else 0)
    editor.setTextCursor(cursor)


def _labelled_row(parent: QWidget, text: str, field: QWidget) -> QHBoxLayout:
    label = QLabel(text, parent)
    label.setBuddy(field)
    row = QHBoxLayout()
    row.addWidget(label)
    row.addWidget(field)
    row.addStretch(1)
    return row


class MessageEditDialog(QDialog):
    """Edits one message, or writes a new one to insert.

    ``columns`` is the store's ``traits.columns``: its messages are a table's columns (flux:
    a role, a text and a metadata JSON object), else one stored JSON item. ``validate(spec)`` raises
    :class:`~fluxgui.core.errors.FluxguiError` with one line when ``spec`` cannot be
    stored (the window passes ``lambda spec: store.edit_values(spec, original=message)``).
    The form is checked as the user types; Save stays disabled while it is not valid.
    After ``exec()`` returns Accepted, :attr:`result_spec` is the dict to store.
    """

    def __init__(
        self,
        columns: bool,
        validate: Validate,
        message: Message | None = None,
        title: str | None = None,
        parent: QWidget | None = None,
        *,
        ok_text: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.columns = columns
        self.message = message
        self.result_spec: dict[str, Any] | None = None
        self._validate = validate
        self._flux = columns
        self._error: str | None = None
        if title is None:
            title = "New message" if message is None else f"Edit message {message.id}"
        self.setWindowTitle(title)
        self.setModal(True)
        self.setSizeGripEnabled(True)

        # Fields of either format (None when the format has none).
        self.role_combo: QComboBox | None = None
        self.text_edit: QPlainTextEdit | None = None
        self.metadata_edit: QPlainTextEdit | None = None
        self.json_edit: QPlainTextEdit | None = None
        self.template_combo: QComboBox | None = None

        layout = QVBoxLayout(self)
        if self._flux:
            self._build_flux(layout)
        else:
            self._build_item(layout)

        self.status_label = QLabel(self)
        self.status_label.setObjectName("status")
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.status_label.setWordWrap(True)
        self.status_label.setMinimumHeight(self.status_label.fontMetrics().lineSpacing())
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status_label)

        self.buttons = ok_cancel(self, StandardButton.Save)
        if ok_text is None:
            ok_text = "&Save" if message is not None else "&Insert"
        self.ok_button.setText(ok_text)
        keys = QKeySequence("Ctrl+Return").toString(QKeySequence.SequenceFormat.NativeText)
        self.ok_button.setToolTip(f"{ok_text.replace('&', '')} ({keys})")
        layout.addWidget(self.buttons)

        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self).activated.connect(self.accept)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self.check)
        for editor in self._editors():
            editor.textChanged.connect(self._timer.start)
        if self.role_combo is not None:
            self.role_combo.currentTextChanged.connect(self._timer.start)

        self._style_status()
        self.resize(640, 480)
        self.check()
        fit_to_screen(self)  # never larger than its screen (issue 37)

    # -- building ------------------------------------------------------------------

    def _editors(self) -> list[QPlainTextEdit]:
        return [e for e in (self.text_edit, self.metadata_edit, self.json_edit) if e is not None]

    def _build_flux(self, layout: QVBoxLayout) -> None:
        message = self.message
        combo = QComboBox(self)
        combo.setEditable(True)
        combo.addItems(list(FLUX_ROLES))
        combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        combo.setCurrentText(message.role if message is not None else "user")
        combo.setMinimumContentsLength(12)
        self.role_combo = combo
        layout.addLayout(_labelled_row(self, "&Role:", combo))

        self.text_edit = QPlainTextEdit(self)
        self.text_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self._original_text = message.text if message is not None else ""
        self.text_edit.setPlainText(self._original_text)
        # What the editor reads back for the stored text (line ends normalised): while
        # it reads that, the stored text is kept exactly as it was.
        self._shown_text = editor_text(self.text_edit)
        text_label = QLabel("&Text:", self)
        text_label.setBuddy(self.text_edit)
        layout.addWidget(text_label)
        layout.addWidget(self.text_edit, 3)

        self.metadata_edit = _mono_editor(self)
        self.metadata_edit.setPlaceholderText("No metadata. Enter a JSON object to add some.")
        self.metadata_edit.setPlainText(metadata_text(message))
        meta_label = QLabel("&Metadata (a JSON object; empty for none):", self)
        meta_label.setBuddy(self.metadata_edit)
        layout.addWidget(meta_label)
        layout.addWidget(self.metadata_edit, 2)
        self.text_edit.setFocus()
        self.text_edit.moveCursor(QTextCursor.MoveOperation.End)

    def _build_item(self, layout: QVBoxLayout) -> None:
        message = self.message
        self.json_edit = _mono_editor(self)
        if message is None:
            combo = QComboBox(self)
            for text, _item in TEMPLATES:
                combo.addItem(text)  # not the item as data: Qt would sort its keys
            combo.setToolTip("Replaces the JSON below with an empty item of this kind.")
            self.template_combo = combo
            layout.addLayout(_labelled_row(self, "&Template:", combo))
            self.json_edit.setPlainText(json_text(TEMPLATES[0][1]))
            _cursor_in_first_string(self.json_edit)
            combo.activated.connect(self._on_template)
        else:
            self.json_edit.setPlainText(item_text(message))
        json_label = QLabel("&Item (JSON):", self)
        json_label.setBuddy(self.json_edit)
        layout.addWidget(json_label)
        layout.addWidget(self.json_edit, 1)
        self.json_edit.setFocus()

    def _on_template(self, index: int) -> None:
        assert self.template_combo is not None and self.json_edit is not None
        _replace_text(self.json_edit, json_text(TEMPLATES[index][1]))
        _cursor_in_first_string(self.json_edit)
        self.json_edit.setFocus()
        self.check()

    def choose_template(self, index: int) -> None:
        """Replace the JSON with template ``index`` of :data:`TEMPLATES` (new items only)."""
        if self.template_combo is None:
            raise RuntimeError("templates are offered for new items only")
        self.template_combo.setCurrentIndex(index)
        self._on_template(index)

    # -- reading and checking ------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        """The spec the form holds; raises :class:`FieldProblem` (``field`` names the
        editor to mark)."""
        if self._flux:
            assert self.role_combo and self.text_edit and self.metadata_edit
            text = editor_text(self.text_edit)
            if text == self._shown_text:
                text = self._original_text
            stored = self.message.metadata if self.message is not None else None
            return flux_spec(self.role_combo.currentText(), text, editor_text(self.metadata_edit), stored)
        assert self.json_edit is not None
        return item_spec(editor_text(self.json_edit))

    def _evaluate(self) -> _Evaluation:
        try:
            spec = self._read()
        except FieldProblem as exc:
            editor = self.metadata_edit if exc.field == "metadata" else self.json_edit
            return None, one_line(str(exc)), editor, exc.line
        try:
            self._validate(spec)
        except (FluxguiError, TypeError, ValueError) as exc:
            return None, one_line(str(exc)), None, None
        return spec, None, None, None

    def check(self) -> bool:
        """Check the form now (typing checks it after a short pause); whether it is valid.
        Shows the problem under the editor and enables Save accordingly."""
        self._timer.stop()
        spec, error, editor, line = self._evaluate()
        self._error = error
        self._mark(editor, line)
        self.status_label.setText(error if error is not None else self._valid_text(spec))
        self.ok_button.setEnabled(error is None)
        self._style_status()
        return error is None

    def problem(self) -> str | None:
        """What keeps the form from being saved (one line), or ``None``; checked now."""
        self.check()
        return self._error

    def is_valid(self) -> bool:
        return self.check()

    def spec(self) -> dict[str, Any]:
        """The validated dict the form holds; raises :class:`InvalidItem` when invalid."""
        spec, error, _, _ = self._evaluate()
        if spec is None:
            raise InvalidItem(error or "the message is not valid")
        return spec

    def _valid_text(self, spec: dict[str, Any] | None) -> str:
        if spec is None or self._flux:
            return "Valid message"
        item_type = spec.get("type", "message")
        return f"Valid {item_type} item" if isinstance(item_type, str) else "Valid item"

    def _mark(self, editor: QPlainTextEdit | None, line: int | None) -> None:
        """Tint the line of a JSON error (and clear the marks of the other editors)."""
        for each in self._editors():
            selections: list[QTextEdit.ExtraSelection] = []
            if each is editor and line is not None:
                block = each.document().findBlockByNumber(max(0, line - 1))
                if block.isValid():
                    fmt = QTextCharFormat()
                    fmt.setBackground(self._error_colour(background=True))
                    fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
                    sel = QTextEdit.ExtraSelection()
                    sel.format = fmt
                    sel.cursor = QTextCursor(block)
                    selections.append(sel)
            each.setExtraSelections(selections)

    # -- looks ---------------------------------------------------------------------

    def _dark(self) -> bool:
        return self.palette().color(QPalette.ColorRole.Window).lightnessF() < 0.5

    def _error_colour(self, *, background: bool = False) -> QColor:
        if background:
            return QColor("#5c1f1f") if self._dark() else QColor("#fde2e2")
        return QColor("#ff7b72") if self._dark() else QColor("#c62828")

    def _style_status(self) -> None:
        palette = self.status_label.palette()
        colour = (
            self._error_colour()
            if self._error is not None
            else self.palette().color(QPalette.ColorRole.PlaceholderText)
        )
        palette.setColor(self.status_label.foregroundRole(), colour)
        self.status_label.setPalette(palette)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt's name
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "status_label"):
            self._style_status()

    # -- closing -------------------------------------------------------------------

    @property
    def ok_button(self) -> QPushButton:
        return self.buttons.button(QDialogButtonBox.StandardButton.Save)

    def accept(self) -> None:
        # Ctrl+Return may come before the typing pause ended: check the text as it is.
        if not self.check():
            return
        self.result_spec = self.spec()
        super().accept()


def edit_message(
    parent: QWidget | None,
    columns: bool,
    validate: Validate,
    message: Message | None = None,
    *,
    title: str | None = None,
    ok_text: str | None = None,
) -> dict[str, Any] | None:
    """Run :class:`MessageEditDialog`; the validated spec, or ``None`` when cancelled.
    Runs a nested event loop: call it from a Qt slot, not from inside a coroutine."""
    dialog = MessageEditDialog(columns, validate, message, title, parent, ok_text=ok_text)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.result_spec
    finally:
        dialog.deleteLater()
