"""A huge message's whole text in a window of its own: a read-only ``QPlainTextEdit``
(which lays out only the lines it shows), filled a piece at a time so that opening a
2 MB text never stalls the window. Hidden characters show as markers, as in the cards.

A message the window read only the start of (:attr:`~fluxgui.core.model.Message.partial`)
opens with its size while the whole text is read from the store (:meth:`TextViewer.set_text`
fills it then)."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import QDialog, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from fluxgui.core.bodies import split_chunks
from fluxgui.core.display import size_label
from fluxgui.core.visible import visible

from ..screen_fit import fit_to_screen

#: characters appended per tick of the filling timer
FILL_CHARS = 60_000


class TextViewer(QDialog):
    """The whole ``text`` of one message, read-only, monospace, filled in slices;
    ``text=None``: being read (``size`` bytes), given later to :meth:`set_text`."""

    def __init__(self, title: str, text: str | None, parent: QWidget | None = None, *,
                 size: int | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.resize(900, 640)
        self.status = QLabel(self)
        self.edit = QPlainTextEdit(self)
        self.edit.setReadOnly(True)
        self.edit.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.edit.setUndoRedoEnabled(False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.edit, 1)
        self._pieces: list[str] = []
        self._next = 0
        self._lines = 0
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._fill)
        if text is None:
            self.status.setText(f"Reading the whole message ({size_label(size or 0)}) from the store…")
        else:
            self.set_text(text)
        fit_to_screen(self)  # never larger than its screen (issue 37)

    @property
    def filled(self) -> bool:
        return bool(self._pieces) and self._next >= len(self._pieces)

    def set_text(self, text: str) -> None:
        """Show ``text`` (filled a piece at a time)."""
        self._pieces = split_chunks(text, FILL_CHARS)
        self._next = 0
        self._lines = text.count("\n") + 1
        self.edit.clear()
        self._timer.start()
        self._fill()

    def failed(self, reason: str) -> None:
        """The whole text could not be read."""
        self.status.setText(f"The whole message could not be read: {reason}")

    def _fill(self) -> None:
        if self.filled:
            self._timer.stop()
            return
        cursor = QTextCursor(self.edit.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(visible(self._pieces[self._next], pictures=False))
        self._next += 1
        done = self.filled
        self.status.setText(f"{self._lines:,} lines" if done
                            else f"{self._lines:,} lines · loading {self._next}/{len(self._pieces)}…")
        if done:
            self._timer.stop()
            self.edit.moveCursor(QTextCursor.MoveOperation.Start)
