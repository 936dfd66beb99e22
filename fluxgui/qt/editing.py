"""Edits from the window: one undo stack over the store's reversible changes.

Each edit runs as one database transaction through the bridge (key ``"edit"``) and returns
a :class:`~fluxgui.core.changes.Change` (the commands are :mod:`fluxgui.services.edits`).
Only once it has been written does its command join the :class:`QUndoStack`, whose
commands therefore do no work themselves: Undo writes ``change.inverse()``, Redo the
change again, each also one transaction, and the stack moves only when the write
succeeded. A write that fails (the store changed meanwhile, the server went away) leaves
the stack where it was and the window re-reads what the store really holds.

In a workspace the stack outlives a change of the current store: each command remembers
its store's target, and undoing (or redoing) one of another store of the workspace makes
that store current first (:attr:`Editor.workspace_store`, :attr:`Editor.switch_to`). A
store that is no longer open takes its commands with it: the stack is emptied then.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from fluxgui.core.errors import FluxguiError
from fluxgui.services import edits
from fluxgui.services.edits import AnyChange
from fluxgui.core.roles import Store

from .bridge import AsyncBridge

KEY = "edit"


class ChangeCommand(QUndoCommand):
    """A change already written to the store (undo/redo are done by :class:`Editor`)."""

    def __init__(self, change: AnyChange, target: str | None = None) -> None:
        super().__init__(change.label)
        self.change = change
        #: the target of the store it was written to (``None``: a store of its own)
        self.target = target

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
        #: the open store of the workspace with this target (``None``: none is open)
        self.workspace_store: Callable[[str], Store | None] = lambda _target: None
        #: makes a store of the workspace the current one (set by the window)
        self.switch_to: Callable[[Store], None] | None = None
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
        reopened (read-only ↔ writable) or another store of the workspace becomes current
        while this one stays open, and is emptied else."""
        target = store.target if store is not None else None
        if target != self._target and (store is None or self._target is None
                                       or self.workspace_store(self._target) is None):
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

    def _next(self, *, undo: bool) -> ChangeCommand | None:
        """The command Undo (or Redo) would write now (``None``: none)."""
        index = self.stack.index() - (1 if undo else 0)
        command = self.stack.command(index) if 0 <= index < self.stack.count() else None
        return command if isinstance(command, ChangeCommand) else None

    def own_store_next(self, *, undo: bool) -> bool:
        """What Undo (or Redo) would write now is a change of a store of its own (a
        consolidation's destination): it needs neither the window's store nor editing on."""
        command = self._next(undo=undo)
        return command is not None and isinstance(command.change, edits.OwnStoreChange)

    def elsewhere_next(self, *, undo: bool) -> bool:
        """What Undo (or Redo) would write now is a change of another store of the
        workspace, open and writable: it needs no editing on in the current one."""
        command = self._next(undo=undo)
        if command is None or command.target in (None, self._target):
            return False
        other = self.workspace_store(command.target)
        return other is not None and other.can_write

    def _go_to_store_of(self, command: ChangeCommand) -> bool:
        """Make the store ``command`` was written to the current one when another store of
        the workspace is; ``False`` (the stack emptied, ``failed`` told) when it is no
        longer open."""
        if command.target is None or command.target == self._target:
            return True
        other = self.workspace_store(command.target)
        if other is None or self.switch_to is None:
            what = command.text()
            self.stack.clear()  # (deletes the commands)
            self.failed.emit(FluxguiError(f"{what!r} was written to a store that is no longer open: "
                                          "it cannot be undone or redone here"))
            return False
        self.switch_to(other)
        return self._target == command.target

    def undo(self) -> bool:
        return self._step(undo=True)

    def redo(self) -> bool:
        return self._step(undo=False)

    def _step(self, *, undo: bool) -> bool:
        """Write the inverse of the command before the stack's index (``undo``) or the
        command at it again; the stack moves once it is written."""
        command = self._next(undo=undo)
        if self._pending is not None or command is None or not self._go_to_store_of(command):
            return False
        store = self._store
        if store is None and not isinstance(command.change, edits.OwnStoreChange):
            return False
        what = "undo" if undo else "redo"
        self._set_pending((what, command))
        write = edits.undo if undo else edits.redo
        self._bridge.start(KEY, write(store, command.change), self._on_written, self._on_write_failed)
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
            own = isinstance(result, edits.OwnStoreChange)
            self.stack.push(ChangeCommand(result, None if own else self._target))
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
