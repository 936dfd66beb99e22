"""Dialogs for editing a store: confirmations for destructive edits, a message editor.

Pure widgets: nothing here reads or writes a store or touches asyncio. The window asks
:func:`confirm_clear` / :func:`confirm_delete_session` / :func:`confirm_delete_messages`
before a destructive edit, and runs :class:`MessageEditDialog` (or :func:`edit_message`)
to get the dict it hands to ``Store.update_message`` / ``Store.insert_message``.

Stored data is never shown as markup: every label that can hold a session id, an error
or message text is plain text, and invisible or direction-changing characters in ids and
JSON strings are shown as escapes.
"""

from __future__ import annotations

import json
import unicodedata
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
    QAbstractButton,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.errors import FluxguiError, InvalidItem
from fluxgui.core.items import json_type
from fluxgui.core.model import Message

#: longest session id (after escaping) a confirmation shows whole
ID_LIMIT = 50

# --------------------------------------------------------------------------- showing data


def _escape_char(ch: str) -> str:
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    code = ord(ch)
    if code > 0xFFFF:  # as JSON writes it: a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def _hidden(ch: str) -> bool:
    """Whether ``ch`` is invisible or changes how the text around it is laid out:
    controls, format characters (bidi overrides, zero-width spaces; not the zero-width
    joiner of emoji sequences), line and paragraph separators, lone surrogates."""
    if ch == "\u200d":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def escape_hidden(text: str, keep: str = "") -> str:
    """``text`` with its invisible and layout-changing characters (other than those in
    ``keep``) written as escapes."""
    if all(ch in keep or not _hidden(ch) for ch in text):
        return text
    return "".join(
        _escape_char(ch) if ch not in keep and _hidden(ch) else ch for ch in text
    )


def display_id(session_id: str, limit: int = ID_LIMIT) -> str:
    """A session id for a sentence: in quotes, hidden characters escaped, long ids
    elided in the middle (both ends tell ids apart)."""
    tokens = [_escape_char(ch) if _hidden(ch) else ch for ch in str(session_id)]
    if sum(map(len, tokens)) <= limit:
        return f"“{''.join(tokens)}”"
    # Cut between characters, never inside an escape.
    budget = (limit - 1) // 2
    head: list[str] = []
    for token in tokens:
        if sum(map(len, head)) + len(token) > budget:
            break
        head.append(token)
    budget = limit - 1 - sum(map(len, head))
    tail: list[str] = []
    for token in reversed(tokens[len(head):]):
        if sum(map(len, tail)) + len(token) > budget:
            break
        tail.append(token)
    return f"“{''.join(head)}…{''.join(reversed(tail))}”"


