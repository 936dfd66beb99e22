"""The one road from widgets to asyncio: start a coroutine, get its outcome as a signal.

Widgets never await. They call :meth:`AsyncBridge.start` with a *key* (``"sessions"``,
``"messages"``, …) and a coroutine; the bridge runs it as a task on the running (qasync)
event loop and emits :attr:`~AsyncBridge.succeeded` or :attr:`~AsyncBridge.failed` with
that key. Starting a task under a key that is still running cancels the old one first,
so a stale load (the session the user just left) never delivers its result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)


class AsyncBridge(QObject):
    """Runs coroutines on the event loop and reports their outcome as Qt signals.

    * ``succeeded(key, result)`` — the task under ``key`` returned ``result``.
    * ``failed(key, error)`` — it raised ``error`` (an ``Exception``; cancellation is
      silent).
    * ``busyChanged(busy)`` — the first task started / the last task ended.
    * ``idle()`` — no task is running any more (emitted after the outcome signal, so
      tasks started from an outcome handler keep the bridge busy).
    """

    succeeded = Signal(str, object)
    failed = Signal(str, object)
    busyChanged = Signal(bool)
    idle = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._closed = False
        self._busy = False
        # every task not yet finished, including cancelled ones still unwinding
        self._live: set[asyncio.Task[Any]] = set()

    # -- public API ----------------------------------------------------------------

    def start(self, key: str, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` under ``key``, cancelling a task still running under that key."""
        if self._closed:
            coro.close()
            raise RuntimeError("the bridge is closed")
        old = self._tasks.pop(key, None)
        if old is not None and not old.done():
            old.cancel()
        task = asyncio.ensure_future(self._run(key, coro))
        self._tasks[key] = task
        self._live.add(task)
        task.add_done_callback(lambda t, c=coro: self._task_done(t, c))
        self._update_busy()
        return task

    def cancel(self, key: str) -> None:
        """Cancel the task running under ``key`` (if any); it reports nothing."""
        task = self._tasks.pop(key, None)
        if task is not None and not task.done():
            task.cancel()
        self._update_busy()

    def running(self, key: str) -> bool:
        task = self._tasks.get(key)
        return task is not None and not task.done()

    @property
    def busy(self) -> bool:
        """A task is running, reporting, or (cancelled) still unwinding."""
        return any(not t.done() for t in self._live)

    async def aclose(self) -> None:
        """Cancel every task and wait until they have all unwound."""
        self._closed = True
        tasks = [t for t in self._live if not t.done()]
        self._tasks.clear()
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- internals -----------------------------------------------------------------

    async def _run(self, key: str, coro: Coroutine[Any, Any, Any]) -> None:
        # The outcome is emitted from inside the task: once a task has been cancelled it
        # can no longer deliver, and a finished task has already delivered. The task
        # leaves the table before it reports, so a handler may start the same key again.
        try:
            result = await coro
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure goes to the UI, none crashes it
            if not _is_known(exc):
                log.error("task %r failed", key, exc_info=exc)
            self._leave(key)
            if not self._closed:
                self.failed.emit(key, exc)
        else:
            self._leave(key)
            if not self._closed:
                self.succeeded.emit(key, result)

    def _leave(self, key: str) -> None:
        if self._tasks.get(key) is asyncio.current_task():
            del self._tasks[key]

    def _task_done(self, task: asyncio.Task[Any], coro: Coroutine[Any, Any, Any]) -> None:
        # A task cancelled before its first step never started ``coro``: close it so
        # Python does not warn that it was never awaited (a no-op once it has run).
        coro.close()
        # Runs after the task's outcome handlers: tasks they started keep us busy.
        self._live.discard(task)
        for key, t in list(self._tasks.items()):
            if t is task:
                del self._tasks[key]
        self._update_busy()

    def _update_busy(self) -> None:
        busy = self.busy
        if busy == self._busy or self._closed:
            return
        self._busy = busy
        self.busyChanged.emit(busy)
        if not busy:
            self.idle.emit()


def _is_known(exc: BaseException) -> bool:
    from fluxgui.core.errors import FluxguiError

    return isinstance(exc, FluxguiError)
