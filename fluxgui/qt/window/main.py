"""The main window's shell: sessions on the left, the selected conversation on the right,
the bars above them, the status bar below, and the wiring between them.

What the window *does* lives in its controllers, each one responsibility:
:class:`~.store_controller.StoreController` (opening, reopening, the key, recent stores),
:class:`~.edit_controller.EditController` (edit commands and their undo stack),
:class:`~.transfer_controller.TransferController` (export, import, copy),
:class:`~.compare_opening.CompareOpener` (a fork's origin, opening a comparison) and
:class:`~.chat_dock.ChatDock`; the session list's behaviour is
:class:`~.session_list.SessionList`'s, the status bar :class:`~.status.StatusArea`. The
window keeps what they share — which session is shown — and wires them together: each
controller is given the parts it uses (the bridge, the session list, another controller,
a callable such as ``show_error``…, or a small dataclass of them: ``EditHost``,
``MenuHost``, :class:`~fluxgui.qt.shell.OpenHost`…), never the window itself.

Everything that touches the store goes through the :class:`~fluxgui.qt.bridge.AsyncBridge`.
Selecting a session starts its load and so cancels the load of the session selected
before.
"""

from __future__ import annotations


from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QSplitter, QVBoxLayout, QWidget

from fluxgui.core.errors import ApiKeyRefused, KeyNeeded, SessionNotFound
from fluxgui.core.roles import Store

from ..branches import BranchBar, install_branch_bar
from ..redaction import Redaction, install_redaction
from ..replay import ReplayParts, install_replay
from ..reviews import ReviewController, ReviewHost, extend_menu, install_reviews
from ..bridge import AsyncBridge
from ..conversation import ConversationPane
from ..chat import ChatPanel
from ..conversations import ConversationsBar, install_conversations_bar
from ..dialogs.files import FileDropFilter
from ..doctor import DoctorController
from ..editing import Editor
from ..errors import describe_error
from ..sessions import SearchBox, SessionListModel
from ..settings import RecentStores
from ..shell import OpenHost
from ..watch import StoreWatcher
from ..workspace import WorkspaceController, WorkspaceHost, install_workspace
from ..widgets import ErrorBar, NoticeBar
from .actions import MenuHost, install_actions
from .api_key import offer_another_key
from .placement import WindowPlacement
from .chat_dock import ChatDock
from .compare_opening import CompareOpener
from .edit_controller import EditController, EditHost
from .session_list import SessionList
from .narrow import KeepConversationWide
from .shortcuts import HelpExtras
from .side_docks import SideDocks
from .index_controller import IndexController
from .status import StatusArea
from .store_controller import StoreController
from .transfer_controller import TransferController


