"""The workspace's place in the window: :func:`install_workspace` builds the
:class:`~.controller.WorkspaceController` and puts its actions in the File menu (Add
Store ▸, Open Workspace…, Save Workspace…, Consolidate Workspace…) and on View › Reload."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from .controller import WorkspaceController

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from .host import WorkspaceHost


def install_workspace(
    window: QMainWindow, host: WorkspaceHost, actions_by_name: dict[str, QAction]
) -> WorkspaceController:
    """The workspace's parts in ``window`` (``host``: what they use of it), and its
    actions in the File menu (and ``actions_by_name``, the window's actions by name)."""
    controller = WorkspaceController(window, host)
    file_menu = window.menuBar().actions()[0].menu()
    assert isinstance(file_menu, QMenu)
    before = actions_by_name["enter_key"]
    actions = {
        "open_workspace": QAction("Open &Workspace…", window),
        "save_workspace": QAction("Save Works&pace…", window),
        "consolidate": QAction("&Consolidate Workspace…", window),
    }
    file_menu.insertMenu(before, controller.add_menu())
    # F5 in the all-stores list reads every store's list (and the merged timeline) again
    actions_by_name["reload"].triggered.connect(lambda _c=False: controller.reload())
    actions["open_workspace"].triggered.connect(lambda _c=False: controller.files.open_dialog())
    actions["save_workspace"].triggered.connect(lambda _c=False: controller.files.save_dialog())
    actions["consolidate"].triggered.connect(lambda _c=False: controller.files.consolidate())
    for name, action in actions.items():
        file_menu.insertAction(before, action)
        actions_by_name[name] = action
    file_menu.insertSeparator(before)
    return controller
