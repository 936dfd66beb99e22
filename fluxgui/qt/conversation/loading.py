"""Loading the conversation: the latest page of a session, earlier pages on scroll, and
reloads that keep the reader's place.

A session is never loaded whole: its latest page first (scrolled to the bottom), then
the page before the first loaded message (keyset ``anchor``, ``direction="backward"``)
whenever the view nears the top, prepended without moving what the reader looks at. A
page's documents are built in time slices on the event loop *before* its rows are
inserted (their code lexed in a worker thread), so neither the insert nor scrolling
waits for layout.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from PySide6.QtCore import QItemSelectionModel

from fluxgui.core.highlight import highlight_jobs, pretokenize
from fluxgui.core.model import Message, SessionInfo
from fluxgui.services import pages
from fluxgui.services.live import RELOAD_MAX
from fluxgui.core.roles import Store

from .model import MESSAGE_ROLE
from .state import PaneState, Restore

#: build documents for at most this long before letting the event loop run (seconds)
SLICE = 0.004


class PaneLoading:
    """The conversation pane's loading and paging (a part of the pane)."""

    def __init__(self, pane: PaneState) -> None:
        self.pane = pane

    def reload(self, *, keep_position: bool = True) -> None:
        """Read the current session again from its store.

        With ``keep_position`` the messages shown stay until the new ones arrive, as many
        are loaded again as were loaded (up to :data:`RELOAD_MAX`), and the view keeps its
        place: at the bottom if it was there, else the same message at the same height,
        the same current and selected messages, where they are still there. Otherwise it
        starts over as :meth:`show_session` does.
        """
        store, sid = self.pane._store, self.pane._session_id
        if store is None or sid is None:
            return
        if not self.pane._at_end and self.pane.model.rowCount() and not self.pane._gone:
            # Landed on a hit, the newest messages not loaded: land there again.
            top = self.pane.view.anchor().index.data(MESSAGE_ROLE)
            current = self.pane.current_message()
            keep = current or (top if isinstance(top, Message) else None)
            text = self.pane.finding.find_text
            self.pane.finding.open_at(store, sid, keep.id if keep else None, text or None, self.pane.branch)
            return
        if not keep_position or not (self.pane.model.rowCount() or self.pane._gone):
            self.pane.show_session(store, sid, self.pane.branch)  # nothing to keep: start over
            return
        self.pane._generation += 1
        self.pane.live.stop()
        self.pane._earlier_failed = False
        anchor = self.pane.view.anchor()
        top = anchor.index.data(MESSAGE_ROLE) if anchor.index.isValid() else None
        current = self.pane.current_message()
        selected = [
            m.id
            for m in (i.data(MESSAGE_ROLE) for i in self.pane.view.selectionModel().selectedIndexes())
            if isinstance(m, Message)
        ]
        limit = min(max(self.pane.page_size, self.pane.model.rowCount()), max(RELOAD_MAX, self.pane.page_size))
        self.pane._restore = Restore(
            top.id if isinstance(top, Message) else None,
            anchor.top,
            anchor.at_bottom,
            current.id if current is not None else None,
            selected,
            limit,
        )
        self.start(
            "latest", self.load_latest(self.pane._generation, store, sid, limit=limit, quiet=True)
        )

    def load_earlier(self) -> bool:
        """Load the page before the first loaded message; ``False`` when there is none to
        load (at the start, nothing shown, or a load is running)."""
        store, sid = self.pane._store, self.pane._session_id
        if store is None or sid is None or self.pane._at_start or self.pane._loading is not None:
            return False
        first = self.pane.model.message(0)
        if first is None:
            return False
        self.start(
            "earlier", self._load_earlier(self.pane._generation, store, sid, first.sort_key)
        )
        self.pane._update_status()
        return True

    # -- loading ---------------------------------------------------------------------

    def columns(self) -> bool | None:
        """Whether the store keeps messages as its table's columns (``None``: no store)."""
        return self.pane._store.traits.columns if self.pane._store is not None else None

    def start(self, what: str, coro: Any) -> None:
        self.set_loading(what)
        done = self.pane.finding.on_landed if what == "around" else self._on_loaded
        self.pane._task = self.pane._bridge.start(self.pane._key, coro, done, self._on_load_failed)

    def set_loading(self, what: str | None) -> None:
        was = self.pane._loading is not None
        self.pane._loading = what
        if was != (what is not None):
            self.pane.busyChanged.emit(what is not None)

    async def prepare(self, generation: int, messages: list[Message]) -> None:
        """Build the documents of a page in slices, letting the event loop run between.

        The page's calls and outputs are paired first: a document shows its calls'
        outputs, and one built before they were known would be built again on paint.
        (Adding is idempotent; the page's own insert adds them again.)
        """
        if generation != self.pane._generation:
            return
        shown = self.pane.shown
        if shown is not None and messages:  # (View › Redact) the page as it is shown
            messages[:] = await asyncio.to_thread(shown, list(messages))
            if generation != self.pane._generation:
                return
        self.pane.pairs.add(messages)
        # pygments is pure Python: lex the page's code blocks in a worker thread, so that
        # building a document on the UI thread only applies colours.
        full = set(self.pane.delegate.full)
        await asyncio.to_thread(lambda: pretokenize(highlight_jobs(messages, full=full)))
        started = time.perf_counter()
        for m in messages:
            if generation != self.pane._generation:
                return
            self.pane.delegate.prepare(m)
            if time.perf_counter() - started > SLICE:
                await asyncio.sleep(0)
                started = time.perf_counter()

    async def load_latest(
        self,
        generation: int,
        store: Store,
        session_id: str,
        *,
        limit: int | None = None,
        quiet: bool = False,
    ) -> tuple[str, int, SessionInfo | None, list[Message]]:
        limit = limit or self.pane.page_size
        if quiet:  # a reload for live refresh: a session gone meanwhile is no error
            info = await pages.session_row(store, session_id, branch=self.pane.branch)
            if info is None:
                return "gone", generation, None, []
        else:
            info = await pages.known_session(store, session_id, branch=self.pane.branch)
        messages = await pages.latest_messages(store, session_id, branch=self.pane.branch, limit=limit)
        await self.prepare(generation, messages)
        return ("reloaded" if quiet else "latest"), generation, info, messages

    async def _load_earlier(
        self, generation: int, store: Store, session_id: str, anchor: tuple[Any, ...]
    ) -> tuple[str, int, None, list[Message]]:
        messages = await pages.messages_next_to(
            store, session_id, anchor, "backward", branch=self.pane.branch, limit=self.pane.page_size
        )
        await self.prepare(generation, messages)
        return "earlier", generation, None, messages

    def _on_loaded(self, result: tuple[str, int, SessionInfo | None, list[Message]]) -> None:
        what, generation, info, messages = result
        if generation != self.pane._generation:
            return
        if what == "gone":
            self.set_loading(None)
            self.pane._restore = None
            self.pane.live.show_gone()
            return
        self.pane._settling = True
        try:
            self._show_page(what, info, messages)
        finally:
            self.pane._settling = False
        self.set_loading(None)
        self.pane._update_status()
        if what in ("latest", "reloaded"):
            assert self.pane._session_id is not None
            self.pane.loaded.emit(self.pane._session_id)
        elif what == "later":
            self.pane.laterLoaded.emit(len(messages))
        else:
            self.pane.earlierLoaded.emit(len(messages))
        self.maybe_load_earlier()
        self.pane.finding.maybe_load_later()
        if self.pane._catch_queued:
            self.pane.live.catch_up()

    def _show_page(self, what: str, info: SessionInfo | None, messages: list[Message]) -> None:
        self.pane._window += 1
        if what == "later":
            self.pane.finding.show_later(messages)
            return
        if what in ("latest", "reloaded"):
            self.pane._at_end = True
            restore, self.pane._restore = self.pane._restore, None
            limit = restore.limit if restore is not None else self.pane.page_size
            self.pane._info = info
            self.pane._at_start = len(messages) < limit
            if what == "reloaded":
                old = {m.id: m for m in self.pane.model.messages}
                self.pane._gone = False
                # Documents are cached by message id: drop those whose message changed.
                self.pane.delegate.forget({m.id for m in messages if m.id in old and old[m.id] != m})
                self.pane.pairs.clear()
            total = info.messages if info is not None else len(messages)
            # (A write between the count and the page makes this wrong; catch_up finds out.)
            # A count that is only a bound (a Conversations API) tells nothing before them.
            known = info is None or info.count_exact
            self.pane._before = 0 if self.pane._at_start else max(total - len(messages), 0) if known else None
            self.pane.pairs.add(messages)
            self.pane.model.set_messages(messages)
            if messages:
                self.pane.view.set_placeholder("")
                self.pane.view.doItemsLayout()
                if restore is None:
                    self.pane.view.scrollToBottom()
                    last = self.pane.model.index(len(messages) - 1, 0)
                    self.pane.view.selectionModel().setCurrentIndex(
                        last, self.pane.view.selectionModel().SelectionFlag.NoUpdate
                    )
                else:
                    self._restore_place(restore)
            else:
                self.pane._set_current(None)
                self.pane._show_placeholder("This session has no messages.")
        else:
            self.pane._at_start = len(messages) < self.pane.page_size
            if self.pane._before is not None:
                self.pane._before = 0 if self.pane._at_start else max(self.pane._before - len(messages), 0)
            self.pane.pairs.add(messages)
            anchor = self.pane.view.anchor()
            self.pane.model.prepend(messages)
            self.pane.view.relayout(keep=anchor)
            self.pane.view.viewport().update()  # pairing notes of rows already shown may change

    def _restore_place(self, restore: Restore) -> None:
        """Scroll and select as before a reload: the same message at the same height (at
        the bottom if the view was there or that message is gone), the same selection and
        current message (else the top one, or the last)."""
        selection = self.pane.view.selectionModel()
        flag = QItemSelectionModel.SelectionFlag
        for mid in restore.selected:
            row = self.pane.model.row_of(mid)
            if row is not None:
                selection.select(self.pane.model.index(row, 0), flag.Select)
        top_row = self.pane.model.row_of(restore.top_id) if restore.top_id is not None else None
        keep_top = not restore.at_bottom and top_row is not None
        # The current row first: making a row current scrolls it into view.
        current = self.pane.model.row_of(restore.current_id) if restore.current_id is not None else None
        if current is None:
            current = top_row if top_row is not None and keep_top else self.pane.model.rowCount() - 1
        selection.setCurrentIndex(self.pane.model.index(current, 0), flag.NoUpdate)
        if keep_top:
            assert top_row is not None
            bar = self.pane.view.verticalScrollBar()
            top = self.pane.view.visualRect(self.pane.model.index(top_row, 0)).top()
            bar.setValue(bar.value() + top - restore.top_px)
        else:
            self.pane.view.scrollToBottom()

    def _on_load_failed(self, error: Exception) -> None:
        what = self.pane._loading
        self.set_loading(None)
        if what in ("earlier", "later"):
            self.pane._earlier_failed = True  # no retry loop on every scroll; reload() retries
            self.pane._update_status()
        else:
            self.pane._broken = True
            self.pane._catch_queued = False
            self.pane._restore = None
            self.pane.model.clear()
            self.pane._set_current(None)
            self.pane._show_placeholder("This session could not be loaded.")
            self.pane.status.setText("")
        self.pane.failed.emit(error)

    def maybe_load_earlier(self, *_args: Any) -> None:
        if (
            self.pane._loading is not None
            or self.pane._settling
            or self.pane._at_start
            or self.pane._earlier_failed
            or self.pane._session_id is None
            or not self.pane.model.rowCount()
        ):
            return
        if self.pane.view.verticalScrollBar().value() <= max(self.pane.view.viewport().height(), 300):
            self.load_earlier()

