"""What the review parts (the menu actions, the claim lease, the queue keys) use of the
review controller, declared apart from it: the controller builds them and hands itself
over, so they must not import its module (an import circle)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance
    from PySide6.QtWidgets import QDockWidget, QWidget

    from fluxgui.services.reviews import ReviewDB, ReviewFilter

    from ..shell import Shell
    from .marks import ReviewMarks
    from .panel import ReviewPanel


class Reviews(Protocol):
    """The review controller (:class:`~fluxgui.qt.reviews.controller.ReviewController`)
    as its parts see it."""

    window: Shell
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
