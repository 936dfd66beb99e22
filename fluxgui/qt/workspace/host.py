"""What the workspace uses of the window (:class:`WorkspaceHost`) and of its store
controller (:class:`WorkspaceStores`), declared apart from the window: the window
builds the workspace and imports it (an import circle the other way)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QLabel, QTableView

    from fluxgui.core.ports import OpenOptions
    from fluxgui.core.roles import Store

    from ..bridge import AsyncBridge
    from ..conversation import ConversationPane
    from ..dialogs.opening import OpenedStore, OpenRequest
    from ..editing import Editor
    from ..sessions import SearchBox, SessionListModel
    from ..shell import Doctoring, SessionRows
    from .members import Joining, WindowWorkspace


class WorkspaceStores(Protocol):
    """What the workspace uses of the window's store controller."""

    workspace: WindowWorkspace
    joining: Joining
    joining_label: str | None
    followers: list[Callable[[], None]]

    @property
    def store(self) -> Store | None: ...
    @property
    def opening(self) -> OpenedStore | None: ...
    def make_current(self, store: Store, *, listed: bool = True) -> None: ...
    def retitle(self) -> None: ...
    def adopt(self, store: Store, opened: OpenedStore, how: Joining, label: str | None = None) -> None: ...
    def open_request(self, request: OpenRequest) -> None: ...
    def open_target(self, target: str, options: OpenOptions | None = None, *,
                    session_id: str | None = None, label: str | None = None) -> None: ...
    def open_file(self) -> None: ...
    def open_folder(self) -> None: ...
    def open_url(self) -> None: ...


@dataclass(frozen=True)
class WorkspaceHost:
    """What the workspace uses of the window: the bridge, the store controller, the
    session list (model, view, rows), the conversation pane, the search box, the count
    in the status bar, the editor (a consolidation joins its undo stack), the doctor (a
    merged session's finding), the store changed elsewhere (``store_changed``), and the
    window's calls: update the edit actions, show an error, expect a selection, list a
    store's sessions, forget the shown session, show a session."""

    bridge: AsyncBridge
    stores: WorkspaceStores
    sessions: SessionListModel
    session_view: QTableView
    session_list: SessionRows
    conversation: ConversationPane
    search_box: SearchBox
    count_label: QLabel
    editor: Editor
    doctor: Doctoring
    store_changed: SignalInstance
    update_actions: Callable[[], None]
    show_error: Callable[[BaseException], None]
    expect_selection: Callable[[str | None], None]
    list_sessions: Callable[[Store], None]
    forget_shown: Callable[[], None]
    show_session: Callable[[str], None]
