"""Branches of an ``AdvancedSQLiteSession`` session in the window.

:class:`BranchBar` sits above the conversation while a session of a store with
branches (``capabilities.branches``: ``AdvancedSQLiteSession`` stores) is shown (hidden
for every other store): a list of the session's branches as the library lists them (the current one
selected and bold), the current branch's token usage, and "Delete Branch…".

Choosing a branch switches the *window* to it (the bar remembers the branch chosen for
each session: UI state, nothing is written, and the store is never switched — every read
names its branch) and the window shows that branch's items. The session list keeps
counting ``main``'s items (as every list of an Advanced store does); the conversation's
count is the branch's.

Creating a branch from a user turn (Edit › Branch from This Turn…) and deleting one
are edits: they run through the window's :class:`~fluxgui.qt.editing.Editor`, so they
join its one undo stack (the store's ``apply_change`` writes a
:class:`~fluxgui.core.branches.BranchChange` back). After each, and after its undo
or redo, :meth:`BranchBar.after_change` lists the branches again and shows the branch
the change left the session on: the new branch after a create (or its redo, or the undo
of a delete), ``main`` when the current branch went away.

Every read goes through the bridge under the bar's own key. The bar also fills the
conversation pane's ``turn_tokens`` (turn number → total tokens of the current branch),
which the message headers show next to a user message's turn number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.branches import MAIN, BranchChange, BranchInfo, TurnUsage, UsageTotals
from fluxgui.core.ports import SessionStore as Store
from fluxgui.core.turns import starts_turn

from .bridge import AsyncBridge

if TYPE_CHECKING:
    from .conversation import ConversationPane
    from .editing import Editor

BRANCH_ROLE = Qt.ItemDataRole.UserRole + 1


# --------------------------------------------------------------------------- text


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def branch_text(info: BranchInfo) -> str:
    """A branch's line in the list: ``main — 12 messages, 3 turns``."""
    return (
        f"{info.branch_id} — {plural(info.message_count, 'message')}, "
        f"{plural(info.user_turns, 'turn')}"
    )


def usage_text(usage: UsageTotals | None) -> str:
    """``tokens: 1,234 in / 567 out / 1,801 total · 4 requests`` (empty when unknown)."""
    if usage is None:
        return ""
    return (
        f"tokens: {usage.input_tokens:,} in / {usage.output_tokens:,} out / "
        f"{usage.total_tokens:,} total · {plural(usage.requests, 'request')}"
    )


def short_tokens(n: int) -> str:
    """``950 tokens``, ``1.2k tokens``, ``3.4M tokens`` (a message header's note)."""
    if n < 1000:
        return f"{n:,} tokens"
    if n < 1_000_000:
        value, unit = n / 1000, "k"
    else:
        value, unit = n / 1_000_000, "M"
    number = f"{value:.1f}".rstrip("0").rstrip(".") if value < 100 else f"{value:.0f}"
    return f"{number}{unit} tokens"


def turn_tokens(usage: list[TurnUsage]) -> dict[int, int]:
    """Turn number → total tokens, for the turns whose total is known."""
    return {
        int(u.user_turn_number): int(u.total_tokens)
        for u in usage
        if u.total_tokens is not None and u.user_turn_number is not None
    }


def is_branchable(store: Store | None) -> bool:
    return store is not None and store.capabilities.branches


def confirm_delete_branch(parent: QWidget, session_id: str, info: BranchInfo) -> bool:
    """Ask before deleting a branch (tests replace this)."""
    answer = QMessageBox.question(
        parent,
        "Delete branch",
        f"Delete branch “{info.branch_id}” of session “{session_id}” "
        f"({plural(info.message_count, 'message')}, {plural(info.user_turns, 'turn')})?\n\n"
        "Items no other branch holds are deleted with it; its usage rows too. "
        "The session goes back to main. Edit › Undo brings it back.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
        QMessageBox.StandardButton.Cancel,
    )
    return answer == QMessageBox.StandardButton.Yes


# --------------------------------------------------------------------------- the bar


@dataclass(frozen=True)
class BranchState:
    """What the bar shows for one session."""

    session_id: str
    current: str
    branches: tuple[BranchInfo, ...]
    usage: UsageTotals | None
    session_usage: UsageTotals | None
    turn_usage: tuple[TurnUsage, ...]

    def info(self, branch_id: str) -> BranchInfo | None:
        return next((b for b in self.branches if b.branch_id == branch_id), None)


