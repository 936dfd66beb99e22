"""The review workflow's window parts (issue 17): :class:`ReviewController` (the review
database, polling, writes), the review panel (:mod:`.panel`), the filter bar
(:mod:`.filter_bar`), the list's marks (:mod:`.marks`), the keyboard queue
(:mod:`.queue`), the Review menu, Copy Session Id and bulk actions (:mod:`.actions`).
The work is :mod:`fluxgui.services.reviews`'."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .actions import CopyIdKey, extend_menu, install_menu
from .controller import QUEUE, ReviewController, _flag

if TYPE_CHECKING:
    from ..shell import Shell


def install_reviews(window: Shell) -> ReviewController:
    """Put the review workflow into ``window`` (nothing is opened until it is used)."""
    c = ReviewController(window)
    install_menu(c)
    c.copy_key = CopyIdKey(window)
    window.session_view.installEventFilter(c.copy_key)
    if _flag(c.settings.value(QUEUE, False)):
        c.queue_action.setChecked(True)
        c.set_queue(True)
    return c


__all__ = ["ReviewController", "extend_menu", "install_reviews"]
