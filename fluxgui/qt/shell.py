"""The main window as its controllers and parts see it, declared apart from the window.

:class:`~fluxgui.qt.window.main.MainWindow` builds the controllers (opening stores, edits,
transfers, reviews, the doctor, the chat dock, …) and hands each the window. They must
not import the window's module (it imports them: an import circle), so what they use of
it is declared here: :class:`Shell`, the window's base class, names the widgets and
the signals, and the other controllers by the small protocols below (only the calls one
controller makes on another). This module imports no controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QMainWindow

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDockWidget, QLabel, QTableView, QToolButton, QWidget

    from fluxgui.core.branches import BranchChange
    from fluxgui.core.ports import OpenOptions
    from fluxgui.core.roles import Store

    from .bridge import AsyncBridge
    from .conversation import ConversationPane
    from .dialogs.opening import OpenedStore
    from .editing import Editor
    from .sessions import SearchBox, SessionListModel
    from .settings import RecentStores
    from .watch import StoreWatcher
    from .widgets import ErrorBar, NoticeBar


class StatusArea(Protocol):
    """The status bar's store name and read-only/editing switch (``window.status``)."""

    def set_store(self, store: Store, label: str, *, keys: int = 0) -> None: ...
    def set_mode(self, text: str, tip: str, style: str, *, enabled: bool, checked: bool) -> None: ...


class BranchBar(Protocol):
    """The branch bar above the conversation (``window.branch_bar``)."""

    def current_branch(self) -> str | None: ...
    def branch_for(self, store: Store | None, session_id: str) -> str | None: ...
    def set_session(self, store: Store | None, session_id: str | None) -> None: ...
    def refresh(self, switch_to: str | None = None) -> None: ...
    def after_change(self, change: BranchChange) -> None: ...
    def isVisible(self) -> bool: ...  # noqa: N802 - Qt's name


class Stores(Protocol):
    """Opening stores (``window.stores``)."""

    @property
    def store(self) -> Store | None: ...
    @property
    def label(self) -> str: ...
    @property
    def opened(self) -> OpenedStore | None: ...
    @property
    def opening(self) -> OpenedStore | None: ...
    @property
    def target(self) -> str | None: ...
    def open_target(
        self, target: str, options: OpenOptions | None = None, *,
        session_id: str | None = None, label: str | None = None, **changes: Any,
    ) -> None: ...
    def open_file(self) -> None: ...
    def open_folder(self) -> None: ...
    def open_url(self) -> None: ...
    def open_demo(self) -> None: ...
    def open_recent(self, stored: str, label: str, key_prefix: str | None = None) -> None: ...
    def set_editing(self, on: bool) -> None: ...
    def enter_key(self) -> object | None: ...
    def update_problems(self) -> None: ...


class Edits(Protocol):
    """The edit commands and their undo stack (``window.edits``)."""

    def edit_reason(self) -> str | None: ...
    def editable_store(self) -> Store | None: ...
    def update_actions(self) -> None: ...
    def update_mode(self) -> None: ...
    def undo(self) -> None: ...
    def redo(self) -> None: ...
    def edit_message(self) -> None: ...
    def insert_message(self, where: str = "after") -> None: ...
    def delete_messages(self) -> None: ...
    def pop_message(self) -> None: ...
    def fork_here(self) -> None: ...
    def clear_session(self, session_id: str | None = None) -> None: ...
    def delete_session(self, session_id: str | None = None) -> None: ...


class Transfers(Protocol):
    """Export, import and copy (``window.transfers``)."""

    def export_dialog(self) -> None: ...
    def make_export_dialog(self) -> Any: ...
    def run_export(
        self, path: object, fmt: str, session_ids: list[str] | None, *, metadata: bool = True,
        reviews: bool = False, redactor: Any = None,
    ) -> None: ...
    def import_dialog(self) -> None: ...
    def copy_dialog(self) -> None: ...


