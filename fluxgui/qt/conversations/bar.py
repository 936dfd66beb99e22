"""The "Add conversation…" bar above the session list (while a Conversations store is
open), and the window's part in remembering the ids it lists.

Adding an id asks the server for it first; one it knows is remembered for the server
and the store opens again with it, on that conversation (an unknown one is only named
under the field). A remembered id the server no longer knows is forgotten once a listing
is complete (the notice above the panes names it). "Forget" drops the selected conversations from the list (nothing is deleted on
the server). A conversation the window deletes (Clear) is forgotten; one it makes (the
undo of a Clear, an import) is remembered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from fluxgui.core.changes import Change
from fluxgui.core.errors import show_id
from fluxgui.core.visible import visible
from fluxgui.services.transfer_common import TransferResult
from fluxgui.core.roles import Store
from fluxgui.services import pages

from ..widgets import insert_beside, stack
from .remembered import ConversationIds, location_of

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings, SignalInstance
    from PySide6.QtWidgets import QMainWindow

    from ..bridge import AsyncBridge
    from ..editing import Editor
    from ..sessions import SearchBox, SessionListModel
    from ..shell import Stores

PLACEHOLDER = "Add conversation… (its id, conv_…)"
#: the longest id the field takes
MAX_ID = 200


def id_problem(text: str) -> str | None:
    """Why ``text`` cannot be a conversation id (``None``: it can)."""
    if not text:
        return "Type a conversation id, such as conv_68c…"
    if len(text) > MAX_ID:
        return f"A conversation id has at most {MAX_ID} characters."
    if any(ch.isspace() for ch in text) or visible(text, keep_layout=False) != text:
        return "A conversation id has no spaces or hidden characters."
    return None


class ConversationsBar(QWidget):
    """A field to add a conversation id, and "Forget" for the selected ones."""

    #: an id to add (checked)
    addRequested = Signal(str)
    #: forget the selected conversations
    forgetRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: what its wiring uses of the window (set by :func:`install_conversations_bar`)
        self.host: BarHost | None = None
        self.setObjectName("conversationsBar")
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText(PLACEHOLDER)
        self.edit.setClearButtonEnabled(True)
        self.edit.setToolTip(
            "The Conversations API cannot list conversations: add the ids you want to "
            "read. They are remembered for this server (ids only)."
        )
        # Tool buttons: narrow, so the field keeps room in a narrow list pane.
        self.add_button = QToolButton(self)
        self.add_button.setText("Add")
        self.add_button.setToolTip("List this conversation (Enter)")
        self.forget_button = QToolButton(self)
        self.forget_button.setText("Forget")
        self.forget_button.setToolTip(
            "Drop the selected conversations from this list (nothing is deleted on the server)"
        )
        self.hint = QLabel(self)
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setWordWrap(True)
        self.hint.hide()
        self.edit.setMinimumWidth(self.edit.fontMetrics().horizontalAdvance("conv_68c8f0b1") + 24)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        row.addWidget(self.edit, 1)
        row.addWidget(self.add_button)
        row.addWidget(self.forget_button)
        stack(self, (0, 0, 0, 0), 2, row, self.hint)
        self.edit.returnPressed.connect(self.submit)
        self.add_button.clicked.connect(lambda _checked=False: self.submit())
        self.forget_button.clicked.connect(lambda _checked=False: self.forgetRequested.emit())
        self.edit.textChanged.connect(lambda _text: self.hint.hide())
        self.hide()

    def set_store(self, store: Store | None) -> None:
        """Shown while a store that lists named sessions is open."""
        self.setVisible(store is not None and store.traits.named_sessions)

    def store_opened(self, store: Store) -> None:
        """A store opened: shown for it, the ids it was opened with remembered."""
        if self.host is not None:
            remember_opened(self.host, store)
        else:
            self.set_store(store)

    def submit(self) -> None:
        """Add the id typed (after checking it)."""
        text = self.edit.text().strip()
        problem = id_problem(text)
        if problem is not None:
            self.hint.setText(problem)
            self.hint.show()
            return
        self.edit.clear()
        self.addRequested.emit(text)


# --------------------------------------------------------------------------- the window's part


@dataclass(frozen=True)
class BarHost:
    """What the bar's wiring uses of the window: the bar, the window (its status bar),
    the open store (``stores``), the settings (the remembered ids), the bridge, the
    session list, the selected sessions and where errors are shown."""

    bar: ConversationsBar
    window: QMainWindow
    stores: Stores
    settings: QSettings
    bridge: AsyncBridge
    sessions: SessionListModel
    selected: Callable[[], list[str]]
    show_error: Callable[[BaseException], None]


def install_conversations_bar(
    window: QMainWindow,
    search_box: SearchBox,
    editor: Editor,
    transfer_finished: SignalInstance,
    stores: Stores,
    settings: QSettings,
    bridge: AsyncBridge,
    sessions: SessionListModel,
    *,
    selected: Callable[[], list[str]],
    show_error: Callable[[BaseException], None],
) -> ConversationsBar:
    """Put a :class:`ConversationsBar` above the session search and wire it up: to the
    edits written (``editor``), the pages listed and the transfers finished."""
    bar = ConversationsBar(window)
    host = bar.host = BarHost(bar, window, stores, settings, bridge, sessions, selected, show_error)
    insert_beside(search_box, bar)
    bar.addRequested.connect(lambda cid: add_conversation(host, cid))
    bar.forgetRequested.connect(lambda: forget_selected(host))
    editor.applied.connect(lambda change: follow_change(host, change))
    sessions.pageLoaded.connect(lambda _added, more: forget_missing(host, more))
    transfer_finished.connect(lambda result: follow_transfer(host, result))
    return bar


def _remembered(host: BarHost) -> tuple[ConversationIds, str] | None:
    """The remembered ids and the open store's server, when it lists named sessions."""
    store, opened = host.stores.store, host.stores.opened
    if store is None or opened is None or not store.traits.named_sessions:
        return None
    location = location_of(opened.target, opened.options)
    return (ConversationIds(host.settings), location) if location else None


