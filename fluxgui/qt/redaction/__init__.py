"""Redaction in the window (issue 39): View › Redact and File › Export Redacted….

The work is :mod:`fluxgui.services.redaction`'s (the detectors, the placeholders, the
review); this package shows it: :mod:`.view` (the conversation redacted, the kinds on
hover), :mod:`.review_dialog` (the findings by kind before an export, a checkbox each).
:func:`install_redaction` puts the two actions into the menus.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence

from fluxgui.services.redaction import Detectors, make_redactor
from fluxgui.services.redaction.review import KindsRedactor

from ..widgets import put_after
from .review_dialog import ReviewDialog
from .view import ViewRedaction

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from ..bridge import AsyncBridge
    from ..conversation import ConversationPane
    from ..shell import Stores, Transfers


def default_detectors() -> Detectors:
    """Every kind: secrets, personal data, and the custom rules kept in the settings'
    rules file when there is one."""
    return make_redactor().detectors


class Redaction:
    """The window's redaction: :attr:`view` (View › Redact) and the redacted export.

    It is given what it uses: the window (the dialogs' parent), the bridge, the open
    store (``stores``), the conversation pane, the transfers (the export) and the shown
    and selected sessions (callables)."""

    def __init__(
        self,
        window: QMainWindow,
        bridge: AsyncBridge,
        stores: Stores,
        pane: ConversationPane,
        transfers: Transfers,
        *,
        shown: Callable[[], str | None],
        selected: Callable[[], list[str]],
    ) -> None:
        self.window = window
        self._bridge = bridge
        self._stores = stores
        self._transfers = transfers
        self._shown = shown
        self._selected = selected
        #: makes the detectors of each redacted view or export (tests inject failures)
        self.detectors: Callable[[], Detectors] = default_detectors
        self.view = ViewRedaction(pane, lambda: self.detectors())
        #: the review dialog open (``None``: none)
        self.review: ReviewDialog | None = None

    def make_review(self) -> ReviewDialog | None:
        """The review of what a redacted export would redact (started, not shown): the
        selected sessions, else the open one, else the whole store."""
        store = self._stores.store
        if store is None:
            return None
        selected, shown = self._selected(), self._shown()
        ids = selected or ([shown] if shown else None)
        scope = (f"{len(ids)} sessions" if len(ids) > 1 else "the session") if ids else "the whole store"
        self.review = ReviewDialog(self.window, self._bridge, store, self.detectors(), ids, scope)
        return self.review

    def export_dialog(self) -> None:
        """File › Export Redacted…: the review, then the export dialog, then the export."""
        review = self.make_review()
        if review is None:
            return
        review.accepted.connect(lambda: self._then_export(review.unticked()))
        review.finished.connect(lambda _r: review.deleteLater())
        review.open()

    def _then_export(self, keep: list[str]) -> None:
        transfers = self._transfers
        dialog = transfers.make_export_dialog()
        if dialog is None:
            return
        dialog.setWindowTitle("Export Redacted")
        try:
            if dialog.exec():
                self.run_export(dialog.path(), dialog.format(), dialog.session_ids(), keep,
                                metadata=dialog.metadata())
        finally:
            dialog.deleteLater()

    def run_export(self, path: object, fmt: str, session_ids: list[str] | None, keep: list[str],
                   *, metadata: bool = True) -> None:
        """Export redacted, leaving the kinds in ``keep`` as they are."""
        redactor = KindsRedactor(self.detectors(), keep)
        self._transfers.run_export(path, fmt, session_ids, metadata=metadata, redactor=redactor)


def install_redaction(parts: Redaction, actions: dict[str, QAction]) -> Redaction:
    """View › Redact (after Plain Text) and File › Export Redacted… (after Export…), put
    into ``parts.window`` and ``actions`` (the window's actions by name)."""
    window = parts.window
    redact = QAction("Re&dact", window)
    redact.setCheckable(True)
    redact.setShortcut(QKeySequence("Ctrl+Alt+R"))
    redact.setStatusTip("Show the conversation and the session ids with secrets and personal data "
                        "replaced by placeholders (copies take the redacted text)")
    redact.toggled.connect(parts.view.set_on)
    window.addAction(redact)
    actions["redact"] = redact
    export = QAction("Export Re&dacted…", window)
    export.setStatusTip("Review the secrets and personal data found, then export with them redacted")
    export.triggered.connect(lambda _checked=False: parts.export_dialog())
    actions["export_redacted"] = export
    put_after(window.menuBar(), actions.get("plain_text"), redact)
    put_after(window.menuBar(), actions.get("export"), export)
    return parts


__all__ = ["Redaction", "ReviewDialog", "ViewRedaction", "install_redaction"]
