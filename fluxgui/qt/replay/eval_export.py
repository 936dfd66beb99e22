"""File › Export Eval Dataset…: the open session, the selected sessions or those under a
review filter as an eval dataset (one item per assistant turn), in one of the formats of
:data:`fluxgui.services.evals.EVAL_FORMATS`, written off the UI thread; the dialog then
says how many items were written and which turns were left out, and why."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.errors import show_id
from fluxgui.core.text import plural

from ..screen_fit import fit_to_screen

if TYPE_CHECKING:
    from fluxgui.core.roles import Store

    from ..bridge import AsyncBridge

#: (format, label, file suffix)
FORMATS = (
    ("jsonl", "Generic JSONL (input, expected, metadata)", ".jsonl"),
    ("promptfoo", "promptfoo test cases (YAML; .json for JSON)", ".yaml"),
    ("openai", "OpenAI chat JSONL (evals / fine-tuning)", ".jsonl"),
    ("langfuse", "Langfuse dataset items (JSONL)", ".jsonl"),
    ("langsmith", "LangSmith examples (JSONL)", ".jsonl"),
)
KEY = "eval-export"


def _short(session_id: str, limit: int = 44) -> str:
    """A session id quoted, its middle elided past ``limit`` characters (the tooltip has it whole)."""
    text = show_id(session_id)
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return text[:half] + "…" + text[-half:]


class ReviewSource(Protocol):
    """What the export asks of the window's reviews: the database (``None``: not on),
    the open store's key in it, the filter the list shows."""

    db: Any
    key: str | None
    filter: Any


def result_text(result: Any, fmt: str, path: str) -> str:
    """``Wrote 4 eval items (openai) from 1 session to PATH.`` and the turns left out."""
    text = (f"Wrote {plural(result.items, 'eval item')} ({fmt}) from {plural(result.sessions, 'session')} "
            f"to {path}.")
    left = sum(result.left_out.values())
    if left:
        why = ", ".join(f"{reason}: {n}" for reason, n in sorted(result.left_out.items()))
        text += f" Left out {plural(left, 'turn')} of {result.assistant_turns} ({why})."
    else:
        text += f" No turn left out ({plural(result.assistant_turns, 'assistant turn')})."
    return text


