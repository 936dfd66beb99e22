"""The review filter bar above the session list: state, tag, reviewer, has notes,
flagged. It combines with the search box (both apply) and the list still pages."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QCompleter, QGridLayout, QLineEdit, QWidget

from fluxgui.services.reviews import STATES, ReviewFilter

ANY = "Any state"


class ReviewFilterBar(QWidget):
    """Emits ``filterChanged(ReviewFilter)`` when any field changes."""

    filterChanged = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewFilterBar")
        self.state = QComboBox(self)
        self.state.addItems([ANY, *STATES])
        self.state.setToolTip("Only sessions in this review state")
        self.tag = QLineEdit(self)
        self.tag.setPlaceholderText("tag")
        self.tag.setToolTip("Only sessions carrying this tag")
        self.tags_model = QStringListModel(self)
        completer = QCompleter(self.tags_model, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.tag.setCompleter(completer)
        self.reviewer = QLineEdit(self)
        self.reviewer.setPlaceholderText("reviewer")
        self.reviewer.setToolTip("Only sessions this reviewer reviewed or holds")
        self.has_notes = QCheckBox("notes", self)
        self.has_notes.setToolTip("Only sessions with notes")
        self.flagged = QCheckBox("flagged", self)
        self.flagged.setToolTip("Only flagged sessions (need follow-up)")
        # Three short rows: one row of five fields made the list (and so the window) at
        # least 300 px wide; a narrow list must not push the conversation off a small
        # screen (2×), nor keep it narrow.
        self.state.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.state.setMinimumContentsLength(6)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setHorizontalSpacing(4)
        layout.setVerticalSpacing(2)
        layout.addWidget(self.state, 0, 0)
        layout.addWidget(self.tag, 0, 1, 1, 2)
        layout.addWidget(self.reviewer, 1, 0, 1, 3)
        layout.addWidget(self.has_notes, 2, 0)
        layout.addWidget(self.flagged, 2, 1, 1, 2)
        for edit in (self.tag, self.reviewer):
            edit.setMinimumWidth(40)
        layout.setColumnStretch(0, 1)
        layout.setColumnStretch(1, 0)
        self.state.currentIndexChanged.connect(lambda _i: self._emit())
        self.tag.editingFinished.connect(self._emit)
        self.reviewer.editingFinished.connect(self._emit)
        self.has_notes.toggled.connect(lambda _on: self._emit())
        self.flagged.toggled.connect(lambda _on: self._emit())
        self._last = ReviewFilter()

    def value(self) -> ReviewFilter:
        state = self.state.currentText()
        return ReviewFilter(
            state=None if state == ANY else state,
            tag=self.tag.text().strip() or None,
            reviewer=self.reviewer.text().strip() or None,
            has_notes=self.has_notes.isChecked(),
            flagged=self.flagged.isChecked(),
        )

    def set_value(self, flt: ReviewFilter) -> None:
        """Show ``flt`` (and apply it)."""
        blockers = [w.blockSignals(True) for w in (self.state, self.has_notes, self.flagged)]
        self.state.setCurrentText(flt.state or ANY)
        self.tag.setText(flt.tag or "")
        self.reviewer.setText(flt.reviewer or "")
        self.has_notes.setChecked(flt.has_notes)
        self.flagged.setChecked(flt.flagged)
        for w, was in zip((self.state, self.has_notes, self.flagged), blockers, strict=True):
            w.blockSignals(was)
        self._emit()

    def set_tags(self, tags: list[str]) -> None:
        self.tags_model.setStringList(tags)

    def _emit(self) -> None:
        value = self.value()
        if value != self._last:
            self._last = value
            self.filterChanged.emit(value)
