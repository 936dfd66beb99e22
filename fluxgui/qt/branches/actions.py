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
    from collections.abc import Callable

    from PySide6.QtWidgets import QWidget

    from fluxgui.core.roles import Store

    from ..bridge import AsyncBridge
    from ..conversation import ConversationPane
    from ..editing import Editor
    from ..sessions import SessionListModel
    from ..shell import BranchBar as Bar, Stores
    from ..widgets import ErrorBar


def install_branch_bar(
    bridge: AsyncBridge,
    editor: Editor,
    pane: ConversationPane,
    stores: Stores,
    sessions: SessionListModel,
    *,
    shown: Callable[[], str | None],
    update_actions: Callable[[], None],
    show_error: Callable[[BaseException], None],
) -> BranchBar:
    """Put a :class:`BranchBar` above the conversation ``pane`` and wire it up: a branch
    switched shows the shown session (``shown()``) of the open store again, a listing
    notes the branches in the session list."""
    bar = BranchBar(bridge, editor, pane, pane)
    pane.header_area.addWidget(bar)

    def switched(branch: str) -> None:
        # The window now reads another branch: show its items from the start.
        sid = shown()
        store = stores.store
        if sid is not None and bar.session_id == sid and store is not None:
            pane.show_session(store, sid, branch)
        update_actions()

    def listed(state: BranchState) -> None:
        # The session list shows that the session has branches, counting the one shown.
        current = state.info(state.current)
        count = current.message_count if current is not None else 0
        sessions.set_branch_note(state.session_id, state.current, count, len(state.rows()))

    bar.switched.connect(switched)
    bar.loaded.connect(listed)
    bar.failed.connect(show_error)
    return bar


def on_branch_change_applied(
    error_bar: ErrorBar, sessions: SessionListModel, bar: Bar, change: BranchChange
) -> None:
    """A branch edit, or its undo/redo, was written: the list counts, the bar and the
    conversation follow (the bar switches the conversation when the branch changed);
    the caller updates the edit actions."""
    error_bar.clear()
    sessions.refresh([change.session_id])
    bar.after_change(change)


def branch_turn(pane: ConversationPane, message: Message | None) -> int | None:
    """The turn a user message opens (what "Branch from This Turn" branches at)."""
    if message is None or not starts_turn(message):
        return None
    return pane.turn_of(message)


def can_branch_here(
    store: Store | None, session_id: str | None, pane: ConversationPane, editor: Editor
) -> bool:
    """Whether Branch from This Turn… can run now (for the action's enabled state): a
    user message of an Advanced store open for editing is selected in ``pane`` (showing
    ``session_id``). (Its turn number may still be being counted: the action says so
    when it runs.)"""
    message = pane.current_message()
    return bool(
        store is not None
        and edits.is_branchable(store)
        and store.can_write
        and not editor.running
        and session_id is not None
        and message is not None
        and starts_turn(message)
    )


def branch_from_turn(
    parent: QWidget,
    store: Store | None,
    sid: str | None,
    pane: ConversationPane,
    editor: Editor,
    bar: Bar,
    show_error: Callable[[BaseException], None],
) -> None:
    """Edit › Branch from This Turn…: a new branch with the current branch's items
    before the selected user message's turn; the session switches to it. Undoable."""
    problem = edits.branch_problem(store, sid)
    if problem is not None:
        show_error(problem)
        return
    if editor.running or store is None or sid is None:
        return
    message = pane.current_message()
    turn = branch_turn(pane, message)
    if turn is None:
        show_error(edits.no_turn_error(message))
        return
    name, ok = QInputDialog.getText(
        parent,
        "Branch from this turn",
        f"A new branch of session {pane.ids.text(sid)} with the items before turn {turn};\n"
        "the session switches to it. Its name (empty: chosen for you):",
        QLineEdit.EchoMode.Normal,
        "",
    )
    if not ok:
        return
    branch = bar.current_branch()
    editor.run(edits.branch_from_turn(store, sid, turn, name, branch=branch))
