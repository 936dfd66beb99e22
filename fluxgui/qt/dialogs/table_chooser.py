"""Choosing one of the Agents SDK stores a database holds (several table pairs).

The Agents SDK names its two tables by constructor options, so one file can hold several
stores side by side. Opening such a file without naming the tables fails with
:class:`~fluxgui.core.errors.SeveralStores`, which lists the pairs found; the window asks
which one here (the command line takes ``--sessions-table`` and ``--messages-table``).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from fluxgui.core.text import bounded_plural
from fluxgui.core.visible import visible

from ..screen_fit import fit_to_screen
from .buttons import StandardButton, ok_cancel


class TableChooser(QDialog):
    """A list of (sessions table, messages table) pairs; OK opens the one chosen."""

    def __init__(
        self,
        pairs: list[tuple[str, str]],
        parent: QWidget | None = None,
        *,
        where: str = "",
        sessions: dict[tuple[str, str], int] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Choose the tables")
        self.setObjectName("tableChooser")
        intro = QLabel(
            f"This database holds {len(pairs)} Agents SDK session stores, each a sessions "
            "table and a messages table. Which one do you want to open?"
            + (f"\nDatabase: {where}" if where else ""),
            self,
        )
        intro.setTextFormat(Qt.TextFormat.PlainText)  # table and file names are data
        intro.setWordWrap(True)
        self.list = QListWidget(self)
        counts = sessions or {}
        for pair in pairs:
            names = "  +  ".join(visible(name, keep_layout=False) for name in pair)
            # the count first: a long table name would push it out of sight
            count = f"{bounded_plural(counts[pair], 'session')}  ·  " if pair in counts else ""
            item = QListWidgetItem(count + names)
            item.setData(Qt.ItemDataRole.UserRole, pair)
            item.setToolTip(f"sessions table: {pair[0]}\nmessages table: {pair[1]}")
            self.list.addItem(item)
        self.list.setCurrentRow(0)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        buttons = ok_cancel(self, StandardButton.Open)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.list, 1)
        layout.addWidget(buttons)
        self.resize(520, 300)
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def choose(self, row: int) -> None:
        self.list.setCurrentRow(row)

    def chosen(self) -> tuple[str, str] | None:
        """The (sessions table, messages table) selected."""
        item = self.list.currentItem()
        if item is None:
            return None
        sessions, messages = item.data(Qt.ItemDataRole.UserRole)
        return str(sessions), str(messages)
