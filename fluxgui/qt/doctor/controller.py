"""The session doctor in the window: the Doctor dock (problems with repairs, Preflight,
Ledger), the markers on the cards involved, the badges in the session list, and the
warning before Test-chat sends a session with problems.

Every check, plan, preflight and ledger runs through the bridge (its own keys); a repair
is written through the window's :class:`~fluxgui.qt.editing.Editor`, so it joins the one
undo stack like every edit (Edit › Undo, or the panel's Undo).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDockWidget, QMessageBox, QTabWidget

from fluxgui.services import edits
from fluxgui.core.model import Message
from fluxgui.services.doctor import SessionReport, read_messages, report_for
from fluxgui.services.doctor.ledger import Ledger, ledger
from fluxgui.services.doctor.preflight import Preflight, preflight
from fluxgui.services.doctor.repairs import Plan, apply_plan, plan_repair, plan_rewind
from fluxgui.services.doctor.text import markers
from fluxgui.core.roles import Store

from ..errors import describe_error
from .badges import CHECK_BATCH, MAX_MESSAGES, SessionBadges
from .ledger_view import LedgerView
from .preflight_view import PreflightView
from .problems_tab import ProblemsTab

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QMainWindow, QTableView

    from ..bridge import AsyncBridge
    from ..conversation import ConversationPane
    from ..editing import Editor
    from ..sessions import SessionListModel
    from ..shell import BranchBar, Stores


class DoctorController(QObject):
    """Owns the Doctor dock and keeps it, the markers and the badges in step with the
    shown session. Signals: ``checked(report)``, ``planned(plan)``, ``preflighted(result)``,
    ``ledgered(result)``, ``failed(error)``.

    It is given what it uses: the window (the dock's, the boxes' parent), the bridge, the
    editor (repairs, Undo), the open store (``stores``), the session list (model and
    view: the badges), the conversation pane (markers), the branch bar, the signals it
    follows (a session shown, the store changed elsewhere), the shown session and Edit ›
    Undo (``undo``)."""

    checked = Signal(object)
    planned = Signal(object)
    preflighted = Signal(object)
    ledgered = Signal(object)
    failed = Signal(object)

    def __init__(
        self,
        window: QMainWindow,
        bridge: AsyncBridge,
        editor: Editor,
        stores: Stores,
        sessions: SessionListModel,
        session_view: QTableView,
        pane: ConversationPane,
        branch_bar: BranchBar,
        *,
        messages_shown: SignalInstance,
        store_changed: SignalInstance,
        shown: Callable[[], str | None],
        undo: Callable[[], None],
    ) -> None:
        super().__init__(window)
        self._window = window
        self._bridge = bridge
        self._editor = editor
        self._stores = stores
        self._sessions = sessions
        self._pane = pane
        self._branch_bar = branch_bar
        self._shown = shown
        self.report: SessionReport | None = None
        self.plan: Plan | None = None
        self.problems = ProblemsTab()
        self.preflight_view = PreflightView()
        self.ledger_view = LedgerView()
        self.tabs = QTabWidget()
        self.tabs.setObjectName("doctorTabs")
        self.tabs.addTab(self.problems, "Problems")
        self.tabs.addTab(self.preflight_view, "Preflight")
        self.tabs.addTab(self.ledger_view, "Ledger")
        self.dock = QDockWidget("Doctor", window)
        self.dock.setObjectName("doctorDock")
        self.dock.setWidget(self.tabs)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.dock.hide()
        self.badges = SessionBadges(session_view, sessions, bridge)
        self.problems.previewRequested.connect(self.preview_repair)
        self.problems.applyRequested.connect(self.apply)
        self.problems.undoRequested.connect(undo)
        self.problems.rewindRequested.connect(self.preview_rewind)
        self.problems.consolidateRequested.connect(self._on_consolidate)
        self._consolidate: Callable[[str], object] | None = None
        self._still: Callable[[], bool] | None = None
        self.problems.messageRequested.connect(pane.select_message)
        self.preflight_view.runRequested.connect(self.run_preflight)
        self.ledger_view.runRequested.connect(self.run_ledger)
        messages_shown.connect(lambda _sid: self.check_shown())
        editor.applied.connect(self._on_edit)
        store_changed.connect(self._on_store_changed)
        sessions.modelReset.connect(lambda: self.badges.set_store(stores.store))
        sessions.modelReset.connect(lambda: self.problems.set_status(""))  # another store
        # Undo only when there is an edit to take back (not while one is being written)
        stack = editor.stack
        stack.canUndoChanged.connect(lambda _can: self._update_undo())
        editor.runningChanged.connect(lambda _running: self._update_undo())
        self._update_undo()

    def _update_undo(self) -> None:
        editor = self._editor
        if not (shiboken6.isValid(editor.stack) and shiboken6.isValid(self.problems)):
            return  # the window is going
        self.problems.undo_button.setEnabled(editor.stack.canUndo() and not editor.running)

    # -- state -----------------------------------------------------------------------------

    @property
    def _store(self) -> Store | None:
        return self._stores.store

    @property
    def _sid(self) -> str | None:
        return self._shown()

    def _branch(self) -> str | None:
        store, sid = self._store, self._sid
        if store is None or sid is None:
            return None
        return self._branch_bar.branch_for(store, sid)

    # -- checking ----------------------------------------------------------------------------

    def check_shown(self) -> None:
        """Check the shown session (markers, the Problems tab, its badge)."""
        store, sid = self._store, self._sid
        self.badges.set_store(store)
        self.plan = None
        if sid is None and self.problems.merged is not None and self._still is not None and self._still():
            return  # a session shown merged over several stores: its finding stays
        if store is None or sid is None:
            self._show(None)
            return
        row = self._sessions.row_of(sid)
        info = self._sessions.session_at(row) if row is not None else None
        large = info is not None and (info.messages > MAX_MESSAGES or not info.count_exact)
        if not self.dock.isVisible() and large:
            # A huge session is read whole only when the Doctor is open.
            self._show(None)
            self.problems.summary.setText("A large session: open the Doctor to check it.")
            return
        self.report = None
        self.problems.show_report(None, checking=True)
        self.preflight_view.clear()
        self.ledger_view.clear()
        branch = self._branch()

        async def check() -> tuple[SessionReport, dict[int, Message]]:
            messages = await read_messages(store, sid, branch=branch, batch=CHECK_BATCH)
            report = await report_for(store, sid, messages)
            # Kept: the outputs a choice may show (a differing duplicate_output's).
            wanted = {i for p in report.problems if p.code == "duplicate_output" for i in p.message_ids}
            return report, {m.id: m for m in messages if m.id in wanted}

        self._bridge.start(
            "doctor:check", check(),
            lambda r: self._on_checked(store, *r), self._on_failed,
        )

    def _on_checked(self, store: Store, report: SessionReport, outputs: dict[int, Message]) -> None:
        if store is not self._store or report.session_id != self._sid:
            return
        self._show(report, outputs)
        self.badges.put(report)
        self.checked.emit(report)

    def _show(self, report: SessionReport | None, outputs: dict[int, Message] | None = None) -> None:
        self.report = report
        self.problems.show_report(report, outputs=outputs)
        self._pane.set_markers(markers(report) if report is not None else {})

    def show_merged(
        self, session_id: str, finding: dict[str, Any] | None, stores: int,
        consolidate: Callable[[str], object] | None = None, still: Callable[[], bool] | None = None,
    ) -> None:
        """A workspace's session shown merged over ``stores`` stores: its ``split_session``
        finding (``None``: not split) in the Problems tab, without a repair but with
        Consolidate… (``consolidate(session_id)``) when it is split. ``still()``: whether
        it is still shown (opening the Doctor then keeps the finding)."""
        self._show(None)
        self._consolidate, self._still = consolidate, still
        self.problems.show_merged(session_id, finding, stores)

    def _on_consolidate(self, session_id: str) -> None:
        if self._consolidate is not None and session_id:
            self._consolidate(session_id)

    def _on_failed(self, error: Exception) -> None:
        self.problems.set_status(describe_error(error))
        self.failed.emit(error)

    def _on_edit(self, change: edits.AnyChange) -> None:
        sid = change.session_id
        self.badges.forget([sid])
        if sid == self._sid:
            self.check_shown()

    def _on_store_changed(self) -> None:
        self.badges.forget()
        if self._sid is not None and self.dock.isVisible():
            self.check_shown()

    # -- repairs -------------------------------------------------------------------------------

    def preview_repair(self) -> None:
        """Plan the ticked repairs and show the session before and after."""
        fixes = self.problems.chosen()
        if not fixes:
            self.problems.set_status("Tick a problem that a repair fixes first.")
            return
        cancel = self.problems.cancel_text.text().strip() or None
        drop = self.problems.drop_calls.isChecked()
        keep = self.problems.keep_ids()
        self._plan(lambda store, sid, messages: plan_repair(
            sid, messages, fixes, items=store.traits.items,
            **({"cancel_text": cancel} if cancel else {}), drop_calls=drop, keep_ids=keep,
        ))

    def preview_rewind(self) -> None:
        """Plan removing the last turn, shown as a preview (Apply writes it)."""
        self._plan(lambda _store, sid, messages: plan_rewind(sid, messages, last=True))

    def _plan(self, make) -> None:  # noqa: ANN001 - (store, sid, messages) → Plan
        store, sid = self._store, self._sid
        if store is None or sid is None:
            return

        async def build() -> Plan:
            return make(store, sid, await read_messages(store, sid, branch=self._branch()))

        self._bridge.start("doctor:plan", build(), self._on_planned, self._on_failed)

    def _on_planned(self, plan: Plan) -> None:
        self.plan = plan
        reason = edits.blocked_reason(self._store)
        self.problems.show_plan(plan, can_apply=reason is None, reason=reason)
        self.planned.emit(plan)

    def apply(self) -> bool:
        """Write the previewed plan as one edit on the undo stack."""
        store, plan = self._store, self.plan
        if store is None or plan is None or plan.empty:
            return False
        reason = edits.blocked_reason(store)
        if reason is not None:
            self.problems.set_status(reason)
            return False
        self.plan = None
        self.problems.apply_button.setEnabled(False)
        self.problems.set_status(f"Writing: {plan.summary()}")
        return self._editor.run(apply_plan(store, plan))

    # -- preflight and ledger --------------------------------------------------------------------

    def run_preflight(self) -> None:
        store, sid = self._store, self._sid
        if store is None or sid is None:
            return
        self.preflight_view.clear("Building the request…")
        self._bridge.start(
            "doctor:preflight",
            preflight(store, sid, limit=self.preflight_view.limit_value, branch=self._branch()),
            self._on_preflight, lambda e: self.preflight_view.clear(describe_error(e)),
        )

    def _on_preflight(self, result: Preflight) -> None:
        self.preflight_view.show_result(result)
        self.preflighted.emit(result)

    def run_ledger(self) -> None:
        store, sid = self._store, self._sid
        if store is None or sid is None:
            return
        model = self.ledger_view.model.text().strip() or None
        self._bridge.start(
            "doctor:ledger", ledger(store, sid, model=model, branch=self._branch()),
            self._on_ledger, lambda e: self.ledger_view.note.setText(describe_error(e)),
        )

    def _on_ledger(self, result: Ledger) -> None:
        self.ledger_view.show_result(result)
        self.ledgered.emit(result)

    # -- test chat ---------------------------------------------------------------------------

    def confirm_send(self, session_id: str) -> bool:
        """Before Test-chat sends ``session_id``: ask when the doctor found problems in it
        (True: send)."""
        report = self.report if self.report is not None and self.report.session_id == session_id else None
        report = report or self.badges.report(session_id)
        if report is None or not report.problems:
            return True
        codes = sorted({p.code for p in report.problems})
        answer = QMessageBox.warning(
            self._window, "Session has problems",
            f"The session doctor found {len(report.problems)} problem(s) in this session "
            f"({', '.join(codes)}). A model API may reject the request. Send anyway?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes
