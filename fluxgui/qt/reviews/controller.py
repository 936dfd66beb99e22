"""The review workflow in the window: the review database, the panel, the list's marks
and filter, the keyboard queue, team polling.

Nothing touches the review database until reviews are switched on (**Review › Review
Panel**, remembered): then the database named in the panel (or ``FLUXGUI_REVIEWS``, else
the file in fluxgui's data folder) is opened, the filter bar shows above the list, each
listed session shows its state and tags, and every 2 seconds a cheap change marker is
read so that other reviewers' changes appear. Writes run one after another (a quick
series of keys never races itself) and each passes the version it last saw, so a change
made meanwhile by someone else is refused instead of overwritten.
"""

from __future__ import annotations

import collections
import itertools
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from fluxgui.core.redact import split_secrets
from fluxgui.services.reviews import Edit, ReviewDB, ReviewFilter, default_reviewer, review_key
from fluxgui.services.reviews import claims
from fluxgui.services.reviews.apart import target_place
from fluxgui.services.reviews.listing import FilteredPages

from ..widgets import insert_beside
from .filter_bar import ReviewFilterBar
from .lease import ClaimLease
from .marks import ReviewMarks
from .panel import ReviewPanel
from .queue import QueueKeys, cheat_sheet

if TYPE_CHECKING:
    from ..sessions import SearchBox
    from .host import ReviewHost

ON, URL, REVIEWER, QUEUE = "reviews/on", "reviews/url", "reviews/reviewer", "reviews/queue"
POSITION, LABEL = "reviews/position/", "reviews/label/"
POLL_MS = 2000


