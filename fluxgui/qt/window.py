"""The main window: sessions on the left, the selected conversation on the right.

Everything that touches the store goes through the :class:`~fluxgui.qt.bridge.AsyncBridge`
(keys ``"open"`` and ``"messages"``; the session model has its own). Selecting a session
starts its load and so cancels the load of the session selected before.

Above the panes: the error bar (red), the key notice (an encrypted store opened without
its key: "Enter Key…") and the skipped-files notice (a JSON session folder with files that
could not be read). An encryption key given here is kept in memory only, with the open
store's arguments (so reopening for editing keeps it): never in the settings.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import shiboken6

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPoint,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMenu,
    QProgressBar,
    QSplitter,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.adapters.registry import DEFAULT_TTL
from fluxgui.core.branches import BranchChange
from fluxgui.core.changes import Change
from fluxgui.core.errors import FluxguiError, KeyNeeded, ReadOnlyError, SessionNotFound
from fluxgui.core.ports import MAIN, OpenOptions
from fluxgui.core.ports import SessionStore as Store

from .actions import install_actions
from .branches import (
    branch_from_turn,
    can_branch_here,
    install_branch_bar,
    is_branchable,
    on_branch_change_applied,
)
from .bridge import AsyncBridge
from .demo import demo_store_path
from .editing import Editor
from .watch import StoreWatcher
from .open_dialogs import (
    FileDropFilter,
    OpenRequest,
    ask_url,
    open_file_dialog,
    open_folder_dialog,
    remember_opened,
    request_for_stored,
)
from .secrets import display_target
from .widgets import ErrorBar, NoticeBar
from fluxgui.core.redact import redact_text
from .settings import RecentStores
from .models import SessionListModel
from .conversation import ConversationPane
from .render import esc
from .search import SearchBox

log = logging.getLogger(__name__)

#: settings key: whether the chat dock was open when the user last showed or hid it
CHAT_VISIBLE = "ui/chat_visible"


@dataclass(frozen=True)
class OpenedStore:
    """How a store was (or is being) opened: to reopen it for editing or with a key.
    Its options may hold the encryption key: memory only (``repr`` leaves it out)."""

    target: str = field(repr=False)
    options: OpenOptions
    #: the label shown (no secret in it)
    shown: str


def describe_error(exc: BaseException) -> str:
    """One line for the error bar: a known error's own sentence, else the bug's type."""
    if isinstance(exc, FluxguiError):
        return redact_text(str(exc))
    text = redact_text(" ".join(str(exc).split())) or "(no message)"
    return f"Unexpected error ({type(exc).__name__}: {text}); details are on stderr."


KEY_NOTICE = (
    "This store holds encrypted sessions (Agents SDK EncryptedSession). "
    "Its items stay locked until you give the key."
)


def skipped_files_text(problems: list[str] | tuple[str, ...]) -> str:
    """The one-line notice for a JSON folder's unreadable files."""
    n = len(problems)
    return (
        f"Skipped {n} file{'' if n == 1 else 's'} that could not be read: "
        + "; ".join(" ".join(str(p).split()) for p in problems)
    )


def _describe_import(result: object) -> str:
    r = result
    text = (
        f"Imported {r.sessions:,} session{'' if r.sessions == 1 else 's'} "  # type: ignore[attr-defined]
        f"({r.messages:,} messages)"  # type: ignore[attr-defined]
    )
    renamed = [f"{a} → {b}" for a, b in r.written if a != b]  # type: ignore[attr-defined]
    if renamed:
        text += "; already there, so renamed: " + ", ".join(renamed[:5])
        if len(renamed) > 5:
            text += f" and {len(renamed) - 5} more"
    return text


