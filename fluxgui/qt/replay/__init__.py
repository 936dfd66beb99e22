"""Replays and eval datasets in the window (issue 38): "Replay from Here…" in a user
message's context menu (:mod:`.controller`, :mod:`.settings_dialog`, :mod:`.progress`)
and File › Export Eval Dataset… (:mod:`.eval_export`). The work is
:mod:`fluxgui.services.replay`'s and :mod:`fluxgui.services.evals`'."""

from __future__ import annotations

from collections.abc import Callable
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
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMainWindow

    from ..bridge import AsyncBridge
    from ..conversation import ConversationPane
    from ..editing import Editor
    from ..shell import Stores


class ReplayParts:
    """What :func:`install_replay` put into a window: the replay controller and the eval
    export (its last dialog, for tests).

    It is given what it uses: the window (the dialogs' parent, its menus), the bridge,
    the editor, the open store (``stores``), the conversation pane, the settings, the
    shown and selected sessions (callables), where errors are shown and the reviews
    (an eval dataset of reviewed sessions)."""

    def __init__(
        self,
        window: QMainWindow,
        bridge: AsyncBridge,
        editor: Editor,
        stores: Stores,
        pane: ConversationPane,
        settings: QSettings,
        *,
        shown: Callable[[], str | None],
        selected: Callable[[], list[str]],
        show_error: Callable[[BaseException], None],
        reviews: ReviewSource | None = None,
    ) -> None:
        self.window = window
        self.pane = pane
        self._bridge = bridge
        self._stores = stores
        self._shown = shown
        self._selected = selected
        self._show_error = show_error
        self.reviews = reviews
        self.replays = ReplayController(
            window, bridge, editor, stores, settings, shown=shown, show_error=show_error,
            redaction=pane.followed_redaction(),
        )
        self.eval_dialog: EvalExportDialog | None = None

    def export_eval(self) -> EvalExportDialog | None:
        """Open File › Export Eval Dataset… for the open store."""
        store = self._stores.store
        if store is None:
            self._show_error(FluxguiError("open a store to export an eval dataset from its sessions"))
            return None
        folder = ""
        paths = store.local_paths()
        if paths:
            folder = str(paths[0].parent)
        dialog = EvalExportDialog(
            self._bridge, store, shown=self._shown(), selected=self._selected(),
            reviews=self.reviews, folder=folder, parent=self.window,
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
        m = self.pane.current_message()
        if m is None or m.role != "user":
            self._show_error(FluxguiError("select a user message to replay the session from its turn"))
            return False
        return self.replays.replay_from(m)


def install_replay(parts: ReplayParts, actions: dict[str, QAction]) -> ReplayParts:
    """Put "Replay from Here…" into the conversation's context menu (after what is there)
    and Export Eval Dataset… into the File menu (after Copy Sessions To…); ``actions``:
    the window's actions by name."""
    window = parts.window
    before = parts.pane.menu_hook

    def hook(menu: QMenu, message: Any) -> None:
        if before is not None:
            before(menu, message)
        parts.replays.conversation_menu(menu, message)

    parts.pane.menu_hook = hook
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
