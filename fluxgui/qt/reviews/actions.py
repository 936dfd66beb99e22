"""The Review menu, Copy Session Id (context menu, Ctrl+Shift+C in the list, the
conversation header), and the bulk actions on the selected sessions or on every session
matching the filter (counted, confirmed, cancellable and undoable: :mod:`.bulk`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QInputDialog, QMenu

from fluxgui.services.reviews import STATES, Edit

from . import bulk as bulk_review
from . import export
from .bulk import bulk
from .panel import STATE_LABELS

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMainWindow, QTableView

    from ..sessions import SessionListModel
    from .host import Reviews

COPY_ID = QKeySequence("Ctrl+Shift+C")


def copy_id(window: QMainWindow, session_id: str) -> None:
    """Copy ``session_id`` as the window shows it (callers pass it so: redacted while
    View › Redact is on, as every Copy action then copies what is shown)."""
    QGuiApplication.clipboard().setText(session_id)
    window.statusBar().showMessage("Copied the session id", 4000)


class CopyIdKey(QObject):
    """Ctrl+Shift+C in the session list copies the current session's id (elsewhere it
    stays the window's: the selected message's raw JSON)."""

    def __init__(self, window: QMainWindow, view: QTableView, sessions: SessionListModel) -> None:
        super().__init__(window)
        self._window = window
        self._view = view
        self._sessions = sessions

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # Qt's name
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) or not isinstance(event, QKeyEvent):
            return False
        if QKeySequence(event.keyCombination()) != COPY_ID:
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()
            return True
        index = self._view.currentIndex()
        info = self._sessions.session_at(index.row()) if index.isValid() else None
        if info is not None:
            copy_id(self._window, self._sessions.display_id(info.id))
        return True


def extend_menu(c: Reviews, menu: QMenu, session_id: str) -> None:
    """The session list's context menu: Copy Session Id, and the review actions."""
    window = c.window
    first = menu.actions()[0] if menu.actions() else None

    def put(action: QAction) -> None:  # before the menu's own actions
        if first is None:
            menu.addAction(action)
        else:
            menu.insertAction(first, action)

    copy = QAction("Copy Session Id", menu)
    copy.setShortcut(COPY_ID)
    copy.triggered.connect(lambda _c=False: copy_id(window, c.host.conversation.ids.text(session_id)))
    put(copy)
    if c.on:
        states = QMenu("Set Review State", menu)
        for state in STATES:
            states.addAction(STATE_LABELS[state], _set_state(c, state))
        put(states.menuAction())
        add_tag = QAction("Add Tag to Selected…", menu)
        add_tag.triggered.connect(lambda _c=False: ask_tag(c))
        put(add_tag)
        claim = QAction("Claim Selected", menu)
        claim.triggered.connect(lambda _c=False: bulk(c, None))
        put(claim)
    if first is not None:
        menu.insertSeparator(first)


def ask_tag(c: Reviews, *, everything: bool = False) -> None:
    tag, ok = QInputDialog.getText(c.window, "Add tag", "Tag for the sessions:")
    if ok and tag.strip():
        bulk(c, Edit(add_tags=[tag.strip()]), everything=everything)


def install_menu(c: Reviews) -> dict[str, QAction]:
    window = c.window
    menu = window.menuBar().addMenu("&Review")
    acts: dict[str, QAction] = {}

    def add(name: str, text: str, slot: Any, keys: str | None = None, checkable: bool = False) -> QAction:
        action = QAction(text, window)
        if keys:
            action.setShortcut(QKeySequence(keys))
        action.setCheckable(checkable)
        action.triggered.connect(slot)
        window.addAction(action)
        menu.addAction(action)
        acts[name] = action
        return action

    panel = add("review_panel", "Review &Panel", lambda on: c.set_on(on), "Ctrl+Shift+R", True)
    c.dock.visibilityChanged.connect(panel.setChecked)
    queue = add("review_queue", "Review &Queue Mode", lambda on: c.set_queue(on), "Ctrl+Shift+Q", True)
    c.queue_action = queue
    menu.addSeparator()
    add("review_next", "&Next Unreviewed", c.mark_reviewed_and_next)
    states = menu.addMenu("Set State of &All Matching")
    for state in STATES:
        action = states.addAction(STATE_LABELS[state])
        action.triggered.connect(lambda _c=False, s=state: bulk(c, Edit(state=s), everything=True))
        acts[f"review_all_{state}"] = action
    add("review_all_tag", "Tag All &Matching…", lambda: ask_tag(c, everything=True))
    add("review_all_claim", "&Claim All Matching", lambda: bulk(c, None, everything=True))
    bulk_review.install(c, add)
    add("review_export", "&Export Results…", lambda: export.ask_and_export(c))
    menu.addSeparator()
    add("review_copy_id", "Copy Session &Id", c.copy_shown_id)
    add("review_keys", "Queue &Keys…", c.show_cheat_sheet)
    c.host.actions.update(acts)
    return acts


def _set_state(c: Reviews, state: str) -> Callable[[], None]:
    """The menu's call that sets ``state`` on the selected sessions."""
    return lambda: bulk(c, Edit(state=state))
