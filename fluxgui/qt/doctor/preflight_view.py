"""The Doctor panel's Preflight tab: what resuming the shown session sends the model —
each item with its estimated tokens, the total, and the problems that would fail the
request. Built by :func:`fluxgui.services.doctor.preflight.preflight` off the UI thread."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.visible import visible
from fluxgui.qt.flow import flow_row
from fluxgui.services.doctor.preflight import Preflight
from fluxgui.services.doctor.text import describe_item


class PreflightView(QWidget):
    """A table of the input items (tokens, what, text) with its total and problems."""

    runRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("doctorPreflight")
        self.limit = QSpinBox(self)
        self.limit.setRange(0, 1_000_000)
        self.limit.setSpecialValueText("no limit")
        self.limit.setToolTip("SessionSettings(limit=N): only the latest N items (0: no limit)")
        self.run_button = QPushButton("Run Preflight", self)
        self.run_button.clicked.connect(lambda _c=False: self.runRequested.emit())
        self.heading = QLabel("Run a preflight to see what the model would be sent.", self)
        self.heading.setWordWrap(True)
        self.table = QTableWidget(0, 3, self)
        self.table.setObjectName("doctorPreflightTable")
        self.table.setHorizontalHeaderLabels(["Tokens", "Item", "Text"])
        self.table.verticalHeader().setVisible(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.total = QLabel("", self)
        self.total.setWordWrap(True)
        # The dock keeps the width it is given: long cells scroll, they do not widen it.
        self.table.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.problems = QLabel("", self)
        self.problems.setWordWrap(True)
        self.problems.setTextFormat(Qt.TextFormat.PlainText)
        limit = QWidget(self)
        limit_row = QHBoxLayout(limit)
        limit_row.setContentsMargins(0, 0, 0, 0)
        limit_row.addWidget(QLabel("Limit:", limit))
        limit_row.addWidget(self.limit)
        layout = QVBoxLayout(self)
        # the button goes under the limit in a narrow dock
        layout.addWidget(flow_row(self, [limit, self.run_button]))
        layout.addWidget(self.heading)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.total)
        layout.addWidget(self.problems)

    @property
    def limit_value(self) -> int | None:
        return self.limit.value() or None

    def clear(self, text: str = "Run a preflight to see what the model would be sent.") -> None:
        self.table.setRowCount(0)
        self.heading.setText(text)
        self.total.clear()
        self.problems.clear()

    def show_result(self, result: Preflight) -> None:
        who = "the Agents SDK" if result.source == "agents" else "flux's Runner"
        self.heading.setText(f"{len(result.input)} items, as {who} would send them now "
                             "(then the new user message).")
        self.table.setRowCount(len(result.input))
        for row, (item, count) in enumerate(zip(result.input, result.per_item, strict=True)):
            what, _sep, text = describe_item(item, 400).partition(": ")
            cells = [f"{count:,}", what, visible(text, keep_layout=False)]
            for col, value in enumerate(cells):
                cell = QTableWidgetItem(value)
                if col == 0:
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, cell)
        self.total.setText(f"≈ {result.total:,} tokens in all — an o200k_base estimate: "
                           "instructions and tool schemas are not in the store.")
        if result.problems:
            lines = [f"The request would fail ({len(result.problems)}):"]
            lines += [f"• {p.detail}" for p in result.problems]
            self.problems.setText(visible("\n".join(lines), keep_layout=True))
        else:
            self.problems.setText("Nothing in it that the API refuses.")
