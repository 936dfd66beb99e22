"""The conversation's context menu and copying: copy a message's text or its stored
item, expand or collapse it, jump between a tool call and its output, and whatever the
window adds (its edit actions, through ``menu_hook``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPersistentModelIndex, QPoint, Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMenu

from fluxgui.core.bodies import body_source, is_markdown
from fluxgui.core.display import raw_json
from fluxgui.core.model import Message
from fluxgui.services.browse import whole_message

from .delegate import plain_index
from .model import MESSAGE_ROLE
from .state import PaneState
from .viewer import TextViewer


class PaneMenu:
    """The conversation pane's context menu, selection and clipboard (a part of the pane)."""

    def __init__(self, pane: PaneState) -> None:
        self.pane = pane

    def copy_text(self) -> bool:
        """Put the current message's text on the clipboard."""
        m = self.pane.current_message()
        if m is None:
            return False
        self._whole_then(m, lambda whole: QGuiApplication.clipboard().setText(whole.text))
        return True

    def copy_raw(self) -> bool:
        """Put the current message's stored item (pretty JSON) on the clipboard."""
        m = self.pane.current_message()
        if m is None:
            return False
        columns = self.pane.paging.columns()
        self._whole_then(m, lambda whole: QGuiApplication.clipboard().setText(raw_json(whole, columns)))
        return True

    def _whole_then(self, m: Message, then: Callable[[Message], None]) -> None:
        """``then(m)``; for a message read only in part, once it is read whole (off the
        event loop): what is copied is the whole item, never its start."""
        if m.partial is None or self.pane._store is None or self.pane._session_id is None:
            then(m)
            return
        self.pane._bridge.start("copy-whole", self._whole(m), then)

    async def _whole(self, m: Message) -> Message:
        """``m`` read whole, as it is shown (redacted while View › Redact is on)."""
        assert self.pane._store is not None and self.pane._session_id is not None
        read = await whole_message(self.pane._store, self.pane._session_id, m, branch=self.pane.branch)
        shown = self.pane.shown
        if shown is not None:
            read = (await asyncio.to_thread(shown, [read]))[0]
        return read

    def selected_messages(self) -> list[Message]:
        """The selected messages in stored order (the current one when none is selected)."""
        rows = sorted({i.row() for i in self.pane.view.selectionModel().selectedIndexes()})
        picked = [m for m in (self.pane.model.message(r) for r in rows) if m is not None]
        current = self.pane.current_message()
        if not picked and current is not None:
            picked = [current]
        return picked

    def build_context_menu(self, index: QModelIndex) -> QMenu:
        """The context menu for the message at ``index`` (not shown); ``menu_hook``, when
        set, adds its own entries (the window's edit actions)."""
        menu = QMenu(self.pane.view)
        m = index.data(MESSAGE_ROLE) if index.isValid() else None
        has = isinstance(m, Message)
        copy_text = menu.addAction("Copy text", self.copy_text)
        copy_text.setShortcut(QKeySequence(QKeySequence.StandardKey.Copy))
        copy_text.setEnabled(has)
        copy_raw = menu.addAction("Copy raw JSON", self.copy_raw)
        copy_raw.setShortcut(QKeySequence("Ctrl+Shift+C"))
        copy_raw.setEnabled(has)
        if has and isinstance(m, Message):
            delegate = self.pane.delegate
            keep = QPersistentModelIndex(index)
            if delegate.is_collapsible(m):
                menu.addSeparator()
            if m.kind == "reasoning":
                opened = m.id in delegate.expanded
                menu.addAction(
                    "Collapse reasoning" if opened else "Expand reasoning",
                    lambda: self.pane.toggle(plain_index(keep)),
                )
            if delegate.long_size(m) and (m.kind != "reasoning" or m.id in delegate.expanded):
                full = m.id in delegate.full
                menu.addAction(
                    "Show less" if full else "Show all",
                    lambda: self.pane.set_full(plain_index(keep), not full),
                )
            if delegate.long_size(m):
                menu.addAction("Open in Viewer", lambda: self.open_viewer(plain_index(keep)))
            if is_markdown(m):
                menu.addSeparator()
                plain = menu.addAction("Show as Plain Text")
                plain.setCheckable(True)
                plain.setChecked(delegate.shown_plain(m))
                plain.setStatusTip("This message's Markdown exactly as written")
                plain.toggled.connect(lambda on: self.set_plain(plain_index(keep), on))
            partner = self.pane.pairs.partner(m)
            if partner is not None:
                menu.addSeparator()
                label = "Go to tool output" if m.kind == "tool_call" else "Go to tool call"
                partner_id = partner.id
                menu.addAction(label, lambda: self.pane.select_message(partner_id))
        if self.pane.menu_hook is not None:
            self.pane.menu_hook(menu, m if has else None)
        return menu

    def open_viewer(self, index: QModelIndex) -> TextViewer | None:
        """The whole text of the long message at ``index`` in a viewer of its own (which
        lays out only what it shows)."""
        m = index.data(MESSAGE_ROLE) if index.isValid() else None
        if not isinstance(m, Message):
            return None
        whole = m.partial is None or self.pane._store is None or self.pane._session_id is None
        viewer = TextViewer(f"{m.label} · {m.role}", body_source(m) if whole else None, self.pane.view,
                            size=m.partial)
        viewer.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        viewer.show()
        self.pane.viewer = viewer
        if not whole:  # only its start is loaded: read the whole item (off the event loop)
            assert self.pane._store is not None and self.pane._session_id is not None
            key = f"viewer-{id(viewer)}"
            viewer.destroyed.connect(lambda *_: self.pane._bridge.cancel(key))
            self.pane._bridge.start(
                key, self._whole(m),
                lambda read: viewer.set_text(body_source(read)), lambda exc: viewer.failed(str(exc)),
            )
        return viewer

    def on_double_click(self, index: QModelIndex) -> None:
        m = index.data(MESSAGE_ROLE)
        if isinstance(m, Message) and (self.pane.delegate.is_huge(m) or m.partial is not None):
            self.open_viewer(index)

    def set_plain(self, index: QModelIndex, on: bool) -> None:
        """Show the Markdown message at ``index`` as typed (``on``) or as Markdown."""
        m = index.data(MESSAGE_ROLE) if index.isValid() else None
        if isinstance(m, Message):
            self.pane.delegate.set_plain(m, on)
            self.pane.delegate.sizeHintChanged.emit(plain_index(index))

    def set_all_plain(self, on: bool) -> None:
        """Every Markdown message as typed (``on``) or as Markdown (the View menu's switch)."""
        if on == self.pane.delegate.all_plain and not self.pane.delegate.plain:
            return
        self.pane.delegate.set_all_plain(on)
        self.pane.view.relayout()
        self.pane.view.viewport().update()

    def context_menu(self, pos: QPoint) -> None:
        index = self.pane.view.indexAt(pos)
        if index.isValid():
            selection = self.pane.view.selectionModel()
            if selection.isSelected(index):  # keep a multiple selection for its menu
                selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
            else:
                self.pane.view.setCurrentIndex(index)
        menu = self.build_context_menu(index)
        menu.exec(self.pane.view.viewport().mapToGlobal(pos))
        menu.deleteLater()

