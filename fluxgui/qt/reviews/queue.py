"""The keyboard queue: in "Review queue" mode, single keys drive the review.

``J``/``→`` next session in the list (the current filter), ``K``/``←`` previous, ``1``–``9``
pick the current criterion's option (then the next criterion; ``Tab`` moves on),
``Ctrl+Enter`` marks reviewed and opens the next unreviewed session (claimed), ``F``
flags, ``T`` focuses the tag field, ``N`` the note, ``M`` the note on the selected
message, ``?`` shows the cheat sheet, ``Esc`` leaves a text field. While the mode is on,
the status bar says so with the queue's position ("Queue 3 of 41"). Letters and digits typed into a text field stay text; Ctrl+Enter
works there too (a note being typed is saved with it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from ..screen_fit import fit_to_screen

if TYPE_CHECKING:
    from .host import Reviews

KEYS = [
    ("J / →", "next session in the list"),
    ("K / ←", "previous session"),
    ("1 – 9", "pick an option of the current criterion (then the next one)"),
    ("Tab / Shift+Tab", "next / previous criterion"),
    ("Ctrl+Enter", "mark reviewed and open the next unreviewed session"),
    ("F", "flag (needs follow-up)"),
    ("T", "add a tag"),
    ("N", "write a note"),
    ("M", "write a note on the selected message"),
    ("Esc", "leave a text field"),
    ("?", "this cheat sheet"),
]
K = Qt.Key


def cheat_sheet(parent: QWidget) -> QDialog:
    dialog = QDialog(parent)
    dialog.setObjectName("reviewCheatSheet")
    dialog.setWindowTitle("Review queue keys")
    layout = QVBoxLayout(dialog)
    rows = "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{v}</td></tr>" for k, v in KEYS)
    label = QLabel(f"<table>{rows}</table>", dialog)
    label.setTextFormat(Qt.TextFormat.RichText)
    layout.addWidget(label)
    return fit_to_screen(dialog)


def _typing(widget: QObject | None) -> bool:
    if isinstance(widget, QComboBox):
        return widget.isEditable()
    return isinstance(widget, QLineEdit | QPlainTextEdit | QTextEdit | QAbstractSpinBox)


class QueueKeys(QObject):
    """The queue's keys, for the widgets of one window, while queue mode is on."""

    def __init__(self, controller: Reviews, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._c = controller
        self._on = False
        #: the status bar's sign of queue mode and its position ("Queue 3 of 41")
        window = controller.window
        self.mark = QLabel("", window)
        self.mark.setObjectName("queueMark")
        self.mark.setToolTip("Review queue mode: single keys review (? lists them; Ctrl+Shift+Q leaves)")
        self.mark.setStyleSheet("QLabel { background: palette(highlight); color: palette(highlighted-text);"
                                " padding: 0 6px; border-radius: 3px; }")
        window.statusBar().addPermanentWidget(self.mark)
        self.mark.hide()
        host = controller.host
        host.messages_shown.connect(lambda _sid: self.update_mark())
        host.sessions.pageLoaded.connect(lambda _added, _more: self.update_mark())
        host.sessions.modelReset.connect(self.update_mark)

    def update_mark(self) -> None:
        """The queue's position: the shown session's row of the listed sessions."""
        if not self._on:
            return
        model = self._c.host.sessions
        sid = self._c.host.shown()
        row = model.row_of(sid) if sid is not None else None
        more = "+" if model.canFetchMore(QModelIndex()) else ""
        where = f"{row + 1} of {model.rowCount():,}{more}" if row is not None else f"– of {model.rowCount():,}{more}"
        self.mark.setText(f"Queue {where}")

    @property
    def on(self) -> bool:
        return self._on

    def set_on(self, on: bool) -> None:
        app = QApplication.instance()
        if on == self._on or app is None:
            return
        self._on = on
        self.mark.setVisible(on)
        if on:
            app.installEventFilter(self)
            self.update_mark()
        else:
            app.removeEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) or not isinstance(event, QKeyEvent):
            return False
        if not isinstance(watched, QWidget) or watched.window() is not self._c.window:
            return False
        action = self._action(event, QApplication.focusWidget())
        if action is None:
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # ours, not a window shortcut's (Ctrl+Return inserts otherwise)
            return True
        action()
        return True

    def _action(self, event: QKeyEvent, focus: QObject | None):  # noqa: ANN202 - a callable or None
        c = self._c
        key, mods = event.key(), event.modifiers()
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        if ctrl and key in (K.Key_Return, K.Key_Enter):
            return c.mark_reviewed_and_next
        if ctrl or mods & Qt.KeyboardModifier.AltModifier:
            return None
        if _typing(focus):
            if key == K.Key_Escape:
                return c.focus_list
            return None
        text = event.text()
        if key in (K.Key_J, K.Key_Right):
            return lambda: c.move(1)
        if key in (K.Key_K, K.Key_Left):
            return lambda: c.move(-1)
        if text and text in "123456789" and len(text) == 1:
            return lambda: c.panel.pick(int(text))
        if key == K.Key_Tab:
            return lambda: c.panel.next_criterion(1)
        if key == K.Key_Backtab:
            return lambda: c.panel.next_criterion(-1)
        if key == K.Key_F:
            return c.toggle_flag
        if key == K.Key_T:
            return lambda: c.focus_field(c.panel.tag_edit)
        if key == K.Key_N:
            return lambda: c.focus_field(c.panel.note_edit)
        if key == K.Key_M:
            return self._message_note
        if text == "?":
            return c.show_cheat_sheet
        return None

    def _message_note(self) -> None:
        """M: the note field of the selected message (or say how to select one)."""
        c = self._c
        if c.panel.message_id is None:
            c.window.statusBar().showMessage("Select a message first (click it, or Tab to the conversation)", 5000)
            return
        c.focus_field(c.panel.message_note_edit)
