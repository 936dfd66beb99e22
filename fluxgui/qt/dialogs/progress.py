"""Progress of an export, import or copy: a dialog with Cancel, shown after half a second."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QProgressDialog, QWidget

from fluxgui.core.text import plural

from ..screen_fit import fit_to_screen


class TransferProgress(QProgressDialog):
    """Progress of an export, import or copy, with Cancel (shown after half a second)."""

    #: messages done, messages in all (0: unknown)
    advanced = Signal(int, int)

    def __init__(self, parent: QWidget | None, title: str) -> None:
        super().__init__(title, "Cancel", 0, 0, parent)
        self.setWindowTitle(title)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumDuration(500)
        self.setAutoClose(False)
        self.setAutoReset(False)
        self.setValue(0)
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def update_progress(self, done: int, total: int) -> None:
        self.advanced.emit(done, total)
        if total > 0:
            # QProgressDialog takes ints: scale big counts down to per-mille.
            self.setMaximum(1000)
            self.setValue(min(1000, int(done * 1000 / total)))
            self.setLabelText(f"{done:,} of {total:,} messages")
        else:
            self.setLabelText(plural(done, "message"))
