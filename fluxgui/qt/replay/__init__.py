"""Replays and eval datasets in the window (issue 38): "Replay from Here…" in a user
message's context menu (:mod:`.controller`, :mod:`.settings_dialog`, :mod:`.progress`)
and File › Export Eval Dataset… (:mod:`.eval_export`). The work is
:mod:`fluxgui.services.replay`'s and :mod:`fluxgui.services.evals`'."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from fluxgui.core.errors import FluxguiError

from ..widgets import put_after
from .controller import ReplayController
from .eval_export import EvalExportDialog, ReviewSource
from .progress import ReplayProgress
from .settings_dialog import ReplayDialog

if TYPE_CHECKING:
    from ..shell import Shell


class ReplayParts:
    """What :func:`install_replay` put into a window: the replay controller and the eval
    export (its last dialog, for tests)."""

    def __init__(self, window: Shell, reviews: ReviewSource | None) -> None:
        self.window = window
        self.reviews = reviews
        self.replays = ReplayController(window)
        self.eval_dialog: EvalExportDialog | None = None

    def export_eval(self) -> EvalExportDialog | None:
        """Open File › Export Eval Dataset… for the open store."""
        window = self.window
        store = window.stores.store
        if store is None:
            window.show_error(FluxguiError("open a store to export an eval dataset from its sessions"))
            return None
        folder = ""
        paths = store.local_paths()
        if paths:
            folder = str(paths[0].parent)
        dialog = EvalExportDialog(
            window.bridge, store, shown=window.current_session_id, selected=window.selected_session_ids(),
            reviews=self.reviews, folder=folder, parent=window,
        )
        self.eval_dialog = dialog
        dialog.finished.connect(lambda _r, d=dialog: self._forget(d))
        dialog.open()
        return dialog

    def _forget(self, dialog: EvalExportDialog) -> None:
        if self.eval_dialog is dialog:
            self.eval_dialog = None
        dialog.deleteLater()

    def replay_current(self) -> bool:
        """Replay from the selected message (a user message)."""
        m = self.window.conversation.current_message()
        if m is None or m.role != "user":
            self.window.show_error(FluxguiError("select a user message to replay the session from its turn"))
            return False
        return self.replays.replay_from(m)


def install_replay(window: Shell, reviews: ReviewSource | None = None) -> ReplayParts:
    """Put "Replay from Here…" into the conversation's context menu (after what is there)
    and Export Eval Dataset… into the File menu (after Copy Sessions To…)."""
    parts = ReplayParts(window, reviews)
    before = window.conversation.menu_hook

    def hook(menu: QMenu, message: Any) -> None:
        if before is not None:
            before(menu, message)
        parts.replays.conversation_menu(menu, message)

    window.conversation.menu_hook = hook
    actions = window.actions_by_name
    export = QAction("Export &Eval Dataset…", window)
    export.setStatusTip("One eval item per assistant turn of the open, selected or reviewed sessions "
                        "(JSONL, promptfoo, OpenAI, Langfuse, LangSmith)")
    export.triggered.connect(lambda _checked=False: parts.export_eval())
    actions["export_eval"] = export
    replay = QAction("Replay from Here…", window)
    replay.setStatusTip("Replay the session from the selected user message's turn into a fork")
    replay.triggered.connect(lambda _checked=False: parts.replay_current())
    actions["replay_from_here"] = replay
    put_after(window.menuBar(), actions.get("copy_to"), export)  # File › … Copy Sessions To…, Export Eval Dataset…
    put_after(window.menuBar(), actions.get("fork"), replay)  # Edit › … Fork from Here…, Replay from Here…
    return parts


__all__ = ["EvalExportDialog", "ReplayController", "ReplayDialog", "ReplayParts", "ReplayProgress",
           "install_replay"]