class _SessionKeys(QObject):
    """Delete in the session list deletes the session (not the selected messages)."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and isinstance(
            event, QKeyEvent
        ):
            if event.matches(QKeySequence.StandardKey.Delete):
                if kind == QEvent.Type.ShortcutOverride:
                    event.accept()  # the key comes to the list, not the window's action
                else:
                    self._window.delete_session()
                return True
        return False


class MainWindow(QMainWindow):
    """Sessions list + conversation pane + status bar + error bar over one open store."""

    #: the bridge has no task left (a store opened and its first screen is loaded, or
    #: a load failed)
    settled = Signal()
    #: a session's messages are shown (its id)
    messagesShown = Signal(str)
    #: an export, import or copy finished (its TransferResult)
    transferFinished = Signal(object)

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
        self._pending: OpenRequest | None = None  # remembered once it has opened
        #: where the open session was forked from (fluxgui's sidecar), when it was
        self._origin: dict[str, Any] | None = None
        self._store: Store | None = None
        self._label = ""
        self._session_id: str | None = None  # shown or loading
        self._pending_select: str | None = None  # select this row once its page arrives
        # How the open store was opened (to reopen it: editing, a key). It may hold the
        # encryption key: memory only. ``_opening``: the same for an open under way,
        # which becomes ``_open_args`` once it has opened (a failed open leaves the open
        # store and its arguments as they were).
        self._open_args: OpenedStore | None = None
        self._opening: OpenedStore | None = None
        self._problems: tuple[str, ...] = ()  # the skipped files the notice shows
        #: the encryption-key dialog while it is open (tests drive it)
        self.key_dialog: object | None = None
        self._select_message_after: int | None = None  # select it once the session reloads
        self._maybe_gone: str | None = None  # an edit removed messages of this session
        self._auto_select = False
        #: the known or unexpected error that stopped the last open (None: it worked)
        self.open_error: BaseException | None = None
        #: the last error shown in the error bar
        self.last_error: BaseException | None = None

        self.setWindowTitle("fluxgui")
        self.resize(1200, 800)

        self.sessions = SessionListModel(self.bridge, parent=self)
        # A table view, not a tree view: QTreeView's layout calls fetchMore until the
        # model is exhausted, QTableView only when the last row scrolls into view.
        self.session_view = QTableView(self)
        self.session_view.setModel(self.sessions)
        self.session_view.horizontalHeader().setSortIndicator(
            SessionListModel.UPDATED, Qt.SortOrder.DescendingOrder
        )
        self.session_view.setShowGrid(False)
        self.session_view.setWordWrap(False)
        self.session_view.setCornerButtonEnabled(False)
        self.session_view.setAlternatingRowColors(True)
        # Several sessions can be selected (Shift/Ctrl+click) for export and copy; the
        # current row is the one shown.
        self.session_view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.session_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.session_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.session_view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.session_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        rows = self.session_view.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(self.fontMetrics().height() + 10)
        header = self.session_view.horizontalHeader()
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setSectionResizeMode(SessionListModel.ID, QHeaderView.ResizeMode.Stretch)
        # Fixed widths from the font, not ResizeToContents: that measures every loaded
        # row and is not redone when a page arrives.
        metrics = self.session_view.fontMetrics()
        pad = 3 * metrics.averageCharWidth()
        widths = {
            SessionListModel.COUNT: metrics.horizontalAdvance("Messages") + pad,
            SessionListModel.UPDATED: metrics.horizontalAdvance("2088-08-28 08:08") + pad,
        }
        for column, width in widths.items():
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, width)
        self.session_view.selectionModel().currentRowChanged.connect(self._on_current_row)

        self.conversation = ConversationPane(self.bridge, self)
        self.conversation.clear("Opening…")
        self.conversation.loaded.connect(self._on_conversation_loaded)
        self.conversation.failed.connect(self._on_conversation_failed)

        self.search_box = SearchBox(self)
        self.search_box.searchRequested.connect(self.sessions.set_search)
        self.session_view.setSortingEnabled(True)
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        self.sessions.searchProgress.connect(self._on_search_progress)
        self.sessions.searchFinished.connect(self._on_search_finished)
        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(4)
        left_layout.addWidget(self.search_box)
        left_layout.addWidget(self.session_view, 1)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left)
        splitter.addWidget(self.conversation)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([380, 820])
        splitter.setChildrenCollapsible(False)

        self.error_bar = ErrorBar(self)
        # An encrypted store opened without its key.
        self.key_bar = NoticeBar("keyNotice", self, button="Enter Key…")
        assert self.key_bar.button is not None
        self.key_bar.button.setToolTip("Give the encryption key to read the items")
        self.key_bar.button.clicked.connect(self.enter_key)
        # Files of a JSON session folder that could not be read (the rest list normally).
        self.problems_bar = NoticeBar("skippedFiles", self, one_line=True)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(6, 6, 6, 0)
        layout.setSpacing(6)
        layout.addWidget(self.error_bar)
        layout.addWidget(self.key_bar)
        layout.addWidget(self.problems_bar)
        layout.addWidget(splitter, 1)
        self.setCentralWidget(central)

        self.count_label = self._status_label()
        self.store_label = self._status_label()
        self.format_label = self._status_label()
        # The mode is a button: it shows read-only/editing and switches between them.
        self.mode_label = QToolButton(self)
        self.mode_label.setCheckable(True)
        self.mode_label.setAutoRaise(True)
        self.mode_label.setText("read-only")
        self.mode_label.setEnabled(False)
        self.mode_label.clicked.connect(lambda checked: self.set_editing(checked))
        self.editor = Editor(self.bridge, self)
        # Live refresh: another process (an agent) writing to the store shows up here.
        self.watcher = StoreWatcher(self.bridge, self)
        self.watcher.changed.connect(self._on_store_changed)
        self.editor.applied.connect(self._on_edit_applied)
        # Branches of AdvancedSQLiteSession stores, above the conversation (hidden else).
        self.branch_bar = install_branch_bar(self)
        self.editor.failed.connect(self._on_edit_failed)
        self.editor.runningChanged.connect(lambda _running: self._update_edit_actions())
        self.editor.stack.indexChanged.connect(lambda _index: self._update_edit_actions())
        bar = self.statusBar()
        bar.addWidget(self.count_label, 1)
        bar.addPermanentWidget(self.store_label)
        bar.addPermanentWidget(self.format_label)
        bar.addPermanentWidget(self.mode_label)

        self.busy_indicator = QProgressBar(self)
        self.busy_indicator.setRange(0, 0)  # indeterminate
        self.busy_indicator.setMaximumWidth(120)
        self.busy_indicator.setMaximumHeight(self.fontMetrics().height())
        self.busy_indicator.setTextVisible(False)
        self.busy_indicator.hide()
        bar.addPermanentWidget(self.busy_indicator)
        # Shown only for work that takes a moment: live refreshes would make it blink.
        self._busy_delay = QTimer(self)
        self._busy_delay.setSingleShot(True)
        self._busy_delay.setInterval(300)
        self._busy_delay.timeout.connect(self.busy_indicator.show)
        self.bridge.busyChanged.connect(self._on_busy_changed)

        self._install_chat()  # before the actions: View › Chat toggles its dock
        install_actions(self)
        self.conversation.menu_hook = self._conversation_menu
        self.conversation.currentMessageChanged.connect(lambda _m: self._update_edit_actions())
        self._session_keys = _SessionKeys(self)
        self.session_view.installEventFilter(self._session_keys)
        self.session_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.session_view.customContextMenuRequested.connect(self._session_menu)
        self._update_edit_actions()
        # Files dropped anywhere on the window open (local files only; nothing is fetched).
        self._drops = FileDropFilter(self)
        self._drops.watch(self)
        self._drops.filesDropped.connect(self._on_files_dropped)

        self.bridge.idle.connect(self.settled)
        self.sessions.pageLoaded.connect(self._on_page_loaded)
        self.sessions.loadFailed.connect(self._on_sessions_failed)

    def _on_busy_changed(self, busy: bool) -> None:
        if busy:
            self._busy_delay.start()
        else:
            self._busy_delay.stop()
            self.busy_indicator.hide()

    def _on_store_changed(self) -> None:
        """Another process wrote to the store: merge the news into the views."""
        self.sessions.refresh()
        if self._session_id is not None:
            self.conversation.catch_up()
        if self.branch_bar.isVisible():
            self.branch_bar.refresh()

    def _status_label(self) -> QLabel:
        label = QLabel(self)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setContentsMargins(6, 0, 6, 0)
        return label

    # -- public API ----------------------------------------------------------------

    @property
    def store(self) -> Store | None:
        return self._store

    @property
    def current_session_id(self) -> str | None:
        return self._session_id

    @property
    def busy(self) -> bool:
        return self.bridge.busy

    def selected_session_ids(self) -> list[str]:
        """The sessions selected in the list, in list order (the shown one when none is)."""
        rows = sorted({i.row() for i in self.session_view.selectionModel().selectedRows()})
        ids = [info.id for info in (self.sessions.session_at(r) for r in rows) if info]
        if not ids and self._session_id is not None:
            ids = [self._session_id]
        return ids

    def open_target(
        self,
        target: str,
        options: OpenOptions | None = None,
        *,
        session_id: str | None = None,
        label: str | None = None,
        **changes: Any,
    ) -> None:
        """Open ``target`` as ``options`` say (read-only unless ``writable``; keyword
        ``changes`` override its fields) and show its sessions; select ``session_id`` (or
        the most recently active session when it is ``None``).

        The options' ``key``/``ttl`` decrypt Agents SDK ``EncryptedSession`` items (the
        key stays in memory); ``key_prefix`` is a Redis store's key prefix. Until the new
        store has opened, the open one stays; a failed open leaves it in place."""
        from fluxgui.adapters.registry import open_store

        opts = (options or OpenOptions()).with_(**changes)
        shown = redact_text(label) if label else display_target(target)  # never a secret
        self._opening = OpenedStore(target, opts, shown)
        self.error_bar.clear()
        self.open_error = None
        self.count_label.setText(f"Opening {shown}…")
        self._pending_select = session_id
        self._auto_select = session_id is None
        self.bridge.start("open", open_store(target, opts), self._on_opened, self._on_open_failed)

    def _reopen(self, *, writable: bool, **changes: Any) -> None:
        """Reopen the open store's target as it was opened (key, prefix, tables…),
        staying on the open session; ``changes`` override some of those options."""
        opened = self._open_args
        if opened is None:
            return
        self.open_target(
            opened.target,
            opened.options.with_(writable=writable, **changes),
            label=self._label,
            session_id=self._session_id,
        )

    def set_editing(self, on: bool) -> None:
        """Reopen the store writable (``on``) or read-only, staying on the open session;
        the undo stack is kept."""
        store = self._store
        if store is None or self._open_args is None or on == store.can_write:
            self._update_mode()
            return
        self._reopen(writable=on)  # with the key and key prefix it was opened with

    # -- encryption key ----------------------------------------------------------------

    @property
    def store_locked(self) -> bool:
        """Whether the open store holds encrypted items and was opened without a key."""
        store = self._store
        return store is not None and store.needs_key and not store.has_key

    def enter_key(self) -> object | None:
        """File › Enter Encryption Key: ask for the key (and TTL) of an encrypted store
        and reopen it with them. Returns the (window-modal, already shown) dialog."""
        from .key_dialog import KeyDialog

        store = self._store
        if store is None or not store.needs_key:
            return None
        if self.key_dialog is not None:
            self.key_dialog.raise_()  # type: ignore[attr-defined]
            return self.key_dialog
        ttl = self._open_args.options.ttl if self._open_args is not None else DEFAULT_TTL
        dialog = KeyDialog(self, where=self._label, ttl=ttl)
        self.key_dialog = dialog
        dialog.finished.connect(lambda result, d=dialog: self._on_key_dialog_done(d, result))
        dialog.open()
        return dialog

    def _on_key_dialog_done(self, dialog: object, result: int) -> None:
        from .key_dialog import KeyDialog

        assert isinstance(dialog, KeyDialog)
        self.key_dialog = None
        key, ttl = dialog.key(), dialog.ttl()
        dialog.forget()
        dialog.deleteLater()
        if result == KeyDialog.DialogCode.Accepted and key:
            self.unlock(key, ttl)

    def unlock(self, key: str, ttl: int = DEFAULT_TTL) -> None:
        """Reopen the open store with an encryption key (kept in memory only), staying on
        the open session and in the same mode. A wrong key leaves the store as it is
        and says so in the error bar."""
        store = self._store
        if store is None or self._open_args is None:
            return
        self._reopen(writable=store.can_write, key=key, ttl=int(ttl))

    def _update_key_notice(self) -> None:
        store = self._store
        action = getattr(self, "actions_by_name", {}).get("enter_key")
        if action is not None:
            action.setEnabled(store is not None and store.needs_key)
        if self.store_locked:
            self.key_bar.show_notice(KEY_NOTICE)
        else:
            self.key_bar.hide()

    def _update_problems(self) -> None:
        """Show (again) the skipped-files notice when the store's list of unreadable files
        changed; hide it when there is none."""
        store = self._store
        problems = tuple(str(p) for p in store.problems) if store is not None else ()
        if problems == self._problems:
            return
        self._problems = problems
        if not problems:
            self.problems_bar.hide()
            return
        shown = problems[:50]
        tip = "<br>".join(esc(p) for p in shown)
        if len(problems) > len(shown):
            tip += f"<br>… and {len(problems) - len(shown)} more"
        self.problems_bar.show_notice(skipped_files_text(problems), f"<p>{tip}</p>")

    def open_request(self, request: OpenRequest) -> None:
        """Open what a dialog, the recent list or a drop asked for; it joins the recent
        stores (and its password the keyring, when asked) once it has opened."""
        self._pending = request
        self.open_target(request.target, label=request.label, key_prefix=request.key_prefix)

    def open_file(self) -> None:
        path = open_file_dialog(self)
        if path:
            self.open_request(OpenRequest(path, path))

    def open_folder(self) -> None:
        """File › Open Folder: a folder of JSON session files (HelloAgent SessionStore)."""
        path = open_folder_dialog(self)
        if path:
            self.open_request(OpenRequest(path, path))

    def open_url(self) -> None:
        request = ask_url(self)
        if request is not None:
            self.open_request(request)

    def open_recent(self, stored: str, label: str, key_prefix: str | None = None) -> None:
        request = request_for_stored(self, stored, self.recent, label, key_prefix)
        if request is not None:
            self.open_request(request)

    def open_demo(self) -> None:
        demo = demo_store_path()
        if demo is None:
            self.show_error(FluxguiError("the demo store is missing from this installation"))
            return
        self.open_target(str(demo), label=f"Demo store ({demo.name})")

    def reload(self) -> None:
        """Re-read the list of sessions and the open conversation (F5)."""
        store = self._store
        if store is None:
            return
        current = self._session_id
        self._session_id = None
        self._pending_select = current
        self.sessions.reload()  # keeps a running search and the sort
        if current is not None:
            self.show_session(current)

    def focus_sessions(self) -> None:
        self.session_view.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if not self.session_view.currentIndex().isValid() and self.sessions.rowCount():
            self._select_row(0)

    def copy_text(self) -> None:
        """Copy the selected message's text (Ctrl+C), unless a text field has the focus."""
        copy = getattr(self.conversation, "copy_text", None)
        if copy is not None:
            copy()

    def copy_raw(self) -> None:
        copy = getattr(self.conversation, "copy_raw", None)
        if copy is not None:
            copy()

    def focus_search(self) -> None:
        box = getattr(self, "search_box", None)
        if box is not None:
            box.setFocus(Qt.FocusReason.ShortcutFocusReason)
            box.selectAll()

    def _on_files_dropped(self, paths: list[str]) -> None:
        # A file opens as a SQLite store, a folder as a JSON session folder.
        if paths:
            path = paths[0].rstrip("/") or paths[0]
            self.open_request(OpenRequest(path, path))

    def show_session(self, session_id: str) -> None:
        """Show a session's latest messages (cancelling the load of the previous one)."""
        store = self._store
        if store is None or session_id == self._session_id:
            return
        self._session_id = session_id
        branch = self.branch_bar.branch_for(store, session_id)
        self.conversation.show_session(store, session_id, branch)

    def search(self, text: str) -> None:
        """Filter the session list by ``text`` (session id or message text) now, as the
        search box does after its debounce; empty text lists every session again."""
        self.search_box.setText(text)
        self.search_box.flush()

    def show_error(self, exc: BaseException) -> None:
        self.last_error = exc
        self.error_bar.show_error(describe_error(exc))
        if isinstance(exc, KeyNeeded):  # a write to a locked store: offer the key again
            self._update_key_notice()

    async def aclose(self) -> None:
        """Cancel running loads and close the store (call before the loop stops)."""
        await self.watcher.aclose()
        self.sessions.set_store(None)
        await self.bridge.aclose()
        store, self._store = self._store, None
        if store is not None:
            await store.close()

    # -- loading ---------------------------------------------------------------------

    # -- export, import, copy -----------------------------------------------------

    def export_dialog(self) -> None:
        """File › Export: the open session, the selected ones or the whole store."""
        from .transfer_dialogs import ExportDialog

        store = self._store
        if store is None:
            return
        dialog = ExportDialog(
            self,
            session_id=self._session_id,
            selected=self.selected_session_ids(),
            store_sessions=self.sessions.rowCount() if not self.sessions.searching else None,
        )
        try:
            if dialog.exec():
                self.run_export(
                    dialog.path(), dialog.format(), dialog.session_ids(), metadata=dialog.metadata()
                )
        finally:
            dialog.deleteLater()

    def run_export(
        self, path: object, fmt: str, session_ids: list[str] | None, *, metadata: bool = True
    ) -> None:
        """Export in the background with a progress dialog (Cancel leaves no file)."""
        from pathlib import Path

        from fluxgui.services.transfer import export_sessions

        store = self._store
        if store is None:
            return
        target = Path(str(path))
        self._run_transfer(
            "Exporting…",
            lambda progress: export_sessions(
                store, target, fmt, session_ids=session_ids, metadata=metadata,
                progress=progress, title=f"Sessions from {self._label}",
            ),
            lambda r: f"Exported {r.sessions:,} session{'' if r.sessions == 1 else 's'} "
            f"({r.messages:,} messages) to {target}" + "".join(f"; {n}" for n in r.notes),
        )

    def import_dialog(self) -> None:
        """File › Import: exports and session files become new sessions of this store."""
        from PySide6.QtWidgets import QFileDialog

        from .transfer_dialogs import IMPORT_FILTER

        if self._editable_store() is None:
            return
        files, _filter = QFileDialog.getOpenFileNames(self, "Import sessions", "", IMPORT_FILTER)
        if files:
            self.run_import(files)

    def run_import(self, files: list[str]) -> None:
        from pathlib import Path

        from fluxgui.services.transfer import import_files

        store = self._editable_store()
        if store is None:
            return
        paths = [Path(f) for f in files]
        self._run_transfer(
            "Importing…",
            lambda progress: import_files(store, paths, rename=True, progress=progress),
            _describe_import,
        )

    def copy_dialog(self) -> None:
        """File › Copy Sessions To: the selected sessions into another store."""
        from .transfer_dialogs import CopyDialog

        store = self._store
        ids = self.selected_session_ids()
        if store is None or not ids:
            return
        dialog = CopyDialog(self, count=len(ids), source_format=store.format)
        try:
            if dialog.exec():
                self.run_copy(dialog.target(), ids, new_format=dialog.new_format(),
                              rename=dialog.rename())
        finally:
            dialog.deleteLater()

    def run_copy(
        self, target: str, session_ids: list[str] | None, *, new_format: str | None = None,
        rename: bool = True,
    ) -> None:
        from fluxgui.services.transfer import copy_destination, copy_sessions

        store = self._store
        if store is None:
            return
        source_target = self._open_args.target if self._open_args is not None else None
        source_prefix = self._open_args.options.key_prefix if self._open_args else None

        async def copy(progress: object) -> object:
            # A new file or folder appears only once every session is in it; the store
            # being read is never a destination.
            async with copy_destination(
                target, store, fmt=new_format, source_target=source_target,
                source_prefix=source_prefix,
            ) as dest:
                return await copy_sessions(
                    store, dest, session_ids, rename=rename, progress=progress  # type: ignore[arg-type]
                )

        self._run_transfer(
            "Copying…",
            copy,
            lambda r: f"Copied {r.sessions:,} session{'' if r.sessions == 1 else 's'} "
            f"({r.messages:,} messages) to {display_target(target)}",
        )

    def _run_transfer(self, title: str, start: object, describe: object) -> None:
        from .transfer_dialogs import TransferProgress

        if self.bridge.running("transfer"):
            self.show_error(FluxguiError("an export, import or copy is still running"))
            return
        progress = TransferProgress(self, title)
        self._transfer = (progress, describe)
        progress.canceled.connect(self.cancel_transfer)
        self.bridge.start(
            "transfer",
            start(progress.update_progress),  # type: ignore[operator]
            lambda result: self._on_transfer_done(result, None),
            lambda error: self._on_transfer_done(None, error),
        )

    def cancel_transfer(self) -> None:
        """Stop the running export, import or copy (an export leaves no file; a copy
        stops after the session it is writing)."""
        transfer = getattr(self, "_transfer", None)
        if transfer is None:
            return
        self._transfer = None
        self.bridge.cancel("transfer")
        transfer[0].deleteLater()
        self.statusBar().showMessage("Cancelled: nothing was left half-written.", 8000)

    def _on_transfer_done(self, result: object, error: BaseException | None) -> None:
        transfer = getattr(self, "_transfer", None)
        self._transfer = None
        if transfer is not None:
            transfer[0].reset()
            transfer[0].deleteLater()
        if error is not None:
            self.show_error(error)
            return
        if transfer is not None:
            self.statusBar().showMessage(transfer[1](result), 15000)  # type: ignore[operator]
        self.sessions.refresh()
        self.transferFinished.emit(result)

    async def _origin_of(
        self, store: Store, session_id: str
    ) -> tuple[str, dict[str, Any] | None]:
        return session_id, await store.fork_origin(session_id)

    def _show_origin(self, result: tuple[str, dict[str, Any] | None]) -> None:
        session_id, origin = result
        if session_id != self._session_id:
            return
        self._origin = origin if isinstance(origin, dict) else None
        if isinstance(origin, dict):
            self.conversation.set_origin(
                f"forked from {origin['session_id']} at message {origin['message_id']}"
            )
        else:
            self.conversation.set_origin(None)

    def _on_open_failed(self, error: Exception) -> None:
        self._pending = None
        self._opening = None
        self.open_error = error
        self._pending_select = None
        self._auto_select = False
        if self._store is None:
            self.count_label.setText("No store open")
            self.conversation.clear("No store is open.")
        else:  # the store that was open stays (a wrong key, a failed reopen)
            self._show_count(self.sessions.canFetchMore(QModelIndex()))
            self._update_key_notice()
        self.show_error(error)

    def _on_conversation_loaded(self, session_id: str) -> None:
        select, self._select_message_after = self._select_message_after, None
        self._maybe_gone = None
        self.branch_bar.set_session(self._store, session_id)
        if self._store is not None:
            self.bridge.start(
                "origin", self._origin_of(self._store, session_id), self._show_origin
            )
        if select is not None:
            self.conversation.select_message(int(select))
        self._update_edit_actions()
        self.messagesShown.emit(session_id)

    def _on_conversation_failed(self, error: object) -> None:
        assert isinstance(error, BaseException)
        self._session_id = None
        self.branch_bar.set_session(None, None)
        self._update_edit_actions()
        gone, self._maybe_gone = self._maybe_gone, None
        if isinstance(error, SessionNotFound):
            self.conversation.clear("This session is not in the store (any more).")
            if gone is not None:  # deleted by an edit here: no error, Ctrl+Z brings it back
                return
        self.show_error(error)

    def _on_search_progress(self, found: int) -> None:
        self.count_label.setText(f"Searching… {found} session{'' if found == 1 else 's'} found")

    def _on_search_finished(self, found: int) -> None:
        text = self.sessions.search_text
        self.count_label.setText(
            f"{found} session{'' if found == 1 else 's'} matching {display_target(text)!r}"
        )

    def _on_opened(self, store: Store) -> None:
        if self._pending is not None:
            remember_opened(self._pending, self.recent)
            self._pending = None
        opening, self._opening = self._opening, None
        if opening is not None:
            self._label = opening.shown
            self._open_args = opening
        old, self._store = self._store, store
        self.branch_bar.set_session(None, None)
        if old is not None:
            self.bridge.start(
                f"close:{id(old):x}", old.close(),
                failed=lambda error: log.warning("closing a store failed: %s", error),
            )
        self._session_id = None
        self.setWindowTitle(f"fluxgui — {self._label}")
        self._set_store_label(self._label)
        self.format_label.setText(self._format_text(store))
        self.editor.set_store(store)
        self.watcher.set_store(store)
        self._update_mode()
        self._update_key_notice()
        self._problems = ()
        self._update_problems()
        if store.can_write:
            reason = self.edit_reason()
            if reason is not None:
                self.statusBar().showMessage(
                    f"Writable, but its messages cannot be edited here: {reason}", 15000
                )
        self.count_label.setText("Loading sessions…")
        self.conversation.clear("Select a session.")
        self.search_box.clear()
        self.sessions.set_store(store)
        self.sessions.fetchMore(QModelIndex())
        if self._pending_select is not None:
            self.show_session(self._pending_select)

    # -- chat (issue 7) ---------------------------------------------------------------

    def _install_chat(self) -> None:
        """The chat panel, in a dock on the right (hidden until View › Chat)."""
        from PySide6.QtWidgets import QDockWidget

        from .chat import ChatPanel

        self.chat_panel = ChatPanel(self)
        self.chat_dock = QDockWidget("Chat", self)
        self.chat_dock.setObjectName("chatDock")
        self.chat_dock.setWidget(self.chat_panel)
        self.chat_dock.setAllowedAreas(
            Qt.DockWidgetArea.RightDockWidgetArea | Qt.DockWidgetArea.LeftDockWidgetArea
            | Qt.DockWidgetArea.BottomDockWidgetArea
        )
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.chat_dock)
        self.chat_dock.hide()
        if self._ui_flag(CHAT_VISIBLE):  # open as it was left
            self.chat_dock.show()

    def _ui_flag(self, name: str) -> bool:
        settings = getattr(self.recent, "_settings", None)
        value = settings.value(name, False) if settings is not None else False
        return value is True or str(value).lower() == "true"

    def remember_chat_visible(self, on: bool) -> None:
        """The user showed or hid the chat: the next window opens the same way."""
        settings = getattr(self.recent, "_settings", None)
        if settings is not None:
            settings.setValue(CHAT_VISIBLE, bool(on))
            settings.sync()

    @property
    def store_target(self) -> str | None:
        """What the open store was opened from (a path or URL; it may hold a password:
        show it through :func:`display_target`)."""
        return self._open_args.target if self._open_args is not None else None

    def show_chat(self, on: bool = True) -> None:
        self.chat_dock.setVisible(on)
        if on:
            self.chat_panel.message.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def chat_finished(self, session_id: str, *, copied: bool = False) -> None:
        """A chat added messages to ``session_id``: show them (a copy: switch to it)."""
        self.sessions.refresh([session_id])
        if copied:
            self._pending_select = session_id
            self._session_id = None
            self.show_session(session_id)
        elif session_id == self._session_id:
            self.conversation.catch_up()

    # -- editing ---------------------------------------------------------------------

    def _update_mode(self) -> None:
        chat = getattr(self, "chat_panel", None)
        if chat is not None:
            chat.store_changed()
        store = self._store
        writable = store is not None and store.can_write
        # A writable store whose messages cannot be edited in place (a JSON folder, Redis,
        # an AdvancedSQLiteSession store, …): say so instead of pretending.
        reason = self.edit_reason() if writable else None
        self.mode_label.setEnabled(store is not None)
        self.mode_label.setChecked(writable)
        if writable and reason is None:
            self.mode_label.setText("✎ editing")
            tip = "Edits are written to the store (click for read-only)"
            self.mode_label.setStyleSheet("QToolButton { color: #8a4b00; font-weight: bold; }")
        elif writable:
            self.mode_label.setText("✎ writable, no edits")
            tip = (
                "Writable: chat messages and imported sessions can be added, but messages "
                f"cannot be edited here: {reason} (click for read-only)"
            )
            self.mode_label.setStyleSheet("QToolButton { color: #8a4b00; }")
        else:
            self.mode_label.setText("read-only")
            tip = "Nothing is written to the store (click to allow editing)"
            self.mode_label.setStyleSheet("")
        # Rich text on purpose (escaped): a reason quotes the store's path, which is data.
        self.mode_label.setToolTip(f"<p>{esc(tip)}</p>")
        toggle = getattr(self, "actions_by_name", {}).get("editing")
        if toggle is not None:
            toggle.setChecked(writable)
            toggle.setEnabled(store is not None)
            toggle.setToolTip(f"<p>{esc(tip)}</p>")
            toggle.setStatusTip(tip)
        self._update_edit_actions()

    def _update_edit_actions(self) -> None:
        actions = getattr(self, "actions_by_name", None)
        # The undo stack signals while the window is being destroyed.
        if not actions or not shiboken6.isValid(self.editor.stack):
            return
        writable = self.editor.can_edit and not self.editor.running
        # Message edits need a store that can be edited in place, not just a writable one.
        editable = writable and self.edit_reason() is None
        has_session = self._session_id is not None
        has_message = self.conversation.current_message() is not None
        enabled = {
            "undo": writable and self.editor.stack.canUndo(),
            "redo": writable and self.editor.stack.canRedo(),
            "edit_message": editable and has_message,
            "insert_before": editable and has_message,
            "insert_after": editable and has_session,
            "delete_messages": editable and has_message,
            "fork": writable and has_message,
            "pop_message": editable and has_session,
            "clear_session": editable and has_session,
            "delete_session": editable and has_session,
            "branch_from_turn": can_branch_here(self),
        }
        for name, on in enabled.items():
            if name in actions:
                actions[name].setEnabled(on)
        stack = self.editor.stack
        if "undo" in actions:
            text = stack.undoText()
            actions["undo"].setText(f"&Undo {text}" if text else "&Undo")
        if "redo" in actions:
            text = stack.redoText()
            actions["redo"].setText(f"&Redo {text}" if text else "&Redo")

    def edit_reason(self) -> str | None:
        """Why the open store's messages cannot be edited in place now (``None``: they
        can): read-only, or a store whose ``check_editable`` says no (an Advanced store,
        a JSON session folder, Redis)."""
        return self.editor.reason_not_editable()

    def _editable_store(self, *, writable_only: bool = False) -> Store | None:
        """The store when edits may be written now, else explain why (error bar).
        ``writable_only``: an edit every writable store supports (a fork), even those
        whose messages cannot be edited (AdvancedSQLiteSession stores)."""
        store = self._store
        reason = self.editor.reason_not_editable()
        if writable_only and store is not None and store.can_write:
            reason = None
        if reason is not None or store is None:
            if store is not None and not store.can_write:
                reason = "the store is open read-only: turn on editing (Ctrl+Shift+E) first"
            self.show_error(ReadOnlyError(reason or "no store is open"))
            return None
        if self.editor.running:
            return None
        return store

    def _session_count(self, session_id: str) -> int:
        row = self.sessions.row_of(session_id)
        info = self.sessions.session_at(row) if row is not None else None
        if info is not None:
            return info.messages
        return self.conversation.loaded_count if session_id == self._session_id else 0

    def undo(self) -> None:
        if self.editor.can_edit:
            self.editor.undo()

    def redo(self) -> None:
        if self.editor.can_edit:
            self.editor.redo()

    def clear_session(self, session_id: str | None = None) -> None:
        """Remove every message of a session (after a confirmation naming it)."""
        from .edit_dialogs import confirm_clear

        sid = session_id or self._session_id
        store = self._editable_store()
        if store is None or sid is None:
            return
        if confirm_clear(self, sid, self._session_count(sid)):
            self.editor.run(store.clear_messages(sid))

    def delete_session(self, session_id: str | None = None) -> None:
        """Delete a session and its messages (after a confirmation naming it)."""
        from .edit_dialogs import confirm_delete_session

        sid = session_id or self._session_id
        store = self._editable_store()
        if store is None or sid is None:
            return
        if confirm_delete_session(self, sid, self._session_count(sid)):
            self.editor.run(store.delete_session(sid))

    def delete_messages(self) -> None:
        """Delete the selected messages (after a confirmation when there are several).
        (The Delete key in the session list deletes the session instead.)"""
        from .edit_dialogs import confirm_delete_messages

        store = self._editable_store()
        sid = self._session_id
        picked = self.conversation.selected_messages()
        if store is None or sid is None or not picked:
            return
        if len(picked) > 1 and not confirm_delete_messages(self, len(picked)):
            return
        self.editor.run(store.delete_messages(sid, [m.id for m in picked]))

    def pop_message(self) -> None:
        """Remove the session's last message (as the Agents SDK's ``pop_item``)."""
        store = self._editable_store()
        if store is not None and self._session_id is not None:
            self.editor.run(store.pop_message(self._session_id))

    def edit_message(self) -> None:
        """Edit the current message in a dialog; saved as one undoable change."""
        from .edit_dialogs import MessageEditDialog

        store = self._editable_store()
        sid = self._session_id
        message = self.conversation.current_message()
        if store is None or sid is None or message is None:
            return
        dialog = MessageEditDialog(
            store.format,
            lambda spec: store.edit_values(spec, original=message),
            message,
            f"Edit message {message.id}",
            self,
        )
        if dialog.exec():
            self._select_message_after = message.id
            self.editor.run(
                store.update_message(sid, message.id, dialog.result_spec, original=message)
            )

    def insert_message(self, where: str = "after") -> None:
        """Insert a new message before or after the current one (at the end when no
        message is selected)."""
        from .edit_dialogs import MessageEditDialog

        store = self._editable_store()
        sid = self._session_id
        if store is None or sid is None:
            return
        anchor = self.conversation.current_message()
        title = (
            f"Insert a message {where} message {anchor.id}" if anchor else "Add a message"
        )
        dialog = MessageEditDialog(store.format, lambda spec: store.edit_values(spec), None, title, self)
        if dialog.exec():
            self.editor.run(
                store.insert_message(
                    sid,
                    dialog.result_spec,
                    anchor=anchor.id if anchor else None,
                    where="before" if where == "before" else "after",
                )
            )

    def compare_sessions(self) -> object | None:
        """Compare two sessions side by side: the two selected in the list, or the open
        session and the one it was forked from. Returns the (non-modal) dialog."""
        from .compare import open_compare

        store = self._store
        if store is None:
            return None
        ids = self.selected_session_ids()
        origin = self._origin
        shown_branch = self.conversation.branch
        if len(ids) == 2:
            a, b = ids
        elif (
            len(ids) == 1 and ids[0] == self._session_id
            and shown_branch is not None and shown_branch != MAIN
        ):
            # An AdvancedSQLiteSession session shown on another branch: main against it.
            sid = ids[0]
            return open_compare(
                self, self.bridge, store, sid, sid, branch_a=MAIN, branch_b=shown_branch
            )
        elif len(ids) == 1 and origin is not None and ids[0] == self._session_id:
            a, b = str(origin["session_id"]), ids[0]
        else:
            self.show_error(FluxguiError(
                "select two sessions in the list (Ctrl+click) to compare them, open a "
                "fork to compare it with its origin, or a branch to compare it with main"
            ))
            return None
        return open_compare(self, self.bridge, store, a, b)

    def fork_here(self) -> None:
        """Fork: a new session with the conversation up to and including the selected
        message (the origin is not changed); it opens once made. Undoable."""
        from PySide6.QtWidgets import QInputDialog, QLineEdit

        store = self._editable_store(writable_only=True)
        sid = self._session_id
        message = self.conversation.current_message()
        if store is None or sid is None or message is None:
            return
        name, ok = QInputDialog.getText(
            self,
            "Fork from here",
            f"A new session with the messages up to and including #{message.id}.\n"
            "Its id (empty: chosen for you):",
            QLineEdit.EchoMode.Normal,
            "",
        )
        if not ok:
            return
        self._show_after_edit = True
        self.editor.run(store.fork_session(
            sid, message.id, name.strip() or None, branch=self.conversation.branch
        ))

    def branch_from_turn(self) -> None:
        """Branch from the selected user message's turn (Advanced stores; undoable)."""
        branch_from_turn(self)

    def _on_edit_applied(self, change: Change) -> None:
        if isinstance(change, BranchChange) and not getattr(self, "_show_after_edit", False):
            on_branch_change_applied(self, change)
            return
        self.error_bar.clear()
        sid = change.session_id
        if getattr(self, "_show_after_edit", False):  # a fork: show it
            self._show_after_edit = False
            self.sessions.refresh([sid])
            self._pending_select = sid
            self._session_id = None
            self.show_session(sid)
            self._update_edit_actions()
            return
        if change.added and self._select_message_after is None:
            self._select_message_after = change.added[0]["id"]
        self.sessions.refresh([sid])
        if sid == self._session_id:
            if change.removed and not change.added:
                self._maybe_gone = sid
            self.conversation.reload(keep_position=True)  # keeps the scroll position
        elif self._session_id is None:
            self._pending_select = sid
            self.show_session(sid)
        self._update_edit_actions()

    def _on_edit_failed(self, error: object) -> None:
        assert isinstance(error, BaseException)
        self._select_message_after = None
        self.show_error(error)
        # Show what the store really holds now (the session may be gone: that is no
        # second error).
        current = self._session_id
        self.sessions.reload()
        if current is not None:
            self._maybe_gone = current
            self._session_id = None
            self._pending_select = current
            self.show_session(current)

    def _conversation_menu(self, menu: QMenu, message: object) -> None:
        actions = self.actions_by_name
        menu.addSeparator()
        for name in ("edit_message", "insert_before", "insert_after", "delete_messages"):
            menu.addAction(actions[name])
        menu.addSeparator()
        menu.addAction(actions["fork"])
        if is_branchable(self._store):
            menu.addAction(actions["branch_from_turn"])

    def _session_menu(self, pos: QPoint) -> None:
        index = self.session_view.indexAt(pos)
        if not index.isValid():
            return
        info = self.sessions.session_at(index.row())
        if info is None:
            return
        menu = self.build_session_menu(info.id)
        menu.exec(self.session_view.viewport().mapToGlobal(pos))
        menu.deleteLater()

    def build_session_menu(self, session_id: str) -> QMenu:
        """The session list's context menu for ``session_id`` (not shown)."""
        menu = QMenu(self.session_view)
        editable = (
            self.editor.can_edit and not self.editor.running and self.edit_reason() is None
        )
        clear = menu.addAction("Clear Session…", lambda: self.clear_session(session_id))
        delete = menu.addAction("Delete Session…", lambda: self.delete_session(session_id))
        for action in (clear, delete):
            action.setEnabled(editable)
        if not editable:
            menu.addSeparator()
            menu.addAction(self.actions_by_name["editing"])
        return menu

    def _set_store_label(self, text: str) -> None:
        # A long path or URL must not widen the window: elide it, full text in the tip
        # (escaped: Qt would take a tooltip that looks like HTML for rich text).
        metrics = self.store_label.fontMetrics()
        self.store_label.setText(metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, 480))
        self.store_label.setToolTip(f"<p style='white-space:pre'>{esc(text)}</p>")

    def _format_text(self, store: Store) -> str:
        text = f"{store.format} format"
        if getattr(store, "needs_key", False):
            # No emoji: a status bar font may have no glyph for it.
            text += " · locked" if getattr(store, "cipher", None) is None else " · decrypted"
        return text

    def _show_count(self, more: bool) -> None:
        rows = self.sessions.rowCount()
        plural = "" if rows == 1 else "s"
        self.count_label.setText(f"{rows}{'+' if more else ''} session{plural}")

    def _on_page_loaded(self, added: int, more: bool) -> None:
        rows = self.sessions.rowCount()
        self._show_count(more)
        self._update_problems()  # a JSON folder finds unreadable files as it lists
        if self._pending_select is not None:
            row = self.sessions.row_of(self._pending_select)
            if row is not None:
                self._pending_select = None
                self._select_row(row)
        elif self._auto_select and rows:
            self._auto_select = False
            self._select_row(0)
        if not rows and not more and not self.sessions.searching:
            self.conversation.clear("This store has no sessions.")

    def _on_sessions_failed(self, error: object) -> None:
        assert isinstance(error, BaseException)
        self.count_label.setText(f"{self.sessions.rowCount()} sessions (loading failed)")
        self.show_error(error)

    # -- selection -------------------------------------------------------------------

    def _select_row(self, row: int) -> None:
        index = self.sessions.index(row, 0)
        self.session_view.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.session_view.scrollTo(index)

    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self.sessions.removing:
            # The shown session's row left the list (deleted elsewhere): keep showing
            # it, and let the pane find out and say so.
            self.conversation.catch_up()
            return
        info = self.sessions.session_at(current.row()) if current.isValid() else None
        if info is not None:
            self.show_session(info.id)
