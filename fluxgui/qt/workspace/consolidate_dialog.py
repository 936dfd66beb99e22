"""File › Consolidate Workspace…: the merged sessions of every store written into one
store (:mod:`fluxgui.services.workspace.into`). Choose the destination (a new or other
file, or a URL; a store of the workspace is refused: the stores merged are never
changed) and what a conflict does (skip, or write under a new id); Preview shows the
plan — per session its items from each store, the copies folded, and what happens —
then Consolidate writes it with its progress (Cancel stops after the session being
written: each is one transaction) and says what was done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel,
    QLineEdit, QProgressBar, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from fluxgui.core.text import plural
from fluxgui.services.workspace import Workspace
from fluxgui.services.workspace.consolidate import MergePlan
from fluxgui.services.workspace.into import consolidate_into, preview_into

from ..bridge import AsyncBridge
from ..errors import describe_error
from ..screen_fit import fit_to_screen
from ..shown_ids import one_line

KEY = "workspace-consolidate"
#: a title naming the sessions is cut here (several long ids)
TITLE_CHARS = 120
ACTIONS = {
    "write": "write", "same": "already there (skipped)", "conflict": "conflict: skipped",
    "rename": "conflict: written under a new id",
}


class ConsolidateDialog(QDialog):
    """See the module. ``planned(plan)`` after a preview, ``written(plan)`` after the
    write, ``failed(error)``."""

    planned = Signal(object)
    written = Signal(object)
    failed = Signal(object)

    def __init__(
        self, workspace: Workspace, bridge: AsyncBridge, parent: QWidget | None = None,
        session_ids: list[str] | None = None, *, show_id: Callable[[str], str] = str,
        show_store: Callable[[str], str] = one_line,
    ) -> None:
        super().__init__(parent)
        #: how a session id is shown (View › Redact: redacted; the plan keeps the real
        #: ids), on one line with its hidden characters marked
        self.show_id: Callable[[str], str] = lambda sid: one_line(show_id(sid))
        title = f"Consolidate {', '.join(map(self.show_id, session_ids))}" if session_ids else ""
        self.setWindowTitle("Consolidate workspace" if not title
                            else title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…")
        #: the sessions consolidated (``None``: every session of the workspace)
        self.session_ids = session_ids
        self.setObjectName("consolidateDialog")
        self._workspace = workspace
        self._bridge = bridge
        self.plan: MergePlan | None = None
        #: the destination the last write went to, as typed
        self.written_into = ""
        self.result_plan: MergePlan | None = None
        self.dest = QLineEdit(self)
        self.dest.setPlaceholderText("a new SQLite file, or a database / Redis URL")
        self.dest.textChanged.connect(self._changed)
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.dest, 1)
        row.addWidget(browse)
        self.on_conflict = QComboBox(self)
        self.on_conflict.addItem("skip the session (never overwritten)", "skip")
        self.on_conflict.addItem("write it under a new id", "rename")
        self.on_conflict.currentIndexChanged.connect(self._changed)
        form = QFormLayout()
        form.addRow("Into:", row)
        form.addRow("On conflict:", self.on_conflict)
        #: how a store's label is shown (View › Redact: redacted), on one line
        self.show_store = show_store
        stores = ", ".join(map(show_store, workspace.labels))
        self.summary = QLabel(f"From {plural(len(workspace.members), 'store')}: {stores}. "
                              "They are only read.", self)
        self.summary.setWordWrap(True)
        self.table = QTableWidget(0, 4, self)
        self.table.setHorizontalHeaderLabels(["Session", "Items from each store", "Copies folded", "Action"])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setWordWrap(False)
        self.progress = QProgressBar(self)
        self.progress.hide()
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        # room for the outcome's sentences (a wrapped label is not given its height here)
        self.status.setMinimumHeight(self.fontMetrics().lineSpacing() * 3 + 4)
        self.buttons = QDialogButtonBox(self)
        self.preview_button = self.buttons.addButton("Preview", QDialogButtonBox.ButtonRole.ActionRole)
        self.write_button = self.buttons.addButton("Consolidate", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.preview_button.clicked.connect(self.preview)
        self.write_button.clicked.connect(self.write)
        self.cancel_button.clicked.connect(self._cancel_or_close)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.resize(720, 420)
        self._running = False
        self._changed()
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def _browse(self) -> None:
        path, _f = QFileDialog.getSaveFileName(self, "Consolidate into", "", "SQLite (*.db *.sqlite);;All files (*)",
                                               options=QFileDialog.Option.DontConfirmOverwrite)
        if path:
            self.dest.setText(path)

    def _changed(self, *_args: Any) -> None:
        self.plan = None
        has = bool(self.dest.text().strip())
        self.preview_button.setEnabled(has and not self._running)
        self.write_button.setEnabled(False)

    def _mode(self) -> Any:
        return self.on_conflict.currentData()

    def preview(self) -> None:
        target = self.dest.text().strip()
        if not target or self._running:
            return
        self.status.setText("Planning…")
        self._bridge.start(KEY, preview_into(self._workspace, target, self.session_ids, on_conflict=self._mode()),
                           self._on_planned, self._on_failed)

    def _on_planned(self, plan: MergePlan) -> None:
        self.plan = plan
        self._fill(plan)
        writes = plan.count("write") + plan.count("rename")
        self.status.setText(
            f"{plural(len(plan.sessions), 'session')}: {writes} to write, {plan.count('same')} already "
            f"there, {plan.count('conflict')} in conflict (skipped)."
        )
        self.write_button.setEnabled(writes > 0)
        self.planned.emit(plan)

    def _fill(self, plan: MergePlan) -> None:
        self.table.setRowCount(len(plan.sessions))
        for r, s in enumerate(plan.sessions):
            origin = ", ".join(f"{self.show_store(label)} {n}" for label, n in s.from_stores.items())
            action = ACTIONS.get(s.action, s.action)
            if s.written:
                as_ = f" as {self.show_id(str(s.written_as))})" if s.written_as != s.session_id else ")"
                action += f" ({plural(s.written, 'item')}" + as_
            for c, text in enumerate((self.show_id(s.session_id) + (" (split)" if s.split else ""), origin, str(s.folded), action)):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()

    def write(self) -> None:
        target = self.dest.text().strip()
        if self.plan is None or self._running:
            return
        self._running = True
        self.written_into = target
        self.progress.setRange(0, len(self.plan.sessions))
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.setText("Cancel")
        self.preview_button.setEnabled(False)
        self.write_button.setEnabled(False)
        self.status.setText("Writing…")
        ids = [s.session_id for s in self.plan.sessions]
        self._bridge.start(
            KEY, consolidate_into(self._workspace, target, ids, on_conflict=self._mode(), progress=self._progress),
            self._on_written, self._on_failed,
        )

    def _progress(self, done: int, total: int) -> None:
        self.progress.setMaximum(total)
        self.progress.setValue(done)

    def _on_written(self, plan: MergePlan) -> None:
        self._running = False
        self.result_plan = plan
        self.plan = None
        self.cancel_button.setText("Close")
        self.preview_button.setEnabled(True)
        self._fill(plan)
        items = sum(s.written for s in plan.sessions)
        self.status.setText(
            f"Done: {plural(plan.count('write') + plan.count('rename'), 'session')} written "
            f"({plural(items, 'item')}), {plan.count('same')} already there, {plan.count('conflict')} "
            "skipped in conflict. The stores merged were not changed."
        )
        self.written.emit(plan)

    def _on_failed(self, error: Exception) -> None:
        self._running = False
        self.cancel_button.setText("Close")
        self.status.setText(describe_error(error))
        self.preview_button.setEnabled(bool(self.dest.text().strip()))
        self.failed.emit(error)

    def _cancel_or_close(self) -> None:
        if self._running:
            self._bridge.cancel(KEY)
            self._running = False
            self.cancel_button.setText("Close")
            self.status.setText("Cancelled: the sessions written before stay; nothing else was written.")
            return
        self.reject()
