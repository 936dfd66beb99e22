"""The window's workspace (issue 36): the store chips above the session list, the
all-stores list (a Store column, the "split across N stores" badge), the merged timeline
of a session held by several stores, and the File menu's workspace actions.

The window's current store (``host.stores.store``) stays *the* store every other part
uses (edits, live refresh, the search index, reviews, the doctor): it is the store of the
chosen chip, or in the all-stores list the store of the selected session (its first
store for one held by several). With one store the window is as it always was: the
chips are hidden and File › Open replaces the store; Add Store adds one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QObject, QPoint, Qt
from PySide6.QtWidgets import (
    QBoxLayout, QInputDialog, QMenu, QMessageBox, QSplitter, QStackedWidget, QWidget,
)

from fluxgui.core.errors import SessionNotFound
from fluxgui.core.ports import OpenOptions
from fluxgui.core.roles import Store
from fluxgui.core.text import plural
from fluxgui.services.workspace import Entry, Workspace
from fluxgui.services.workspace.screen import first_placed, redacted_placed, redacted_timeline
from fluxgui.services.workspace.timeline import Placed, Timeline, timeline

from ..dialogs.opening import OpenedStore, OpenRequest
from .editing import WorkspaceEditor
from .list_cells import make_view
from .list_model import WorkspaceListModel
from .members import WindowWorkspace
from .store_bar import ALL, StoreBar
from .timeline_view import TimelineView
from .watching import MemberWatchers
from .window_files import WorkspaceFiles

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow

    from .host import WorkspaceHost


TIMELINE_KEY = "workspace-timeline"
FIRST_KEY = "workspace-timeline-first"


class WorkspaceController(QObject):
    """See the module. It is given the window (its title, the parent of its parts and
    dialogs) and what it uses of the window (``host``, a :class:`~.host.WorkspaceHost`)."""

    def __init__(self, window: QMainWindow, host: WorkspaceHost) -> None:
        super().__init__(window)
        self._window = window
        self._host = host
        self.members: WindowWorkspace = host.stores.workspace
        self.scope = ALL
        self._shown: list[tuple[str, int]] = []
        self.bar = StoreBar(window, self.add_menu, ids=host.conversation.ids)
        self.bar.scopeChosen.connect(self.choose)
        self.bar.renameAsked.connect(self.rename)
        self.bar.removeAsked.connect(self.remove)
        self.model = WorkspaceListModel(self._host.bridge, self, ids=host.conversation.ids)
        self.view = make_view(window, self.model)
        self.view.colour_of = self.members.colour  # type: ignore[attr-defined]
        self.view.selectionModel().currentRowChanged.connect(self._on_row)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.model.pageLoaded.connect(self._on_page)
        self.model.loadFailed.connect(self._host.show_error)
        self.timeline = TimelineView(self.members.colour, window, ids=host.conversation.ids)
        self.editor = WorkspaceEditor(self._host.bridge, self._store_of, self)
        self.editor.applied.connect(self._on_edited)
        self.editor.failed.connect(self._host.show_error)
        self.timeline.editAsked.connect(self.edit)
        self.timeline.undoAsked.connect(self.editor.undo)
        self.timeline.redoAsked.connect(self.editor.redo)
        self.timeline.compareAsked.connect(self.compare)
        self.files = WorkspaceFiles(window, host, self)
        self._auto = False
        #: the session to select once the all-stores list has it
        self._pending: str | None = None
        #: the session selected before the list was read again: selected again when it
        #: is on the first page, else nothing (it may be gone)
        self._keep: str | None = None
        self.watchers = MemberWatchers(self)
        self.watchers.changed.connect(self._on_changed)
        self._place()
        self._host.stores.followers.append(self.follow)
        # live refresh: the current store by the window's watcher, the others by these
        host.store_changed.connect(self._on_changed)

    # -- building ------------------------------------------------------------------

    def _place(self) -> None:
        """The chips above the list, the all-stores list in a stack with the session
        list, the merged timeline in a stack with the conversation."""
        left = self._host.session_view.parentWidget()
        layout = left.layout() if left is not None else None
        assert isinstance(layout, QBoxLayout)
        self.lists = QStackedWidget(left)
        at = layout.indexOf(self._host.session_view)
        layout.removeWidget(self._host.session_view)
        self.lists.addWidget(self._host.session_view)
        self.lists.addWidget(self.view)
        layout.insertWidget(at, self.lists, 1)
        layout.insertWidget(at, self.bar)
        self.bar.hide()
        splitter = self._host.conversation.parentWidget()
        assert isinstance(splitter, QSplitter)
        index = splitter.indexOf(self._host.conversation)
        self.panes = QStackedWidget()
        sizes = splitter.sizes()
        splitter.replaceWidget(index, self.panes)
        self.panes.addWidget(self._host.conversation)
        self.panes.addWidget(self.timeline)
        splitter.setSizes(sizes)

    def add_menu(self) -> QMenu:
        menu = QMenu("Add Store", self._window)
        menu.addAction("Add &File…", lambda: self.add_with(self._host.stores.open_file))
        menu.addAction("Add F&older…", lambda: self.add_with(self._host.stores.open_folder))
        menu.addAction("Add &URL…", lambda: self.add_with(self._host.stores.open_url))
        return menu

    # -- the stores ----------------------------------------------------------------

    def add_with(self, opener: object) -> None:
        """Open a store with one of the Open actions, adding it to the workspace."""
        stores = self._host.stores
        stores.joining = "add"
        opening = stores.opening
        opener()  # type: ignore[operator]
        if stores.opening is opening:  # the dialog was cancelled: nothing opens
            stores.joining = "replace"

    def add_target(self, target: str, label: str | None = None, options: OpenOptions | None = None) -> None:
        """Open ``target`` and add it to the workspace (``label``: the one it gets)."""
        stores = self._host.stores
        stores.joining, stores.joining_label = "add", label
        if options is None:
            stores.open_request(OpenRequest(target, label or target))
        else:
            stores.open_target(target, options, label=label)

    def open_entries(
        self, entries: list[Entry], options: OpenOptions | None = None, session_id: str | None = None,
    ) -> None:
        """Open a workspace of ``entries`` (a file's, or the command line's targets) in
        place of the stores open; the all-stores list shows them, ``session_id`` (else
        the most recently active session) selected."""
        self._pending = session_id
        base = options or OpenOptions()
        self._host.count_label.setText(f"Opening {plural(len(entries), 'store')}…")

        def opened(workspace: Workspace) -> None:
            for n, m in enumerate(workspace.members):
                shown = OpenedStore(m.opened_target or m.target, base.with_(**m.options), m.label)
                self._host.stores.adopt(m.store, shown, "replace" if n == 0 else "add", entries[n].label)
            self.choose(ALL if len(workspace.members) > 1 else workspace.members[0].label)

        self._host.bridge.start("open", Workspace.open(entries, base), opened, self._host.show_error)

    def follow(self) -> None:
        """A store became current: the chips follow the workspace's stores; the title
        says how many there are and which is current."""
        here = self.members.member_of(self._host.stores.store)
        self._host.stores.retitle()
        shown = [(m.label, id(m.store)) for m in self.members.members]
        if shown == self._shown:
            self._watch()  # (another store may have become current)
            return
        self._shown = shown
        every = self.lists.currentWidget() is self.view
        if len(self.members) < 2:  # one store left: its own list, as without a workspace
            self._show_lists(False)
            if every and here is not None:
                self._host.expect_selection(None)
                self._host.list_sessions(here.store)
            every = False
        if every:  # a store joined, left or was reopened: the list again, its row kept
            self.scope = ALL
            self.reload()
        else:  # the current store's list shows (one just added, opened, reopened)
            self.scope = here.label if here is not None else ALL
        self.bar.setVisible(len(self.members) > 1)
        self.bar.set_stores([(m.label, self.members.colour(m.label), None) for m in self.members.members],
                            self.scope if len(self.members) > 1 else ALL)
        self._watch()

    def choose(self, scope: str) -> None:
        """Show one store's sessions (its label) or every store's (``""``)."""
        self.scope = scope
        self.bar.choose(scope)
        if scope == ALL and len(self.members) > 1:
            self._show_lists(True)
            self._auto = True
            self.model.set_workspace(self.members.service(), self._host.search_box.text().strip())
            return
        self._show_lists(False)
        member = self.members.member(scope)
        if member is not None and member.store is not self._host.stores.store:
            self._host.expect_selection(None)
            self._host.stores.make_current(member.store)
        elif member is not None:
            self._host.list_sessions(member.store)

    def _show_lists(self, every: bool) -> None:
        """The all-stores list (``every``) or the one store's; the search box follows."""
        was = self.lists.currentWidget() is self.view
        self.lists.setCurrentWidget(self.view if every else self._host.session_view)
        self.panes.setCurrentWidget(self._host.conversation)
        self._watch()
        if was == every:
            return
        box = self._host.search_box.searchRequested
        if every:
            box.disconnect(self._host.sessions.set_search)
            box.connect(self.search)
        else:
            box.disconnect(self.search)
            box.connect(self._host.sessions.set_search)

    def search(self, text: str) -> None:
        """The search box in the all-stores list: every store searched, the first hit
        shown once it arrives."""
        if text != self.model.search_text:
            self._auto = True
            self.model.set_search(text)

    def rename(self, label: str) -> None:
        new, ok = QInputDialog.getText(self._window, "Rename store", f"Label of {label}:", text=label)
        if not ok:
            return
        problem = self.members.rename(label, new)
        if problem is not None:
            QMessageBox.information(self._window, "Rename store", f"Not renamed: {problem}.")
            return
        self.rename_done(label, " ".join(new.split()))

    def rename_done(self, old: str, new: str) -> None:
        self.scope = new if self.scope == old else self.scope
        self._shown = []
        self.follow()

    def remove(self, label: str) -> None:
        """Take a store out of the workspace and close it (the last one stays)."""
        if len(self.members) < 2:
            return
        gone = self.members.remove(label)
        if gone is None:
            return
        if gone.store is self._host.stores.store:
            self._host.stores.make_current(self.members.members[0].store, listed=self.scope != ALL)
        else:
            self.follow()
        self._host.bridge.start(f"close:{id(gone.store):x}", gone.store.close())

    def switch_to(self, store: Store) -> None:
        """Make ``store`` current for an undo of its change: the chips follow; the
        all-stores list stays."""
        member = self.members.member_of(store)
        if member is None or member.store is self._host.stores.store:
            return
        if self.lists.currentWidget() is self.view:
            self._host.stores.make_current(store, listed=False)
        else:
            self.choose(member.label)

    def _store_of(self, label: str) -> Store | None:
        member = self.members.member(label)
        return member.store if member is not None else None

    # -- the all-stores list ---------------------------------------------------------

    def _on_page(self, rows: int, more: bool) -> None:
        text = self.model.search_text
        what = f"{plural(rows, 'session')}{'+' if more else ''} in {plural(len(self.members), 'store')}"
        self._host.count_label.setText(f"{what} matching {text!r}" if text else what)
        if self._keep is not None:
            keep, self._keep = self._keep, None
            if self.select(keep):
                self._auto = False
        if self._pending is not None:
            if self.select(self._pending):
                self._pending = None
                self._auto = False
            elif more:
                self.model.fetchMore(QModelIndex())
            else:
                self._host.show_error(SessionNotFound(f"no store of this workspace holds session {self._pending!r}"))
                self._pending = None
        if self._auto and rows:
            self._auto = False
            self.select_row(0)

    def select_row(self, row: int) -> None:
        index = self.model.index(row, 0)
        self.view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.view.scrollTo(index)

    def select(self, session_id: str) -> bool:
        row = self.model.row_of(session_id)
        if row is not None:
            self.select_row(row)
        return row is not None

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        item = self.model.listed(current.row()) if current.isValid() else None
        if item is None:
            return
        first = self.members.member(item.labels[0])
        if first is not None and first.store is not self._host.stores.store:
            self._host.stores.make_current(first.store, listed=False)
        if len(item.labels) < 2:
            self.panes.setCurrentWidget(self._host.conversation)
            self._host.forget_shown()
            self._host.show_session(item.id)
            return
        self.show_merged(item.id)

    def row_menu(self, row: int) -> QMenu | None:
        """The menu of a row of the all-stores list (it is selected first: its store is
        current): a session in one store has the session list's menu, one in several
        Compare ▸ and Consolidate This Session…"""
        item = self.model.listed(row)
        if item is None:
            return None
        self.select_row(row)
        if len(item.labels) < 2:
            rows: Any = self._host.session_list
            return rows.build_menu(item.id) if hasattr(rows, "build_menu") else None
        menu = QMenu(self._window)
        compare = menu.addMenu("Compare")
        for i, a in enumerate(item.labels):
            for b in item.labels[i + 1:]:
                action = compare.addAction(f"{a}  ↔  {b}")
                action.triggered.connect(lambda _c=False, a=a, b=b: self.compare(a, b, item.id))
        consolidate = menu.addAction("Consolidate This Session…")
        consolidate.triggered.connect(lambda _c=False: self.files.consolidate([item.id]))
        return menu

    def _menu(self, pos: QPoint) -> None:
        index = self.view.indexAt(pos)
        menu = self.row_menu(index.row()) if index.isValid() else None
        if menu is not None:
            menu.exec(self.view.viewport().mapToGlobal(pos))
            menu.deleteLater()

    def show_merged(self, session_id: str) -> None:
        """Show ``session_id``'s merged timeline over the stores holding it (the
        conversation pane behind it shows nothing: the window's edit actions have no
        message to act on)."""
        if self.panes.currentWidget() is not self.timeline:
            self.panes.setCurrentWidget(self.timeline)
            self._host.forget_shown()
            self._host.conversation.clear("")
            self._host.update_actions()
        anew = self._host.conversation.shown_anew  # (View › Redact: shown redacted too)
        self.timeline.redacted = anew is not None
        if self.timeline.session_id != session_id:
            self.timeline.clear(f"Merging {session_id}…")
            # its first turns at once, the whole timeline (counts, split) after
            self._host.bridge.start(
                FIRST_KEY, redacted_placed(first_placed(self.members.service(), session_id), anew and anew()),
                lambda placed: self.timeline.show_first(session_id, placed), self._host.show_error,
            )
        self._host.bridge.start(
            TIMELINE_KEY, redacted_timeline(timeline(self.members.service(), session_id), anew and anew()),
            self._on_timeline, self._host.show_error,
        )

    def redaction_changed(self) -> None:
        """View › Redact turned on or off: the merged timeline shown is read again."""
        sid = self.timeline.session_id
        if self.panes.currentWidget() is self.timeline and sid is not None:
            self.timeline.clear(f"Merging {sid}…")
            self.show_merged(sid)

    def reload(self) -> None:
        """View › Reload in the all-stores list: every store's list read again, the
        selected session kept; the merged timeline shown read again."""
        if self.lists.currentWidget() is not self.view:
            return
        row = self.view.currentIndex().row()
        item = self.model.listed(row) if row >= 0 else None
        self._keep = item.id if item is not None else None
        self.model.set_workspace(self.members.service(), self.model.search_text)
        self._timeline_again()

    def _timeline_again(self) -> None:
        """The merged timeline shown (if one is) read again."""
        if self.panes.currentWidget() is self.timeline and self.timeline.session_id is not None:
            self.show_merged(self.timeline.session_id)

    def _watch(self) -> None:
        """While the all-stores list shows, every store but the current one (the window
        watches that) is watched; else none."""
        every = self.lists.currentWidget() is self.view
        self.watchers.follow(self.members.members, self._host.stores.store, every=every)

    def _on_changed(self, *_labels: object) -> None:
        """A store of the workspace changed (the window's watcher tells of the current
        one): the all-stores list and the merged timeline shown are read again."""
        if self.lists.currentWidget() is self.view:
            self.reload()
        else:
            self._timeline_again()

    def _on_timeline(self, line: Timeline) -> None:
        self.timeline.show_timeline(line)
        # the doctor reports the workspace's own finding: split_session (fixed by Consolidate…)
        self._host.doctor.show_merged(
            line.session_id, line.split_finding(), len(line.stores), lambda sid: self.files.consolidate([sid]),
            lambda: self.panes.currentWidget() is self.timeline and self.timeline.session_id == line.session_id)
        self.timeline.undo_button.setEnabled(self.editor.stack.canUndo())
        self.timeline.redo_button.setEnabled(self.editor.stack.canRedo())

    def compare(self, a: str, b: str, session_id: str | None = None) -> QWidget | None:
        """A session (default: the merged one shown) as the stores labelled ``a`` and
        ``b`` hold it, in the Compare window (returned, shown)."""
        from ..compare import open_compare

        sid = session_id or self.timeline.session_id
        store_a, store_b = self._store_of(a), self._store_of(b)
        if sid is None or store_a is None or store_b is None:
            return None
        return open_compare(self._window, self._host.bridge, store_a, sid, sid, store_b=store_b,
                            redaction=self._host.conversation.followed_redaction())

    # -- editing the merged view -------------------------------------------------------

    def edit(self, placed: Placed) -> None:
        """Edit a card's message in a dialog; written to the store that holds it."""
        from fluxgui.services import edits

        from ..dialogs.message_edit import MessageEditDialog

        window, sid = self._window, self.timeline.session_id
        store = self._store_of(placed.store)
        if store is None or sid is None:
            return
        if self._host.conversation.shown is not None:  # (View › Redact) the cards show placeholders
            QMessageBox.information(window, "Edit message", "The timeline is shown redacted: "
                                    "turn off View › Redact to edit a message as stored.")
            return
        if not store.can_write:  # read-only, as stores open: offer to reopen it for editing
            asked = QMessageBox.question(
                window, "Edit message", f"{placed.store} is open read-only. Reopen it for editing?")
            if asked == QMessageBox.StandardButton.Yes:
                self.open_writable(placed.store, lambda: self.edit(placed))
            return
        reason = self.editor.reason(placed.store)
        if reason is not None:
            QMessageBox.information(window, "Edit message", f"{placed.store} cannot be edited: {reason}")
            return
        dialog = MessageEditDialog(store.traits.columns, edits.spec_check(store, placed.message),
                                   placed.message, f"Edit message {placed.message.id} in {placed.store}", window)
        if dialog.exec() and dialog.result_spec is not None:
            self.editor.update(placed, sid, dialog.result_spec)

    def open_writable(self, label: str, then: Callable[[], None] | None = None) -> None:
        """Reopen the store labelled ``label`` for editing (as it was opened: key,
        prefix, tables), in its place in the workspace; then ``then()``."""
        from fluxgui.adapters.registry import open_store

        member = self.members.member(label)
        if member is None:
            return
        opened = member.opened
        options = opened.options.with_(writable=True)

        def done(store: Store) -> None:
            old = member.store
            member.store, member.opened = store, OpenedStore(opened.target, options, opened.shown)
            if old is self._host.stores.store:
                self._host.stores.make_current(store, listed=self.scope != ALL)
            self._watch()  # (the new store watched, the old one no longer)
            self._host.bridge.start(f"close:{id(old):x}", old.close())
            if then is not None:
                then()

        self._host.bridge.start(f"writable:{label}", open_store(opened.target, options), done, self._host.show_error)

    def _on_edited(self, label: str) -> None:
        if self.timeline.session_id is not None:
            self.show_merged(self.timeline.session_id)
        member = self.members.member(label)
        if member is not None and member.store is self._host.stores.store:
            self._host.sessions.refresh()
