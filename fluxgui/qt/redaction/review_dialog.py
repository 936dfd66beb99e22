"""The review before a redacted export: every finding by kind, how many, in how many
messages, a few masked examples (never a full value), a checkbox per kind.

The findings are looked for in the background (through the window's bridge) as soon
as the dialog is made; ``reviewed`` is emitted when the list is filled (or the look
failed: the dialog says so and cannot go on). An unticked kind is left unredacted in
the export; every other kind, also one not seen here, is redacted.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.roles import Store
from fluxgui.core.text import plural
from fluxgui.services.redaction import Detectors
from fluxgui.services.redaction.review import Review, kind_label, review_findings

from ..bridge import AsyncBridge
from ..screen_fit import fit_to_screen

KEY = "redaction-review"


class ReviewDialog(QDialog):
    """Findings by kind before a redacted export (see the module's docstring)."""

    reviewed = Signal()

    def __init__(
        self, parent: QWidget, bridge: AsyncBridge, store: Store, detectors: Detectors,
        session_ids: Sequence[str] | None, scope: str,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export Redacted")
        self._bridge = bridge
        self.review: Review | None = None
        layout = QVBoxLayout(self)
        self.summary = QLabel(f"Looking for secrets and personal data in {scope}…", self)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.summary)
        self.tree = QTreeWidget(self)
        self.tree.setHeaderLabels(["Kind", "Found", "Messages", "Examples (masked)"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        for column in (0, 1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        layout.addWidget(self.tree, 1)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.hide()
        layout.addWidget(self.note)
        hint = QLabel("Unticked kinds are left as they are in the export; every other finding "
                      "is replaced by its placeholder ([EMAIL_1], …).", self)
        hint.setWordWrap(True)
        hint.setForegroundRole(hint.foregroundRole().PlaceholderText)
        layout.addWidget(hint)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("Export…")
        self.ok.setEnabled(False)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.resize(640, 420)
        self.finished.connect(lambda _r: bridge.cancel(KEY))
        bridge.start(KEY, review_findings(store, detectors, session_ids), self._show, self._failed)
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def _show(self, review: Review) -> None:
        self.review = review
        kinds = review.ordered()
        total = sum(k.count for k in kinds)
        where = plural(review.sessions, "session")
        self.summary.setText(
            f"Found {plural(total, 'finding')} of {plural(len(kinds), 'kind')} in {where}."
            if kinds else f"Nothing to redact was found in {where}."
        )
        for k in kinds:
            item = QTreeWidgetItem([
                kind_label(k.kind), str(k.count), str(len(k.messages)), ", ".join(k.examples),
            ])
            item.setData(0, Qt.ItemDataRole.UserRole, k.kind)
            item.setToolTip(0, k.kind)
            item.setToolTip(3, "\n".join(k.examples))
            item.setCheckState(0, Qt.CheckState.Checked)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            for column in (1, 2):
                item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.tree.addTopLevelItem(item)
        if review.failed:
            shown = ", ".join(review.failed[:5]) + (", …" if len(review.failed) > 5 else "")
            self.note.setText(
                f"A detector failed on {plural(len(review.failed), 'item')} ({shown}): "
                "the export leaves them out."
            )
            self.note.show()
        self.ok.setEnabled(True)
        self.reviewed.emit()

    def _failed(self, error: Exception) -> None:
        self.summary.setText(f"Could not look through the sessions: {error}")
        self.reviewed.emit()

    def rows(self) -> dict[str, QTreeWidgetItem]:
        """Each kind's row in the list."""
        out: dict[str, QTreeWidgetItem] = {}
        for n in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(n)
            assert item is not None
            out[str(item.data(0, Qt.ItemDataRole.UserRole))] = item
        return out

    def set_ticked(self, kind: str, on: bool) -> None:
        self.rows()[kind].setCheckState(0, Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def unticked(self) -> list[str]:
        """The kinds to leave unredacted."""
        return [k for k, item in self.rows().items() if item.checkState(0) != Qt.CheckState.Checked]
