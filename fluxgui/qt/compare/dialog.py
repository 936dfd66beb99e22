"""The Compare window: a non-modal dialog around a :class:`~.view.CompareView`."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from fluxgui.core.diff import Comparison
from fluxgui.core.roles import PageTransform, Store

from ..bridge import AsyncBridge
from ..shown_ids import FollowedRedaction
from ..screen_fit import fit_to_screen
from .view import CompareView


class CompareDialog(QDialog):
    """A non-modal window around a :class:`CompareView`, with a Close button."""

    def __init__(self, bridge: AsyncBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare sessions")
        #: both sides are shown redacted (View › Redact is on)
        self.redacted = False
        self._compare: Callable[..., None] | None = None
        self._redaction: FollowedRedaction | None = None
        self.view = CompareView(bridge, self)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.close_button = buttons.button(QDialogButtonBox.StandardButton.Close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
        self.view.compared.connect(self._retitle)
        self.resize(1100, 720)
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def start(
        self, store: Store, session_a: str, store_b: Store | None, session_b: str, *,
        branch_a: str | None = None, branch_b: str | None = None,
        redaction: FollowedRedaction | None = None,
    ) -> None:
        """Compare the two sessions, shown as ``redaction`` says now and again each time
        View › Redact is turned on or off."""
        self._compare = partial(self.view.compare, store, session_a, store_b, session_b,
                                branch_a=branch_a, branch_b=branch_b)
        self._redaction = redaction
        if redaction is not None:
            redaction.ids.changed.connect(self._again)
        self._again()

    def _again(self) -> None:
        redaction = self._redaction
        transform = redaction.transform() if redaction is not None else None
        self.redacted = transform is not None
        self.view.show_id = redaction.ids.fixed() if redaction is not None else None
        if self._compare is not None:
            self._compare(transform=transform)

    def _retitle(self, comparison: Comparison) -> None:
        a = " ".join(comparison.a.label.split())[:60]
        b = " ".join(comparison.b.label.split())[:60]
        self.setWindowTitle(f"Compare {a} ↔ {b}" + (" (redacted)" if self.redacted else ""))

    def done(self, result: int) -> None:
        self.view.cancel()
        super().done(result)


def open_compare(
    parent: QWidget | None,
    bridge: AsyncBridge,
    store: Store,
    session_a: str,
    session_b: str,
    *,
    store_b: Store | None = None,
    branch_a: str | None = None,
    branch_b: str | None = None,
    redaction: FollowedRedaction | None = None,
) -> CompareDialog:
    """Open a (non-modal) Compare window for two sessions of ``store`` (or of ``store``
    and ``store_b``), start the comparison and return the window. It deletes itself when
    closed. ``redaction``: while View › Redact is on, the comparison is shown redacted
    (the window's placeholders, the same on both sides) and its ids as the window shows
    them; turning Redact on or off compares again, shown the new way."""
    dialog = CompareDialog(bridge, parent)
    dialog.setModal(False)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    dialog.start(store, session_a, store_b, session_b, branch_a=branch_a, branch_b=branch_b,
                 redaction=redaction)
    return dialog
