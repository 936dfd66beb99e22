"""Edits from the merged timeline: each goes to the store that holds the message, one
transaction there (:mod:`fluxgui.services.edits`, as the window's own edits), and joins
an undo stack of its own whose commands remember their store: Undo writes the inverse
into that store, Redo the change again. As with :class:`fluxgui.qt.editing.Editor`, the
stack moves only once the write succeeded.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from fluxgui.core.errors import FluxguiError
from fluxgui.core.roles import Store
from fluxgui.services import edits
from fluxgui.services.edits import AnyChange
from fluxgui.services.workspace.timeline import Placed

from ..bridge import AsyncBridge

KEY = "workspace-edit"


class StoreChange(QUndoCommand):
    """A change written to one store of the workspace."""

    def __init__(self, label: str, change: AnyChange) -> None:
        super().__init__(f"{change.label} in {label}")
        self.store_label = label
        self.change = change

    def redo(self) -> None:  # the write happened before the stack moved
        pass

    def undo(self) -> None:
        pass


class WorkspaceEditor(QObject):
    """Writes the merged view's edits to their own stores (see the module).
    ``applied(label)`` after a write to that store; ``failed(error)``."""

    applied = Signal(str)
    failed = Signal(object)

    def __init__(self, bridge: AsyncBridge, store_of: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        #: label → the open store (``None``: no longer in the workspace)
        self._store_of = store_of
        self.stack = QUndoStack(self)
        self._pending: tuple[str, str, StoreChange | None] | None = None

    @property
    def running(self) -> bool:
        return self._pending is not None

    def _store(self, label: str) -> Store:
        store = self._store_of(label)
        if store is None:
            raise FluxguiError(f"{label} is no longer in the workspace")
        return store

    def reason(self, label: str) -> str | None:
        """Why the store labelled ``label`` cannot be edited (``None``: it can)."""
        store = self._store_of(label)
        return "it is no longer in the workspace" if store is None else edits.edit_reason(store)

    def update(self, placed: Placed, session_id: str, spec: dict[str, Any]) -> bool:
        """Replace ``placed``'s message by ``spec`` in its own store."""
        if self._pending is not None:
            return False
        store = self._store(placed.store)
        self._start("do", placed.store, None, edits.update_message(store, session_id, placed.message, spec))
        return True

    def undo(self) -> bool:
        if self._pending is not None or not self.stack.canUndo():
            return False
        command = self.stack.command(self.stack.index() - 1)
        assert isinstance(command, StoreChange)
        store = self._store(command.store_label)
        self._start("undo", command.store_label, command, edits.undo(store, command.change))
        return True

    def redo(self) -> bool:
        if self._pending is not None or not self.stack.canRedo():
            return False
        command = self.stack.command(self.stack.index())
        assert isinstance(command, StoreChange)
        store = self._store(command.store_label)
        self._start("redo", command.store_label, command, edits.redo(store, command.change))
        return True

    def _start(self, what: str, label: str, command: StoreChange | None, coro: Any) -> None:
        self._pending = (what, label, command)
        self._bridge.start(KEY, coro, self._on_written, self._on_failed)

    def _on_written(self, result: AnyChange) -> None:
        if self._pending is None:
            return
        what, label, command = self._pending
        self._pending = None
        if what == "do":
            self.stack.push(StoreChange(label, result))
        elif what == "undo":
            if command is not None and result is not None:
                command.change = result.inverse()
            self.stack.undo()
        else:
            if command is not None and result is not None:
                command.change = result
            self.stack.redo()
        self.applied.emit(label)

    def _on_failed(self, error: Exception) -> None:
        self._pending = None
        self.failed.emit(error)
