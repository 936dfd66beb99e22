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
    from ..shell import Shell

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


def install_conversations_bar(window: Shell) -> ConversationsBar:
    """Put a :class:`ConversationsBar` above ``window``'s session search and wire it up."""
    bar = ConversationsBar(window)
    insert_beside(window.search_box, bar)
    bar.addRequested.connect(lambda cid: add_conversation(window, cid))
    bar.forgetRequested.connect(lambda: forget_selected(window))
    window.editor.applied.connect(lambda change: follow_change(window, change))
    window.sessions.pageLoaded.connect(lambda _added, more: forget_missing(window, more))
    window.transferFinished.connect(lambda result: follow_transfer(window, result))
    return bar


def _remembered(window: Shell) -> tuple[ConversationIds, str] | None:
    """The remembered ids and the open store's server, when it lists named sessions."""
    store, opened = window.stores.store, window.stores.opened
    if store is None or opened is None or not store.traits.named_sessions:
        return None
    location = location_of(opened.target, opened.options)
    return (ConversationIds(window.recent.settings), location) if location else None


def remember_opened(window: Shell, store: Store) -> None:
    """A store opened: show the bar for it, and remember the ids it was opened with."""
    window.conversations_bar.set_store(store)
    found = _remembered(window)
    opened = window.stores.opened
    if found is not None and opened is not None and opened.options.conversations:
        found[0].add(found[1], opened.options.conversations)


def _reopen(window: Shell, ids: tuple[str, ...], session_id: str | None) -> None:
    store, opened = window.stores.store, window.stores.opened
    if store is None or opened is None:
        return
    window.stores.open_target(
        opened.target, opened.options.with_(writable=store.can_write, conversations=ids),
        label=window.stores.label, session_id=session_id,
    )


def add_conversation(window: Shell, cid: str) -> None:
    """Ask the server for ``cid``; when it knows it, remember it for the server and list
    it (first), showing it — else say so under the field."""
    found, store = _remembered(window), window.stores.store
    if found is None or store is None:
        return
    bar = window.conversations_bar

    def checked(info: Any) -> None:
        opened = window.stores.opened
        if window.stores.store is not store or opened is None:
            return  # another store opened meanwhile
        if info is None:
            bar.hint.setText(f"{store.target} has no conversation {show_id(cid)}.")
            bar.hint.show()
            return
        found[0].add(found[1], [cid])
        others = tuple(i for i in opened.options.conversations if i != cid)
        _reopen(window, (cid, *others), cid)

    window.bridge.start("conversations:add", pages.session_row(store, cid), checked, window.show_error)


def forget_missing(window: Shell, more: bool) -> None:
    """The listing is complete: ids the server does not know (any more) are forgotten
    (the notice above the panes names them this once)."""
    found, opened = _remembered(window), window.stores.opened
    if found is None or opened is None or more or window.sessions.search_text:
        return
    listed = {
        info.id
        for info in (window.sessions.session_at(r) for r in range(window.sessions.rowCount()))
        if info is not None
    }
    missing = [i for i in opened.options.conversations if i not in listed]
    if missing:
        found[0].forget(found[1], missing)


def forget_selected(window: Shell) -> None:
    """Drop the selected conversations from the list and the settings."""
    found = _remembered(window)
    opened = window.stores.opened
    ids = window.session_list.selected_ids()
    if found is None or opened is None or not ids:
        return
    found[0].forget(found[1], ids)
    kept = tuple(i for i in opened.options.conversations if i not in set(ids))
    _reopen(window, kept, None)


def follow_change(window: Shell, change: Any) -> None:
    """An edit (or its undo/redo) was written: a deleted conversation is forgotten, a
    made one remembered."""
    found = _remembered(window)
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
        window.statusBar().showMessage(change.label, 15000)


def follow_transfer(window: Shell, result: Any) -> None:
    """An import (or a copy) finished: remember the conversations it made in the open
    store (those the store now lists)."""
    found, store = _remembered(window), window.stores.store
    written = [new for _old, new in result.written] if isinstance(result, TransferResult) else []
    if found is None or store is None or not written:
        return
    ids, location = found

    def done(infos: list[Any]) -> None:
        made = [i.id for i in infos]
        if made:
            ids.add(location, made)

    window.bridge.start("conversations:remember", pages.sessions_by_ids(store, written), done)