def _flag(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


class ReviewController(QObject):
    """Owns the review dock, filter bar, marks and queue of one window.

    Every task on the review database runs under a key of its own: none is cancelled by
    the next (a claim or a write is never cut half-way); answers for another store key
    are dropped. What it uses of the window is ``host`` (a :class:`~.host.ReviewHost`)."""

    #: a review was read or written (its session id)
    reviewChanged = Signal(str)
    #: the review database opened (or failed: the error) — tests wait on it
    ready = Signal(object)
    #: a bulk action finished: how many sessions it changed
    bulkDone = Signal(int)
    #: a bulk action was taken back: how many sessions
    bulkUndone = Signal(int)

    def __init__(self, window: QMainWindow, host: ReviewHost, settings: QSettings, search_box: SearchBox) -> None:
        super().__init__(window)
        self.window = window
        self.host = host
        self.settings = settings
        self.db: ReviewDB | None = None
        self.store: Any = None
        self.key: str | None = None
        self.rubric: Any = None
        self.panel = ReviewPanel()
        self.dock = QDockWidget("Review", window)
        self.dock.setObjectName("reviewDock")
        self.dock.setWidget(self.panel)
        window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.dock)
        self.dock.hide()
        self.filter_bar = ReviewFilterBar(window)
        insert_beside(search_box, self.filter_bar, 1)
        self.filter_bar.hide()
        self.filter = ReviewFilter()
        self.marks = ReviewMarks(self)
        self.queue = QueueKeys(self, self)
        self.cheat: QWidget | None = None
        self.label_override: str | None = None
        self._url_in_use = ""  # the review database URL opened (or being opened)
        self._apart_from: Any = None  # the store the open review database was checked against
        self.queue_action: Any = None  # the Review menu's queue switch (actions.install_menu)
        self.copy_key: Any = None  # Ctrl+Shift+C in the list (actions.CopyIdKey)
        self.held_by_others = 0  # the last bulk action's sessions other reviewers hold
        self.last_bulk: Any = None  # what the last bulk action changed (bulk.BulkRecord)
        self.bulk_box: Any = None  # the last bulk confirmation asked (tests answer it)
        self.bulk_progress: Any = None  # the last bulk action's progress dialog
        self._seq = itertools.count()
        self._writes: collections.deque[tuple[str, Edit, bool]] = collections.deque()
        self._writing = False
        self._marker: Any = None
        self._advance = 0  # J/K asked past the loaded rows: move once the page is there
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.poll)
        self.lease = ClaimLease(self, self)
        self.panel.reviewer.setText(str(self.settings.value(REVIEWER, "") or default_reviewer()))
        self.panel.database.setText(str(self.settings.value(URL, "") or ""))
        self.panel.stateRequested.connect(lambda s: self.change(Edit(state=s), guard=True))
        self.panel.scoreRequested.connect(lambda n, v: self.change(Edit(scores={n: v}), guard=True))
        self.panel.tagAdded.connect(lambda t: self.change(Edit(add_tags=[t])))
        self.panel.tagRemoved.connect(lambda t: self.change(Edit(remove_tags=[t])))
        self.panel.noteAdded.connect(lambda text: self.change(Edit(note=text)))
        self.panel.messageNoteAdded.connect(lambda mid, text: self.change(Edit(note=text, message_id=mid)))
        self.panel.copyIdRequested.connect(self.copy_shown_id)
        self.panel.takeOverRequested.connect(lambda: self.change(Edit(take_over=True), guard=True))
        self.panel.settingsEdited.connect(self._settings_edited)
        self.filter_bar.filterChanged.connect(self.set_filter)
        self.dock.visibilityChanged.connect(self._dock_shown)
        host.sessions.modelReset.connect(self._maybe_new_store)
        host.sessions.pageLoaded.connect(lambda _added, _more: self._fetch_marks())
        host.sessions.pageLoaded.connect(self._on_page_for_move)
        host.messages_shown.connect(self._on_shown)
        host.conversation.currentMessageChanged.connect(self._on_message)
        if _flag(self.settings.value(ON, False)):
            self.dock.show()

    # -- switching on ------------------------------------------------------------------

    @property
    def on(self) -> bool:
        return self.db is not None

    @property
    def reviewer(self) -> str:
        return self.panel.reviewer.text().strip() or default_reviewer()

    def _dock_shown(self, visible: bool) -> None:
        if visible:
            self.set_on(True)

    def set_on(self, on: bool = True) -> None:
        """Open the review database (once) and show the reviews; off: hide them."""
        self.settings.setValue(ON, bool(on))
        if not on:
            self.set_queue(False)
            self.dock.hide()
            self.filter_bar.hide()
            self.host.sessions.row_marks = None
            self.host.sessions.marks_changed()
            self._poll.stop()
            self.lease.stop()
            if self.filter.active:
                self.filter_bar.set_value(ReviewFilter())  # the whole list again
            self.host.bridge.cancel("reviews:open")
            db, self.db, self.key, self.store, self._apart_from = self.db, None, None, None, None
            if db is not None:
                self.host.bridge.start(f"reviews:close:{next(self._seq)}", db.close())
            return
        if not self.dock.isVisible():
            self.dock.show()
            self.dock.raise_()  # its tab in front of the other side panels
        self.filter_bar.show()
        if self.db is None and not self.host.bridge.running("reviews:open"):
            url = self.panel.database.text().strip() or None
            self._url_in_use = url or ""
            self.host.bridge.start("reviews:open", ReviewDB.open(url, stores=self._stores()),
                                     self._opened, self._open_failed)

    def _stores(self) -> list[Any]:
        """The stores the review database must not be: the open one, the one opening."""
        stores = self.host.stores
        opening = stores.opening
        return ([stores.store] if stores.store is not None else []) + (
            [target_place(opening.target)] if opening is not None else [])

    def use(self, url: str | None, label: str | None) -> None:
        """The command line's ``--reviews URL`` / ``--store-label NAME``: open the review
        panel on that database, the store's reviews under that label (this run only)."""
        self.label_override = label
        if url and url != self.panel.database.text().strip():
            self.panel.database.setText(url)
            # an open of the remembered database may be running, or done: this one instead
            self.host.bridge.cancel("reviews:open")
            if self.db is not None:
                self._reopen()
                return
        self.set_on(True)

    def _opened(self, db: ReviewDB) -> None:
        self.db = db
        self.panel.database.setPlaceholderText(db.where)
        self.marks.reviewer = self.reviewer
        self.host.sessions.row_marks = self.marks.mark
        self._poll.start()
        self.lease.start()
        self._maybe_new_store(force=True)
        self.ready.emit(None)

    def _open_failed(self, error: Exception) -> None:
        self.host.show_error(error)
        self.ready.emit(error)

    def _settings_edited(self) -> None:
        self.settings.setValue(REVIEWER, self.panel.reviewer.text().strip())
        self.marks.reviewer = self.reviewer
        url = self.panel.database.text().strip()
        if url != self._url_in_use:
            # never a password in the settings: it is used for this run only
            self.settings.setValue(URL, split_secrets(url)[0])
            self._reopen()
            return
        if self.host.stores.store is not None:
            stored = self.label_override or self.settings.value(LABEL + self.host.stores.store.store_key, "") or ""
            if self.panel.label.text().strip() != stored:
                self.label_override = None  # the field's label now, remembered for this store
                self.settings.setValue(LABEL + self.host.stores.store.store_key, self.panel.label.text().strip())
                self._maybe_new_store(force=True)

    def _reopen(self) -> None:
        old, self.db, self._apart_from = self.db, None, None
        if old is not None:
            self.host.bridge.start(f"reviews:close:{next(self._seq)}", old.close())
        self.set_on(True)

    async def aclose(self) -> None:
        self._poll.stop()
        self.lease.stop()
        self.queue.set_on(False)  # (the mode stays remembered for the next window)
        if self.db is not None:
            db, self.db = self.db, None
            await db.close()

    # -- the store and its key ---------------------------------------------------------

    def _maybe_new_store(self, force: bool = False) -> None:
        store = self.host.stores.store
        if self.db is None or store is None or (store is self.store and not force):
            return
        self.store = store
        if store is not self._apart_from:  # a store opened after the review database
            self.key = None
            db = self.db
            self.host.bridge.start(f"reviews:apart:{next(self._seq)}", db.check_apart([store]),
                                     lambda _ok: self._apart(db, store), self._refused)
            return
        label = self.label_override or str(self.settings.value(LABEL + store.store_key, "") or "")
        self.panel.label.setText(label)
        self.panel.label.setPlaceholderText(store.store_key)
        self.key = review_key(store.store_key, label or None)
        self.marks.clear()
        self._marker = None
        self.host.bridge.start(f"reviews:rubric:{next(self._seq)}", self._load_meta(), self._meta_loaded)
        if self.filter.active:
            self.host.sessions.set_review_filter(FilteredPages(self.db, self.key, self.filter))
        self._fetch_marks()
        self._on_shown(self.host.shown())
        if self.queue.on:
            self._resume_position()

    def _apart(self, db: ReviewDB, store: Any) -> None:
        if db is self.db and store is self.host.stores.store:
            self._apart_from = store
            self._maybe_new_store(force=True)

    def _refused(self, error: Exception) -> None:
        """The review database is the store opened: no reviews for it."""
        self.key = None
        self.panel.show_review(None, None)
        self.host.show_error(error)

    async def _load_meta(self) -> tuple[Any, list[str]]:
        assert self.db is not None and self.key is not None
        return await self.db.rubric(), await self.db.tags_used(self.key)

    def _meta_loaded(self, result: tuple[Any, list[str]]) -> None:
        self.rubric, tags = result
        self.panel.set_rubric(self.rubric)
        self.panel.set_tags(tags)
        self.filter_bar.set_tags(tags)

    # -- filter ------------------------------------------------------------------------

    def set_filter(self, flt: ReviewFilter) -> None:
        """Show only the sessions ``flt`` lets through (with the search text, if any)."""
        self.filter = flt
        if self.db is None or self.key is None:
            return
        pages = FilteredPages(self.db, self.key, flt) if flt.active else None
        self.host.session_list.auto = True
        self.host.sessions.set_review_filter(pages)

    # -- marks and the shown review ------------------------------------------------------

    def _fetch_marks(self) -> None:
        if self.db is None or self.key is None:
            return
        model = self.host.sessions
        ids = [s.id for s in map(model.session_at, range(model.rowCount())) if s is not None]
        missing = self.marks.missing(ids)
        if missing:
            key, db = self.key, self.db
            self.host.bridge.start(f"reviews:marks:{next(self._seq)}", db.reviews(key, missing, notes=True),
                                     lambda found: self._marks_loaded(key, found))

    def _marks_loaded(self, key: str, found: dict[str, Any]) -> None:
        if key != self.key:
            return
        self.marks.put(found)
        self.host.sessions.marks_changed()

    def _on_shown(self, session_id: str | None) -> None:
        if self.db is None or self.key is None or session_id is None:
            self.panel.show_review(session_id, None)
            return
        if self.queue.on:
            self.settings.setValue(POSITION + self.key, session_id)
        key, db = self.key, self.db
        self.host.bridge.start(f"reviews:shown:{next(self._seq)}", db.get(key, session_id),
                                 lambda r: self._review_loaded(key, r))

    def reload_shown(self) -> None:
        """Read the shown session's review again (after a change made elsewhere)."""
        self._on_shown(self.host.shown())

    def _review_loaded(self, key: str, review: Any) -> None:
        if key != self.key:
            return
        self.marks.put({review.session_id: review})
        row = self.host.sessions.row_of(review.session_id)
        if row is not None:
            self.host.sessions.marks_changed([row])
        if review.session_id == self.host.shown():
            self.panel.show_review(review.session_id, review, self.reviewer)
            self._mark_cards(review)
            self.lease.check()  # the reviewer's own claim, shown: kept alive
            if self.db is not None:
                sid = review.session_id
                self.host.bridge.start(f"reviews:history:{next(self._seq)}", self.db.history(key, sid),
                                         lambda h: self.panel.show_history(sid, h))
        self.reviewChanged.emit(review.session_id)

    def _mark_cards(self, review: Any) -> None:
        """A ✎ badge with the count on each card with notes; the notes in its tooltip."""
        by_message: dict[int, list[Any]] = {}
        for note in review.notes:
            if note.message_id is not None and note.message_id.lstrip("-").isdigit():
                by_message.setdefault(int(note.message_id), []).append(note)
        marks = {
            mid: (f"✎ {len(notes)}", "\n".join(f"{n.reviewer}: {n.text}" for n in notes))
            for mid, notes in by_message.items()
        }
        self.host.conversation.set_note_marks(marks)

    def _on_message(self, message: Any) -> None:
        self.panel.show_message(None if message is None else str(message.id))

    # -- writing -----------------------------------------------------------------------

    def change(self, edit: Edit, *, session_id: str | None = None, guard: bool = False) -> None:
        """Write ``edit`` to the review of ``session_id`` (the shown one); ``guard``:
        refuse it when someone else changed the review since it was shown."""
        sid = session_id or self.host.shown()
        if self.db is None or self.key is None or sid is None:
            return
        self._writes.append((sid, edit, guard))
        if not self._writing:
            self._writing = True
            self.host.bridge.start(f"reviews:write:{next(self._seq)}", self._drain(self.db, self.key),
                                     self._drained, self._write_failed)

    async def _drain(self, db: ReviewDB, key: str) -> None:
        while self._writes:
            sid, edit, guard = self._writes.popleft()
            seen = self.marks.reviews.get(sid)
            expected = seen.version if guard and seen is not None else None
            review = await db.change(key, sid, edit, reviewer=self.reviewer, expected_version=expected,
                                     rubric=self.rubric)
            self._review_loaded(key, review)

    def _drained(self, _result: None) -> None:
        self._writing = False

    def _write_failed(self, error: Exception) -> None:
        self._writing = False
        self._writes.clear()
        self.host.show_error(error)
        self._on_shown(self.host.shown())  # show what the database holds

    def toggle_flag(self) -> None:
        review = self.panel.review
        self.change(Edit(state="reviewed" if review and review.state == "flagged" else "flagged"), guard=True)

    # -- team: polling -----------------------------------------------------------------

    def poll(self) -> None:
        if self.db is None or self.key is None or self.host.bridge.running("reviews:poll"):
            return
        key = self.key
        self.host.bridge.start("reviews:poll", self.db.change_marker(key),
                                 lambda m: self._polled(key, m), lambda _e: None)

    def _polled(self, key: str, marker: Any) -> None:
        if key != self.key:
            return
        changed = marker != self._marker  # the first poll too: marks may predate it
        self._marker = marker
        if changed:
            self.marks.clear()
            self._fetch_marks()
            self._on_shown(self.host.shown())
            self.host.bridge.start(f"reviews:rubric:{next(self._seq)}", self._load_meta(), self._meta_loaded)

    # -- queue -------------------------------------------------------------------------

    def set_queue(self, on: bool) -> None:
        """The keyboard queue mode (remembered, with its position per store)."""
        if on and not self.on:
            self.set_on(True)
        self.queue.set_on(on)
        self.settings.setValue(QUEUE, bool(on))
        if on:
            self.focus_list()
            if self.key is not None:
                self._resume_position()

    def _resume_position(self) -> None:
        sid = self.settings.value(POSITION + (self.key or ""), "")
        if sid and sid != self.host.shown():
            self.host.show_again(str(sid))

    def focus_list(self) -> None:
        self.host.session_view.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_field(self, field: QWidget) -> None:
        self.dock.show()
        field.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def move(self, step: int) -> None:
        """The next (``1``) or previous (``-1``) session of the list."""
        model, view = self.host.sessions, self.host.session_view
        row = view.currentIndex().row() if view.currentIndex().isValid() else -1
        target = row + step
        if 0 <= target < model.rowCount():
            self.host.session_list.select_row(target)
        elif target >= model.rowCount() and model.canFetchMore(QModelIndex()):
            self._advance = target
            model.fetchMore(QModelIndex())

    def _on_page_for_move(self, _added: int, _more: bool) -> None:
        if self._advance and self._advance < self.host.sessions.rowCount():
            row, self._advance = self._advance, 0
            self.host.session_list.select_row(row)

    def mark_reviewed_and_next(self) -> None:
        """Ctrl+Enter: the note being typed is saved, the session marked reviewed, and the
        next unreviewed session claimed and opened."""
        sid = self.host.shown()
        if self.db is None or self.key is None or sid is None:
            return
        note = self.panel.note_edit.toPlainText().strip()
        self.panel.note_edit.clear()
        self.change(Edit(state="reviewed", note=note or None), guard=True)
        db, key, store = self.db, self.key, self.host.stores.store
        if store is None:
            return
        self.host.bridge.start(
            f"reviews:next:{next(self._seq)}",  # (never cancelled half-way by the next one)
            claims.next_session(db, store, key, reviewer=self.reviewer, take=True, tag=self.filter.tag, skip={sid}),
            self._next_found, self.host.show_error,
        )

    def _next_found(self, info: Any) -> None:
        if info is None:
            self.window.statusBar().showMessage("No unreviewed session left", 8000)
            return
        self.marks.reviews.pop(info.id, None)
        row = self.host.sessions.row_of(info.id)
        if row is not None:  # listed: its row becomes the current one (and is shown)
            self.host.session_list.select_row(row)
        else:  # on a page not loaded yet: shown now, selected once its page arrives
            self.host.show_again(info.id)
        self._fetch_marks()
        self.focus_list()

    def show_cheat_sheet(self) -> None:
        if self.cheat is None:
            self.cheat = cheat_sheet(self.window)
        self.cheat.show()

    def annotator(self) -> Any:
        """The review lines of each session, for an export (``None``: reviews are off)."""
        from fluxgui.services.reviews.results import annotator

        return annotator(self.db, self.key) if self.db is not None and self.key is not None else None

    def copy_shown_id(self) -> None:
        from .actions import copy_id

        sid = self.host.shown()
        if sid is not None:
            copy_id(self.window, self.host.conversation.ids.text(sid))
