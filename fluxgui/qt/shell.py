"""What the main window's controllers and parts use of it, declared apart from the window.

:class:`~fluxgui.qt.window.main.MainWindow` builds the controllers (opening stores, edits,
transfers, reviews, the doctor, the chat dock, …) and hands each the objects it uses:
the bridge, the session list, the conversation pane, a notice bar, a callable such as
``show_error``…, or, where it uses many, a small frozen dataclass of them (its own
module's, or :class:`OpenHost` here) — never the window itself. They must not import
the window's module (it imports them: an import circle), so another controller is
declared here by a small protocol (only the calls one controller makes on another).
This module imports no controller.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDockWidget, QLabel

    from fluxgui.core.branches import BranchChange
    from fluxgui.core.ports import OpenOptions
    from fluxgui.core.roles import Store

    from .bridge import AsyncBridge
    from .conversation import ConversationPane
    from .dialogs.opening import OpenedStore
    from .editing import Editor
    from .sessions import SessionListModel
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
    """A part told which store is open (the search index)."""

    def set_store(self, store: Store | None) -> None: ...


class AddConversations(Protocol):
    """The OpenAI Conversations "Add conversation…" bar above the list."""

    def store_opened(self, store: Store) -> None: ...


@dataclass(frozen=True)
class OpenHost:
    """What the store controller uses of the window: the bridge, the recent stores, the
    bars above the panes (error, key, skipped files, other tables), the status bar's
    count and store name, the actions by name (Enter Key), the parts told which store
    is current (editor, watcher, search index, session list, conversation pane), the
    edits, branch bar and Conversations bar (getters: made after it), and the window's
    calls (the shown session, show an error, expect or forget a selection, forget the
    shown session, list a store's sessions)."""

    bridge: AsyncBridge
    recent: RecentStores
    error_bar: ErrorBar
    key_bar: NoticeBar
    problems_bar: NoticeBar
    tables_bar: NoticeBar
    count_label: QLabel
    status: StatusArea
    actions: dict[str, QAction]
    editor: Editor
    watcher: StoreWatcher
    indexing: StoreFollower
    sessions: SessionListModel
    session_list: SessionRows
    conversation: ConversationPane
    edits: Callable[[], Edits]
    branch_bar: Callable[[], BranchBar]
    conversations_bar: Callable[[], AddConversations]
    shown: Callable[[], str | None]
    show_error: Callable[[BaseException], None]
    expect_selection: Callable[[str | None], None]
    forget_selection: Callable[[], None]
    forget_shown: Callable[[], None]
    list_sessions: Callable[[Store], None]
