"""Edits from the window: one undo stack over the store's reversible changes.

Each edit runs as one database transaction through the bridge (key ``"edit"``) and returns
a :class:`~fluxgui.core.changes.Change` (the commands are :mod:`fluxgui.services.edits`).
Only once it has been written does its command join the :class:`QUndoStack`, whose
commands therefore do no work themselves: Undo writes ``change.inverse()``, Redo the
change again, each also one transaction, and the stack moves only when the write
succeeded. A write that fails (the store changed meanwhile, the server went away) leaves
the stack where it was and the window re-reads what the store really holds.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from fluxgui.services import edits
from fluxgui.services.edits import AnyChange
from fluxgui.core.roles import Store

from .bridge import AsyncBridge

KEY = "edit"


class ChangeCommand(QUndoCommand):
    """A change already written to the store (undo/redo are done by :class:`Editor`)."""

    def __init__(self, change: AnyChange) -> None:
        super().__init__(change.label)
        self.change = change

    def redo(self) -> None:  # the write happened before the stack moved
        pass

    def undo(self) -> None:
        pass


class Editor(QObject):
    """Runs edits on the open store and keeps their undo stack.

    ``applied(change)`` is emitted after a change (or an undo's inverse) is written;
    ``failed(error)`` when a write fails (nothing was written).
    """

    applied = Signal(object)
    failed = Signal(object)
    #: an edit (or undo/redo) started or ended
    runningChanged = Signal(bool)

    def __init__(self, bridge: AsyncBridge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._store: Store | None = None
        self._target: str | None = None
        self.stack = QUndoStack(self)
        self._pending: tuple[str, ChangeCommand | None] | None = None
        #: what the last change applied was: "do", "undo" or "redo"
        self.last_applied = "do"

    @property
    def store(self) -> Store | None:
        return self._store

    @property
    def running(self) -> bool:
        return self._pending is not None

    @property
    def can_edit(self) -> bool:
        return self._store is not None and self._store.can_write

    def set_store(self, store: Store | None) -> None:
        """Edit ``store`` from now on. The undo stack stays when the same target is
        reopened (read-only ↔ writable) and is emptied for another target."""
        target = store.target if store is not None else None
        if target != self._target:
            self.stack.clear()
        self._store, self._target = store, target
        if self._pending is not None:
            self._bridge.cancel(KEY)
            self._set_pending(None)

    def reason_not_editable(self) -> str | None:
        """Why the open store cannot be edited now (``None``: it can)."""
        return edits.edit_reason(self._store)

    # -- running -------------------------------------------------------------------

    def run(self, coro: Coroutine[Any, Any, AnyChange]) -> bool:
        """Write an edit (a coroutine of the store returning its Change); on success it
        joins the undo stack. Returns False (and closes ``coro``) when another edit is
        still being written."""
        if self._pending is not None:
            coro.close()
            return False
        self._set_pending(("do", None))
        self._bridge.start(KEY, coro, self._on_written, self._on_write_failed)
        return True

    def own_store_next(self, *, undo: bool) -> bool:
        """What Undo (or Redo) would write now is a change of a store of its own (a
        consolidation's destination): it needs neither the window's store nor editing on."""
        index = self.stack.index() - (1 if undo else 0)
        command = self.stack.command(index) if 0 <= index < self.stack.count() else None
        return isinstance(command, ChangeCommand) and isinstance(command.change, edits.OwnStoreChange)

    def undo(self) -> bool:
        store = self._store
        if self._pending is not None or not self.stack.canUndo():
            return False
        if store is None and not self.own_store_next(undo=True):
            return False
        command = self.stack.command(self.stack.index() - 1)
        assert isinstance(command, ChangeCommand)
        self._set_pending(("undo", command))
        self._bridge.start(
            KEY, edits.undo(store, command.change), self._on_written, self._on_write_failed
        )
        return True

    def redo(self) -> bool:
        store = self._store
        if self._pending is not None or not self.stack.canRedo():
            return False
        if store is None and not self.own_store_next(undo=False):
            return False
        command = self.stack.command(self.stack.index())
        assert isinstance(command, ChangeCommand)
        self._set_pending(("redo", command))
        self._bridge.start(
            KEY, edits.redo(store, command.change), self._on_written, self._on_write_failed
        )
        return True

    def _set_pending(self, pending: tuple[str, ChangeCommand | None] | None) -> None:
        was = self._pending is not None
        self._pending = pending
        if was != (pending is not None):
            self.runningChanged.emit(pending is not None)

    def _on_written(self, result: AnyChange) -> None:  # a branch edit: same interface
        if self._pending is None:
            return
        what, _command = self._pending
        self._set_pending(None)
        self.last_applied = what
        if what == "do":
            self.stack.push(ChangeCommand(result))
            self.applied.emit(result)
        elif what == "undo":
            # What was written may differ from the inverse asked for (a Conversations
            # store gives re-added items new ids): the redo is the inverse of *that*.
            if _command is not None and result is not None:
                _command.change = result.inverse()
            self.stack.undo()
            self.applied.emit(result)
        else:
            if _command is not None and result is not None:
                _command.change = result
            self.stack.redo()
            self.applied.emit(result)

    def _on_write_failed(self, error: Exception) -> None:
        if self._pending is None:
            return
        self._set_pending(None)
        self.failed.emit(error)
