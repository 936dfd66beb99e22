"""Opening stores in the window: from a path, a URL, the recent list, a drop or the demo;
reopening the open one for editing or with its encryption key; the notices about it.

Until a new store has opened, the open one stays (a failed open leaves it in place). How
the open store was opened (:class:`OpenedStore`) is kept to reopen it — read-only ↔
editing, or with a key — the same way. An encryption key given here is kept in memory
only, with those arguments: never in the settings. Above the panes: the key notice (an
encrypted store opened without its key: "Enter Key…") and the skipped-files notice (a
JSON session folder with files that could not be read).

A keyring call may block for seconds, so none runs on the UI thread: a recent store's
password is looked up on a worker thread before it opens, and one to remember is filed
on a worker thread after it has opened.
"""

from __future__ import annotations

import html
import logging
from dataclasses import replace
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QTimer

from fluxgui.adapters.registry import DEFAULT_TTL, conversations_label
from fluxgui.core.errors import FluxguiError, SeveralStores
from fluxgui.core.ports import OpenOptions
from fluxgui.core.redact import redact_text, redact_url
from fluxgui.core.text import plural, table_pairs_text
from fluxgui.core.visible import visible
from fluxgui.core.demo import demo_store_path
from fluxgui.core.roles import Store

from ..conversations import with_remembered
from ..dialogs.encryption_key import KeyDialog
from ..dialogs.files import open_file_dialog, open_folder_dialog
from ..dialogs.opening import OpenedStore, OpenRequest, ask_password, ask_url, remember_opened
from ..dialogs.table_chooser import TableChooser
from ..settings import resolve_target_async
from ..workspace.members import Joining, WindowWorkspace

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from ..shell import OpenHost

log = logging.getLogger(__name__)

KEY_NOTICE = (
    "This store holds encrypted sessions (Agents SDK EncryptedSession). "
    "Its items stay locked until you give the key."
)


def skipped_files_text(problems: list[str] | tuple[str, ...], what: str = "file") -> str:
    """The one-line notice for a JSON folder's unreadable files (``what``: the things
    skipped, such as conversations the server does not know)."""
    return (
        f"Skipped {plural(len(problems), what)} that could not be read: "
        + "; ".join(" ".join(str(p).split()) for p in problems)
    )