def parse_scores(text: str) -> dict[str, float]:
    """``"accuracy=4, tone=3"`` → ``{"accuracy": 4.0, "tone": 3.0}``; ValueError naming
    the part that is not ``NAME=NUMBER``."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.replace(";", ",").split(",")):
        if not part:
            continue
        name, eq, value = part.partition("=")
        try:
            if not eq or not name.strip():
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"minimum score {part!r}: write NAME=NUMBER") from None
    return out


class EvalExportDialog(QDialog):
    """Which sessions, which format, where; Export runs it (through the bridge) and the
    dialog shows the result line. ``exported(result)`` / ``exportFailed(error)``."""

    exported = Signal(object)
    exportFailed = Signal(object)

    def __init__(
        self, bridge: AsyncBridge, store: Store, *, shown: str | None, selected: list[str],
        reviews: ReviewSource | None, folder: str = "", parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export Eval Dataset")
        self._bridge, self._store, self._reviews = bridge, store, reviews
        self._shown, self._selected = shown, selected
        self.scope_group = QButtonGroup(self)
        self.scope_shown = QRadioButton(f"The open session {_short(shown)}" if shown else "The open session (none)", self)
        self.scope_shown.setToolTip(show_id(shown) if shown else "")
        self.scope_selected = QRadioButton(f"The selected sessions ({len(selected)})", self)
        self.scope_review = QRadioButton("Every session under a review filter:", self)
        self.scope_all = QRadioButton("Every session of the store", self)
        for i, button in enumerate((self.scope_shown, self.scope_selected, self.scope_review, self.scope_all)):
            self.scope_group.addButton(button, i)
        self.scope_shown.setEnabled(shown is not None)
        self.scope_selected.setEnabled(len(selected) > 1)
        review_on = reviews is not None and reviews.db is not None and bool(reviews.key)
        self.scope_review.setEnabled(review_on)
        if not review_on:
            self.scope_review.setToolTip("Turn reviews on (Review menu) to export by review state, tag or score")
        flt = getattr(reviews, "filter", None)
        self.state = QLineEdit(str(getattr(flt, "state", None) or ""), self)
        self.state.setPlaceholderText("state")
        self.state.setToolTip("The review state, e.g. reviewed (empty: any)")
        self.tag = QLineEdit(str(getattr(flt, "tag", None) or ""), self)
        self.tag.setPlaceholderText("tag")
        self.tag.setToolTip("A tag the sessions carry (empty: any)")
        self.min_scores = QLineEdit(self)
        self.min_scores.setPlaceholderText("min. scores NAME=V")
        self.min_scores.setToolTip("Minimum scores, e.g. accuracy=4, tone=3 (empty: none)")
        review_row = QHBoxLayout()
        for w in (self.state, self.tag, self.min_scores):
            w.setEnabled(review_on)
            review_row.addWidget(w)
        (self.scope_selected if len(selected) > 1 else self.scope_shown if shown else self.scope_all).setChecked(True)

        self.format = QComboBox(self)
        for value, label, _suffix in FORMATS:
            self.format.addItem(label, value)
        self.path = QLineEdit(self)
        self._folder = folder
        self.path.setText(str(Path(folder or ".") / "eval-dataset.jsonl") if folder else "")
        self.path.setPlaceholderText("the file to write")
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(browse)
        self.format.currentIndexChanged.connect(lambda _i: self._fit_suffix())

        self.result_label = QLabel(self)
        self.result_label.setObjectName("evalResult")
        self.result_label.setTextFormat(Qt.TextFormat.PlainText)
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.ActionRole)
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.export)
        self.buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("Sessions:", self.scope_shown)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("", self.scope_selected)
        form.addRow("", self.scope_review)
        form.addRow("", review_row)
        form.addRow("", self.scope_all)
        form.addRow("&Format:", self.format)
        file_label = QLabel("&File:", self)
        file_label.setBuddy(self.path)
        form.addRow(file_label, path_row)
        intro = QLabel("One item per assistant turn: the input the model had (calls paired with "
                       "their outputs) and the recorded answer as the reference. Turns whose history "
                       "fails the doctor's checks, or with no answer, are left out and counted.", self)
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.result_label)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(520)
        self.setMinimumHeight(self.sizeHint().height())  # never squeezed (a small screen, 2× scale)
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def _fit_suffix(self) -> None:
        text = self.path.text().strip()
        if not text:
            return
        suffix = FORMATS[self.format.currentIndex()][2]
        p = Path(text)
        if p.suffix.lower() in (".jsonl", ".yaml", ".yml", ".json") and not (
            suffix == ".yaml" and p.suffix.lower() in (".yml", ".json")
        ):
            self.path.setText(str(p.with_suffix(suffix)))

    def _browse(self) -> None:
        path, _f = QFileDialog.getSaveFileName(self, "Export eval dataset to", self.path.text() or self._folder)
        if path:
            self.path.setText(path)

    # -- running ---------------------------------------------------------------------------

    def session_ids(self) -> list[str]:
        """The sessions named (empty: every session, or those the review filter keeps)."""
        scope = self.scope_group.checkedId()
        if scope == 0 and self._shown:
            return [self._shown]
        if scope == 1:
            return list(self._selected)
        return []

    def export(self) -> bool:
        """Write the dataset off the UI thread; the result line follows."""
        from fluxgui.services.evals import EvalFilter, export_eval

        path = self.path.text().strip()
        if not path:
            self._fail(ValueError("name the file to write"))
            return False
        flt = None
        reviews = None
        key = ""
        if self.scope_group.checkedId() == 2 and self._reviews is not None:
            try:
                scores = parse_scores(self.min_scores.text())
            except ValueError as exc:
                self._fail(exc)
                return False
            flt = EvalFilter(state=self.state.text().strip() or None, tag=self.tag.text().strip() or None,
                             min_scores=scores)
            reviews, key = self._reviews.db, self._reviews.key or ""
        elif self._reviews is not None and self._reviews.db is not None and self._reviews.key:
            reviews, key = self._reviews.db, self._reviews.key  # review state as metadata
        fmt = str(self.format.currentData())
        self.export_button.setEnabled(False)
        self.result_label.setText("Exporting…")
        self._bridge.start(
            KEY, export_eval(self._store, Path(path), fmt, self.session_ids(), flt=flt, reviews=reviews, key=key),
            lambda result: self._done(result, fmt, path), self._fail,
        )
        return True

    def _done(self, result: Any, fmt: str, path: str) -> None:
        self.export_button.setEnabled(True)
        self.result_label.setText(result_text(result, fmt, path))
        self.exported.emit(result)

    def _fail(self, error: Exception) -> None:
        self.export_button.setEnabled(True)
        self.result_label.setText(f"Not exported: {error}")
        self.exportFailed.emit(error)

    def done(self, result: int) -> None:
        self._bridge.cancel(KEY)
        super().done(result)