class Comparing(Protocol):
    """Opening a comparison (``window.comparing``)."""

    def compare_sessions(self) -> object | None: ...


class SessionRows(Protocol):
    """The session list's behaviour (``window.session_list``)."""

    auto: bool

    def selected_ids(self) -> list[str]: ...
    def select_row(self, row: int) -> None: ...
    def focus(self) -> None: ...
    def find_step(self, *, backward: bool = False) -> None: ...
    def show_count(self, more: bool) -> None: ...


class Reviewing(Protocol):
    """What the rest of the window asks of the reviews (``window.reviews``)."""

    @property
    def on(self) -> bool: ...
    def annotator(self) -> Any: ...
    def use(self, url: str | None, label: str | None) -> None: ...


class Doctoring(Protocol):
    """What the rest of the window asks of the session doctor (``window.doctor``)."""

    dock: QDockWidget

    def check_shown(self) -> None: ...
    def confirm_send(self, session_id: str) -> bool: ...
    def show_merged(self, session_id: str, finding: dict[str, Any] | None, stores: int,
                    consolidate: Callable[[str], object] | None = None,
                    still: Callable[[], bool] | None = None) -> None: ...


class Chatting(Protocol):
    """The chat dock (``window.chat``)."""

    def remember_visible(self, on: bool) -> None: ...
    def store_changed(self) -> None: ...


class StoreFollower(Protocol):
    """A part told which store is open (the search index, the Conversations bar)."""

    def set_store(self, store: Store | None) -> None: ...


class AddConversations(Protocol):
    """The OpenAI Conversations "Add conversation…" bar above the list."""

    def store_opened(self, store: Store) -> None: ...


class ChatBox(Protocol):
    """The chat panel, where View › Chat puts the focus."""

    @property
    def message(self) -> QWidget: ...


class Shell(QMainWindow):
    """The main window's widgets, signals and controllers as the controllers use them
    (set by :class:`~fluxgui.qt.window.main.MainWindow`)."""

    #: the bridge has no task left (a store opened and its first screen is loaded, or
    #: a load failed)
    settled = Signal()
    #: a session's messages are shown (its id)
    messagesShown = Signal(str)
    #: an export, import or copy finished (its TransferResult)
    transferFinished = Signal(object)

    bridge: AsyncBridge
    recent: RecentStores
    actions_by_name: dict[str, QAction]
    open_error: BaseException | None
    last_error: BaseException | None
    sessions: SessionListModel
    session_view: QTableView
    search_box: SearchBox
    conversation: ConversationPane
    editor: Editor
    watcher: StoreWatcher
    status: StatusArea
    count_label: QLabel
    mode_label: QToolButton
    error_bar: ErrorBar
    key_bar: NoticeBar
    problems_bar: NoticeBar
    index_bar: NoticeBar
    tables_bar: NoticeBar
    branch_bar: BranchBar
    conversations_bar: AddConversations
    indexing: StoreFollower
    stores: Stores
    edits: Edits
    transfers: Transfers
    comparing: Comparing
    session_list: SessionRows
    reviews: Reviewing
    doctor: Doctoring
    chat: Chatting
    chat_dock: QDockWidget
    chat_panel: ChatBox

    if TYPE_CHECKING:  # the window's own calls (MainWindow)

        @property
        def current_session_id(self) -> str | None: ...
        def selected_session_ids(self) -> list[str]: ...
        def show_error(self, exc: BaseException) -> None: ...
        def show_session(self, session_id: str) -> None: ...
        def show_session_at_hit(self, session_id: str, message_id: int, text: str) -> None: ...
        def show_again(self, session_id: str) -> None: ...
        def expect_selection(self, session_id: str | None) -> None: ...
        def forget_selection(self) -> None: ...
        def forget_shown(self) -> None: ...
        def list_sessions(self, store: Store) -> None: ...
        def reload(self) -> None: ...
        def chat_finished(self, session_id: str, *, copied: bool = False) -> None: ...
