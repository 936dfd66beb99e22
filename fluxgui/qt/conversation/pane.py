"""The conversation pane: a session's messages, newest page first, earlier pages on scroll,
beside a message inspector.

:class:`ConversationPane` loads a session's latest page through the
:class:`~fluxgui.qt.bridge.AsyncBridge` (one key per pane, so a new session cancels the
stale load) and shows it scrolled to the bottom; scrolling near the top loads the page
before (:mod:`.loading`). Rows are painted by :class:`~.delegate.MessageDelegate` over a
thin :class:`~.model.MessageListModel` in a :class:`~.view.MessageListView`. The pane is
put together from parts that share its state (:mod:`.state`): loading and paging,
the live catch-up (:mod:`.live`), turn numbers (:mod:`.turns`) and the context menu
(:mod:`.menu`); this module builds the widget and holds the public calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QSplitter, QToolButton, QVBoxLayout, QWidget

from fluxgui.core.display import raw_document
from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.pairing import ToolPairs
from fluxgui.core.text import plural, session_label
from fluxgui.core.visible import visible
from fluxgui.services.live import PAGE_SIZE
from fluxgui.core.roles import PageTransform, Store

from ..bridge import AsyncBridge
from ..inspector import MessageInspector
from ..shown_ids import FollowedRedaction, ShownIds
from ..widgets import ElidedLabel
from .delegate import MessageDelegate
from .find_bar import FindBar
from .finding import PaneFinding
from .live import PaneLive
from .loading import PaneLoading
from .menu import PaneMenu
from .model import MESSAGE_ROLE, MessageListModel
from .state import Restore
from .turns import PaneTurns
from .view import MessageListView


class ConversationPane(QWidget):
    """A session's conversation: lazily paged message cards plus a message inspector.

    **Live refresh.** ``live.catch_up()`` loads the messages after the last loaded one and
    appends them (the view stays at the bottom if it was there, else where it was). When
    the session changed in another way (a message edited or deleted, the count not adding
    up) it reloads, keeping the reader's place; when the session was deleted it says so.

    Signals: ``loaded(session_id)`` when a session's first page is shown (also after a
    reload that keeps the place); ``earlierLoaded(count)`` when an earlier page was
    prepended; ``failed(exc)`` when a load failed; ``currentMessageChanged(message_or_None)``;
    ``busyChanged(busy)``; ``caughtUp(appended)`` after each catch-up that found the
    session (0: nothing new); ``sessionGone(session_id)`` when the open session vanished.

    Parts (each holds the pane and works on the state it declares, :mod:`.state`):
    :attr:`paging` (loading, earlier pages, reloads), :attr:`finding` (landing on a
    message, find in the conversation, later pages), :attr:`live` (catching up),
    :attr:`turns` (turn numbers) and :attr:`menus` (context menu, copying, viewer).
    """

    loaded = Signal(str)
    earlierLoaded = Signal(int)
    laterLoaded = Signal(int)
    failed = Signal(object)
    currentMessageChanged = Signal(object)
    busyChanged = Signal(bool)
    caughtUp = Signal(int)
    sessionGone = Signal(str)

    def __init__(self, bridge: AsyncBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._key = f"conversation:{id(self):x}"
        self._store: Store | None = None
        self._session_id: str | None = None
        self._info: SessionInfo | None = None
        self._generation = 0
        self._loading: str | None = None  # "latest" / "earlier" while a load runs
        self._at_start = True
        self._at_end = True  # the last loaded message is the newest (not: landed on a hit)
        self._earlier_failed = False
        self._task: asyncio.Task[Any] | None = None
        self._settling = False  # our own model/scroll changes: they do not page
        # live refresh
        self._live_key = f"{self._key}:live"
        self._catching = False  # a catch-up query is running
        self._catch_queued = False  # catch up (again) once the running load/catch-up ends
        self._before: int | None = 0  # messages before the first loaded one (None: unknown)
        self._window = 0  # bumped whenever the loaded messages change
        self._gone = False  # the session was deleted by another process
        self._broken = False  # its load failed: no catching up until it is loaded again
        self._restore: Restore | None = None  # where to put the view after a reload
        #: called as ``menu_hook(menu, message_or_None)`` at the end of the context menu
        self.menu_hook: Callable[[QMenu, Message | None], None] | None = None
        #: what each loaded page goes through before it is shown (in a worker thread;
        #: View › Redact: the messages redacted, as many as given); ``None``: as stored
        self.shown: PageTransform | None = None
        #: while :attr:`shown` redacts: makes a redaction for another view of the store's
        #: text (a comparison, a merged timeline), its placeholders the window's
        self.shown_anew: Callable[[], PageTransform] | None = None
        #: session ids as the window shows them (View › Redact: through its redactor)
        self.ids = ShownIds(self)
        self.ids.changed.connect(self._show_title)
        # Turn numbers: user messages before the first loaded one (None: being counted)
        # and each loaded user message's number (None: to be worked out again).
        self._turn_base: int | None = None
        self._turns: dict[int, int] | None = None
        self._turns_key = f"{self._key}:turns"
        #: turn number → total tokens of that turn, shown in user messages' headers
        #: (filled by the window's branch bar for Advanced stores; empty otherwise)
        self.turn_tokens: dict[int, int] = {}
        #: message id → the session doctor's marker (text, sentence); see set_markers
        self.markers: dict[int, tuple[str, str]] = {}
        #: message id → a review note's mark (text, the notes); see set_note_marks
        self.note_marks: dict[int, tuple[str, str]] = {}
        #: the branch shown (stores with branches; ``None``: main)
        self.branch: str | None = None
        self._current: Message | None = None
        #: messages per page
        self.page_size = PAGE_SIZE
        #: call id ↔ output for the loaded messages
        self.pairs = ToolPairs()
        self.paging = PaneLoading(self)
        self.finding = PaneFinding(self)
        self.live = PaneLive(self)
        self.turns = PaneTurns(self)
        self.menus = PaneMenu(self)
        self._build()

    def followed_redaction(self) -> FollowedRedaction:
        """View › Redact as another window follows it (a Compare window): the shown ids
        and :attr:`shown_anew` as they are when it asks."""
        return FollowedRedaction(self.ids, lambda: self.shown_anew)

    def _build(self) -> None:
        """The widgets: a title line, the branch bar's place, the messages and, beside
        them, the inspector."""
        self.model = MessageListModel(self)
        self.model.modelReset.connect(self.turns.on_reset)
        self.model.rowsInserted.connect(self.turns.on_rows_inserted)
        self.model.rowsRemoved.connect(lambda *_args: setattr(self, "_turns", None))
        self.view = MessageListView(self)
        self.view.setModel(self.model)
        self.delegate = MessageDelegate(self.view, self)
        self.view.setItemDelegate(self.delegate)

        # Elided (start and end kept, the whole id in its tooltip): a long id must neither
        # widen the window nor run into the status.
        self.title = ElidedLabel(self, mode=Qt.TextElideMode.ElideMiddle)
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.status = QLabel(self)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        #: where the session was forked from (fluxgui's forks), hidden otherwise
        self.origin = ElidedLabel(self)
        self.origin.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.origin.hide()
        head = QHBoxLayout()
        head.setContentsMargins(10, 4, 10, 4)
        head.setSpacing(12)
        head.addWidget(self.title, 2)
        #: copies the shown session's id (the window wires it)
        self.copy_id_button = QToolButton(self)
        self.copy_id_button.setText("Copy id")
        self.copy_id_button.setAutoRaise(True)
        self.copy_id_button.setToolTip("Copy the session id")
        head.addWidget(self.copy_id_button, 0)
        head.addWidget(self.origin, 1)
        head.addWidget(self.status, 0)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.setSpacing(0)
        left_layout.addLayout(head)
        #: widgets the window shows between the title line and the messages (branches)
        self.header_area = QVBoxLayout()
        self.header_area.setContentsMargins(0, 0, 0, 0)
        self.header_area.setSpacing(0)
        left_layout.addLayout(self.header_area)
        #: Ctrl+F in the conversation: find in it
        self.find_bar = FindBar(left)
        self.find_bar.findRequested.connect(lambda text, back: self.finding.find(text, backward=back))
        self.find_bar.closed.connect(self._on_find_bar_closed)
        left_layout.addWidget(self.find_bar)
        left_layout.addWidget(self.view, 1)

        #: the selected message's fields, metadata and raw item (the window may move it)
        self.inspector = MessageInspector(self)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.inspector)
        # the inspector gives up room too when the pane narrows (the chat dock opens)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([620, 280])
        self._sized = False  # the split is made proportional once the pane has its width

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

        self.view.selectionModel().currentChanged.connect(self._on_current)
        self.view.verticalScrollBar().valueChanged.connect(self.paging.maybe_load_earlier)
        self.view.verticalScrollBar().rangeChanged.connect(self.paging.maybe_load_earlier)
        self.view.verticalScrollBar().valueChanged.connect(self.finding.maybe_load_later)
        self.view.verticalScrollBar().rangeChanged.connect(self.finding.maybe_load_later)
        self.view.toggleRequested.connect(self.toggle)
        self.view.doubleClicked.connect(self.menus.on_double_click)
        #: the last text viewer opened (Open in Viewer)
        self.viewer = None
        self.view.endRequested.connect(self.finding.go_to_end)
        self.view.copyRequested.connect(lambda raw: self.menus.copy_raw() if raw else self.menus.copy_text())
        self.view.customContextMenuRequested.connect(self.menus.context_menu)
        self.clear("Select a session.")

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not self._sized and self.width() > 0:
            # The inspector takes 280 px of a 900 px pane, less of a narrow one.
            self._sized = True
            side = min(280, self.width() * 35 // 100)
            self.splitter.setSizes([self.width() - side, side])

    # -- properties ----------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The session shown or loading (``None`` after :meth:`clear`)."""
        return self._session_id

    @property
    def store(self) -> Store | None:
        return self._store

    @property
    def loaded_count(self) -> int:
        return self.model.rowCount()

    @property
    def at_start(self) -> bool:
        """No earlier messages: the first loaded message is the session's first."""
        return self._at_start

    @property
    def busy(self) -> bool:
        return self._loading is not None

    @property
    def gone(self) -> bool:
        """The open session was deleted by another process (:data:`GONE_TEXT` is shown)."""
        return self._gone

    @property
    def task(self) -> asyncio.Task[Any] | None:
        """The load task started last (for tests: a stale one ends cancelled)."""
        return self._task

    def current_message(self) -> Message | None:
        m = self.view.currentIndex().data(MESSAGE_ROLE)
        return m if isinstance(m, Message) else None

    def turn_of(self, m: Message) -> int | None:
        """The turn number a user message opens (what a card's header asks its
        :class:`~.header.CardHost`; the numbering is :attr:`turns`')."""
        return self.turns.turn_of(m)

    # -- public API ----------------------------------------------------------------

    def show_session(self, store: Store, session_id: str, branch: str | None = None) -> None:
        """Load and show ``session_id``'s latest page (of ``branch``, for stores with
        branches; default ``main``), cancelling any load still running."""
        self._begin(store, session_id, branch)
        self.paging.start("latest", self.paging.load_latest(self._generation, store, session_id))

    def _begin(self, store: Store, session_id: str, branch: str | None) -> None:
        """Forget what is shown and get ready to load ``session_id`` (a new generation)."""
        self.branch = branch
        self._generation += 1
        self.live.stop()
        self._store, self._session_id, self._info = store, session_id, None
        self.turn_tokens = {}
        self._at_start = False
        self._at_end = True
        self._earlier_failed = False
        self._empty()
        self._show_title()
        self._show_placeholder("Loading messages…")

    def _show_title(self) -> None:
        """The title line: the session's id as the window shows ids (redacted or not)."""
        sid = self._session_id
        if sid is None:
            return
        shown = self.ids.text(sid)
        self.title.set_full_text(visible(shown, keep_layout=False, pictures=False) if shown else session_label(""))

    def _empty(self) -> None:
        """No messages, no find, no current message (a session about to load, or none)."""
        self._bridge.cancel(self.finding.key)
        self.finding.set_find_text("")
        self.finding.update_find_bar()
        self.pairs.clear()
        self.delegate.reset()
        self.model.clear()
        self._set_current(None)

    def clear(self, text: str = "") -> None:
        """Show ``text`` instead of a conversation (and stop any load)."""
        self._generation += 1
        self._bridge.cancel(self._key)
        self.live.stop()
        self.paging.set_loading(None)
        self._store, self._session_id, self._info = None, None, None
        self.turn_tokens = {}
        self._at_start = True
        self._at_end = True
        self._empty()
        self.title.set_full_text("")
        self.status.setText("")
        self.set_origin(None)
        self.find_bar.hide()  # another store, or none: nothing to find in
        self._show_placeholder(text)

    def toggle(self, index: QModelIndex | None = None) -> bool:
        """Expand/collapse the reasoning or long message at ``index`` (default: current)."""
        index = index if index is not None else self.view.currentIndex()
        if not index.isValid():
            return False
        anchor = self.view.anchor()
        anchor.at_bottom = False  # an opened row grows downwards; keep the top in place
        if not self.delegate.toggle(index):
            return False
        self.view.relayout(keep=anchor)
        return True

    def set_full(self, index: QModelIndex, full: bool) -> None:
        """Show all of a long message (``full``) or only its start again."""
        anchor = self.view.anchor()
        anchor.at_bottom = False
        self.delegate.set_full(index, full)
        self.view.relayout(keep=anchor)

    def select_message(self, message_id: int) -> bool:
        """Make a loaded message current and selected, and scroll to it."""
        row = self.model.row_of(message_id)
        if row is None:
            return False
        index = self.model.index(row, 0)
        self.view.setCurrentIndex(index)
        self.view.scrollTo(index)
        return True

    def toPlainText(self) -> str:  # noqa: N802 - the name QTextEdit uses
        """The loaded conversation as a person reads it: per message a header line (role,
        kind, pairing, encryption badge, time, id) and its body as rendered (collapsed rows as shown)."""
        out: list[str] = []
        for m in self.model.messages:
            out.append(self.delegate.header_text(m))
            if m.kind == "reasoning" and m.id not in self.delegate.expanded:
                out.append(" ".join(m.text.split()))
            else:
                out.append(self.delegate.document(m).toPlainText())
                if self.delegate.long_size(m):
                    out.append(self.delegate.footer_text(m))
        return "\n".join(out)

    def raw_of(self, message: Message) -> Any:
        """What the store holds for ``message`` (the item, or a flux row's dict)."""
        return raw_document(message, self.paging.columns())

    def set_origin(self, text: str | None) -> None:
        """Show where the session was forked from (``None``: hide)."""
        self.origin.set_elide_mode(Qt.TextElideMode.ElideMiddle)
        self.origin.set_full_text(visible(text, keep_layout=False, pictures=False) if text else "")
        self.origin.setVisible(bool(text))

    # -- display ---------------------------------------------------------------------

    def _show_placeholder(self, text: str) -> None:
        self.view.set_placeholder(text)

    def _update_status(self) -> None:
        loaded = self.model.rowCount()
        total = self._info.messages if self._info is not None else None
        exact = self._info is None or self._info.count_exact
        if total is not None and (
            (self._at_start and self._at_end) or (exact and loaded >= total)
        ):
            text = f"all {plural(loaded, 'message')}"
        elif not self._at_end:  # landed on a hit: pages load both ways
            of = f" of {total:,}" if total is not None and exact else ""
            text = f"{loaded:,}{of} messages loaded · more on scroll"
        elif total is not None and exact:
            text = f"latest {loaded:,} of {total:,} messages"
        elif total is not None:  # the server tells no count: only that there are more
            text = f"latest {loaded:,} messages · more on scroll"
        else:
            text = f"{plural(loaded, 'message')} loaded"
        if self._loading in ("earlier", "later"):
            text += f" · loading {self._loading}…"
        elif self._earlier_failed:
            text += " · loading earlier messages failed"
        found = self.finding.found
        if found.text and found.hits is not None:
            where = f"{found.index + 1} of {len(found.hits)}" if found.index is not None else ""
            text += f" · match {where}" if where else (" · no match" if not found.hits else "")
        self.status.setText(text)

    def _on_find_bar_closed(self) -> None:
        self.finding.stop_finding()
        self.view.setFocus()

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        m = current.data(MESSAGE_ROLE) if current.isValid() else None
        self._set_current(m if isinstance(m, Message) else None)

    def _set_current(self, m: Message | None) -> None:
        if m is self._current:
            return
        self._current = m
        if m is not None:
            self.inspector.show_message(m, self.raw_of(m))
        else:
            self.inspector.clear()
        self.currentMessageChanged.emit(m)

    def set_note_marks(self, marks: dict[int, tuple[str, str]]) -> None:
        """Mark the cards that carry review notes (message id → ``(text, notes)``)."""
        if marks != self.note_marks:
            self.note_marks = dict(marks)
            self.view.viewport().update()

    def set_markers(self, markers: dict[int, tuple[str, str]]) -> None:
        """Show the session doctor's markers (message id → ``(text, sentence)``) on the
        cards involved (an empty dict: none)."""
        if markers == self.markers:
            return
        self.markers = dict(markers)
        self.view.viewport().update()
