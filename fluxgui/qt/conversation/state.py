"""What the parts of the conversation pane share: its state, declared once.

:class:`~fluxgui.qt.conversation.pane.ConversationPane` is put together from parts, one
module each — loading and paging (:mod:`.loading`), the live catch-up (:mod:`.live`),
turn numbers (:mod:`.turns`), the context menu and copying (:mod:`.menu`). They share
the pane's state; :class:`PaneState` declares it (the pane's ``__init__`` sets it) and the
methods one part calls on another, so each part reads on its own.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.pairing import ToolPairs
from fluxgui.core.roles import Store

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QLabel

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


class PaneState:
    """The conversation pane's shared state (set by its ``__init__``)."""

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

    if TYPE_CHECKING:  # signals and methods of the pane and of its other parts
        loaded: SignalInstance
        earlierLoaded: SignalInstance
        laterLoaded: SignalInstance
        failed: SignalInstance
        busyChanged: SignalInstance
        caughtUp: SignalInstance
        sessionGone: SignalInstance

        def show_session(
            self, store: Store, session_id: str, branch: str | None = None
        ) -> None: ...
        def reload(self, *, keep_position: bool = True) -> None: ...
        def catch_up(self) -> None: ...
        def current_message(self) -> Message | None: ...
        def toggle(self, index: Any = None) -> bool: ...
        def set_full(self, index: Any, full: bool) -> None: ...
        def select_message(self, message_id: int) -> bool: ...
        def raw_of(self, message: Message) -> Any: ...
        def _columns(self) -> bool | None: ...
        def _set_current(self, m: Message | None) -> None: ...
        def _show_placeholder(self, text: str) -> None: ...
        def _update_status(self) -> None: ...
        def _set_loading(self, what: str | None) -> None: ...
        def _show_gone(self) -> None: ...
        def _stop_live(self) -> None: ...
        def load_earlier(self) -> bool: ...
        def open_at(
            self, store: Store, session_id: str, message_id: int | None = None,
            find_text: str | None = None, branch: str | None = None,
        ) -> None: ...
        @property
        def find_text(self) -> str: ...
        def _begin(self, store: Store, session_id: str, branch: str | None) -> None: ...
        def _on_landed(self, result: Any) -> None: ...
        def _show_later(self, messages: list[Message]) -> None: ...
        def _maybe_load_later(self, *_args: Any) -> None: ...
        def _maybe_load_earlier(self, *_args: Any) -> None: ...
        def _set_find_text(self, text: str) -> None: ...
        def _update_find_bar(self) -> None: ...
        def _start(self, what: str, coro: Any) -> None: ...
        def _load_latest(self, generation: int, store: Store, session_id: str, **kw: Any) -> Any: ...
        async def _prepare(self, generation: int, messages: list[Message]) -> None: ...
