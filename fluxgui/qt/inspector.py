"""The message inspector: the selected message's fields, metadata and raw item as a tree.

How each value reads in a cell is :mod:`fluxgui.core.jsontree`'s.

Every value is shown as plain text (``QTreeWidgetItem`` text and a read-only
``QPlainTextEdit`` are never rich text, and no tooltip carries data), so a string that
looks like HTML stays characters. A raw item that is a string (the store held malformed
JSON) is shown as that text. The value pane shows hidden characters (controls, NUL,
bidi overrides, zero-width characters, lone surrogates) as visible markers
(:func:`fluxgui.core.visible.visible`); the tree keeps every value as stored.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.display import kind_label, short_time
from fluxgui.core.jsontree import cell_text, full_text, json_type
from fluxgui.core.model import Message
from fluxgui.core.visible import visible

#: a tree stops adding nodes after this many (a huge raw item must not stall the UI)
MAX_NODES = 4_000
#: item data: the index of the node's value in the inspector's value list
VALUE_ROLE = Qt.ItemDataRole.UserRole + 1

#: item data: the JSON type of the node's value ("string", "object (3)", …)
TYPE_ROLE = Qt.ItemDataRole.UserRole + 2

_UNSET = object()


class MessageInspector(QWidget):
    """A JSON tree of one message (fields, ``metadata``, ``raw``) over a plain-text pane
    that shows the selected node's whole value."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._message: Message | None = None
        self._nodes = 0
        self._values: list[Any] = []

        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setContentsMargins(4, 2, 4, 2)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        # the title may be cut in a narrow inspector: it must not widen the window
        self.title.setMinimumWidth(60)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["Key", "Value"])
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.tree.header()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, 150)
        self.tree.currentItemChanged.connect(self._on_current_item)

        self.value_view = QPlainTextEdit(self)
        self.value_view.setReadOnly(True)
        self.value_view.setPlaceholderText("Select a value to see all of it.")
        self.value_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.value_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.tree)
        splitter.addWidget(self.value_view)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(splitter, 1)
        self.clear()

    # -- public API ----------------------------------------------------------------

    @property
    def message(self) -> Message | None:
        return self._message

    def clear(self, text: str = "No message selected") -> None:
        self._message = None
        self._values = []
        self.title.setText(text)
        self.tree.clear()
        self.value_view.clear()

    def show_message(self, message: Message | None, raw: Any = _UNSET) -> None:
        """Show ``message``; ``raw`` is the stored item to show (default ``message.raw``;
        the pane passes the flux row dict for flux stores). ``None`` clears."""
        if message is None:
            self.clear()
            return
        self._message = message
        self._nodes = 0
        self._values = []
        raw_value = message.raw if raw is _UNSET else raw
        self.title.setText(f"{message.short_label} · {message.role} · {kind_label(message.kind)}")
        self.tree.setUpdatesEnabled(False)
        try:
            self.tree.clear()
            self.value_view.clear()
            fields = self._add(None, "message", None, container=True)
            for key, value in (
                ("id", message.id),
                ("role", message.role),
                ("kind", message.kind),
                ("created_at", message.created_at),
                ("time", short_time(message.created_at)),
                ("text", message.text),
            ):
                self._add(fields, key, value)
            self._add(None, "metadata", message.metadata)
            raw_item = self._add(None, "raw", raw_value)
            if isinstance(raw_value, str) and raw_item is not None:
                raw_item.setText(0, "raw (text, not JSON)")
            for item in self._top_items():
                item.setExpanded(True)
            if self._nodes <= 200:
                self.tree.expandAll()
        finally:
            self.tree.setUpdatesEnabled(True)

    def item_texts(self) -> list[tuple[str, str, str]]:
        """Every row of the tree as ``(key path, value, type)``, depth first (for tests
        and for people copying the tree)."""
        out: list[tuple[str, str, str]] = []

        def walk(item: QTreeWidgetItem, path: str) -> None:
            here = f"{path}.{item.text(0)}" if path else item.text(0)
            out.append((here, item.text(1), item.data(0, TYPE_ROLE) or ""))
            for child in (item.child(i) for i in range(item.childCount())):
                if child is not None:
                    walk(child, here)

        for item in self._top_items():
            walk(item, "")
        return out

    def _top_items(self) -> list[QTreeWidgetItem]:
        found = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [item for item in found if item is not None]

    # -- internals -------------------------------------------------------------------

    def _add(
        self, parent: QTreeWidgetItem | None, key: str, value: Any, *, container: bool = False
    ) -> QTreeWidgetItem | None:
        if self._nodes >= MAX_NODES:
            return None
        self._nodes += 1
        item = QTreeWidgetItem()
        item.setText(0, key)
        if container:
            item.setText(1, "")
        else:
            item.setText(1, cell_text(value))
            item.setData(0, TYPE_ROLE, json_type(value))
            item.setData(1, VALUE_ROLE, len(self._values))
            self._values.append(value)
        if parent is None:
            self.tree.addTopLevelItem(item)
        else:
            parent.addChild(item)
        if isinstance(value, dict):
            for k, v in value.items():
                if self._add(item, str(k), v) is None:
                    self._add_more(item, len(value))
                    break
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                if self._add(item, f"[{i}]", v) is None:
                    self._add_more(item, len(value))
                    break
        return item

    def _add_more(self, parent: QTreeWidgetItem, total: int) -> None:
        more = QTreeWidgetItem()
        more.setText(0, "…")
        more.setText(1, f"({total - parent.childCount()} more not shown)")
        parent.addChild(more)

    def _on_current_item(self, current: QTreeWidgetItem | None, _prev: Any) -> None:
        if current is None:
            self.value_view.clear()
            return
        index = current.data(1, VALUE_ROLE)
        if isinstance(index, int) and 0 <= index < len(self._values):
            # Hidden characters as visible markers (NUL, bidi overrides, zero-width…);
            # the tree and the values it keeps stay exact.
            self.value_view.setPlainText(visible(full_text(self._values[index]), pictures=False))
        else:
            self.value_view.clear()
