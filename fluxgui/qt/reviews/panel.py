"""The review panel (a dock beside the conversation): who reviews where, the state
buttons, the scorecard, tags, the session note and the notes of the selected message.

It only shows and asks: every change is a signal the
:class:`~fluxgui.qt.reviews.controller.ReviewController` carries out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QButtonGroup,
    QCompleter,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.display import esc, short_time
from fluxgui.qt.flow import FlowLayout, flow_row
from fluxgui.qt.widgets import ElidedLabel
from fluxgui.services.reviews import STATES, Criterion, Note, Review, Rubric

#: the chosen review state and score buttons, drawn in the highlight colour
CHOSEN = ("QToolButton:checked { background-color: palette(highlight); color: palette(highlighted-text);"
          " border: 1px solid palette(highlight); border-radius: 3px; padding: 2px 4px; }")
#: the widest a tag's button text gets (logical pixels; the whole tag is in its tooltip)
TAG_WIDTH = 140
STATE_LABELS = {"unreviewed": "Unreviewed", "in-review": "In review", "reviewed": "Reviewed", "flagged": "Flagged"}


def notes_html(notes: list[Note]) -> str:
    if not notes:
        return "<i>no notes</i>"
    return "".join(
        f"<p><b>{esc(n.reviewer)}</b> <span style='color:gray'>{esc(short_time(n.at))}</span><br>"
        f"<span style='white-space:pre-wrap'>{esc(n.text)}</span></p>" for n in notes
    )


def _choice_text(value: Any) -> str:
    return "yes" if value is True else "no" if value is False else str(value)


class ReviewPanel(QWidget):
    """The review of the session shown."""

    stateRequested = Signal(str)
    scoreRequested = Signal(str, object)
    tagAdded = Signal(str)
    tagRemoved = Signal(str)
    noteAdded = Signal(str)
    messageNoteAdded = Signal(str, str)
    copyIdRequested = Signal()
    #: take over the claim another reviewer holds on the session shown
    takeOverRequested = Signal()
    settingsEdited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewPanel")
        # the chosen state and score stand out (not only a slightly greyer button)
        self.setStyleSheet(CHOSEN)
        self.review: Review | None = None
        #: how the title shows a session id (View › Redact: redacted; set by the window)
        self.shown_id: Callable[[str], str] = str
        self._titled: str | None = None  # the session the title names
        self.rubric: Rubric | None = None
        self.message_id: str | None = None
        self.current = 0  # the criterion the keys 1–9 score
        self._score_groups: dict[str, QButtonGroup] = {}
        self._score_labels: list[QLabel] = []
        self._build()

    # -- building ----------------------------------------------------------------------

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        # The panel may be narrow (a small screen, 2×): its rows of buttons wrap and its
        # sentences wrap, so it scrolls only up and down (a sideways bar would be a row
        # that does not reflow: tests/qt/test_side_panels_reflow.py).
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        body = QWidget(scroll)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        scroll.setWidget(body)
        outer.addWidget(scroll)
        self._body = body

        where = QFormLayout()
        where.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.reviewer = QLineEdit(body)
        self.reviewer.setToolTip("Your name on every change (settings; default: the OS user name)")
        self.database = QLineEdit(body)
        self.database.setToolTip("The review database: empty for the file in fluxgui's data folder, "
                                 "or a URL a team shares (postgresql://…)")
        self.label = QLineEdit(body)
        self.label.setToolTip("File this store's reviews under a name (a copied file named alike)")
        for field in (self.reviewer, self.database, self.label):
            field.editingFinished.connect(self.settingsEdited)
        where.addRow("Reviewer", self.reviewer)
        where.addRow("Reviews in", self.database)
        where.addRow("Store label", self.label)
        layout.addLayout(where)

        head = QHBoxLayout()
        # a long session id loses its start (ids differ at their end), whole in the tooltip
        self.title = ElidedLabel(body, text="No session", mode=Qt.TextElideMode.ElideLeft)
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.copy_id = QToolButton(body)
        self.copy_id.setText("Copy id")
        self.copy_id.setToolTip("Copy the session id (Ctrl+Shift+C in the session list)")
        self.copy_id.clicked.connect(self.copyIdRequested)
        head.addWidget(self.title, 1)
        head.addWidget(self.copy_id)
        layout.addLayout(head)
        claim_row = QHBoxLayout()
        self.claim = QLabel("", body)
        self.claim.setObjectName("reviewClaim")
        self.claim.setWordWrap(True)
        self.take_over = QToolButton(body)
        self.take_over.setText("Take over")
        self.take_over.setToolTip("Another reviewer holds this session: take their claim, so that "
                                  "your changes are not refused")
        self.take_over.clicked.connect(self.takeOverRequested)
        self.take_over.hide()
        claim_row.addWidget(self.claim, 1)
        claim_row.addWidget(self.take_over)
        layout.addLayout(claim_row)

        self.state_group = QButtonGroup(self)
        self.state_buttons: dict[str, QToolButton] = {}
        for state in STATES:
            button = QToolButton(body)
            button.setText(STATE_LABELS[state])
            button.setCheckable(True)
            button.clicked.connect(lambda _c=False, s=state: self.stateRequested.emit(s))
            self.state_group.addButton(button)
            self.state_buttons[state] = button
        self.state_group.setExclusive(True)
        layout.addWidget(flow_row(body, list(self.state_buttons.values()), spacing=2))

        self.scorecard = QGroupBox("Scorecard", body)
        self.scorecard.setToolTip("Keys 1–9 pick a score of the marked criterion, Tab moves to the next")
        self.score_form = QFormLayout(self.scorecard)
        self.score_form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        keys = QLabel("1–9 pick, Tab next criterion", self.scorecard)
        keys.setWordWrap(True)
        keys.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.score_form.addRow(keys)
        layout.addWidget(self.scorecard)

        tags = QGroupBox("Tags", body)
        tags_layout = QVBoxLayout(tags)
        tag_buttons = flow_row(tags, [])
        tag_layout = tag_buttons.layout()
        assert isinstance(tag_layout, FlowLayout)
        self.tag_row: FlowLayout = tag_layout
        tags_layout.addWidget(tag_buttons)
        self.tag_edit = QLineEdit(tags)
        self.tag_edit.setPlaceholderText("add a tag (T)")
        self.tags_model = QStringListModel(self)
        completer = QCompleter(self.tags_model, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.tag_edit.setCompleter(completer)
        self.tag_edit.returnPressed.connect(self._add_tag)
        tags_layout.addWidget(self.tag_edit)
        layout.addWidget(tags)

        notes = QGroupBox("Session notes", body)
        notes_layout = QVBoxLayout(notes)
        self.notes_view = QLabel(notes)
        self.notes_view.setWordWrap(True)
        self.notes_view.setTextFormat(Qt.TextFormat.RichText)
        self.note_edit = QPlainTextEdit(notes)
        self.note_edit.setPlaceholderText("a note on the whole session (N)")
        self.note_edit.setMaximumHeight(70)
        add = QPushButton("Add note", notes)
        add.clicked.connect(self.save_note)
        notes_layout.addWidget(self.notes_view)
        notes_layout.addWidget(self.note_edit)
        notes_layout.addWidget(add)
        layout.addWidget(notes)

        self.message_box = QGroupBox("Notes on the selected message", body)
        mlayout = QVBoxLayout(self.message_box)
        self.message_notes_view = QLabel(self.message_box)
        self.message_notes_view.setWordWrap(True)
        self.message_notes_view.setTextFormat(Qt.TextFormat.RichText)
        self.message_note_edit = QLineEdit(self.message_box)
        self.message_note_edit.setPlaceholderText("a note on this message")
        self.message_note_edit.returnPressed.connect(self._add_message_note)
        mlayout.addWidget(self.message_notes_view)
        mlayout.addWidget(self.message_note_edit)
        layout.addWidget(self.message_box)
        layout.addStretch(1)
        self.setEnabled(False)

    def set_rubric(self, rubric: Rubric) -> None:
        if rubric == self.rubric:
            return
        self.rubric = rubric
        while self.score_form.rowCount() > 1:  # (the first row: the keys' hint)
            self.score_form.removeRow(1)
        self._score_groups.clear()
        self._score_labels = []
        for c in rubric.criteria:
            row = flow_row(self.scorecard, [])
            h = row.layout()
            assert h is not None
            group = QButtonGroup(row)
            group.setExclusive(True)
            for n, value in enumerate(c.choices(), 1):
                b = QToolButton(row)
                b.setText(f"{n} {_choice_text(value)}" if c.kind != "numeric" else _choice_text(value))
                b.setCheckable(True)
                b.setProperty("choice", value)
                b.clicked.connect(lambda _c=False, crit=c, v=value: self.scoreRequested.emit(crit.name, v))
                group.addButton(b)
                h.addWidget(b)
            label = QLabel(c.label or c.name, self.scorecard)
            self._score_labels.append(label)
            self._score_groups[c.name] = group
            self.score_form.addRow(label)
            self.score_form.addRow(row)
        self.current = 0
        self._mark_current()

    # -- showing -----------------------------------------------------------------------

    def retitle(self) -> None:
        """The title: the session's id as the window shows ids."""
        self.title.set_full_text(self.shown_id(self._titled) if self._titled else "No session")

    def show_review(self, session_id: str | None, review: Review | None, me: str = "") -> None:
        if review is not None and (self.review is None or self.review.session_id != review.session_id):
            self.current = 0  # another session: its scorecard starts at the first criterion
            self._mark_current()
            self.tag_edit.clear()  # a tag half-typed for the previous session is not this one's
        self.review = review
        self.setEnabled(session_id is not None and review is not None)
        self._titled = session_id
        self.retitle()
        self.take_over.setVisible(review is not None and review.claimed and review.claimed_by != me)
        if review is None:
            return
        for state, button in self.state_buttons.items():
            button.setChecked(state == review.state)
        if review.claimed:
            who = "you" if review.claimed_by == me else review.claimed_by
            self.claim.setText(f"Claimed by {who} until {short_time(review.claimed_until)}")
        elif review.reviewer:
            self.claim.setText(f"Last changed by {review.reviewer}, {short_time(review.updated_at)}")
        else:
            self.claim.setText("Not reviewed yet")
        for name, group in self._score_groups.items():
            value = review.scores.get(name)
            group.setExclusive(False)  # (an exclusive group keeps its checked button)
            for b in group.buttons():
                b.setChecked(name in review.scores and b.property("choice") == value)
            group.setExclusive(True)
        while self.tag_row.count():
            item = self.tag_row.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        for n, tag in enumerate(review.tags):
            b = QToolButton(self)
            # a long tag is elided in its middle: the button stays narrower than the panel
            b.setText(self.fontMetrics().elidedText(f"#{tag}", Qt.TextElideMode.ElideMiddle, TAG_WIDTH) + " ×")
            b.setToolTip(f"Remove the tag {tag}")
            b.clicked.connect(lambda _c=False, t=tag: self.tagRemoved.emit(t))
            self.tag_row.insertWidget(n, b)
        self.notes_view.setText(notes_html(review.session_notes))
        self.show_message(self.message_id)

    def show_history(self, session_id: str, changes: list[Any]) -> None:
        """Every change of the review, the latest first, in the tooltip of who changed it."""
        if self.review is None or self.review.session_id != session_id:
            return
        lines = [f"{short_time(c.at)}  {c.text()}" for c in reversed(changes[-20:])]
        more = f"\n… {len(changes) - 20} earlier changes" if len(changes) > 20 else ""
        self.claim.setToolTip("<p style='white-space:pre'>" + esc("\n".join(lines) + more) + "</p>" if lines else "")

    def show_message(self, message_id: str | None) -> None:
        """The notes on the selected message (``None``: none selected)."""
        self.message_id = message_id
        self.message_box.setEnabled(message_id is not None)
        self.message_box.setTitle(f"Notes on message {message_id}" if message_id else "Notes on the selected message")
        notes = self.review.message_notes(message_id) if self.review and message_id else []
        self.message_notes_view.setText(notes_html(notes) if message_id else "<i>select a message</i>")

    def set_tags(self, tags: list[str]) -> None:
        self.tags_model.setStringList(tags)

    # -- keys --------------------------------------------------------------------------

    def criterion(self) -> Criterion | None:
        if not self.rubric or not self.rubric.criteria:
            return None
        return self.rubric.criteria[self.current % len(self.rubric.criteria)]

    def pick(self, n: int) -> bool:
        """Key ``n`` (1–9): score the current criterion with its n-th choice and move on."""
        c = self.criterion()
        if c is None or not 1 <= n <= len(c.choices()):
            return False
        self.scoreRequested.emit(c.name, c.choices()[n - 1])
        self.next_criterion()
        return True

    def next_criterion(self, step: int = 1) -> None:
        if self.rubric and self.rubric.criteria:
            self.current = (self.current + step) % len(self.rubric.criteria)
        self._mark_current()

    def _mark_current(self) -> None:
        for n, label in enumerate(self._score_labels):
            font = label.font()
            font.setBold(n == self.current)
            label.setFont(font)
            c = self.rubric.criteria[n] if self.rubric else None
            text = (c.label or c.name) if c else ""
            label.setText(("▶ " if n == self.current else "") + text)

    def save_note(self) -> None:
        text = self.note_edit.toPlainText().strip()
        if text:
            self.note_edit.clear()
            self.noteAdded.emit(text)

    def _add_tag(self) -> None:
        tag = self.tag_edit.text().strip()
        if tag:
            self.tag_edit.clear()
            self.tagAdded.emit(tag)
            # A completion picked with Enter is written into the field after this
            # (QCompleter's activated): clear that too, or one Enter on the next
            # session would tag it again.
            QTimer.singleShot(0, self, lambda: self._clear_tag_if(tag))

    def _clear_tag_if(self, tag: str) -> None:
        if self.tag_edit.text().strip() == tag:
            self.tag_edit.clear()

    def _add_message_note(self) -> None:
        text = self.message_note_edit.text().strip()
        if text and self.message_id is not None:
            self.message_note_edit.clear()
            self.messageNoteAdded.emit(self.message_id, text)
