"""The window's part in branches: the bar above the conversation, Edit › Branch from
This Turn…, and following a branch edit (or its undo/redo).

Creating a branch and deleting one are edits: they run through the window's
:class:`~fluxgui.qt.editing.Editor`, so they join its one undo stack. After each, the bar
lists the branches again and shows the branch the change left the session on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QInputDialog, QLineEdit

from fluxgui.core.branches import BranchChange
from fluxgui.core.model import Message
from fluxgui.core.turns import starts_turn
from fluxgui.services import edits
from fluxgui.services.branches import BranchState

from .bar import BranchBar

if TYPE_CHECKING:
    from ..conversation import ConversationPane
    from ..shell import Shell


def install_branch_bar(window: Shell) -> BranchBar:
    """Put a :class:`BranchBar` above ``window``'s conversation and wire it up."""
    bar = BranchBar(window.bridge, window.editor, window.conversation, window.conversation)
    window.conversation.header_area.addWidget(bar)

    def switched(branch: str) -> None:
        # The window now reads another branch: show its items from the start.
        sid = window.current_session_id
        store = window.stores.store
        if sid is not None and bar.session_id == sid and store is not None:
            window.conversation.show_session(store, sid, branch)
        window.edits.update_actions()

    def listed(state: BranchState) -> None:
        # The session list shows that the session has branches, counting the one shown.
        current = state.info(state.current)
        count = current.message_count if current is not None else 0
        window.sessions.set_branch_note(state.session_id, state.current, count, len(state.rows()))

    bar.switched.connect(switched)
    bar.loaded.connect(listed)
    bar.failed.connect(window.show_error)
    return bar


def on_branch_change_applied(window: Shell, change: BranchChange) -> None:
    """A branch edit, or its undo/redo, was written: the list counts, the bar and the
    conversation follow (the bar switches the conversation when the branch changed)."""
    window.error_bar.clear()
    window.sessions.refresh([change.session_id])
    window.branch_bar.after_change(change)
    window.edits.update_actions()


def branch_turn(pane: ConversationPane, message: Message | None) -> int | None:
    """The turn a user message opens (what "Branch from This Turn" branches at)."""
    if message is None or not starts_turn(message):
        return None
    return pane.turn_of(message)


def can_branch_here(window: Shell) -> bool:
    """Whether Branch from This Turn… can run now (for the action's enabled state): a
    user message of an Advanced store open for editing is selected. (Its turn number
    may still be being counted: the action says so when it runs.)"""
    store = window.stores.store
    message = window.conversation.current_message()
    return bool(
        store is not None
        and edits.is_branchable(store)
        and store.can_write
        and not window.editor.running
        and window.current_session_id is not None
        and message is not None
        and starts_turn(message)
    )


def branch_from_turn(window: Shell) -> None:
    """Edit › Branch from This Turn…: a new branch with the current branch's items
    before the selected user message's turn; the session switches to it. Undoable."""
    store, sid = window.stores.store, window.current_session_id
    problem = edits.branch_problem(store, sid)
    if problem is not None:
        window.show_error(problem)
        return
    if window.editor.running or store is None or sid is None:
        return
    message = window.conversation.current_message()
    turn = branch_turn(window.conversation, message)
    if turn is None:
        window.show_error(edits.no_turn_error(message))
        return
    name, ok = QInputDialog.getText(
        window,
        "Branch from this turn",
        f"A new branch of session {sid} with the items before turn {turn};\n"
        "the session switches to it. Its name (empty: chosen for you):",
        QLineEdit.EchoMode.Normal,
        "",
    )
    if not ok:
        return
    branch = window.branch_bar.current_branch()
    window.editor.run(edits.branch_from_turn(store, sid, turn, name, branch=branch))