def json_text(value: Any) -> str:
    """``value`` as indented JSON for an editor. Non-ASCII text stays readable; hidden
    characters inside strings are written as ``\\uXXXX`` (the same JSON value)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    # json.dumps escapes the controls inside strings itself: a newline is indentation.
    return escape_hidden(text, keep="\n")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _undo_keys() -> str:
    return QKeySequence(QKeySequence.StandardKey.Undo).toString(
        QKeySequence.SequenceFormat.NativeText
    )


# --------------------------------------------------------------------------- confirmations


def _confirm_box(
    parent: QWidget | None, title: str, text: str, informative: str, action: str
) -> QMessageBox:
    box = QMessageBox(parent)
    box.setWindowTitle(title)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setTextFormat(Qt.TextFormat.PlainText)  # ids are data, never markup
    box.setText(text)
    box.setInformativeText(informative)
    destructive = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole)
    destructive.setObjectName("confirm")
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    # Wide enough that the sentences do not wrap after every few words.
    for name in ("qt_msgbox_label", "qt_msgbox_informativelabel"):
        label = box.findChild(QLabel, name)
        if label is not None:
            label.setMinimumWidth(box.fontMetrics().averageCharWidth() * 58)
    return box


def confirm_button(box: QMessageBox) -> QAbstractButton:
    """The destructive ("Clear", "Delete") button of a confirmation box."""
    for button in box.buttons():
        if box.buttonRole(button) == QMessageBox.ButtonRole.DestructiveRole:
            return button
    raise LookupError("not a confirmation box")


def _removed(count: int) -> str:
    if count <= 0:
        return "It has no messages."
    return f"Its {_plural(count, 'message')} will be removed."


def clear_box(parent: QWidget | None, session_id: str, count: int) -> QMessageBox:
    """The (not yet shown) box :func:`confirm_clear` runs."""
    return _confirm_box(
        parent,
        "Clear session",
        f"Clear session {display_id(session_id)}?",
        f"{_removed(count)}\nYou can undo this with {_undo_keys()}.",
        "&Clear",
    )


def delete_session_box(parent: QWidget | None, session_id: str, count: int) -> QMessageBox:
    """The (not yet shown) box :func:`confirm_delete_session` runs."""
    if count <= 0:
        what = "The session will be removed."
    else:
        what = f"The session and its {_plural(count, 'message')} will be removed."
    return _confirm_box(
        parent,
        "Delete session",
        f"Delete session {display_id(session_id)}?",
        f"{what}\nYou can undo this with {_undo_keys()}.",
        "&Delete",
    )


def delete_messages_box(parent: QWidget | None, count: int) -> QMessageBox:
    """The (not yet shown) box :func:`confirm_delete_messages` runs."""
    text = "Delete the selected message?" if count == 1 else (
        f"Delete the {_plural(count, 'selected message')}?"
    )
    return _confirm_box(
        parent,
        "Delete messages" if count != 1 else "Delete message",
        text,
        f"You can undo this with {_undo_keys()}.",
        "&Delete",
    )


def run_confirm(box: QMessageBox) -> bool:
    """Run a confirmation box; whether its destructive button was clicked."""
    try:
        box.exec()
        return box.clickedButton() is confirm_button(box)
    finally:
        box.deleteLater()


def confirm_clear(parent: QWidget | None, session_id: str, count: int) -> bool:
    """Ask before removing every message of a session (Cancel is the default)."""
    return run_confirm(clear_box(parent, session_id, count))


def confirm_delete_session(parent: QWidget | None, session_id: str, count: int) -> bool:
    """Ask before deleting a session and its messages (Cancel is the default)."""
    return run_confirm(delete_session_box(parent, session_id, count))


def confirm_delete_messages(parent: QWidget | None, count: int) -> bool:
    """Ask before deleting ``count`` selected messages (Cancel is the default)."""
    return run_confirm(delete_messages_box(parent, count))


# --------------------------------------------------------------------------- JSON parsing


class JsonProblem(Exception):
    """Text that is not the JSON wanted; ``line`` is the 1-based line to mark, if known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def _no_constant(name: str) -> Any:
    raise JsonProblem(f"JSON error: {name} is not allowed (use null or a number)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonProblem(
                f"JSON error: the key {json.dumps(key, ensure_ascii=False)} appears twice "
                "in one object"
            )
        out[key] = value
    return out


def parse_json(text: str) -> Any:
    """Parse strict JSON (no NaN/Infinity, no repeated keys); raise :class:`JsonProblem`
    with one line naming the line and column of the first error."""
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise JsonProblem(
            f"JSON error at line {exc.lineno}, column {exc.colno}: {exc.msg}", exc.lineno
        ) from None
    except RecursionError:
        raise JsonProblem("JSON error: nested too deeply") from None


def _one_line(text: str) -> str:
    text = " ".join(str(text).split("\n"))
    return text[:1].upper() + text[1:]


# --------------------------------------------------------------------------- message editor

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


def _editor_text(editor: QPlainTextEdit) -> str:
    # Not toPlainText(): it turns no-break spaces into spaces and U+2028 into newlines.
    return editor.document().toRawText().replace("\u2029", "\n")


def _set_editor_text(editor: QPlainTextEdit, text: str, *, keep_undo: bool = False) -> None:
    if keep_undo:  # a template replaces the text as one undoable edit
        cursor = QTextCursor(editor.document())
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.insertText(text)
    else:
        editor.setPlainText(text)


