"""The search index in the window: built in the background when a store opens, kept up
to date when the store changes, its progress a small bar in the status bar.

A first build runs in a child process (:class:`~.index_process.IndexProcess`): parsing
a million rows in this process would hold the interpreter lock the UI thread needs many
times per frame. Later updates (a few new rows) run as a background task of the bridge
(never "busy"; the index file is written in a worker thread), and so does a build the
child could not do. Until the index is
ready, the session list's search scans the store (see
:func:`fluxgui.services.index.found_session_ids`). A store whose server keeps a trigram
index on its text (Postgres with ``pg_trgm``), or the OpenAI Conversations API, gets no
local copy: the team's server answers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar

from fluxgui.core.visible import visible
from fluxgui.services.index import UpdateReport, update_index
from fluxgui.services.index.indexfile import peek_state
from fluxgui.core.roles import Store
from fluxgui.services import pages

from .index_process import IndexProcess

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QMainWindow

    from ..bridge import AsyncBridge
    from ..dialogs.opening import OpenedStore
    from ..widgets import NoticeBar

log = logging.getLogger(__name__)

KEY = "search-index"
#: at most one update per this many seconds while the store keeps changing (an update
#: compares every session's count and last id: a query over the whole table)
UPDATE_EVERY = 5.0


class IndexController:
    """Builds and updates the open store's search index (see the module text).

    It is given what it uses: the window (its status bar holds the progress), the
    bridge, the notice bar above the panes (a missing database index, a failed update)
    and how the open store was opened (``opened()``: a first build opens it again in a
    child process)."""

    def __init__(
        self,
        window: QMainWindow,
        bridge: AsyncBridge,
        notice: NoticeBar,
        opened: Callable[[], OpenedStore | None],
    ) -> None:
        self._window = window
        self._bridge = bridge
        self._notice = notice
        self._opened = opened
        self.store: Store | None = None
        #: the last update's report (``None`` until one finished)
        self.report: UpdateReport | None = None
        self.skipped = False  # the server answers searches: no local index
        #: the child process building the index (``None``: none running)
        self.child: IndexProcess | None = None
        self._again = False
        #: a failure was told for this store (once: later ones go to the log)
        self.told = False
        self._shown_at = 0.0
        self._finished_at = -UPDATE_EVERY
        self._later = QTimer(window)
        self._later.setSingleShot(True)
        self._later.timeout.connect(self.store_changed)
        bar = window.statusBar()
        self.label = QLabel(window)
        self.label.setContentsMargins(6, 0, 2, 0)
        self.progress = QProgressBar(window)
        self.progress.setMaximumWidth(100)
        self.progress.setMaximumHeight(window.fontMetrics().height())
        self.progress.setTextVisible(False)
        bar.addPermanentWidget(self.label)
        bar.addPermanentWidget(self.progress)
        self._show(False)

    @property
    def running(self) -> bool:
        return self._bridge.running(KEY) or self.child is not None

    def stop(self) -> None:
        """End a build or update in progress (the index stays consistent)."""
        self._bridge.cancel(KEY)
        if self.child is not None:
            child, self.child = self.child, None
            child.stop()
            child.deleteLater()

    def set_store(self, store: Store | None) -> None:
        """A store was opened (or closed): build or update its index."""
        self.stop()
        self._later.stop()
        self._finished_at = -UPDATE_EVERY
        self.store, self.report, self.skipped, self._again = store, None, False, False
        self.told = False
        self._show(False)
        self._notice.hide()
        if store is None:
            return
        self._bridge.start(
            "index-advice", pages.index_advice(store), self._on_advice,
            lambda error: log.warning("looking for missing indexes failed: %s", error),
            background=True,
        )
        if not store.traits.remote:  # reading it costs requests: no index in the background
            self._start(store)

    def _on_advice(self, advice: list[str]) -> None:
        """Once per store opened: an index the database lacks (never created here)."""
        if advice:
            self._notice.show_notice("\n".join(advice))

    def store_changed(self) -> None:
        """The store changed (the live watcher): bring the index up to date."""
        if self.store is None or self.skipped:
            return
        if self.running:
            self._again = True  # once this update ends
            return
        wait = self._finished_at + UPDATE_EVERY - time.monotonic()
        if wait > 0:
            if not self._later.isActive():
                self._later.start(int(wait * 1000) + 1)
            return
        self._start(self.store)

    def _start(self, store: Store) -> None:
        self._bridge.start(
            KEY, self._plan(store), lambda plan: self._run(store, plan), self._on_failed,
            background=True,
        )

    async def _plan(self, store: Store) -> str:
        """``server`` (its trigram index answers), ``build`` (no finished index yet) or
        ``update``."""
        if await pages.server_searches(store):
            return "server"
        state = await asyncio.to_thread(peek_state, store.store_key)
        return "update" if state.get("ready") == "1" else "build"

    def _run(self, store: Store, plan: str) -> None:
        if store is not self.store:
            return
        if plan == "server":
            self._on_done(None)
            return
        opened = self._opened()
        if plan == "build" and opened is not None:
            child = IndexProcess(self._window, opened.target, opened.options, store.store_key)
            child.progress.connect(self._on_progress)
            child.done.connect(lambda report, c=child: self._child_ended(c, report))
            child.failed.connect(lambda reason, c=child: self._child_ended(c, None, reason))
            self.child = child
            return
        self._update_here(store)

    def _update_here(self, store: Store) -> None:
        self._bridge.start(
            KEY, self._update(store), self._on_done, self._on_failed, background=True
        )

    def _child_ended(self, child: IndexProcess, report: UpdateReport | None, reason: str = "") -> None:
        if child is not self.child:
            return
        self.child = None
        child.deleteLater()
        if report is not None:
            self._on_done(report)
            return
        log.info("the index process failed (%s): building in the window instead", reason)
        if self.store is not None:
            self._update_here(self.store)

    async def _update(self, store: Store) -> UpdateReport:
        # smaller batches than the command line: each one is a short step of the loop
        return await update_index(store, progress=self._on_progress, batch=2000)

    def _on_progress(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if total and done < total:
            if now - self._shown_at < 0.1:
                return
            self._shown_at = now
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * done / total))
            self.label.setText(f"Indexing {100 * done // total}%")
            self._show(True)

    def _on_done(self, report: UpdateReport | None) -> None:
        self._finished_at = time.monotonic()
        self._show(False)
        if report is None:
            self.skipped = True
            return
        self.report = report
        if report.built:
            self._window.statusBar().showMessage("Search index ready", 4000)
        if self._again and self.store is not None:
            self._again = False
            self.store_changed()

    def _on_failed(self, error: Exception) -> None:
        # Searching scans instead. Said once per store (a cache folder that is full or
        # read-only stays so for a while); every failure goes to the log.
        self._show(False)
        log.warning("the search index could not be updated: %s", error)
        if self.told or self.store is None:
            return
        self.told = True
        bar = self._notice
        text = f"Search reads the whole store instead of its index: {visible(str(error), keep_layout=False)}"
        bar.show_notice(f"{bar.text()}\n{text}" if bar.isVisible() and bar.text() else text)

    def _show(self, on: bool) -> None:
        self.label.setVisible(on)
        self.progress.setVisible(on)
