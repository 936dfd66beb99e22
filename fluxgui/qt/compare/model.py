"""The Compare view's rows: one per aligned turn of a comparison."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from fluxgui.core.compare_rows import (
    MARKERS,
    Block,
    blocks,
    turn_label,
    turn_tooltip,
    usage_text,
)
from fluxgui.core.diff import Comparison, TurnDiff
from fluxgui.core.display import esc

_Index = QModelIndex | QPersistentModelIndex

TURN_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2
MARKER_ROLE = Qt.ItemDataRole.UserRole + 3
USAGE_ROLE = Qt.ItemDataRole.UserRole + 4
HIGHLIGHT_ROLE = Qt.ItemDataRole.UserRole + 5

DIFF_TINT = QColor("#f59e0b")  # amber: a turn (or message) that differs
ADDED_TINT = QColor("#16a34a")  # only in B
REMOVED_TINT = QColor("#dc2626")  # only in A


class CompareModel(QAbstractListModel):
    """One row per aligned turn of a :class:`Comparison`.

    ``DisplayRole`` is the row's label ("Turn 2 differs"), ``TURN_ROLE`` the
    :class:`~fluxgui.core.diff.TurnDiff`, ``STATUS_ROLE`` its status, ``MARKER_ROLE``
    ``= ≠ − +``, ``HIGHLIGHT_ROLE`` whether the turn differs on both sides,
    ``BackgroundRole`` the tint of a differing turn, ``USAGE_ROLE`` its token usage text.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._comparison: Comparison | None = None
        self._turns: list[TurnDiff] = []
        self._blocks: dict[int, tuple[list[Block], list[Block]]] = {}
        self._tint = QColor(DIFF_TINT)
        self._tint.setAlpha(46)

    @property
    def comparison(self) -> Comparison | None:
        return self._comparison

    def set_comparison(self, comparison: Comparison | None) -> None:
        self.beginResetModel()
        self._comparison = comparison
        self._turns = list(comparison.turns) if comparison is not None else []
        self._blocks.clear()
        self.endResetModel()

    def turn(self, row: int) -> TurnDiff:
        return self._turns[row]

    def row_of(self, number: int) -> int:
        """The row of turn ``number`` (-1 when there is none)."""
        return next((i for i, t in enumerate(self._turns) if t.number == number), -1)

    def blocks(self, row: int) -> tuple[list[Block], list[Block]]:
        """The message blocks of A and of B for one row (built once, on first paint)."""
        found = self._blocks.get(row)
        if found is None:
            t = self._turns[row]
            found = (blocks(t, "A"), blocks(t, "B"))
            self._blocks[row] = found
        return found

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._turns)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._turns):
            return None
        t = self._turns[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return turn_label(t)
        if role == TURN_ROLE:
            return t
        if role == STATUS_ROLE:
            return t.status
        if role == MARKER_ROLE:
            return MARKERS[t.status]
        if role == HIGHLIGHT_ROLE:
            return t.status == "differs"
        if role == USAGE_ROLE:
            return usage_text(t)
        if role == Qt.ItemDataRole.BackgroundRole:
            return QColor(self._tint) if t.status == "differs" else None
        if role == Qt.ItemDataRole.ToolTipRole:
            # Qt guesses whether a tooltip is rich text: make it HTML we wrote, data escaped.
            return "<p style='white-space:pre-wrap'>" + esc(turn_tooltip(t)) + "</p>"
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{MARKERS[t.status]} {turn_label(t)}"
        return None