def _mono_editor(parent: QWidget) -> QPlainTextEdit:
    editor = QPlainTextEdit(parent)
    editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    editor.setTabStopDistance(editor.fontMetrics().horizontalAdvance(" ") * 2)
    return editor


class MessageEditDialog(QDialog):
    """Edits one message, or writes a new one to insert.

    ``store_format`` is ``"flux"`` (a role, a text and a metadata JSON object) or any item
    format such as ``"agents"`` (one JSON item). ``validate(spec)`` raises
    :class:`~fluxgui.core.errors.FluxguiError` with one line when ``spec`` cannot be
    stored (the window passes ``lambda spec: store.edit_values(spec, original=message)``).
    The form is checked as the user types; Save stays disabled while it is not valid.
    After ``exec()`` returns Accepted, :attr:`result_spec` is the dict to store.
    """

    def __init__(
        self,
        store_format: str,
        validate: Validate,
        message: Message | None = None,
        title: str | None = None,
        parent: QWidget | None = None,
        *,
        ok_text: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.store_format = store_format
        self.message = message
        self.result_spec: dict[str, Any] | None = None
        self._validate = validate
        self._flux = store_format == "flux"
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

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        if ok_text is None:
            ok_text = "&Save" if message is not None else "&Insert"
        self.ok_button.setText(ok_text)
        keys = QKeySequence("Ctrl+Return").toString(QKeySequence.SequenceFormat.NativeText)
        self.ok_button.setToolTip(f"{ok_text.replace('&', '')} ({keys})")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self, activated=self.accept)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self.check)
        for editor in (self.text_edit, self.metadata_edit, self.json_edit):
            if editor is not None:
                editor.textChanged.connect(self._timer.start)
        if self.role_combo is not None:
            self.role_combo.currentTextChanged.connect(self._timer.start)

        self._style_status()
        self.resize(640, 480)
        self.check()

    # -- building ------------------------------------------------------------------

    def _build_flux(self, layout: QVBoxLayout) -> None:
        message = self.message
        combo = QComboBox(self)
        combo.setEditable(True)
        combo.addItems(list(FLUX_ROLES))
        combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        combo.setCurrentText(message.role if message is not None else "user")
        combo.setMinimumContentsLength(12)
        self.role_combo = combo
        role_label = QLabel("&Role:", self)
        role_label.setBuddy(combo)
        row = QHBoxLayout()
        row.addWidget(role_label)
        row.addWidget(combo)
        row.addStretch(1)
        layout.addLayout(row)

        self.text_edit = QPlainTextEdit(self)
        self.text_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self._original_text = message.text if message is not None else ""
        self.text_edit.setPlainText(self._original_text)
        # What the editor reads back for the stored text (line ends normalised): while
        # it reads that, the stored text is kept exactly as it was.
        self._shown_text = _editor_text(self.text_edit)
        text_label = QLabel("&Text:", self)
        text_label.setBuddy(self.text_edit)
        layout.addWidget(text_label)
        layout.addWidget(self.text_edit, 3)

        self.metadata_edit = _mono_editor(self)
        self.metadata_edit.setPlaceholderText("No metadata. Enter a JSON object to add some.")
        self.metadata_edit.setPlainText(_metadata_text(message))
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
            label = QLabel("&Template:", self)
            label.setBuddy(combo)
            row = QHBoxLayout()
            row.addWidget(label)
            row.addWidget(combo)
            row.addStretch(1)
            layout.addLayout(row)
            self.json_edit.setPlainText(json_text(TEMPLATES[0][1]))
            _cursor_in_first_string(self.json_edit)
            combo.activated.connect(self._on_template)
        else:
            self.json_edit.setPlainText(_item_text(message))
        json_label = QLabel("&Item (JSON):", self)
        json_label.setBuddy(self.json_edit)
        layout.addWidget(json_label)
        layout.addWidget(self.json_edit, 1)
        self.json_edit.setFocus()

    def _on_template(self, index: int) -> None:
        assert self.template_combo is not None and self.json_edit is not None
        _set_editor_text(self.json_edit, json_text(TEMPLATES[index][1]), keep_undo=True)
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
        """The spec the form holds; raises :class:`JsonProblem` (with the editor to mark)
        or :class:`FluxguiError` (from ``validate``)."""
        if self._flux:
            assert self.role_combo and self.text_edit and self.metadata_edit
            text = _editor_text(self.text_edit)
            if text == self._shown_text:
                text = self._original_text
            meta_text = _editor_text(self.metadata_edit)
            metadata: Any = None
            if meta_text.strip():
                try:
                    metadata = parse_json(meta_text)
                except JsonProblem as exc:
                    raise _Marked(f"Metadata: {exc}", self.metadata_edit, exc.line) from None
                if metadata is not None and not isinstance(metadata, dict):
                    raise _Marked(
                        f"Metadata must be a JSON object ({{…}}), not {json_type(metadata)}",
                        self.metadata_edit,
                    )
            return {"role": self.role_combo.currentText(), "content": text, "metadata": metadata}
        assert self.json_edit is not None
        source = _editor_text(self.json_edit)
        if not source.strip():
            raise _Marked("Enter the item as a JSON object", self.json_edit)
        try:
            item = parse_json(source)
        except JsonProblem as exc:
            raise _Marked(str(exc), self.json_edit, exc.line) from None
        if not isinstance(item, dict):
            raise _Marked(
                f"An item must be a JSON object ({{…}}), not {json_type(item)}", self.json_edit
            )
        return item

    def _evaluate(self) -> _Evaluation:
        try:
            spec = self._read()
        except _Marked as exc:
            return None, _one_line(str(exc)), exc.editor, exc.line
        try:
            self._validate(spec)
        except (FluxguiError, TypeError, ValueError) as exc:
            return None, _one_line(str(exc)), None, None
        return spec, None, None, None

    def check(self) -> bool:
        """Check the form now (typing checks it after a short pause); whether it is valid.
        Shows the problem under the editor and enables Save accordingly."""
        self._timer.stop()
        spec, error, editor, line = self._evaluate()
        self._error = error
        self._mark(editor, line)
        if error is not None:
            self.status_label.setText(error)
        else:
            self.status_label.setText(self._valid_text(spec))
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
        for each in (self.text_edit, self.metadata_edit, self.json_edit):
            if each is None:
                continue
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


