"""The Doctor panel's Ledger tab: each turn's items, tool calls, tokens (recorded or
estimated, marked ~), estimated cost and time, a bar scaled to the most expensive turn,
and a gauge of the largest context against the model's window."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fluxgui.services.doctor.ledger import Ledger
from fluxgui.services.doctor.text import cost_text, seconds_text, tokens_text

BAR_ROLE = Qt.ItemDataRole.UserRole + 2
COLUMNS = ("Turn", "Items", "Tool calls", "Requests", "In", "Out", "Cost", "Time", "")


class BarDelegate(QStyledItemDelegate):
    """Paints a cell's ``BAR_ROLE`` fraction as a bar in the palette's highlight."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        super().paint(painter, option, index)
        fraction = index.data(BAR_ROLE)
        if not isinstance(fraction, float):
            return
        r = option.rect.adjusted(4, 5, -4, -5)
        painter.save()
        colour = QColor(option.palette.color(QPalette.ColorRole.Highlight))
        back = QColor(colour)
        back.setAlpha(40)
        painter.fillRect(r, back)
        painter.fillRect(QRect(r.left(), r.top(), int(r.width() * fraction), r.height()), colour)
        painter.restore()


class LedgerView(QWidget):
    """The per-turn table with bars, and the context-window gauge."""

    runRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("doctorLedger")
        self.model = QLineEdit(self)
        self.model.setPlaceholderText("model for prices (when the store does not say)")
        self.run_button = QPushButton("Compute Ledger", self)
        self.run_button.clicked.connect(lambda _c=False: self.runRequested.emit())
        self.model.returnPressed.connect(self.runRequested.emit)
        self.heading = QLabel("Compute the ledger to see each turn's tokens, cost and time.", self)
        self.heading.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("doctorLedgerTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setItemDelegateForColumn(len(COLUMNS) - 1, BarDelegate(self.table))
        header = self.table.horizontalHeader()
        for col in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.gauge = QProgressBar(self)
        self.gauge.setObjectName("doctorContextGauge")
        self.gauge.setRange(0, 1000)
        self.gauge.setTextVisible(True)
        self.note = QLabel("", self)
        # The dock keeps the width it is given: the table scrolls, the gauge's text elides.
        self.table.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.gauge.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.note.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(self.model, 1)
        top.addWidget(self.run_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.heading)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.gauge)
        layout.addWidget(self.note)

    def clear(self) -> None:
        self.table.setRowCount(0)
        self.gauge.setValue(0)
        self.gauge.setFormat("")
        self.note.clear()

    def show_result(self, result: Ledger) -> None:
        model = result.model or "no model known: no prices"
        self.heading.setText(f"{len(result.turns)} turns — {model}")
        self.table.setRowCount(len(result.turns))
        for row, t in enumerate(result.turns):
            mark = "" if t.recorded else "~"
            calls = ", ".join(t.tool_calls) if t.tool_calls else "—"
            cells = [str(t.number), str(t.items), calls, str(t.requests),
                     mark + tokens_text(t.input_tokens), mark + tokens_text(t.output_tokens),
                     cost_text(t.cost), seconds_text(t.seconds), ""]
            for col, value in enumerate(cells):
                cell = QTableWidgetItem(value)
                if col not in (2, len(COLUMNS) - 1):
                    cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if col == len(COLUMNS) - 1:
                    cell.setData(BAR_ROLE, float(result.scale(t)))
                self.table.setItem(row, col, cell)
        share = result.largest_context / result.context_window if result.context_window else 0.0
        self.gauge.setValue(int(min(share, 1.0) * 1000))
        window = f"{result.context_window:,}" + ("" if result.window_known else " (assumed)")
        self.gauge.setFormat(f"largest context ≈ {result.largest_context:,} of {window} tokens ({share:.0%})")
        note = ("~ estimated with o200k_base; other numbers are the store's record. "
                "Costs from genai-prices' offline table.")
        if result.price_note:
            note += f" Cost —: {result.price_note}."
        self.note.setText(note)
