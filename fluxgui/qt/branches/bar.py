"""The branch bar: the open session's branches, the current branch's usage, and
"Delete Branch…" (hidden unless the store keeps branches).

Choosing a branch switches the *window* to it (the bar remembers the branch chosen for
each session: UI state, nothing is written, and the store is never switched — every read
names its branch). Every read goes through the bridge under the bar's own key; what is
read and how it is worded is :mod:`fluxgui.services.branches`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QWidget,
)

from fluxgui.core.roles import Store
from fluxgui.core.branches import MAIN, BranchChange, BranchInfo
from fluxgui.services import edits
from fluxgui.services.branches import (
    BranchState,
    branch_text,
    delete_question,
    load_branch_state,
    turn_tokens,
    usage_text,
)

from ..widgets import stack
from ..bridge import AsyncBridge

if TYPE_CHECKING:
    from ..conversation import ConversationPane
    from ..editing import Editor

BRANCH_ROLE = Qt.ItemDataRole.UserRole + 1


def confirm_delete_branch(parent: QWidget, session_id: str, info: BranchInfo) -> bool:
    """Ask before deleting a branch (tests replace this)."""
    answer = QMessageBox.question(
        parent,
        "Delete branch",
        delete_question(session_id, info),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
        QMessageBox.StandardButton.Cancel,
    )
    return answer == QMessageBox.StandardButton.Yes


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
        stack(self, (10, 0, 10, 6), 3, row, self.usage_label)

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
        if store is None or not edits.is_branchable(store):
            return None
        if store.target != self._chosen_target:
            return MAIN
        return self._chosen.get(session_id, MAIN)

    def branch_ids(self) -> list[str]:
        return [str(self.combo.itemData(i, BRANCH_ROLE)) for i in range(self.combo.count())]

    def set_session(self, store: Store | None, session_id: str | None) -> None:
        """Show the branches of ``session_id`` (hidden unless ``store`` is an Advanced
        store and a session is shown). The same session again only lists again."""
        if store is None or not edits.is_branchable(store) or session_id is None:
            self._generation += 1
            self._bridge.cancel(self._key)
            self._store, self._session_id, self.state = None, None, None
            self._set_turn_tokens({})
            self.hide()
            return
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
            self._editor.run(edits.delete_branch(store, sid, state.current))

    # -- loading ---------------------------------------------------------------------

    async def _load(
        self, generation: int, store: Store, sid: str, want: str
    ) -> tuple[int, BranchState]:
        return generation, await load_branch_state(store, sid, want, made=self._made)

    def _on_loaded(self, result: tuple[int, BranchState]) -> None:
        generation, state = result
        if generation != self._generation or state.session_id != self._session_id:
            return
        previous = self.state
        self.state = state
        self._chosen[state.session_id] = state.current
        self._fill(state)
        self._set_turn_tokens(turn_tokens(state.turn_usage))
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
                bold = QFont(combo.font())
                bold.setBold(True)
                for info in state.rows():
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
        if state is None or not on_branch:
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
