"""Help › Keyboard Shortcuts (every shortcut, read from the window's actions themselves,
searchable), the View menu's entries for every side panel, and a first-run hint pointing
at Open, the demo store and the shortcuts (issue 37)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QLineEdit,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from ..screen_fit import fit_to_screen

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

#: settings key: the first-run hint was shown
HINT_SHOWN = "ui/first_run_hint"
HINT = ("Open a store with Ctrl+O (or drop a file here), try File › Open Demo Store, "
        "and see Help › Keyboard Shortcuts for every key.")
#: the queue mode's single keys (not actions: read while the mode is on)
QUEUE_KEYS_NOTE = "Review queue mode"


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".…")


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str, str]]:
    """``(menu, action, keys)`` for every action of the window with a shortcut, in menu
    order, then those outside the menus; each once."""
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()

    def walk(menu: QMenu, where: str) -> None:
        for action in menu.actions():
            sub: object = action.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{where} › {_plain(sub.title())}")
                continue
            add(action, where)

    def add(action: QAction, where: str) -> None:
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts() if not k.isEmpty()]
        if keys and id(action) not in seen and action.text():
            seen.add(id(action))
            rows.append((where, _plain(action.text()), ", ".join(keys)))

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, _plain(top.text()))
    for action in window.findChildren(QAction):
        add(action, "Window")
    from ..reviews.queue import KEYS

    rows += [(QUEUE_KEYS_NOTE, what, keys) for keys, what in KEYS]
    return rows


class ShortcutsDialog(QDialog):
    """The table of shortcuts with a search field (filters by action, menu or key)."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard Shortcuts")
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search actions and keys")
        self.search.setClearButtonEnabled(True)
        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["Action", "Keys", "Menu"])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for where, what, keys in shortcut_rows(window):
            row = self.table.rowCount()
            self.table.insertRow(row)
            for col, text in enumerate((what, keys, where)):
                self.table.setItem(row, col, QTableWidgetItem(text))
        self.table.resizeColumnToContents(1)
        self.search.textChanged.connect(self.filter)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        self.resize(620, 560)
        fit_to_screen(self)  # smaller on a small screen (2×): never cut off

    def filter(self, text: str) -> None:
        words = text.lower().split()
        for row in range(self.table.rowCount()):
            line = " ".join(self._cell(row, c).lower() for c in range(3))
            self.table.setRowHidden(row, not all(w in line for w in words))

    def shown_rows(self) -> list[str]:
        return [self._cell(r, 0) for r in range(self.table.rowCount()) if not self.table.isRowHidden(r)]

    def _cell(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""


class HelpExtras:
    """Puts Keyboard Shortcuts in the Help menu, the Review panel in the View menu, and
    shows the first-run hint once."""

    def __init__(self, window: QMainWindow, actions: dict[str, QAction], settings: object) -> None:
        self._window = window
        self.dialog: ShortcutsDialog | None = None
        menus: dict[str, QMenu] = {}
        for top in window.menuBar().actions():
            menu = top.menu()
            if isinstance(menu, QMenu):
                menus[_plain(top.text())] = menu
        keys = QAction("&Keyboard Shortcuts", window)
        keys.setShortcut(QKeySequence("Ctrl+/"))
        keys.setStatusTip("Every shortcut of the window, searchable")
        keys.triggered.connect(lambda _c=False: self.show_shortcuts())
        window.addAction(keys)
        actions["shortcuts"] = keys
        help_menu, view_menu = menus.get("Help"), menus.get("View")
        if help_menu is not None:
            if help_menu.actions():
                help_menu.insertAction(help_menu.actions()[0], keys)
            else:
                help_menu.addAction(keys)
        panel = actions.get("review_panel")
        if view_menu is not None and panel is not None:
            # every side panel can be hidden and brought back from the View menu
            view_menu.addAction(panel)
        if str(settings.value(HINT_SHOWN, "")).lower() != "true":  # type: ignore[attr-defined]
            settings.setValue(HINT_SHOWN, True)  # type: ignore[attr-defined]
            window.statusBar().showMessage(HINT, 30_000)

    def show_shortcuts(self) -> ShortcutsDialog:
        if self.dialog is None:
            self.dialog = ShortcutsDialog(self._window)
        self.dialog.search.clear()
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        return self.dialog
