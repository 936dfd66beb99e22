"""The workspace's files and dialogs from the File menu: Open Workspace… (a workspace
file's stores, passwords from the keyring), Save Workspace… (never a password or key:
:mod:`fluxgui.services.workspace.file`), Consolidate Workspace… — whose write joins the
window's undo stack (:mod:`fluxgui.services.workspace.undoable`): Edit › Undo removes the
sessions it wrote from the destination, Redo writes them again."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QFileDialog

from fluxgui.core.errors import FluxguiError
from fluxgui.services.workspace import load_workspace, save_workspace

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from fluxgui.services.workspace.consolidate import MergePlan

    from .consolidate_dialog import ConsolidateDialog
    from .host import WorkspaceHost

FILTER = "fluxgui workspace (*.json);;All files (*)"


class WorkspaceFiles:
    """See the module (``window``: the dialogs' parent and its status bar; ``host``: what
    the workspace uses of the window; ``controller``: the
    :class:`~.controller.WorkspaceController`)."""

    def __init__(self, window: QMainWindow, host: WorkspaceHost, controller: Any) -> None:
        self._window = window
        self._host = host
        self._controller = controller
        self.dialog: ConsolidateDialog | None = None
        host.editor.applied.connect(self._on_applied)

    def open_dialog(self) -> None:
        path, _f = QFileDialog.getOpenFileName(self._window, "Open workspace", "", FILTER)
        if path:
            self.open_file(Path(path))

    def open_file(self, path: Path) -> None:
        try:
            entries = load_workspace(path)
        except FluxguiError as exc:
            self._host.show_error(exc)
            return
        if entries:
            self._controller.open_entries(entries)

    def save_dialog(self) -> None:
        path, _f = QFileDialog.getSaveFileName(self._window, "Save workspace", "workspace.json", FILTER)
        if path:
            self.save_file(Path(path))

    def save_file(self, path: Path) -> None:
        try:
            save_workspace(path, self._controller.members.entries())
        except FluxguiError as exc:
            self._host.show_error(exc)
            return
        self._window.statusBar().showMessage(f"Workspace saved to {path} (no password or key in it)", 10000)

    def consolidate(self, session_ids: list[str] | None = None) -> ConsolidateDialog:
        """The consolidation dialog (window-modal, shown) for ``session_ids`` (default:
        every session of the workspace)."""
        from .consolidate_dialog import ConsolidateDialog

        if self.dialog is not None:
            self.dialog.close()
        dialog = ConsolidateDialog(self._controller.members.service(), self._host.bridge, self._window,
                                   session_ids, show_id=self._host.conversation.ids.text,
                                   show_store=self._host.conversation.ids.place)
        self.dialog = dialog
        dialog.written.connect(lambda plan, d=dialog: self._keep(d, plan))
        dialog.open()
        return dialog

    def _keep(self, dialog: ConsolidateDialog, plan: MergePlan) -> None:
        """The consolidation was written: put the sessions it wrote on the undo stack."""
        from fluxgui.services.workspace.into import default_format
        from fluxgui.services.workspace.undoable import consolidation_change

        if not any(s.written for s in plan.sessions):
            return
        coro = consolidation_change(dialog.written_into, plan, default_format(self._controller.members.service()))
        if not self._host.editor.run(coro):
            dialog.status.setText(dialog.status.text() + " (Not on the undo stack: another edit was being written.)")

    def _on_applied(self, change: object) -> None:
        from fluxgui.services.workspace.undoable import Consolidated

        dialog = self.dialog
        if isinstance(change, Consolidated) and dialog is not None and self._host.editor.last_applied == "do":
            dialog.status.setText(dialog.status.text() + " Edit › Undo (Ctrl+Z) removes the sessions written.")
