"""The Doctor panel's first tab: the shown session's problems and their repairs.

Each problem is a row (its code, the messages involved, its sentence), ticked when a
repair fixes it; a call's outputs that differ are shown in full when their problem is
selected, and the one picked is the one the repair keeps (the last until told). **Preview** shows the session before and after the ticked repairs (and
the raw text of a malformed row before it goes), **Apply** writes them as one edit
through the window's undo stack, **Undo** takes the last edit back; **Remove Last Turn**
previews a rewind of the last turn. Selecting a problem selects its first card.

A session of a workspace shown merged over several stores lists the workspace's own
finding instead (:meth:`ProblemsTab.show_merged`): ``split_session`` with its messages as
``LABEL:ID`` and its sentence, no repair (nothing in one store fixes it: the repair
controls are hidden) but **Consolidate…**, which writes the merged session into one store.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.model import Message
from fluxgui.core.visible import visible
from fluxgui.services.doctor.problems import LABELS, Problem, SessionReport
from fluxgui.services.doctor.repairs import CANCEL_TEXT, REPAIRABLE, Plan
from fluxgui.services.doctor.text import describe

from fluxgui.qt.flow import flow_row
from fluxgui.qt.widgets import wrapped_check

from .output_choice import OutputChoice, differing

PROBLEM_ROLE = Qt.ItemDataRole.UserRole + 1


class ProblemsTab(QWidget):
    """The problems list, the preview and the repair buttons (the controller acts)."""

    previewRequested = Signal()
    applyRequested = Signal()
    undoRequested = Signal()
    rewindRequested = Signal()
    messageRequested = Signal(int)
    #: Consolidate… (a split session shown merged)
    consolidateRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("doctorProblems")
        self.summary = QLabel("No session is shown.", self)
        self.summary.setWordWrap(True)
        self.list = QListWidget(self)
        self.list.setObjectName("doctorProblemList")
        self.list.setWordWrap(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.list.currentItemChanged.connect(self._on_current)
        self.choice = OutputChoice(self)
        self.choice.picked.connect(self._on_picked)
        self._outputs: dict[int, Message] = {}
        self._keep: dict[tuple[int, ...], int] = {}
        self.cancel_text = QLineEdit(CANCEL_TEXT, self)
        self.cancel_text.setToolTip("What the output that completes an orphan call says")
        self.cancel_text.setCursorPosition(0)  # its start shown in a narrow dock
        self.drop_calls = QCheckBox(self)
        # the sentence wraps in a narrow dock (a check box's own text cannot)
        self.drop_row = wrapped_check(self.drop_calls, "Drop orphan calls instead of completing them")
        self.preview = QPlainTextEdit(self)
        self.preview.setObjectName("doctorPreview")
        self.preview.setReadOnly(True)
        # its lines wrap at the dock's width: a narrow dock does not scroll them sideways
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.preview.setFont(mono)
        self.preview.setPlaceholderText("Preview shows the session before and after the repair.")
        self.preview_button = QPushButton("Preview", self)
        self.apply_button = QPushButton("Apply", self)
        self.undo_button = QPushButton("Undo", self)
        self.rewind_button = QPushButton("Remove Last Turn…", self)
        self.preview_button.clicked.connect(lambda _c=False: self.previewRequested.emit())
        self.apply_button.clicked.connect(lambda _c=False: self.applyRequested.emit())
        self.undo_button.clicked.connect(lambda _c=False: self.undoRequested.emit())
        self.rewind_button.clicked.connect(lambda _c=False: self.rewindRequested.emit())
        self.consolidate_button = QPushButton("Consolidate…", self)
        self.consolidate_button.setToolTip("Write the merged session into one store (the stores merged are only read)")
        self.consolidate_button.clicked.connect(lambda _c=False: self.consolidateRequested.emit(self._merged or ""))
        self.consolidate_button.hide()
        #: the session shown merged over several stores (``None``: a session of one store)
        self._merged: str | None = None
        self.apply_button.setEnabled(False)
        self.status = QLabel("", self)
        self.status.setWordWrap(True)

        # the buttons wrap to a second row in a narrow dock
        buttons = flow_row(self, [self.preview_button, self.apply_button, self.undo_button,
                                  self.rewind_button, self.consolidate_button])
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.list, 2)
        layout.addWidget(self.choice)
        layout.addWidget(self.cancel_text)
        layout.addWidget(self.drop_row)
        layout.addWidget(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.preview, 3)

    # -- what the controller shows -----------------------------------------------------

    def show_report(
        self, report: SessionReport | None, *, checking: bool = False,
        outputs: dict[int, Message] | None = None,
    ) -> None:
        """List ``report``'s problems (``None``: no session shown, or still checking);
        ``outputs``: the messages of its ``duplicate_output`` problems, by id."""
        self.list.clear()
        self.choice.clear()
        self._outputs = dict(outputs or {})
        self._keep = {}
        self.preview.clear()
        self.apply_button.setEnabled(False)
        # the status line ("Writing: …", a refusal) was about the previous report's plan
        self.set_status("")
        self._set_merged(None)
        if report is None:
            self.summary.setText("Checking…" if checking else "No session is shown.")
            return
        n = len(report.problems)
        text = "No problems found: the session resumes as stored." if not n else (
            f"{n} problem{'s' if n != 1 else ''} would break or change a resume."
        )
        if report.unchecked:
            text += f" {len(report.unchecked)} encrypted items cannot be checked without their key."
        self.summary.setText(text)
        for p in report.problems:
            self.list.addItem(self._item(p))

    def show_merged(self, session_id: str, finding: dict[str, Any] | None, stores: int) -> None:
        """``session_id`` shown merged over ``stores`` stores, with its ``split_session``
        finding (``None``: not split): listed without a repair, Consolidate… offered."""
        self.show_report(None)
        self._set_merged(session_id, split=finding is not None)
        if finding is None:
            self.summary.setText(
                f"Merged over {stores} stores: not split (one store holds every turn). "
                "Each store's own checks run when its session is shown alone.")
            return
        self.summary.setText(
            "1 problem: the session is split across stores, so an agent resumed from any one of "
            "them is not sent every turn. No repair in one store fixes it: Consolidate… writes "
            "the merged session into one store.")
        ids = ", ".join(finding["message_ids"])
        code = finding["code"]
        item = QListWidgetItem(visible(f"{LABELS.get(code, code.replace('_', ' '))}  {ids}\n{finding['detail']}",
                                       keep_layout=True))
        item.setData(PROBLEM_ROLE, dict(finding))
        item.setToolTip(finding["detail"])
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)
        self.list.addItem(item)

    @property
    def merged(self) -> str | None:
        """The session shown merged, if one is."""
        return self._merged

    def _set_merged(self, session_id: str | None, *, split: bool = False) -> None:
        self._merged = session_id
        self.consolidate_button.setVisible(session_id is not None and split)
        # no repair of one store applies: its controls make room for Consolidate…
        for w in (self.preview_button, self.apply_button, self.rewind_button, self.cancel_text,
                  self.drop_row, self.preview):
            w.setVisible(session_id is None)

    def _item(self, p: Problem) -> QListWidgetItem:
        ids = ", ".join(f"#{i}" for i in p.message_ids)
        item = QListWidgetItem(visible(f"{LABELS.get(p.code, p.code)}  {ids}\n{p.detail}", keep_layout=True))
        item.setData(PROBLEM_ROLE, p)
        item.setToolTip(p.detail)
        if p.code in REPAIRABLE:
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
        else:
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)
        return item

    def chosen(self) -> list[str]:
        """The codes of the ticked problems, each once."""
        codes: dict[str, None] = {}
        for row in range(self.list.count()):
            item = self.list.item(row)
            p = item.data(PROBLEM_ROLE)
            if isinstance(p, Problem) and p.code in REPAIRABLE and item.checkState() == Qt.CheckState.Checked:
                codes[p.code] = None
        return list(codes)

    def keep_ids(self) -> set[int]:
        """The outputs picked to stay, one per differing ``duplicate_output`` picked."""
        return set(self._keep.values())

    def show_plan(self, plan: Plan, *, can_apply: bool, reason: str | None) -> None:
        """The before/after of ``plan``; Apply is enabled when it can be written now."""
        lines = [f"{plan.label}: {len(plan.before)} messages before, {len(plan.after)} after", ""]
        lines += [f"{line.mark} {describe(line.message, 160)}" for line in plan.diff()]
        lines += ["", plan.summary()]
        self.preview.setPlainText(visible("\n".join(lines), keep_layout=True))
        self.apply_button.setEnabled(can_apply and not plan.empty)
        self.set_status(reason if reason and not plan.empty else "")

    def set_status(self, text: str) -> None:
        self.status.setText(text)

    def _on_current(self, current: QListWidgetItem | None, _previous: object) -> None:
        p = current.data(PROBLEM_ROLE) if current is not None else None
        if isinstance(p, Problem) and differing(p, self._outputs):
            chosen = self._keep.get(p.message_ids, p.message_ids[-1])
            self.choice.show_outputs([self._outputs[i] for i in p.message_ids], chosen)
        else:
            self.choice.clear()
        if isinstance(p, Problem) and p.message_ids:
            self.messageRequested.emit(int(p.message_ids[0]))

    def _on_picked(self, message_id: int) -> None:
        item = self.list.currentItem()
        p = item.data(PROBLEM_ROLE) if item is not None else None
        if isinstance(p, Problem) and message_id in p.message_ids:
            self._keep[p.message_ids] = message_id