def remember_opened(host: BarHost, store: Store) -> None:
    """A store opened: show the bar for it, and remember the ids it was opened with."""
    host.bar.set_store(store)
    found = _remembered(host)
    opened = host.stores.opened
    if found is not None and opened is not None and opened.options.conversations:
        found[0].add(found[1], opened.options.conversations)


def _reopen(host: BarHost, ids: tuple[str, ...], session_id: str | None) -> None:
    store, opened = host.stores.store, host.stores.opened
    if store is None or opened is None:
        return
    host.stores.open_target(
        opened.target, opened.options.with_(writable=store.can_write, conversations=ids),
        label=host.stores.label, session_id=session_id,
    )


def add_conversation(host: BarHost, cid: str) -> None:
    """Ask the server for ``cid``; when it knows it, remember it for the server and list
    it (first), showing it — else say so under the field."""
    found, store = _remembered(host), host.stores.store
    if found is None or store is None:
        return
    bar = host.bar

    def checked(info: Any) -> None:
        opened = host.stores.opened
        if host.stores.store is not store or opened is None:
            return  # another store opened meanwhile
        if info is None:
            bar.hint.setText(f"{store.target} has no conversation {show_id(cid)}.")
            bar.hint.show()
            return
        found[0].add(found[1], [cid])
        others = tuple(i for i in opened.options.conversations if i != cid)
        _reopen(host, (cid, *others), cid)

    host.bridge.start("conversations:add", pages.session_row(store, cid), checked, host.show_error)


def forget_missing(host: BarHost, more: bool) -> None:
    """The listing is complete: ids the server does not know (any more) are forgotten
    (the notice above the panes names them this once)."""
    found, opened = _remembered(host), host.stores.opened
    if found is None or opened is None or more or host.sessions.search_text:
        return
    listed = {
        info.id
        for info in (host.sessions.session_at(r) for r in range(host.sessions.rowCount()))
        if info is not None
    }
    missing = [i for i in opened.options.conversations if i not in listed]
    if missing:
        found[0].forget(found[1], missing)


def forget_selected(host: BarHost) -> None:
    """Drop the selected conversations from the list and the settings."""
    found = _remembered(host)
    opened = host.stores.opened
    ids = host.selected()
    if found is None or opened is None or not ids:
        return
    found[0].forget(found[1], ids)
    kept = tuple(i for i in opened.options.conversations if i not in set(ids))
    _reopen(host, kept, None)


def follow_change(host: BarHost, change: Any) -> None:
    """An edit (or its undo/redo) was written: a deleted conversation is forgotten, a
    made one remembered."""
    found = _remembered(host)
    if found is None or not isinstance(change, Change):
        return
    ids, location = found
    if change.session_before is not None and change.session_after is None:
        ids.forget(location, [change.session_id])
    elif change.session_before is None and change.session_after is not None:
        ids.add(location, [change.session_id])
    if change.added and "new id" in change.label:
        # An undo put items back: the store's label says they (or the conversation)
        # have new ids; say it where the user looks.
        host.window.statusBar().showMessage(change.label, 15000)


def follow_transfer(host: BarHost, result: Any) -> None:
    """An import (or a copy) finished: remember the conversations it made in the open
    store (those the store now lists)."""
    found, store = _remembered(host), host.stores.store
    written = [new for _old, new in result.written] if isinstance(result, TransferResult) else []
    if found is None or store is None or not written:
        return
    ids, location = found

    def done(infos: list[Any]) -> None:
        made = [i.id for i in infos]
        if made:
            ids.add(location, made)

    host.bridge.start("conversations:remember", pages.sessions_by_ids(store, written), done)
