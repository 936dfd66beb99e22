"""Live refresh: notice when another process (an agent) writes to the open store.

:class:`StoreWatcher` asks the open store for its :meth:`~fluxgui.core.ports.
Store.change_token` about every 400 ms and emits :attr:`~StoreWatcher.changed`
when the token differs from the one before. The window connects that to the session
list's :meth:`~fluxgui.qt.sessions.SessionListModel.refresh` and the conversation's
:meth:`~fluxgui.qt.conversation.live.PaneLive.catch_up` (``pane.live``), which merge what is new
without reloading everything. What a token means (baseline, change, back-off) is
:class:`fluxgui.services.live.ChangeTracker`'s; this module only adds the timer and the
signals.

Every poll is one tiny query (SQLite: ``PRAGMA data_version`` on the store's own
autocommit connection; Postgres: one row from the statistics views) and nothing is held
open between polls, so a reader never keeps a lock that could make the agent's write
fail. Polls are not bridge tasks: polling never ends, and it would keep the bridge (and
the window's busy indicator) busy for good. The wait between two polls is a ``QTimer`` of
the watcher's own rather than an asyncio timer, so that stopping leaves no timer behind
on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from fluxgui.services.live import MAX_BACKOFF, POLL_INTERVAL, ChangeTracker
from fluxgui.core.roles import Store
from fluxgui.services import pages

__all__ = ["MAX_BACKOFF", "POLL_INTERVAL", "StoreWatcher"]

log = logging.getLogger(__name__)


class StoreWatcher(QObject):
    """Polls a store's change token and emits :attr:`changed` when it moves.

    * :meth:`set_store` starts watching a store (``None`` stops); the first poll runs at
      once and only takes the token as the baseline.
    * :meth:`pause` / :meth:`resume` (nested: the watcher polls again once every
      ``pause`` has its ``resume``) — for instance around the window's own writes.
    * Errors (a server that went away, a store closed under us) are not reported as
      errors: the watcher backs off (double the wait each time, up to
      :data:`MAX_BACKOFF`) and says so once with :attr:`unavailable`, then
      :attr:`available` when a poll works again.
    * :meth:`aclose` stops polling and waits until a poll in flight has ended (call it
      before the store is closed).

    ``bridge`` (the window's :class:`~fluxgui.qt.bridge.AsyncBridge`) is only the
    watcher's Qt parent when no ``parent`` is given.
    """

    #: another process changed the store since the last poll
    changed = Signal()
    #: polling started failing (the error); the watcher backs off and keeps trying
    unavailable = Signal(object)
    #: polling works again after :attr:`unavailable`
    available = Signal()

    def __init__(
        self,
        bridge: QObject | None = None,
        parent: QObject | None = None,
        *,
        interval: float = POLL_INTERVAL,
        max_backoff: float = MAX_BACKOFF,
    ) -> None:
        super().__init__(parent if parent is not None else bridge)
        self._tracker = ChangeTracker(interval, max_backoff)
        self._store: Store | None = None
        self._task: asyncio.Task[None] | None = None  # the poll in flight
        self._pauses = 0
        self._again = False  # poll again as soon as the poll in flight ends
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._poll)
        #: polls that returned a token (for tests and the curious)
        self.polls = 0

    # -- state ---------------------------------------------------------------------

    @property
    def store(self) -> Store | None:
        return self._store

    @property
    def interval(self) -> float:
        """Seconds between two polls while the store answers."""
        return self._tracker.interval

    @property
    def running(self) -> bool:
        """A poll is waiting or in flight."""
        return self._timer.isActive() or (self._task is not None and not self._task.done())

    @property
    def paused(self) -> bool:
        return self._pauses > 0

    @property
    def error(self) -> BaseException | None:
        """Why the last poll failed (``None`` while polls work)."""
        return self._tracker.error

    @property
    def token(self) -> Any:
        """The last token seen (``None`` before the first poll, or when the store has none)."""
        return self._tracker.token

    # -- public API ----------------------------------------------------------------

    def set_store(self, store: Store | None) -> None:
        """Watch ``store`` from now on (``None``: stop watching). Never blocks."""
        if store is self._store and (store is None or self.running or self.paused):
            return
        self._stop()
        self._store = store
        if store is not None:
            self._timer.start(0)

    def pause(self) -> None:
        """Stop polling until the matching :meth:`resume`."""
        self._pauses += 1

    def resume(self, *, ignore_changes: bool = False) -> None:
        """Undo one :meth:`pause`; once none is left, poll at once.

        With ``ignore_changes`` the first poll after the pause only takes a new baseline:
        what was written meanwhile (our own writes, say) does not emit :attr:`changed`.
        """
        if self._pauses == 0:
            return
        self._pauses -= 1
        if ignore_changes:
            self._tracker.rebase()
        if self._pauses == 0:
            self.check_now()

    def check_now(self) -> None:
        """Poll now instead of at the end of the current wait."""
        if self._store is None:
            return
        if self._task is not None and not self._task.done():
            self._again = True
        else:
            self._timer.start(0)

    async def aclose(self) -> None:
        """Stop watching and wait until a poll in flight has ended."""
        task = self._task
        self._stop()
        self._store = None
        if task is not None and not task.done():
            await asyncio.gather(task, return_exceptions=True)

    # -- internals -----------------------------------------------------------------

    def _stop(self) -> None:
        self._timer.stop()
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
        self._tracker.reset()
        self._again = False

    def _poll(self) -> None:
        store = self._store
        if store is None or self._pauses or (self._task is not None and not self._task.done()):
            return  # resume() polls again
        self._task = asyncio.ensure_future(self._poll_once(store))

    async def _poll_once(self, store: Store) -> None:
        try:
            token = await pages.change_token(store)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a poll never crashes anything
            if self._store is not store:
                return
            poll = self._tracker.failed(exc)
            self._next(poll.delay)
            if poll.first_failure:
                log.info("watching the store paused: %s", exc)
                self._emit(self.unavailable, exc)
            return
        if self._store is not store:
            return
        poll = self._tracker.answered()
        self.polls += 1
        self._next(poll.delay)
        if poll.recovered:
            self._emit(self.available)
        if self._pauses:
            return  # the answer to a poll that started before pause()
        if self._tracker.take(token):
            self._emit(self.changed)

    def _next(self, delay: float) -> None:
        """Schedule the next poll (at once if check_now() asked meanwhile)."""
        if self._again:
            self._again = False
            delay = 0.0
        try:
            self._timer.start(int(delay * 1000))
        except RuntimeError:  # the watcher's C++ side is gone
            self._store = None

    def _emit(self, signal: Any, *args: Any) -> None:
        # Handlers run now, inside the poll task: one that raises must not end polling.
        try:
            signal.emit(*args)
        except RuntimeError:  # the watcher's C++ side is gone
            self._store = None
        except Exception:  # noqa: BLE001
            log.exception("a live-refresh handler failed")
