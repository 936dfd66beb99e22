"""Edit commands from the window: clear, delete, pop, edit, insert, fork; the
read-only/editing switch's look; which edit actions are enabled; what the window shows
after an edit, its undo or its redo.

The commands themselves — which store call each runs, whether it may run, what to show
afterwards — are :mod:`fluxgui.services.edits`; this controller asks the user (a
confirmation, a name, the message dialog) and runs them through the window's
:class:`~fluxgui.qt.editing.Editor`, whose one undo stack takes every change.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMenu, QMessageBox

from fluxgui.core.roles import Store
from fluxgui.core.branches import BranchChange
from fluxgui.core.changes import Change
from fluxgui.core.display import size_label
from fluxgui.core.errors import ReadOnlyError, UnreadableItems
from fluxgui.services import edits
from fluxgui.services.edits import AnyChange, EditState

from ..branches import can_branch_here, is_branchable, on_branch_change_applied
from ..dialogs import confirm
from ..dialogs.message_edit import MessageEditDialog

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMainWindow, QTableView, QToolButton

    from ..conversation import ConversationPane
    from ..editing import Editor
    from ..sessions import SessionListModel
    from ..shell import BranchBar, Chatting, StatusArea, Stores
    from ..widgets import ErrorBar

#: the mode switch's style: editing (bold), writable without edits, read-only
_MODE_STYLES = {
    "editing": "QToolButton { color: #8a4b00; font-weight: bold; }",
    "writable": "QToolButton { color: #8a4b00; }",
    "read-only": "",
}


@dataclass(frozen=True)
class EditHost:
    """What the edit commands use of the window: the editor, the open store, the session
    list (model and view), the conversation pane, the status bar's mode switch, the
    error bar, the actions by name, the branch bar and the chat dock (``branch_bar()``,
    ``chat()``: made after the edits), the shown session (``shown()``), where errors are
    shown and how a session is shown again."""

    editor: Editor
    stores: Stores
    sessions: SessionListModel
    session_view: QTableView
    conversation: ConversationPane
    status: StatusArea
    mode_label: QToolButton
    error_bar: ErrorBar
    actions: dict[str, QAction]
    branch_bar: Callable[[], BranchBar]
    chat: Callable[[], Chatting]
    shown: Callable[[], str | None]
    show_error: Callable[[BaseException], None]
    show_again: Callable[[str], None]


class EditController:
    """Runs the edit commands of a :class:`~.main.MainWindow` and follows their results:
    ``window`` is the dialogs' parent (and its status bar), ``host`` what it uses of the
    window."""

    def __init__(self, window: QMainWindow, host: EditHost) -> None:
        self._window = window
        self._host = host
        #: select this message once the session has been read again
        self._select_after: int | None = None
        #: an edit removed messages of this session (it may be gone: no error then)
        self._maybe_gone: str | None = None
        #: the edit being written makes a session to show once written (a fork)
        self._open_result = False
        #: the fork being written (store, session, message, name, branch): asked again
        #: without the encrypted items that do not open, when the user agrees
        self._fork: tuple[Store, str, int, str, str | None] | None = None
        # the Undo/Redo texts name sessions: shown again as ids are (View › Redact)
        host.conversation.ids.changed.connect(self.update_actions)

    # -- state -----------------------------------------------------------------------

    def edit_reason(self) -> str | None:
        """Why the open store's messages cannot be edited in place now (``None``: they
        can): read-only, or a store whose ``check_editable`` says no (an Advanced store,
        a JSON session folder, Redis)."""
        return self._host.editor.reason_not_editable()

    def take_selection(self) -> int | None:
        """A session has been shown: the message to select in it now, if an edit asked."""
        select, self._select_after = self._select_after, None
        self._maybe_gone = None
        return select

    def take_gone(self) -> str | None:
        """A session could not be shown: the one an edit may have deleted, if any."""
        gone, self._maybe_gone = self._maybe_gone, None
        return gone

    def update_mode(self) -> None:
        """The store opened or reopened: the chat panel, the mode switch and the editing
        toggle follow."""
        self._host.chat().store_changed()
        store = self._host.stores.store
        writable = store is not None and store.can_write
        # A writable store whose messages cannot be edited in place (a JSON folder, Redis,
        # an AdvancedSQLiteSession store, …): say so instead of pretending.
        reason = self.edit_reason() if writable else None
        text, tip = edits.mode_description(writable, reason)
        mode = "read-only" if not writable else "editing" if reason is None else "writable"
        style = _MODE_STYLES[mode]
        self._host.status.set_mode(text, tip, style, enabled=store is not None, checked=writable)
        toggle = self._host.actions.get("editing")
        if toggle is not None:
            toggle.setChecked(writable)
            toggle.setEnabled(store is not None)
            toggle.setToolTip(self._host.mode_label.toolTip())
            toggle.setStatusTip(tip)
        self.update_actions()

    def update_actions(self) -> None:
        """Enable the edit actions for the store, session and message shown now."""
        actions = self._host.actions
        editor = self._host.editor
        # The undo stack signals while the window is being destroyed.
        if not actions or not shiboken6.isValid(editor.stack):
            return
        writable = editor.can_edit and not editor.running
        state = EditState(
            writable=writable,
            # Message edits need a store that can be edited in place, not just a writable one.
            editable=writable and self.edit_reason() is None,
            has_session=self._host.shown() is not None,
            has_message=self._host.conversation.current_message() is not None,
            can_undo=editor.stack.canUndo(),
            can_redo=editor.stack.canRedo(),
            can_branch=can_branch_here(
                self._host.stores.store, self._host.shown(), self._host.conversation, editor
            ),
            can_clear=writable and edits.blocked_reason(self._host.stores.store, need="clear") is None,
            can_fork=writable and edits.blocked_reason(self._host.stores.store, need="fork") is None,
            own_undo=not editor.running and (editor.own_store_next(undo=True) or editor.elsewhere_next(undo=True)),
            own_redo=not editor.running and (editor.own_store_next(undo=False) or editor.elsewhere_next(undo=False)),
        )
        for name, on in edits.enabled_actions(state).items():
            if name in actions:
                actions[name].setEnabled(on)
        for name, label, text in (
            ("undo", "&Undo", editor.stack.undoText()),
            ("redo", "&Redo", editor.stack.redoText()),
        ):
            if name in actions:
                actions[name].setText(f"{label} {self._host.conversation.ids.say(text)}" if text else label)

    def _editable_store(self, *, need: edits.Need = "edit") -> Store | None:
        """The store when an edit that needs ``need`` may be written now, else explain
        why (error bar): whole-session edits and forks go by the store's declared
        capabilities (a JSON folder clears and forks; an Advanced store forks)."""
        store = self._host.stores.store
        reason = edits.blocked_reason(store, need=need)
        if reason is not None or store is None:
            self._host.show_error(ReadOnlyError(reason or edits.NO_STORE))
            return None
        if self._host.editor.running:
            return None
        return store

    def editable_store(self) -> Store | None:
        """The store when whole sessions may be written now (an import), else ``None``
        after saying why."""
        return self._editable_store()

    def _session_count(self, session_id: str) -> int:
        row = self._host.sessions.row_of(session_id)
        info = self._host.sessions.session_at(row) if row is not None else None
        if info is not None:
            return info.messages
        if session_id == self._host.shown():
            return self._host.conversation.loaded_count
        return 0

    # -- commands ----------------------------------------------------------------------

    def undo(self) -> None:
        editor = self._host.editor
        if editor.can_edit or editor.own_store_next(undo=True) or editor.elsewhere_next(undo=True):
            editor.undo()

    def redo(self) -> None:
        editor = self._host.editor
        if editor.can_edit or editor.own_store_next(undo=False) or editor.elsewhere_next(undo=False):
            editor.redo()

    def clear_session(self, session_id: str | None = None) -> None:
        """Remove every message of a session (after a confirmation naming it)."""
        self._whole_session(session_id, confirm.confirm_clear, edits.clear_session)

    def delete_session(self, session_id: str | None = None) -> None:
        """Delete a session and its messages (after a confirmation naming it)."""
        self._whole_session(session_id, confirm.confirm_delete_session, edits.delete_session)

    def _whole_session(
        self, session_id: str | None, ask: Callable[[Any, str, int], bool],
        edit: Callable[[Store, str], Coroutine[Any, Any, Change]],
    ) -> None:
        window = self._window
        sid = session_id or self._host.shown()
        store = self._editable_store(need="clear")
        if store is None or sid is None:
            return
        if self._confirm_conversation(store, sid) if store.traits.remote else (
            ask(window, sid, self._session_count(sid))
        ):
            self._host.editor.run(edit(store, sid))

    def _confirm_conversation(self, store: Store, sid: str) -> bool:
        """Clearing an OpenAI conversation deletes it: ask, naming it and its server."""
        return confirm.confirm_delete_conversation(
            self._window, sid, self._session_count(sid), store.target
        )

    def delete_messages(self) -> None:
        """Delete the selected messages (after a confirmation when there are several).
        (The Delete key in the session list deletes the session instead.)"""
        window = self._window
        store = self._editable_store()
        sid = self._host.shown()
        picked = self._host.conversation.menus.selected_messages()
        if store is None or sid is None or not picked:
            return
        if len(picked) > 1 and not confirm.confirm_delete_messages(window, len(picked)):
            return
        self._host.editor.run(edits.delete_messages(store, sid, [m.id for m in picked]))

    def pop_message(self) -> None:
        """Remove the session's last message (as the Agents SDK's ``pop_item``)."""
        store = self._editable_store()
        sid = self._host.shown()
        if store is not None and sid is not None:
            self._host.editor.run(edits.pop_message(store, sid))

    def edit_message(self) -> None:
        """Edit the current message in a dialog; saved as one undoable change."""
        window = self._window
        store = self._editable_store()
        sid = self._host.shown()
        message = self._host.conversation.current_message()
        if store is None or sid is None or message is None:
            return
        if self._host.conversation.shown is not None:  # (View › Redact) it shows placeholders
            QMessageBox.information(window, "Edit message", "The conversation is shown redacted: "
                                    "turn off View › Redact to edit a message as stored.")
            return
        if message.partial is not None:  # only its start is loaded: saving it would cut it
            QMessageBox.information(window, "Edit message", f"Message {message.id} is "
                                    f"{size_label(message.partial)}: too big to edit here.")
            return
        dialog = MessageEditDialog(
            store.traits.columns,
            edits.spec_check(store, message),
            message,
            f"Edit message {message.id}",
            window,
        )
        if dialog.exec() and dialog.result_spec is not None:
            self._select_after = message.id
            self._host.editor.run(edits.update_message(store, sid, message, dialog.result_spec))

    def insert_message(self, where: str = "after") -> None:
        """Insert a new message before or after the current one (at the end when no
        message is selected)."""
        window = self._window
        store = self._editable_store()
        sid = self._host.shown()
        if store is None or sid is None:
            return
        anchor = self._host.conversation.current_message()
        title = f"Insert a message {where} message {anchor.id}" if anchor else "Add a message"
        dialog = MessageEditDialog(
            store.traits.columns, edits.spec_check(store), None, title, window
        )
        if dialog.exec() and dialog.result_spec is not None:
            self._host.editor.run(edits.insert_message(
                store, sid, dialog.result_spec, anchor=anchor.id if anchor else None,
                where="before" if where == "before" else "after",
            ))

    def fork_here(self) -> None:
        """Fork: a new session with the conversation up to and including the selected
        message (the origin is not changed); it opens once made. Undoable."""
        window = self._window
        store = self._editable_store(need="fork")
        sid = self._host.shown()
        message = self._host.conversation.current_message()
        if store is None or sid is None or message is None:
            return
        name, ok = QInputDialog.getText(
            window,
            "Fork from here",
            f"A new session with the messages up to and including #{message.id}.\n"
            "Its id (empty: chosen for you):",
            QLineEdit.EchoMode.Normal,
            "",
        )
        if not ok:
            return
        self._fork = (store, sid, message.id, name, self._host.conversation.branch)
        self._start_fork(drop_unreadable=False)

    def _start_fork(self, *, drop_unreadable: bool) -> None:
        assert self._fork is not None
        store, sid, at, name, branch = self._fork
        self._open_result = True
        self._host.editor.run(edits.fork_session(
            store, sid, at, name, branch=branch, drop_unreadable=drop_unreadable
        ))

    def _offer_drop(self, error: UnreadableItems) -> None:
        """A fork refused for encrypted items that do not open, when others do: ask
        whether to fork without them (the box names how many)."""
        if self._fork is not None and confirm.confirm_drop_unreadable(
            self._window, error, "fork"
        ):
            self._start_fork(drop_unreadable=True)
        else:
            self._fork = None
            self._host.show_error(error)

    # -- outcomes ----------------------------------------------------------------------

    def on_applied(self, change: AnyChange) -> None:
        """A change, its undo or its redo was written: show what it changed."""
        open_result, self._open_result = self._open_result, False
        self._fork = None
        if isinstance(change, BranchChange) and not open_result:
            on_branch_change_applied(self._host.error_bar, self._host.sessions, self._host.branch_bar(), change)
            self.update_actions()
            return
        self._host.error_bar.clear()
        self._say_applied(change)
        plan = edits.after_edit(
            change, self._host.shown(), open_result=open_result, select=self._select_after
        )
        self._select_after = plan.select
        self._host.sessions.refresh(list(plan.refresh))
        if plan.open is not None:
            self._host.show_again(plan.open)
        elif plan.reload:
            if plan.maybe_gone:
                self._maybe_gone = change.session_id
            self._host.conversation.paging.reload(keep_position=True)  # keeps the scroll position
        self.update_actions()

    def _say_applied(self, change: AnyChange) -> None:
        """The status bar says what was written (a deleted message leaves no other trace
        on screen) and how to take it back."""
        label = change.label if isinstance(change, (Change, edits.OwnStoreChange)) else ""
        if not label:
            return
        what = self._host.editor.last_applied
        if what == "undo":
            text = f"Undone: {label} (Ctrl+Shift+Z redoes it)"
        elif what == "redo":
            text = f"Redone: {label}"
        else:
            text = f"{label} — done (Ctrl+Z undoes it)"
        self._window.statusBar().showMessage(text, 10000)

    def on_failed(self, error: Exception) -> None:
        """A write failed (nothing was written): say so and show what the store holds now
        (the session may be gone: that is no second error)."""
        self._select_after = None
        self._open_result = False
        if isinstance(error, UnreadableItems) and error.droppable and self._fork is not None:
            # (asked once this write's callbacks are over, not inside them)
            QTimer.singleShot(0, lambda: self._offer_drop(error))
            return
        self._fork = None
        self._host.show_error(error)
        current = self._host.shown()
        self._host.sessions.reload()
        if current is not None:
            self._maybe_gone = current
            self._host.show_again(current)

    # -- menus -------------------------------------------------------------------------

    def conversation_menu(self, menu: QMenu, _message: object) -> None:
        """The edit actions at the end of the conversation's context menu."""
        actions = self._host.actions
        menu.addSeparator()
        for name in ("edit_message", "insert_before", "insert_after", "delete_messages"):
            menu.addAction(actions[name])
        menu.addSeparator()
        menu.addAction(actions["fork"])
        if is_branchable(self._host.stores.store):
            menu.addAction(actions["branch_from_turn"])

    def session_menu(self, session_id: str) -> QMenu:
        """The session list's context menu for ``session_id`` (not shown)."""
        menu = QMenu(self._host.session_view)
        editor = self._host.editor
        editable = editor.can_edit and not editor.running and self.edit_reason() is None
        clear = menu.addAction("Clear Session…", lambda: self.clear_session(session_id))
        delete = menu.addAction("Delete Session…", lambda: self.delete_session(session_id))
        for action in (clear, delete):
            action.setEnabled(editable)
        if not editable:
            menu.addSeparator()
            menu.addAction(self._host.actions["editing"])
        return menu