class StoreController:
    """Opens stores for a :class:`~.main.MainWindow` and keeps how the open one was opened:
    ``window`` is the dialogs' parent (its title, its status bar), ``host`` what it uses
    of the window (a :class:`~fluxgui.qt.shell.OpenHost`)."""

    #: the open that failed last and its request: to try again (another API key)
    failed: tuple[OpenedStore, OpenRequest | None] | None = None

    def __init__(self, window: QMainWindow, host: OpenHost) -> None:
        self._window = window
        self._host = host
        #: the known or unexpected error that stopped the last open (None: it worked)
        self.open_error: BaseException | None = None
        #: the open store
        self.store: Store | None = None
        #: the open store's label (no secret in it)
        self.label = ""
        #: how the open store was opened (it may hold the encryption key: memory only)
        self.opened: OpenedStore | None = None
        #: the same for an open under way; it becomes ``opened`` once it has opened
        self.opening: OpenedStore | None = None
        #: the request being opened: remembered (recent stores, keyring) once it has opened
        self.pending: OpenRequest | None = None
        #: the skipped files the notice shows
        self.problems: tuple[str, ...] = ()
        #: the encryption-key dialog while it is open
        self.key_dialog: KeyDialog | None = None
        #: the dialog choosing among a database's table pairs while it is open
        self.table_chooser: TableChooser | None = None
        #: every open store of the window (issue 36); ``store`` is the current one
        self.workspace = WindowWorkspace()
        #: how the open under way joins the workspace (see ``members.Joining``)
        self.joining: Joining = "replace"
        #: the label the store being added gets (``None``: its file name)
        self.joining_label: str | None = None
        #: told after a store became current (the workspace's parts follow)
        self.followers: list[Callable[[], None]] = []
        host.conversation.ids.changed.connect(self.retitle)  # (View › Redact turned on or off)

    @property
    def target(self) -> str | None:
        """What the open store was opened from (a path or URL; it may hold a password)."""
        return self.opened.target if self.opened is not None else None

    @property
    def locked(self) -> bool:
        """Whether the open store holds encrypted items and was opened without a key."""
        store = self.store
        return store is not None and store.needs_key and not store.has_key

    # -- opening -------------------------------------------------------------------

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
        # An OpenAI Conversations server: the ids remembered for it are listed too.
        opts = with_remembered(self._host.recent.settings, target, opts)
        # Never a secret; a Conversations target by its server.
        shown = redact_text(label) if label else (
            conversations_label(target, opts.base_url) or redact_url(target)
        )
        self.opening = OpenedStore(target, opts, shown)
        self._host.error_bar.clear()
        self.open_error = None
        self._host.count_label.setText(f"Opening {shown}…")
        self._host.expect_selection(session_id)
        self._host.bridge.start("open", open_store(target, opts), self._on_opened, self._on_open_failed)

    def open_request(self, request: OpenRequest) -> None:
        """Open what a dialog, the recent list or a drop asked for; it joins the recent
        stores (and its password the keyring, when asked) once it has opened."""
        self.pending = request
        self.open_target(request.target, request.options, label=request.label)

    def open_file(self) -> None:
        path = open_file_dialog(self._window)
        if path:
            self.open_request(OpenRequest(path, path))

    def open_folder(self) -> None:
        """A folder of JSON session files (HelloAgent Store)."""
        path = open_folder_dialog(self._window)
        if path:
            self.open_request(OpenRequest(path, path))

    def open_url(self) -> None:
        request = ask_url(self._window)
        if request is not None:
            self.open_request(request)

    def open_dropped(self, paths: list[str]) -> None:
        """Files dropped on the window: a file opens as a SQLite store, a folder as a JSON
        session folder."""
        if paths:
            path = paths[0].rstrip("/") or paths[0]
            self.open_request(OpenRequest(path, path))

    def open_recent(self, stored: str, label: str, key_prefix: str | None = None) -> None:
        """A recent store: its password from the keyring (looked up on a worker thread),
        else asked for. ``key_prefix`` (a Redis store's): the one given, else the one
        the recent list remembers for ``stored``."""
        window = self._window
        recent = self._host.recent
        label = label or redact_url(stored)
        prefix = key_prefix or recent.key_prefix(stored)
        needs = recent.needs_password(stored)

        def found(target: str | None) -> None:
            # Asking for the password runs a nested event loop: not inside this task.
            QTimer.singleShot(0, window, lambda: self._open_stored(stored, target, label, prefix))

        self._host.bridge.start("recent", resolve_target_async(stored, needs), found, self._host.show_error)

    def _open_stored(
        self, stored: str, target: str | None, label: str, prefix: str | None
    ) -> None:
        if target is not None:
            self.open_request(OpenRequest(target, label, key_prefix=prefix))
            return
        request = ask_password(self._window, stored, label, prefix)
        if request is not None:
            self.open_request(request)

    def open_demo(self) -> None:
        demo = demo_store_path()
        if demo is None:
            self._host.show_error(
                FluxguiError("the demo store is missing from this installation")
            )
            return
        self.open_target(str(demo), label=f"Demo store ({demo.name})")

    # -- reopening -------------------------------------------------------------------

    def reopen(self, *, writable: bool, **changes: Any) -> None:
        """Reopen the open store's target as it was opened (key, prefix, tables…),
        staying on the open session; ``changes`` override some of those options."""
        opened = self.opened
        if opened is None:
            return
        self.joining = "current"
        self.open_target(
            opened.target,
            opened.options.with_(writable=writable, **changes),
            label=self.label,
            session_id=self._host.shown(),
        )

    def set_editing(self, on: bool) -> None:
        """Reopen the store writable (``on``) or read-only, staying on the open session;
        the undo stack is kept."""
        store = self.store
        if store is None or self.opened is None or on == store.can_write:
            self._host.edits().update_mode()
            return
        self.reopen(writable=on)  # with the key and key prefix it was opened with

    def enter_key(self) -> KeyDialog | None:
        """File › Enter Encryption Key: ask for the key (and TTL) of an encrypted store
        and reopen it with them. Returns the (window-modal, already shown) dialog."""
        store = self.store
        if store is None or not store.needs_key:
            return None
        if self.key_dialog is not None:
            self.key_dialog.raise_()
            return self.key_dialog
        ttl = self.opened.options.ttl if self.opened is not None else DEFAULT_TTL
        keys = len(self.opened.options.keys) if self.opened is not None else 0
        dialog = KeyDialog(self._window, where=self.label, ttl=ttl, keys_in_use=keys)
        self.key_dialog = dialog
        dialog.finished.connect(lambda result, d=dialog: self._on_key_dialog_done(d, result))
        dialog.open()
        return dialog

    def _on_key_dialog_done(self, dialog: KeyDialog, result: int) -> None:
        self.key_dialog = None
        key, ttl = dialog.key(), dialog.ttl()
        dialog.forget()
        dialog.deleteLater()
        if result == KeyDialog.DialogCode.Accepted and key:
            self.unlock(key, ttl)

    def unlock(self, key: str, ttl: int = DEFAULT_TTL) -> None:
        """Reopen the open store with an encryption key (kept in memory only) added to
        the keys already given — a key ring: each session is read with whichever key
        opens it — staying on the open session and in the same mode. A wrong key leaves
        the store as it is and says so in the error bar."""
        store = self.store
        if store is None or self.opened is None:
            return
        ring = tuple(dict.fromkeys((*self.opened.options.keys, key)))
        self.reopen(writable=store.can_write, key=ring if len(ring) > 1 else key, ttl=int(ttl))

    @property
    def key_count(self) -> int:
        """How many encryption keys the open store was opened with."""
        return len(self.opened.options.keys) if self.opened is not None else 0

    # -- notices ---------------------------------------------------------------------

    def update_key_notice(self) -> None:
        store = self.store
        action = self._host.actions.get("enter_key")
        if action is not None:
            action.setEnabled(store is not None and store.needs_key)
        if self.locked:
            self._host.key_bar.show_notice(KEY_NOTICE)
        else:
            self._host.key_bar.hide()

    def update_problems(self) -> None:
        """Show (again) the skipped-files notice when the store's list of unreadable files
        changed; hide it when there is none."""
        store = self.store
        problems = tuple(str(p) for p in store.problems) if store is not None else ()
        if problems == self.problems:
            return
        self.problems = problems
        bar = self._host.problems_bar
        if not problems:
            bar.hide()
            return
        shown = problems[:50]
        tip = "<br>".join(html.escape(p) for p in shown)
        if len(problems) > len(shown):
            tip += f"<br>… and {len(problems) - len(shown)} more"
        what = store.traits.noun if store is not None and store.traits.remote else "file"
        bar.show_notice(skipped_files_text(problems, what), f"<p>{tip}</p>")

    # -- outcomes --------------------------------------------------------------------

    def _on_opened(self, store: Store) -> None:
        if self.pending is not None:
            # The recent list now; a password to remember goes to the keyring on a
            # worker thread.
            remember_opened(self.pending, self._host.recent)
            self.pending = None
        opening, self.opening = self.opening, None
        if opening is not None:
            self.label = opening.shown
            self.opened = opening
        how, self.joining = self.joining, "replace"
        given, self.joining_label = self.joining_label, None
        closing = self.workspace.join(store, self.opened or OpenedStore(store.target, OpenOptions(), self.label),
                                      how, self.store, given)
        for old in closing:
            self._host.bridge.start(
                f"close:{id(old):x}", old.close(),
                failed=lambda error: log.warning("closing a store failed: %s", error),
            )
        self.make_current(store)

    def adopt(self, store: Store, opened: OpenedStore, how: Joining, label: str | None = None) -> None:
        """A store opened elsewhere (a workspace's) joins the window as ``how`` says."""
        self.opening, self.joining, self.joining_label = opened, how, label
        self._on_opened(store)

    def retitle(self) -> None:
        """Name the current store in the title and the status bar as the window shows
        names now (View › Redact on: a path holding an address shows its placeholder)."""
        if self.store is None:
            return
        shown = self._host.conversation.ids.place(self.label)
        member, n = self.workspace.member_of(self.store), len(self.workspace)
        if n > 1 and member is not None:  # a workspace: how many stores, which one is current
            shown_title = f"{n} stores · {self._host.conversation.ids.place(member.label)}"
        else:
            shown_title = shown
        # the store first and the app name last: Qt appends the display name ("fluxgui")
        # to a title that does not end with it, which repeated it (issue 37)
        self._window.setWindowTitle(f"{shown_title} — fluxgui")
        self._host.status.set_store(self.store, shown, keys=self.key_count)

    def make_current(self, store: Store, *, listed: bool = True) -> None:
        """Make ``store`` (one of the workspace's) the window's current store: the one
        the status bar names, edits, watches, indexes and (``listed``) lists."""
        window = self._window
        member = self.workspace.member_of(store)
        if member is not None and member.store is not self.store:
            self.label, self.opened = member.opened.shown, member.opened
        self.store = store
        self._host.branch_bar().set_session(None, None)
        self._host.forget_shown()
        self.retitle()
        self._host.editor.set_store(store)
        self._host.watcher.set_store(store)
        self._host.indexing.set_store(store)
        self._host.edits().update_mode()
        self._host.conversations_bar().store_opened(store)
        self.update_key_notice()
        self.problems = ()
        self.update_problems()
        self.update_tables_notice()
        if self.key_count > 1:
            window.statusBar().showMessage(f"{self.key_count} encryption keys in use", 15000)
        else:
            window.statusBar().clearMessage()
        if store.can_write:
            reason = self._host.edits().edit_reason()
            if reason is not None:
                window.statusBar().showMessage(
                    f"Writable, but its messages cannot be edited here: {reason}", 15000
                )
        if listed:
            self._host.list_sessions(store)
        else:
            self._host.sessions.set_store(store)
        for follow in self.followers:
            follow()

    def _on_open_failed(self, error: Exception) -> None:
        request, self.pending = self.pending, None
        opening, self.opening = self.opening, None
        if not isinstance(error, SeveralStores):
            self.joining, self.joining_label = "replace", None
        if isinstance(error, SeveralStores) and opening is not None:
            # Several Agents SDK table pairs: ask which (the open one stays meanwhile).
            self._host.count_label.setText(f"{len(error.pairs)} stores in {opening.shown}: choose one")
            self.choose_tables(opening, error.pairs, request, error.sessions)
            return
        self.open_error = error
        self.failed = (opening, request) if opening is not None else None
        self._host.forget_selection()
        if self.store is None:
            self._host.count_label.setText("No store open")
            self._host.conversation.clear("No store is open.")
        else:  # the store that was open stays (a wrong key, a failed reopen)
            self._host.session_list.show_count(self._host.sessions.canFetchMore(QModelIndex()))
            self.update_key_notice()
        self._host.show_error(error)

    def update_tables_notice(self) -> None:
        """Say so when the database holds other Agents SDK stores (table pairs) than the
        one open; "Choose…" offers them all."""
        store, bar = self.store, self._host.tables_bar
        others = list(store.tables.others) if store is not None else []
        if not others:
            bar.hide()
            return
        shown = table_pairs_text(others, store.tables.sessions if store is not None else {})
        bar.show_notice(
            f"This database holds {plural(len(others), 'other Agents SDK store')} "
            f"(tables {visible(shown, keep_layout=False)}).",
            "Each store is a sessions table and a messages table; Choose… opens another.",
        )

    def choose_other_tables(self) -> TableChooser | None:
        """The tables notice's "Choose…": the chooser with every pair, the open one first."""
        store, opened = self.store, self.opened
        if store is None or opened is None or not store.tables.others:
            return None
        current = (opened.options.sessions_table, opened.options.messages_table)
        pairs = list(store.tables.others)
        if None not in current:
            pairs.insert(0, (str(current[0]), str(current[1])))
        return self.choose_tables(opened, pairs, None, store.tables.sessions)

    def choose_tables(
        self,
        opening: OpenedStore,
        pairs: list[tuple[str, str]],
        request: OpenRequest | None,
        sessions: dict[tuple[str, str], int] | None = None,
    ) -> TableChooser:
        """Ask which of a database's Agents SDK stores to open (a window-modal dialog,
        returned already shown, each pair with its session count when known); OK opens
        it with those table names."""
        dialog = TableChooser(pairs, self._window, where=opening.shown, sessions=sessions)
        self.table_chooser = dialog

        def done(result: int) -> None:
            self.table_chooser = None
            chosen = dialog.chosen()
            dialog.deleteLater()
            if result != TableChooser.DialogCode.Accepted or chosen is None:
                self.joining, self.joining_label = "replace", None
                self._host.forget_selection()
                if self.store is None:
                    self._host.count_label.setText("No store open")
                else:
                    self._host.session_list.show_count(self._host.sessions.canFetchMore(QModelIndex()))
                return
            options = opening.options.with_(sessions_table=chosen[0], messages_table=chosen[1])
            self.open_target(opening.target, options, label=opening.shown)
            if request is not None:  # the recent list keeps the tables (never a key)
                self.pending = replace(
                    request,
                    options=request.options.with_(
                        sessions_table=chosen[0], messages_table=chosen[1]
                    ),
                )

        dialog.finished.connect(done)
        dialog.open()
        return dialog

    async def aclose(self) -> None:
        """Close every open store."""
        store, self.store = self.store, None
        others = [m.store for m in self.workspace.members if m.store is not store]
        self.workspace.members = []
        for s in (store, *others):
            if s is not None:
                await s.close()
