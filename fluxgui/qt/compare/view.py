"""The Compare view: two sessions (or branches) side by side, aligned turn by turn.

:class:`CompareView` loads a :class:`~fluxgui.core.diff.Comparison` through the
:class:`~fluxgui.qt.bridge.AsyncBridge` (under its own key, so a new comparison cancels
the one still loading) and shows one row per aligned turn in a :class:`.CompareList`
over a thin :class:`.CompareModel`, painted by :class:`.CompareDelegate`. A turn that
differs gets a tinted background, a ``≠`` marker and a "Turn N differs" label, its
changed messages a stronger tint; an identical turn is one line until opened; a turn
only one side has is shown against an empty cell.

F7 / Shift+F7 (and the buttons) go to the next / previous turn that is not the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.compare_rows import side_text, summary_text
from fluxgui.core.diff import Comparison
from fluxgui.services.compare import compare_sessions
from fluxgui.core.roles import PageTransform, Store

from ..bridge import AsyncBridge
from ..widgets import ElidedLabel
from .delegate import GAP, MARK_W, PAD, CompareDelegate
from .list_view import CompareList
from .model import HIGHLIGHT_ROLE, CompareModel


class CompareView(QWidget):
    """Two sessions side by side, turn by turn. See the module docstring."""

    compared = Signal(object)  # the Comparison, once shown
    failed = Signal(object)  # the exception that stopped the comparison

    def __init__(self, bridge: AsyncBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._key = f"compare:{id(self)}"
        self.comparison: Comparison | None = None
        #: how the sides' session ids are shown (View › Redact: redacted, as their
        #: messages are); ``None``: as they are
        self.show_id: Callable[[str], str] | None = None

        self.summary = QLabel("Nothing compared yet.")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)

        self.prev_action = QAction("◀ Previous difference", self)
        self.prev_action.setShortcut(QKeySequence("Shift+F7"))
        self.next_action = QAction("Next difference ▶", self)
        self.next_action.setShortcut(QKeySequence("F7"))
        for action, tip in ((self.prev_action, "Shift+F7"), (self.next_action, "F7")):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.setToolTip(f"{action.text().strip('◀▶ ')} ({tip})")
            action.setEnabled(False)
            self.addAction(action)
        self.prev_action.triggered.connect(self.previous_difference)
        self.next_action.triggered.connect(self.next_difference)
        self.prev_button = QToolButton()
        self.prev_button.setDefaultAction(self.prev_action)
        self.next_button = QToolButton()
        self.next_button.setDefaultAction(self.next_action)
        self.same_check = QCheckBox("Show identical turns")
        self.same_check.toggled.connect(self._show_same)

        bar = QHBoxLayout()
        bar.addWidget(self.summary, 1)
        bar.addWidget(self.same_check)
        bar.addWidget(self.prev_button)
        bar.addWidget(self.next_button)

        self.header_a = ElidedLabel(text="A", mode=Qt.TextElideMode.ElideMiddle)
        self.header_b = ElidedLabel(text="B", mode=Qt.TextElideMode.ElideMiddle)
        heads = QHBoxLayout()
        heads.setContentsMargins(MARK_W, 0, PAD + 16, 0)
        heads.setSpacing(GAP)
        for label in (self.header_a, self.header_b):
            font = QFont(label.font())
            font.setBold(True)
            label.setFont(font)
            heads.addWidget(label, 1)

        self.model = CompareModel(self)
        self.list = CompareList(self)
        self.list.setModel(self.model)
        self.delegate = CompareDelegate(self.list)
        self.list.setItemDelegate(self.delegate)
        self.list.selectionModel().currentChanged.connect(lambda *_: self._update_actions())

        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addLayout(heads)
        layout.addWidget(self.list, 1)

    def _show_same(self, on: bool) -> None:
        self.list.set_show_same(on)

    # -- loading -------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._bridge.running(self._key)

    def compare(
        self,
        store_a: Store,
        session_a: str,
        store_b: Store | None = None,
        session_b: str | None = None,
        *,
        branch_a: str | None = None,
        branch_b: str | None = None,
        transform: PageTransform | None = None,
    ) -> None:
        """Compare two sessions (``store_b`` defaults to ``store_a``) off the UI thread;
        ``compared`` or ``failed`` follows. A comparison still loading is cancelled.
        ``transform``: both sides' messages go through it first (View › Redact)."""
        self.summary.setText("Comparing…")
        self.header_a.set_full_text(f"A: {self._id(session_a)}" + (f" @ {branch_a}" if branch_a else ""))
        b_id = session_a if session_b is None else session_b
        self.header_b.set_full_text(f"B: {self._id(b_id)}" + (f" @ {branch_b}" if branch_b else ""))
        self._bridge.start(
            self._key,
            compare_sessions(store_a, session_a, store_b, session_b, branch_a=branch_a, branch_b=branch_b,
                             transform=transform),
            self._on_compared,
            self._on_compare_failed,
        )

    def cancel(self) -> None:
        self._bridge.cancel(self._key)

    def _id(self, text: str) -> str:
        return self.show_id(text) if self.show_id is not None else text

    def _on_compared(self, result: Comparison) -> None:
        if self.show_id is not None:  # the sides named as the window shows ids
            result = replace(result, a=replace(result.a, session_id=self._id(result.a.session_id)),
                             b=replace(result.b, session_id=self._id(result.b.session_id)))
        self.show_comparison(result)
        self.compared.emit(result)

    def _on_compare_failed(self, error: Exception) -> None:
        self.summary.setText(f"Could not compare: {self._id(str(error))}")
        self.failed.emit(error)

    # -- showing -------------------------------------------------------------------

    def show_comparison(self, comparison: Comparison) -> None:
        """Show a comparison made elsewhere (no loading)."""
        self.comparison = comparison
        self.list.opened.clear()
        self.model.set_comparison(comparison)
        self.header_a.set_full_text(side_text("A", comparison.a))
        self.header_b.set_full_text(side_text("B", comparison.b))
        self.summary.setText(summary_text(comparison))
        self.list.scrollToTop()
        self._update_actions()

    def highlighted_turns(self) -> list[int]:
        """Numbers of the turns shown highlighted as differing."""
        return [
            self.model.turn(r).number
            for r in range(self.model.rowCount())
            if self.model.index(r, 0).data(HIGHLIGHT_ROLE)
        ]

    def current_turn(self) -> int | None:
        index = self.list.currentIndex()
        return self.model.turn(index.row()).number if index.isValid() else None

    # -- navigation ----------------------------------------------------------------

    def _difference_rows(self) -> list[int]:
        return [r for r in range(self.model.rowCount()) if not self.model.turn(r).same]

    def next_difference(self) -> int | None:
        """Select the next turn that is not the same (after the current row); its number,
        or ``None`` when there is none."""
        current = self.list.currentIndex().row() if self.list.currentIndex().isValid() else -1
        return self._go(next((r for r in self._difference_rows() if r > current), None))

    def previous_difference(self) -> int | None:
        """Select the previous turn that is not the same."""
        index = self.list.currentIndex()
        current = index.row() if index.isValid() else self.model.rowCount()
        return self._go(next((r for r in reversed(self._difference_rows()) if r < current), None))

    def _go(self, row: int | None) -> int | None:
        if row is None:
            return None
        index = self.model.index(row, 0)
        self.list.setCurrentIndex(index)
        self.list.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtTop)
        self._update_actions()
        return self.model.turn(row).number

    def _update_actions(self) -> None:
        rows = self._difference_rows()
        index = self.list.currentIndex()
        current = index.row() if index.isValid() else -1
        self.next_action.setEnabled(any(r > current for r in rows))
        self.prev_action.setEnabled(index.isValid() and any(r < current for r in rows))
