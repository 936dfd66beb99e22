"""What the review parts (the menu actions, the claim lease, the queue keys) use of the
review controller, declared apart from it: the controller builds them and hands itself
over, so they must not import its module (an import circle). And what the reviews use
of the window (:class:`ReviewHost`): its parts and calls, not the window itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDockWidget, QMainWindow, QTableView, QWidget

    from fluxgui.services.reviews import ReviewDB, ReviewFilter

    from ..bridge import AsyncBridge
    from ..conversation import ConversationPane
    from ..sessions import SessionListModel
    from ..shell import SessionRows, Stores
    from .marks import ReviewMarks
    from .panel import ReviewPanel


@dataclass(frozen=True)
class ReviewHost:
    """What the reviews use of the window: the bridge, the open store (``stores``), the
    session list (its model, view and rows), the conversation pane, the actions by name,
    the ``messages_shown`` signal, the shown and selected sessions (``shown()``,
    ``selected()``), where errors are shown and how a session is shown again."""

    bridge: AsyncBridge
    stores: Stores
    sessions: SessionListModel
    session_view: QTableView
    session_list: SessionRows
    conversation: ConversationPane
    actions: dict[str, QAction]
    messages_shown: SignalInstance
    shown: Callable[[], str | None]
    selected: Callable[[], list[str]]
    show_error: Callable[[BaseException], None]
    show_again: Callable[[str], None]


class Reviews(Protocol):
    """The review controller (:class:`~fluxgui.qt.reviews.controller.ReviewController`)
    as its parts see it."""

    window: QMainWindow
    host: ReviewHost
    db: ReviewDB | None
    key: str | None
    panel: ReviewPanel
    dock: QDockWidget
    filter: ReviewFilter
    marks: ReviewMarks
    queue_action: Any
    held_by_others: int
    last_bulk: Any
    bulk_box: Any
    bulk_progress: Any

    if TYPE_CHECKING:
        bulkDone: SignalInstance
        bulkUndone: SignalInstance

    @property
    def on(self) -> bool: ...
    @property
    def reviewer(self) -> str: ...
    def set_on(self, on: bool = True) -> None: ...
    def set_queue(self, on: bool) -> None: ...
    def reload_shown(self) -> None: ...
    def focus_list(self) -> None: ...
    def focus_field(self, field: QWidget) -> None: ...
    def move(self, step: int) -> None: ...
    def mark_reviewed_and_next(self) -> None: ...
    def toggle_flag(self) -> None: ...
    def show_cheat_sheet(self) -> None: ...
    def copy_shown_id(self) -> None: ...
    def _fetch_marks(self) -> None: ...
    def _on_shown(self, session_id: str | None) -> None: ...