class MainWindow(QMainWindow):
    """Sessions list + conversation pane + status bar + error bar over one open store.

    Each controller is given the objects it uses (see :mod:`fluxgui.qt.shell`), not
    the window."""

    #: the bridge has no task left (a store opened and its first screen is loaded, or
    #: a load failed)
    settled = Signal()
    #: a session's messages are shown (its id)
    messagesShown = Signal(str)
    #: an export, import or copy finished (its TransferResult)
    transferFinished = Signal(object)

    # the bars above the panes (made by _build_panes) and the controllers as the
    # window itself uses them (the others see the narrow protocols of qt/shell.py)
    error_bar: ErrorBar
    key_bar: NoticeBar
    problems_bar: NoticeBar
    index_bar: NoticeBar
    tables_bar: NoticeBar
    branch_bar: BranchBar
    stores: StoreController
    edits: EditController
    transfers: TransferController
    comparing: CompareOpener
    session_list: SessionList
    indexing: IndexController
    conversations_bar: ConversationsBar
    chat: ChatDock
    chat_panel: ChatPanel
    doctor: DoctorController
    reviews: ReviewController
    workspace: WorkspaceController
    replay: ReplayParts
    redaction: Redaction

    def __init__(
        self,
        bridge: AsyncBridge | None = None,
        parent: QWidget | None = None,
        *,
        recent: RecentStores | None = None,
    ) -> None:
        super().__init__(parent)
        self.bridge = bridge or AsyncBridge(self)
        #: recently opened stores (settings; never a password)
        self.recent = recent if recent is not None else RecentStores()
        #: the window's actions by name (the menus; tests trigger them)
        self.actions_by_name: dict[str, QAction] = {}
        #: the last error shown in the error bar
        self.last_error: BaseException | None = None
        self._session_id: str | None = None  # shown or loading

        self.setWindowTitle("fluxgui")
        # 1200×800, or less to fit the screen; the last geometry restored (clamped)
        self.placement = WindowPlacement(self, self.recent.settings)

        self.sessions = SessionListModel(self.bridge, parent=self)
        self.session_list = SessionList(self, self.sessions, self)
        self.session_view = self.session_list.view

        self.conversation = ConversationPane(self.bridge, self)
        self.conversation.clear("Opening…")
        self.conversation.loaded.connect(self._on_conversation_loaded)
        self.conversation.failed.connect(self._on_conversation_failed)

        self.search_box = SearchBox(self)
        self.search_box.searchRequested.connect(self.sessions.set_search)
        self.search_box.leaveRequested.connect(lambda: self.session_list.focus())
        self.search_box.searchRequested.connect(self.session_list.on_search_text)
        self.setCentralWidget(self._build_panes())

        self.status = StatusArea(self, self.conversation.ids)
        self.count_label = self.status.count_label
        self.store_label = self.status.store_label
        self.format_label = self.status.format_label
        self.mode_label = self.status.mode_label
        self.busy_indicator = self.status.busy_indicator
        # The search index: built in the background, its progress in the status bar.
        self.indexing = IndexController(self, self.bridge, self.index_bar, lambda: self.stores.opened)
        self.last_hit: tuple[str, int, str] | None = None  # see show_session_at_hit

        self.editor = Editor(self.bridge, self)
        # Live refresh: another process (an agent) writing to the store shows up here.
        self.watcher = StoreWatcher(self.bridge, self)
        self.watcher.changed.connect(self._on_store_changed)
        self.stores = StoreController(self, OpenHost(
            self.bridge, self.recent, self.error_bar, self.key_bar, self.problems_bar, self.tables_bar,
            self.count_label, self.status, self.actions_by_name, self.editor, self.watcher, self.indexing,
            self.sessions, self.session_list, self.conversation, edits=lambda: self.edits,
            branch_bar=lambda: self.branch_bar, conversations_bar=lambda: self.conversations_bar,
            shown=lambda: self._session_id, show_error=self.show_error, expect_selection=self.expect_selection,
            forget_selection=self.forget_selection, forget_shown=self.forget_shown, list_sessions=self.list_sessions,
        ))
        self.mode_label.clicked.connect(self.stores.set_editing)
        self.edits = EditController(self, EditHost(
            self.editor, self.stores, self.sessions, self.session_view, self.conversation,
            self.status, self.mode_label, self.error_bar, self.actions_by_name,
            branch_bar=lambda: self.branch_bar, chat=lambda: self.chat, shown=lambda: self._session_id,
            show_error=self.show_error, show_again=self.show_again,
        ))
        self.transfers = TransferController(
            self, self.bridge, self.recent.settings, self.stores, self.sessions, self.edits,
            reviews=lambda: self.reviews, shown=lambda: self._session_id,
            selected=self.selected_session_ids, show_error=self.show_error,
            finished=self.transferFinished.emit,
        )
        self.comparing = CompareOpener(
            self, self.bridge, self.conversation, self.stores, shown=lambda: self._session_id,
            selected=self.selected_session_ids, show_error=self.show_error,
        )
        self.editor.applied.connect(self.edits.on_applied)
        # Branches of AdvancedSQLiteSession stores, above the conversation (hidden else).
        self.branch_bar = install_branch_bar(
            self.bridge, self.editor, self.conversation, self.stores, self.sessions,
            shown=lambda: self._session_id, update_actions=self.edits.update_actions,
            show_error=self.show_error,
        )
        # OpenAI Conversations: "Add conversation…" above the list (hidden else).
        self.conversations_bar = install_conversations_bar(
            self, self.search_box, self.editor, self.transferFinished, self.stores,
            self.recent.settings, self.bridge, self.sessions,
            selected=self.session_list.selected_ids, show_error=self.show_error,
        )
        self.editor.failed.connect(self.edits.on_failed)
        self.editor.runningChanged.connect(lambda _running: self.edits.update_actions())
        self.editor.stack.indexChanged.connect(lambda _index: self.edits.update_actions())
        self.bridge.busyChanged.connect(self.status.set_busy)

        # before the actions: View › Chat toggles its dock
        self.chat = ChatDock(self, ChatPanel(
            self.bridge, self.recent.settings, self.stores, self.conversation,
            shown=lambda: self._session_id, finished=self.chat_finished,
            confirm_send=lambda session_id: self.doctor.confirm_send(session_id),
        ), self.recent.settings)
        self.chat_panel = self.chat.panel
        self.chat_dock = self.chat.dock
        # The session doctor (issue 18): its dock, card markers and list badges.
        self.doctor = DoctorController(
            self, self.bridge, self.editor, self.stores, self.sessions, self.session_view,
            self.conversation, self.branch_bar, messages_shown=self.messagesShown,
            store_changed=self.watcher.changed, shown=lambda: self._session_id, undo=self.edits.undo,
        )
        install_actions(self, MenuHost(
            self.actions_by_name, self.recent, self.stores, self.edits, self.transfers, self.comparing,
            self.doctor, self.chat, self.session_list, self.sessions, self.search_box, self.conversation,
            self.reload, self.editor, self.branch_bar, shown=lambda: self._session_id, show_error=self.show_error,
        ))
        # Reviews (issue 17): the Review menu, dock, filter bar, list marks, queue keys.
        self.reviews = install_reviews(self, ReviewHost(
            self.bridge, self.stores, self.sessions, self.session_view, self.session_list,
            self.conversation, self.actions_by_name, self.messagesShown,
            shown=lambda: self._session_id, selected=self.selected_session_ids,
            show_error=self.show_error, show_again=self.show_again,
        ), self.recent.settings, self.search_box)
        # Review, Doctor and Chat: one tabbed side dock whose panels fit any screen.
        self.side_docks = SideDocks(self, [self.reviews.dock, self.doctor.dock, self.chat_dock],
                                    wrap=[self.doctor.dock, self.chat_dock])
        # Help › Keyboard Shortcuts, View › Review Panel, the first-run hint
        self.help = HelpExtras(self, self.actions_by_name, self.recent.settings)
        self.conversation.copy_id_button.clicked.connect(self.reviews.copy_shown_id)
        # Several stores (issue 36): the store chips, the all-stores list, merged timelines.
        self.workspace = install_workspace(self, WorkspaceHost(
            self.bridge, self.stores, self.sessions, self.session_view, self.session_list,
            self.conversation, self.search_box, self.count_label, self.editor, self.doctor,
            self.watcher.changed, self.edits.update_actions, self.show_error, self.expect_selection,
            self.list_sessions, self.forget_shown, self.show_session,
        ), self.actions_by_name)
        self.editor.workspace_store = self.workspace.members.store_with_target
        self.editor.switch_to = self.workspace.switch_to
        self.conversation.menu_hook = self.edits.conversation_menu
        # Replay from Here… (after the edit actions) and File › Export Eval Dataset… (issue 38).
        self.replay = install_replay(ReplayParts(
            self, self.bridge, self.editor, self.stores, self.conversation, self.recent.settings,
            shown=lambda: self._session_id, selected=self.selected_session_ids,
            show_error=self.show_error, reviews=self.reviews,
        ), self.actions_by_name)
        # View › Redact and File › Export Redacted… (issue 39).
        self.redaction = install_redaction(Redaction(
            self, self.bridge, self.stores, self.conversation, self.transfers,
            shown=lambda: self._session_id, selected=self.selected_session_ids,
        ), self.actions_by_name)
        self.actions_by_name["redact"].toggled.connect(lambda _on: self.workspace.redaction_changed())
        self.conversation.currentMessageChanged.connect(lambda _m: self.edits.update_actions())
        self.edits.update_actions()
        # Files dropped anywhere on the window open (local files only; nothing is fetched).
        self._drops = FileDropFilter(self)
        self._drops.watch(self)
        self._drops.filesDropped.connect(self.stores.open_dropped)

        self.bridge.idle.connect(self.settled)
        self.session_list.install(
            self.edits.delete_session, self.edits.session_menu,
            lambda menu, session_id: extend_menu(self.reviews, menu, session_id),
        )

    def _build_panes(self) -> QWidget:
        """The bars above the two panes (error, key notice, skipped files) and the panes."""
        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(4)
        left_layout.addWidget(self.search_box)
        left_layout.addWidget(self.session_view, 1)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left)
        splitter.addWidget(self.conversation)
        # A narrower window (the chat dock open, 2× scale) narrows the list a little too,
        # not only the conversation.
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 4)
        splitter.setSizes([380, 820])
        # …or less of a smaller window (2× scale), once it is shown at its size
        self.placement.split_on_show(splitter)
        splitter.setChildrenCollapsible(False)
        self.narrowing = KeepConversationWide(splitter, self.conversation.splitter)

        self.error_bar = ErrorBar(self)
        self.error_bar.shown = self.conversation.ids.say
        self.conversation.ids.changed.connect(self.error_bar.refresh)
        # An encrypted store opened without its key.
        self.key_bar = NoticeBar("keyNotice", self, button="Enter Key…")
        assert self.key_bar.button is not None
        self.key_bar.button.setToolTip("Give the encryption key to read the items")
        self.key_bar.button.clicked.connect(lambda _checked=False: self.stores.enter_key())
        # Files of a JSON session folder that could not be read (the rest list normally).
        self.problems_bar = NoticeBar("skippedFiles", self, one_line=True)
        # A missing index that makes listing slow, with the CREATE INDEX a DBA could run.
        self.index_bar = NoticeBar("indexNotice", self)
        self.index_bar.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A database holding other Agents SDK table pairs besides the one opened.
        self.tables_bar = NoticeBar("tablesNotice", self, one_line=True, button="Choose…")
        assert self.tables_bar.button is not None
        self.tables_bar.button.clicked.connect(lambda _checked=False: self.stores.choose_other_tables())
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.setSpacing(6)
        layout.addWidget(self.error_bar)
        layout.addWidget(self.key_bar)
        layout.addWidget(self.problems_bar)
        layout.addWidget(self.tables_bar)
        layout.addWidget(self.index_bar)
        layout.addWidget(splitter, 1)
        return central

    # -- state ---------------------------------------------------------------------

    @property
    def current_session_id(self) -> str | None:
        return self._session_id

    def selected_session_ids(self) -> list[str]:
        """The sessions selected in the list, in list order (the shown one when none is)."""
        ids = self.session_list.selected_ids()
        if not ids and self._session_id is not None:
            ids = [self._session_id]
        return ids

    # -- chat --------------------------------------------------------------------------

    def chat_finished(self, session_id: str, *, copied: bool = False) -> None:
        """A chat added messages to ``session_id``: show them (a copy: switch to it)."""
        self.sessions.refresh([session_id])
        if copied:
            self.show_again(session_id)
        elif session_id == self._session_id:
            self.conversation.live.catch_up()

    # -- showing -------------------------------------------------------------------

    def show_session(self, session_id: str) -> None:
        """Show a session's latest messages (cancelling the load of the previous one);
        while the list is searched, the session at its first message containing the
        search text, highlighted."""
        store = self.stores.store
        if store is None or session_id == self._session_id:
            return
        self._session_id = session_id
        branch = self.branch_bar.branch_for(store, session_id)
        text = self.sessions.search_text
        if text:
            self.conversation.finding.open_at(store, session_id, None, text, branch)
        else:
            self.conversation.show_session(store, session_id, branch)

    def open_at(
        self, session_id: str, message_id: int | None = None, find_text: str | None = None
    ) -> None:
        """Show ``session_id`` at message ``message_id`` (a search hit; ``None``: the first
        message containing ``find_text``), selected, ``find_text`` highlighted; F3 and
        Shift+F3 then step through the messages containing it. Its row in the list
        becomes current when the list has it."""
        store = self.stores.store
        if store is None:
            return
        self._session_id = session_id
        row = self.sessions.row_of(session_id)
        if row is not None:
            self.session_list.select_row(row)  # (shows nothing more: it is the one shown)
        else:
            self.session_list.pending = session_id
        branch = self.branch_bar.branch_for(store, session_id)
        self.conversation.finding.open_at(store, session_id, message_id, find_text, branch)

    def show_session_at_hit(self, session_id: str, message_id: int, text: str) -> None:
        """A session found through the search index: open it at the message the index
        hit (no scan of the session for the first match), ``text`` highlighted."""
        self.last_hit = (session_id, message_id, text)
        store = self.stores.store
        if store is None or session_id == self._session_id:
            return
        self._session_id = session_id
        branch = self.branch_bar.branch_for(store, session_id)
        self.conversation.finding.open_at(store, session_id, message_id, text, branch)

    def show_again(self, session_id: str) -> None:
        """Show ``session_id`` from the start (even when it is the one shown), and select
        its row once the list has it."""
        self.session_list.pending = session_id
        self._session_id = None
        self.show_session(session_id)

    def expect_selection(self, session_id: str | None) -> None:
        """A store is being opened: select ``session_id`` once it is listed (``None``:
        the first row, the most recently active session)."""
        self.session_list.pending = session_id
        self.session_list.auto = session_id is None

    def forget_selection(self) -> None:
        """An open failed: select nothing when rows arrive."""
        self.session_list.pending = None
        self.session_list.auto = False

    def forget_shown(self) -> None:
        """Another store has opened: no session of it is shown yet."""
        self._session_id = None

    def list_sessions(self, store: Store) -> None:
        """List the sessions of ``store`` just opened; the one to select is shown as soon
        as it can be."""
        self.count_label.setText("Loading sessions…")
        self.conversation.clear("Select a session.")
        self.search_box.clear()
        self.sessions.set_store(store)
        self.sessions.fetchMore(QModelIndex())
        if self.session_list.pending is not None:
            self.show_session(self.session_list.pending)

    def reload(self) -> None:
        """Re-read the list of sessions and the open conversation (F5)."""
        if self.stores.store is None:
            return
        current = self._session_id
        self._session_id = None
        self.session_list.pending = current
        self.sessions.reload()  # keeps a running search and the sort
        if current is not None:
            self.show_session(current)

    def search(self, text: str) -> None:
        """Filter the session list by ``text`` (session id or message text) now, as the
        search box does after its debounce; empty text lists every session again."""
        self.search_box.setText(text)
        self.search_box.flush()

    def show_error(self, exc: BaseException) -> None:
        self.last_error = exc
        self.error_bar.show_error(describe_error(exc))  # (shown as ids are: ids.say)
        if isinstance(exc, KeyNeeded):  # a write to a locked store: offer the key again
            self.stores.update_key_notice()
        elif isinstance(exc, ApiKeyRefused):  # the bar offers "Enter Another Key…"
            offer_another_key(self.error_bar, self, self.stores, exc, on_open=exc is self.stores.open_error)

    async def aclose(self) -> None:
        """Cancel running loads and close the store (call before the loop stops)."""
        await self.watcher.aclose()
        await self.workspace.watchers.aclose()
        await self.reviews.aclose()
        self.indexing.stop()
        self.sessions.set_store(None)
        await self.bridge.aclose()
        await self.stores.aclose()

    # -- signals -------------------------------------------------------------------

    def _on_store_changed(self) -> None:
        """Another process wrote to the store: merge the news into the views."""
        self.sessions.refresh()
        self.indexing.store_changed()
        if self._session_id is not None:
            self.conversation.live.catch_up()
        if self.branch_bar.isVisible():
            self.branch_bar.refresh()

    def _on_conversation_loaded(self, session_id: str) -> None:
        select = self.edits.take_selection()
        self.branch_bar.set_session(self.stores.store, session_id)
        self.comparing.find_origin(session_id)
        if select is not None:
            self.conversation.select_message(int(select))
        self.edits.update_actions()
        self.messagesShown.emit(session_id)

    def _on_conversation_failed(self, error: Exception) -> None:
        self._session_id = None
        self.branch_bar.set_session(None, None)
        self.edits.update_actions()
        gone = self.edits.take_gone()
        if isinstance(error, SessionNotFound):
            self.conversation.clear("This session is not in the store (any more).")
            if gone is not None:  # deleted by an edit here: no error, Ctrl+Z brings it back
                return
        self.show_error(error)
