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


class PaneLoading(PaneState):
    """The conversation pane's loading and paging (a part of the pane)."""

    def reload(self, *, keep_position: bool = True) -> None:
        """Read the current session again from its store.

        With ``keep_position`` the messages shown stay until the new ones arrive, as many
        are loaded again as were loaded (up to :data:`RELOAD_MAX`), and the view keeps its
        place: at the bottom if it was there, else the same message at the same height,
        the same current and selected messages, where they are still there. Otherwise it
        starts over as :meth:`show_session` does.
        """
        store, sid = self._store, self._session_id
        if store is None or sid is None:
            return
        if not self._at_end and self.model.rowCount() and not self._gone:
            # Landed on a hit, the newest messages not loaded: land there again.
            top = self.view.anchor().index.data(MESSAGE_ROLE)
            current = self.current_message()
            keep = current or (top if isinstance(top, Message) else None)
            text = self.find_text
            self.open_at(store, sid, keep.id if keep else None, text or None, self.branch)
            return
        if not keep_position or not (self.model.rowCount() or self._gone):
            self.show_session(store, sid, self.branch)  # nothing to keep: start over
            return
        self._generation += 1
        self._stop_live()
        self._earlier_failed = False
        anchor = self.view.anchor()
        top = anchor.index.data(MESSAGE_ROLE) if anchor.index.isValid() else None
        current = self.current_message()
        selected = [
            m.id
            for m in (i.data(MESSAGE_ROLE) for i in self.view.selectionModel().selectedIndexes())
            if isinstance(m, Message)
        ]
        limit = min(max(self.page_size, self.model.rowCount()), max(RELOAD_MAX, self.page_size))
        self._restore = Restore(
            top.id if isinstance(top, Message) else None,
            anchor.top,
            anchor.at_bottom,
            current.id if current is not None else None,
            selected,
            limit,
        )
        self._start(
            "latest", self._load_latest(self._generation, store, sid, limit=limit, quiet=True)
        )

    def load_earlier(self) -> bool:
        """Load the page before the first loaded message; ``False`` when there is none to
        load (at the start, nothing shown, or a load is running)."""
        store, sid = self._store, self._session_id
        if store is None or sid is None or self._at_start or self._loading is not None:
            return False
        first = self.model.message(0)
        if first is None:
            return False
        self._start(
            "earlier", self._load_earlier(self._generation, store, sid, first.sort_key)
        )
        self._update_status()
        return True

    # -- loading ---------------------------------------------------------------------

    def _columns(self) -> bool | None:
        """Whether the store keeps messages as its table's columns (``None``: no store)."""
        return self._store.traits.columns if self._store is not None else None

    def _start(self, what: str, coro: Any) -> None:
        self._set_loading(what)
        done = self._on_landed if what == "around" else self._on_loaded
        self._task = self._bridge.start(self._key, coro, done, self._on_load_failed)

    def _set_loading(self, what: str | None) -> None:
        was = self._loading is not None
        self._loading = what
        if was != (what is not None):
            self.busyChanged.emit(what is not None)

    async def _prepare(self, generation: int, messages: list[Message]) -> None:
        """Build the documents of a page in slices, letting the event loop run between.

        The page's calls and outputs are paired first: a document shows its calls'
        outputs, and one built before they were known would be built again on paint.
        (Adding is idempotent; the page's own insert adds them again.)
        """
        if generation != self._generation:
            return
        self.pairs.add(messages)
        # pygments is pure Python: lex the page's code blocks in a worker thread, so that
        # building a document on the UI thread only applies colours.
        full = set(self.delegate.full)
        await asyncio.to_thread(lambda: pretokenize(highlight_jobs(messages, full=full)))
        started = time.perf_counter()
        for m in messages:
            if generation != self._generation:
                return
            self.delegate.prepare(m)
            if time.perf_counter() - started > SLICE:
                await asyncio.sleep(0)
                started = time.perf_counter()

    async def _load_latest(
        self,
        generation: int,
        store: Store,
        session_id: str,
        *,
        limit: int | None = None,
        quiet: bool = False,
    ) -> tuple[str, int, SessionInfo | None, list[Message]]:
        limit = limit or self.page_size
        if quiet:  # a reload for live refresh: a session gone meanwhile is no error
            info = await pages.session_row(store, session_id, branch=self.branch)
            if info is None:
                return "gone", generation, None, []
        else:
            info = await pages.known_session(store, session_id, branch=self.branch)
        messages = await pages.latest_messages(store, session_id, branch=self.branch, limit=limit)
        await self._prepare(generation, messages)
        return ("reloaded" if quiet else "latest"), generation, info, messages

    async def _load_earlier(
        self, generation: int, store: Store, session_id: str, anchor: tuple[Any, ...]
    ) -> tuple[str, int, None, list[Message]]:
        messages = await pages.messages_next_to(
            store, session_id, anchor, "backward", branch=self.branch, limit=self.page_size
        )
        await self._prepare(generation, messages)
        return "earlier", generation, None, messages

    def _on_loaded(self, result: tuple[str, int, SessionInfo | None, list[Message]]) -> None:
        what, generation, info, messages = result
        if generation != self._generation:
            return
        if what == "gone":
            self._set_loading(None)
            self._restore = None
            self._show_gone()
            return
        self._settling = True
        try:
            self._show_page(what, info, messages)
        finally:
            self._settling = False
        self._set_loading(None)
        self._update_status()
        if what in ("latest", "reloaded"):
            assert self._session_id is not None
            self.loaded.emit(self._session_id)
        elif what == "later":
            self.laterLoaded.emit(len(messages))
        else:
            self.earlierLoaded.emit(len(messages))
        self._maybe_load_earlier()
        self._maybe_load_later()
        if self._catch_queued:
            self.catch_up()

    def _show_page(self, what: str, info: SessionInfo | None, messages: list[Message]) -> None:
        self._window += 1
        if what == "later":
            self._show_later(messages)
            return
        if what in ("latest", "reloaded"):
            self._at_end = True
            restore, self._restore = self._restore, None
            limit = restore.limit if restore is not None else self.page_size
            self._info = info
            self._at_start = len(messages) < limit
            if what == "reloaded":
                old = {m.id: m for m in self.model.messages}
                self._gone = False
                # Documents are cached by message id: drop those whose message changed.
                self.delegate.forget({m.id for m in messages if m.id in old and old[m.id] != m})
                self.pairs.clear()
            total = info.messages if info is not None else len(messages)
            # (A write between the count and the page makes this wrong; catch_up finds out.)
            # A count that is only a bound (a Conversations API) tells nothing before them.
            known = info is None or info.count_exact
            self._before = 0 if self._at_start else max(total - len(messages), 0) if known else None
            self.pairs.add(messages)
            self.model.set_messages(messages)
            if messages:
                self.view.set_placeholder("")
                self.view.doItemsLayout()
                if restore is None:
                    self.view.scrollToBottom()
                    last = self.model.index(len(messages) - 1, 0)
                    self.view.selectionModel().setCurrentIndex(
                        last, self.view.selectionModel().SelectionFlag.NoUpdate
                    )
                else:
                    self._restore_place(restore)
            else:
                self._set_current(None)
                self._show_placeholder("This session has no messages.")
        else:
            self._at_start = len(messages) < self.page_size
            if self._before is not None:
                self._before = 0 if self._at_start else max(self._before - len(messages), 0)
            self.pairs.add(messages)
            anchor = self.view.anchor()
            self.model.prepend(messages)
            self.view.relayout(keep=anchor)
            self.view.viewport().update()  # pairing notes of rows already shown may change

    def _restore_place(self, restore: Restore) -> None:
        """Scroll and select as before a reload: the same message at the same height (at
        the bottom if the view was there or that message is gone), the same selection and
        current message (else the top one, or the last)."""
        selection = self.view.selectionModel()
        flag = QItemSelectionModel.SelectionFlag
        for mid in restore.selected:
            row = self.model.row_of(mid)
            if row is not None:
                selection.select(self.model.index(row, 0), flag.Select)
        top_row = self.model.row_of(restore.top_id) if restore.top_id is not None else None
        keep_top = not restore.at_bottom and top_row is not None
        # The current row first: making a row current scrolls it into view.
        current = self.model.row_of(restore.current_id) if restore.current_id is not None else None
        if current is None:
            current = top_row if keep_top else self.model.rowCount() - 1
        selection.setCurrentIndex(self.model.index(current, 0), flag.NoUpdate)
        if keep_top:
            assert top_row is not None
            bar = self.view.verticalScrollBar()
            top = self.view.visualRect(self.model.index(top_row, 0)).top()
            bar.setValue(bar.value() + top - restore.top_px)
        else:
            self.view.scrollToBottom()

    def _on_load_failed(self, error: Exception) -> None:
        what = self._loading
        self._set_loading(None)
        if what in ("earlier", "later"):
            self._earlier_failed = True  # no retry loop on every scroll; reload() retries
            self._update_status()
        else:
            self._broken = True
            self._catch_queued = False
            self._restore = None
            self.model.clear()
            self._set_current(None)
            self._show_placeholder("This session could not be loaded.")
            self.status.setText("")
        self.failed.emit(error)

    def _maybe_load_earlier(self, *_args: Any) -> None:
        if (
            self._loading is not None
            or self._settling
            or self._at_start
            or self._earlier_failed
            or self._session_id is None
            or not self.model.rowCount()
        ):
            return
        if self.view.verticalScrollBar().value() <= max(self.view.viewport().height(), 300):
            self.load_earlier()

