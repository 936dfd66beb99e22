"""What the parts of the conversation pane see of it: its state, declared once.

:class:`~fluxgui.qt.conversation.pane.ConversationPane` holds its parts, one module each
— loading and paging (:mod:`.loading`, ``pane.paging``), landing and finding
(:mod:`.finding`, ``pane.finding``), the live catch-up (:mod:`.live`, ``pane.live``), turn
numbers (:mod:`.turns`, ``pane.turns``), the context menu and copying (:mod:`.menu`,
``pane.menus``). Each part is given the pane; :class:`PaneState` declares what a part may
use of it (the state the pane's ``__init__`` sets, its widgets and signals, and the few
calls one part makes on another: :class:`Paging`, :class:`Finding`, :class:`Live`), so
each part reads on its own and none imports another.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.pairing import ToolPairs
from fluxgui.core.roles import PageTransform, Store
from fluxgui.services.find import Found

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QLabel, QMenu

    from ..bridge import AsyncBridge
    from ..inspector import MessageInspector
    from .delegate import MessageDelegate
    from .find_bar import FindBar
    from .model import MessageListModel
    from .view import MessageListView

#: shown when the open session was deleted by another process
GONE_TEXT = "This session no longer exists in the store."


@dataclass
class Restore:
    """Where the reader was when a reload that keeps the place started."""

    top_id: int | None  # the message at the top of the viewport
    top_px: int  # and where its top was
    at_bottom: bool
    current_id: int | None
    selected: list[int]
    limit: int  # messages asked for


@dataclass
class FindState:
    """The text looked for in the open session and what was found (``hits`` ``None``:
    not looked for yet); ``index`` is the current hit."""

    text: str = ""
    hits: list[Found] | None = None
    index: int | None = None
    searching: bool = False
    #: where to go once the hits are known: 1 the next, -1 the previous, 0 the nearest;
    #: ``None``: nowhere (landed already: the hits are only counted)
    pending: int | None = 0
    ids: dict[int, int] = field(default_factory=dict)  # message id → hit index

    def set_hits(self, hits: list[Found]) -> None:
        self.hits = hits
        self.ids = {h.message_id: i for i, h in enumerate(hits)}


class Paging(Protocol):
    """What the other parts call of the pane's loading and paging (:mod:`.loading`)."""

    def start(self, what: str, coro: Any) -> None: ...
    async def prepare(self, generation: int, messages: list[Message]) -> None: ...
    def set_loading(self, what: str | None) -> None: ...
    def maybe_load_earlier(self, *_args: Any) -> None: ...
    def reload(self, *, keep_position: bool = True) -> None: ...
    def columns(self) -> bool | None: ...


class Finding(Protocol):
    """What the other parts call of the pane's landing and finding (:mod:`.finding`)."""

    @property
    def find_text(self) -> str: ...
    def open_at(
        self, store: Store, session_id: str, message_id: int | None = None,
        find_text: str | None = None, branch: str | None = None,
    ) -> None: ...
    def on_landed(self, result: Any) -> None: ...
    def maybe_load_later(self, *_args: Any) -> None: ...
    def show_later(self, messages: list[Message]) -> None: ...


class Live(Protocol):
    """What the other parts call of the pane's live refresh (:mod:`.live`)."""

    def catch_up(self) -> None: ...
    def stop(self) -> None: ...
    def show_gone(self) -> None: ...


class PaneState(Protocol):
    """The conversation pane as its parts see it (its ``__init__`` sets the state)."""

    _bridge: AsyncBridge
    _key: str  # the bridge key of loads (a new one cancels the one running)
    _store: Store | None
    _session_id: str | None
    _info: SessionInfo | None
    _generation: int  # bumped for each session shown (or reload): older results are dropped
    _loading: str | None  # "latest" / "earlier" while a load runs
    _at_start: bool  # the first loaded message is the session's first
    _at_end: bool  # the last loaded message is the session's newest
    _earlier_failed: bool
    _task: asyncio.Task[Any] | None
    _settling: bool  # our own model/scroll changes: they do not page
    # live refresh
    _live_key: str
    _catching: bool  # a catch-up query is running
    _catch_queued: bool  # catch up (again) once the running load/catch-up ends
    _before: int | None  # messages before the first loaded one (None: unknown)
    _window: int  # bumped whenever the loaded messages change
    _gone: bool  # the session was deleted by another process
    _broken: bool  # its load failed: no catching up until it is loaded again
    _restore: Restore | None  # where to put the view after a reload
    # turn numbers
    _turn_base: int | None  # user messages before the first loaded one (None: being counted)
    _turns: dict[int, int] | None  # each loaded user message's number (None: to work out)
    _turns_key: str
    _current: Message | None

    branch: str | None
    page_size: int
    pairs: ToolPairs
    turn_tokens: dict[int, int]
    model: MessageListModel
    view: MessageListView
    delegate: MessageDelegate
    inspector: MessageInspector
    status: QLabel
    find_bar: FindBar

    menu_hook: Callable[[QMenu, Message | None], None] | None
    shown: PageTransform | None  # a page's transform (redaction)
    viewer: Any

    @property
    def paging(self) -> Paging: ...
    @property
    def finding(self) -> Finding: ...
    @property
    def live(self) -> Live: ...

    if TYPE_CHECKING:  # signals
        loaded: SignalInstance
        earlierLoaded: SignalInstance
        laterLoaded: SignalInstance
        failed: SignalInstance
        busyChanged: SignalInstance
        caughtUp: SignalInstance
        sessionGone: SignalInstance

    def show_session(self, store: Store, session_id: str, branch: str | None = None) -> None: ...
    def current_message(self) -> Message | None: ...
    def toggle(self, index: Any = None) -> bool: ...
    def set_full(self, index: Any, full: bool) -> None: ...
    def select_message(self, message_id: int) -> bool: ...
    def _set_current(self, m: Message | None) -> None: ...
    def _show_placeholder(self, text: str) -> None: ...
    def _update_status(self) -> None: ...
    def _begin(self, store: Store, session_id: str, branch: str | None) -> None: ...
