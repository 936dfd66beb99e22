"""The review workflow's window parts (issue 17): :class:`ReviewController` (the review
database, polling, writes), the review panel (:mod:`.panel`), the filter bar
(:mod:`.filter_bar`), the list's marks (:mod:`.marks`), the keyboard queue
(:mod:`.queue`), the Review menu, Copy Session Id and bulk actions (:mod:`.actions`).
The work is :mod:`fluxgui.services.reviews`'."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .actions import CopyIdKey, extend_menu, install_menu
from .controller import QUEUE, ReviewController, _flag
from .host import ReviewHost

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMainWindow

    from ..sessions import SearchBox


def install_reviews(
    window: QMainWindow, host: ReviewHost, settings: QSettings, search_box: SearchBox
) -> ReviewController:
    """Put the review workflow into ``window`` (nothing is opened until it is used)."""
    c = ReviewController(window, host, settings, search_box)
    install_menu(c)
    c.copy_key = CopyIdKey(window, host.session_view, host.sessions)
    host.session_view.installEventFilter(c.copy_key)
    c.panel.shown_id = host.conversation.ids.text  # (View › Redact: the title's id redacted)
    host.conversation.ids.changed.connect(c.panel.retitle)
    if _flag(c.settings.value(QUEUE, False)):
        c.queue_action.setChecked(True)
        c.set_queue(True)
    return c


__all__ = ["ReviewController", "ReviewHost", "extend_menu", "install_reviews"]