class BranchBar(QWidget):
    """The open session's branches, the current branch's usage, and Delete Branch….

    Signals: ``loaded(BranchState)`` after each listing; ``switched(branch_id)`` when
    the session's current branch changed (chosen here, or by an edit or its undo): the
    window then shows that branch's items; ``failed(error)`` when a read or switch
    failed.
    """

    loaded = Signal(object)
    switched = Signal(str)
    failed = Signal(object)

    def __init__(
        self,
        bridge: AsyncBridge,
        editor: Editor,
        pane: ConversationPane | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("branchBar")
        self._bridge = bridge
        self._editor = editor
        self._pane = pane
        self._key = f"branches:{id(self):x}"
        self._store: Store | None = None
        self._session_id: str | None = None
        self._generation = 0
        #: the branch chosen for each session of the store shown (UI state: the store
        #: keeps none, every read names its branch); kept while the same store is
        #: reopened (read-only ↔ editing)
        self._chosen: dict[str, str] = {}
        self._chosen_target: str | None = None
        #: the branch an edit just made (found even before it has rows)
        self._made: str | None = None
        #: the last listing shown (None: none yet for this session)
        self.state: BranchState | None = None

        self.caption = QLabel("Branch:", self)
        self.combo = QComboBox(self)
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(24)
        self.combo.setMaximumWidth(520)
        self.combo.view().setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.combo.setToolTip(
            "The session's branches (AdvancedSQLiteSession); choosing one shows its items.\n"
            "The session list counts main's items."
        )
        self.usage_label = QLabel(self)
        self.usage_label.setTextFormat(Qt.TextFormat.PlainText)
        self.usage_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.usage_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.delete_button = QPushButton("Delete Branch…", self)
        self.delete_button.setToolTip("Delete the current branch (not main); undoable")
        self.delete_button.clicked.connect(self.delete_current)

        # Two lines: the list and the button, then the usage (one line is too narrow
        # beside the inspector for a long branch name and the usage both).
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        row.addWidget(self.caption)
        row.addWidget(self.combo, 1)
        row.addStretch(0)
        row.addWidget(self.delete_button, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 0, 10, 6)
        layout.setSpacing(3)
        layout.addLayout(row)
        layout.addWidget(self.usage_label)

        self.combo.currentIndexChanged.connect(self._on_index_changed)
        editor.runningChanged.connect(lambda _running: self._update_buttons())
        self.hide()

    # -- public API ------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        return self._session_id

    @property
    def busy(self) -> bool:
        return self._bridge.running(self._key)

    def current_branch(self) -> str | None:
        return self.state.current if self.state is not None else None

    def branch_for(self, store: Store | None, session_id: str) -> str | None:
        """The branch to show ``session_id`` of ``store`` on (``None``: a store without
        branches), as chosen here before (``main`` at first)."""
        if not is_branchable(store):
            return None
        assert store is not None
        if store.target != self._chosen_target:
            return MAIN
        return self._chosen.get(session_id, MAIN)

    def branch_ids(self) -> list[str]:
        return [str(self.combo.itemData(i, BRANCH_ROLE)) for i in range(self.combo.count())]

    def set_session(self, store: Store | None, session_id: str | None) -> None:
        """Show the branches of ``session_id`` (hidden unless ``store`` is an Advanced
        store and a session is shown). The same session again only lists again."""
        if not is_branchable(store) or session_id is None:
            self._generation += 1
            self._bridge.cancel(self._key)
            self._store, self._session_id, self.state = None, None, None
            self._set_turn_tokens({})
            self.hide()
            return
        assert store is not None
        if store.target != self._chosen_target:
            self._chosen, self._chosen_target = {}, store.target
        if store is not self._store or session_id != self._session_id:
            self._store, self._session_id, self.state = store, session_id, None
            self._fill(None)
        self.show()
        self.refresh()

    def refresh(self, switch_to: str | None = None) -> None:
        """List the branches again (switching to ``switch_to`` first, when given)."""
        store, sid = self._store, self._session_id
        if store is None or sid is None:
            return
        self._generation += 1
        want = switch_to or self._chosen.get(sid, MAIN)
        self._bridge.start(
            self._key, self._load(self._generation, store, sid, want), self._on_loaded,
            self._on_load_failed,
        )

    def choose(self, branch_id: str) -> None:
        """Switch the session to ``branch_id`` (as picking it in the list does)."""
        if self.state is not None and branch_id == self.state.current:
            return
        self.refresh(switch_to=branch_id)

    def after_change(self, change: BranchChange) -> None:
        """A branch change (or its undo/redo) was written: show where it left the
        session. One that put a branch's rows (back) shows that branch."""
        if self._store is None or change.session_id != self._session_id:
            return
        made = change.branch_id if change.added.get("structure") is not None else None
        if made is not None:
            self._made = made  # (a branch from turn 1 has no rows to find it by)
        elif change.removed.get("structure") is not None and change.branch_id == self._made:
            self._made = None
        self.refresh(switch_to=made)

    def delete_current(self) -> None:
        """Delete the current branch after a confirmation (an undoable edit)."""
        store, sid, state = self._store, self._session_id, self.state
        if store is None or sid is None or state is None or state.current == MAIN:
            return
        if not store.can_write or self._editor.running:
            return
        info = state.info(state.current) or BranchInfo(state.current, 0, 0, None, True)
        if confirm_delete_branch(self, sid, info):
            # The window goes back to main once it is gone (after_change lists again).
            self._editor.run(store.delete_branch(sid, state.current))

    # -- loading ---------------------------------------------------------------------

    async def _load(
        self, generation: int, store: Store, sid: str, want: str
    ) -> tuple[int, BranchState]:
        # A branch gone meanwhile (deleted, the session cleared) leaves main; a branch
        # made from turn 1 has no rows yet but is where its maker is.
        current = want
        if want != MAIN and not await store.branch_exists(sid, want) and want != self._made:
            current = MAIN
        branches = await store.list_branches(sid, current=current)
        return generation, BranchState(
            sid,
            current,
            tuple(branches),
            await store.branch_usage(sid, current),
            await store.session_usage(sid),
            tuple(await store.turn_usage(sid, current)),
        )

    def _on_loaded(self, result: tuple[int, BranchState]) -> None:
        generation, state = result
        if generation != self._generation or state.session_id != self._session_id:
            return
        previous = self.state
        self.state = state
        self._chosen[state.session_id] = state.current
        self._fill(state)
        self._set_turn_tokens(turn_tokens(list(state.turn_usage)))
        self.loaded.emit(state)
        if previous is not None and previous.current != state.current:
            self.switched.emit(state.current)

    def _on_load_failed(self, error: Exception) -> None:
        if self.state is not None:
            self._fill(self.state)  # put the list back on the current branch
        self.failed.emit(error)

    # -- showing ---------------------------------------------------------------------

    def _fill(self, state: BranchState | None) -> None:
        combo = self.combo
        combo.blockSignals(True)
        try:
            combo.clear()
            if state is not None:
                rows = list(state.branches)
                if not any(b.branch_id == state.current for b in rows):
                    # A branch made from turn 1 has no rows yet: the library does not
                    # list it, but the session is on it.
                    rows.append(BranchInfo(state.current, 0, 0, None, True))
                bold = QFont(combo.font())
                bold.setBold(True)
                for info in rows:
                    current = info.branch_id == state.current
                    text = branch_text(info) + ("  (current)" if current else "")
                    combo.addItem(text)
                    row = combo.count() - 1
                    combo.setItemData(row, info.branch_id, BRANCH_ROLE)
                    combo.setItemData(row, text, Qt.ItemDataRole.ToolTipRole)
                    if current:
                        combo.setItemData(row, bold, Qt.ItemDataRole.FontRole)
                        combo.setCurrentIndex(row)
            # The list opens as wide as its longest line (the box itself stays narrow).
            view = combo.view()
            view.setMinimumWidth(min(720, view.sizeHintForColumn(0) + 32) if combo.count() else 0)
        finally:
            combo.blockSignals(False)
        text = usage_text(state.usage) if state is not None else ""
        self.usage_label.setText(text)
        self.usage_label.setVisible(bool(text))  # no usage recorded: no empty line
        tip = ""
        if state is not None and state.session_usage is not None:
            tip = f"{state.current}: {text or 'no usage recorded'}\nAll branches: " + usage_text(
                state.session_usage
            )
        self.usage_label.setToolTip(tip)
        self.caption.setText(f"Branches ({len(state.branches)}):" if state else "Branch:")
        self._update_buttons()

    def _update_buttons(self) -> None:
        state = self.state
        store = self._store
        on_branch = state is not None and state.current != MAIN
        self.delete_button.setEnabled(
            bool(on_branch and store is not None and store.can_write and not self._editor.running)
        )
        if not on_branch:
            self.delete_button.setToolTip("main cannot be deleted")
        elif store is not None and not store.can_write:
            self.delete_button.setToolTip("Turn on editing (Ctrl+Shift+E) to delete a branch")
        else:
            self.delete_button.setToolTip(f"Delete branch “{state.current}”; undoable")

    def _set_turn_tokens(self, tokens: dict[int, int]) -> None:
        pane = self._pane
        if pane is None or pane.turn_tokens == tokens:
            return
        pane.turn_tokens = tokens
        pane.view.viewport().update()

    def _on_index_changed(self, row: int) -> None:
        if row < 0:
            return
        branch = self.combo.itemData(row, BRANCH_ROLE)
        if isinstance(branch, str):
            self.choose(branch)


def branch_turn(pane: ConversationPane, message: Any) -> int | None:
    """The turn a user message opens (what "Branch from This Turn" branches at)."""
    if message is None or not starts_turn(message):
        return None
    return pane.turn_of(message)


__all__ = [
    "BranchBar",
    "BranchState",
    "branch_text",
    "branch_from_turn",
    "branch_turn",
    "can_branch_here",
    "install_branch_bar",
    "on_branch_change_applied",
    "confirm_delete_branch",
    "is_branchable",
    "short_tokens",
    "turn_tokens",
    "usage_text",
]


# --------------------------------------------------------------------------- the window's part


def install_branch_bar(window: Any) -> BranchBar:
    """Put a :class:`BranchBar` above ``window``'s conversation and wire it up."""
    bar = BranchBar(window.bridge, window.editor, window.conversation, window.conversation)
    window.conversation.header_area.addWidget(bar)

    def switched(branch: str) -> None:
        # The window now reads another branch: show its items from the start.
        sid = window.current_session_id
        if sid is not None and bar.session_id == sid and window.store is not None:
            window.conversation.show_session(window.store, sid, branch)
        window._update_edit_actions()  # noqa: SLF001 - the window's own refresh

    bar.switched.connect(switched)
    bar.failed.connect(window.show_error)
    return bar


def on_branch_change_applied(window: Any, change: BranchChange) -> None:
    """A branch edit, or its undo/redo, was written: the list counts, the bar and the
    conversation follow (the bar switches the conversation when the branch changed)."""
    window.error_bar.clear()
    window.sessions.refresh([change.session_id])
    window.branch_bar.after_change(change)
    window._update_edit_actions()  # noqa: SLF001


def can_branch_here(window: Any) -> bool:
    """Whether Branch from This Turn… can run now (for the action's enabled state): a
    user message of an Advanced store open for editing is selected. (Its turn number
    may still be being counted: the action says so when it runs.)"""
    store = window.store
    message = window.conversation.current_message()
    return bool(
        is_branchable(store)
        and store.can_write
        and not window.editor.running
        and window.current_session_id is not None
        and message is not None
        and starts_turn(message)
    )


def branch_from_turn(window: Any) -> None:
    """Edit › Branch from This Turn…: a new branch with the current branch's items
    before the selected user message's turn; the session switches to it. Undoable."""
    from PySide6.QtWidgets import QInputDialog, QLineEdit

    from fluxgui.core.errors import FluxguiError, ReadOnlyError

    store, sid = window.store, window.current_session_id
    message = window.conversation.current_message()
    if not is_branchable(store) or sid is None:
        window.show_error(FluxguiError("branches are kept by AdvancedSQLiteSession stores only"))
        return
    if not store.can_write:
        window.show_error(ReadOnlyError(
            "the store is open read-only: turn on editing (Ctrl+Shift+E) first"
        ))
        return
    if window.editor.running:
        return
    turn = branch_turn(window.conversation, message)
    if turn is None:
        window.show_error(FluxguiError(
            "select a user message: a branch starts at a user turn"
            if message is None or not starts_turn(message)
            else "the turn numbers are still being counted: try again in a moment"
        ))
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
    window.editor.run(
        store.create_branch_from_turn(sid, turn, name.strip() or None, branch=branch)
    )