class _Marked(Exception):
    """A problem in one editor (``line``: the line to tint)."""

    def __init__(self, message: str, editor: QPlainTextEdit, line: int | None = None) -> None:
        super().__init__(message)
        self.editor = editor
        self.line = line


def _metadata_text(message: Message | None) -> str:
    if message is None:
        return ""
    if message.metadata is not None:
        return json_text(message.metadata)
    if isinstance(message.raw, str):  # metadata that is not a JSON object, as stored
        return message.raw
    return ""


def _item_text(message: Message) -> str:
    """The editor text of a stored item: indented JSON, or the stored text as it is when
    it was not JSON."""
    if isinstance(message.raw, str):
        return message.raw
    return json_text(message.raw)


def _cursor_in_first_string(editor: QPlainTextEdit) -> None:
    """Put the cursor inside the first empty string of a template (where typing goes)."""
    text = _editor_text(editor)
    at = text.find('""')
    cursor = editor.textCursor()
    cursor.setPosition(at + 1 if at >= 0 else 0)
    editor.setTextCursor(cursor)


def edit_message(
    parent: QWidget | None,
    store_format: str,
    validate: Validate,
    message: Message | None = None,
    *,
    title: str | None = None,
    ok_text: str | None = None,
) -> dict[str, Any] | None:
    """Run :class:`MessageEditDialog`; the validated spec, or ``None`` when cancelled.
    Runs a nested event loop: call it from a Qt slot, not from inside a coroutine."""
    dialog = MessageEditDialog(store_format, validate, message, title, parent, ok_text=ok_text)
    try:
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.result_spec
    finally:
        dialog.deleteLater()
