"""The one road from widgets to asyncio: start a coroutine, get its outcome typed.

Widgets never await. They call :meth:`AsyncBridge.start` with a *key* (``"sessions"``,
``"messages"``, …), a coroutine and the handlers of its outcome: ``done(result)`` with
the coroutine's own result type, ``failed(error)``. The bridge runs the coroutine as a
task on the running (qasync) event loop and calls the handler from inside that task.
Starting a task under a key that is still running cancels the old one first, so a stale
load (the session the user just left) never delivers its result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)

T = TypeVar("T")


class AsyncBridge(QObject):
    """Runs coroutines on the event loop and hands each outcome to its own handler.

    * ``busyChanged(busy)`` — the first task started / the last task ended.
    * ``idle()`` — no task is running any more (emitted after the outcome handler, so
      tasks started from an outcome handler keep the bridge busy).
    """

    busyChanged = Signal(bool)
    idle = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._closed = False
        self._busy = False
        # every task not yet finished, including cancelled ones still unwinding
        self._live: set[asyncio.Task[Any]] = set()
        # background tasks: cancelled with the rest, never "busy"
        self._quiet: set[asyncio.Task[Any]] = set()

    # -- public API ----------------------------------------------------------------

    def start(
        self,
        key: str,
        coro: Coroutine[Any, Any, T],
        done: Callable[[T], None] | None = None,
        failed: Callable[[Exception], None] | None = None,
        *,
        background: bool = False,
    ) -> asyncio.Task[None]:
        """Run ``coro`` under ``key``, cancelling a task still running under that key.
        A ``background`` task (the search index's build) does not make the bridge busy:
        the busy indicator and ``idle`` are about what the user waits for.

        ``done(result)`` gets what the coroutine returned, ``failed(error)`` what it
        raised (an ``Exception`` that is not a known error is logged with its traceback
        too); a cancelled task calls neither. Both run inside the task, after it left
        the key free (a handler may start the same key again)."""
        if self._closed:
            coro.close()
            raise RuntimeError("the bridge is closed")
        old = self._tasks.pop(key, None)
        if old is not None and not old.done():
            old.cancel()
        task = asyncio.ensure_future(self._run(key, coro, done, failed))
        self._tasks[key] = task
        (self._quiet if background else self._live).add(task)
        task.add_done_callback(lambda t: self._task_done(t, coro))
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
        tasks = [t for t in self._live | self._quiet if not t.done()]
        self._tasks.clear()
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # -- internals -----------------------------------------------------------------

    async def _run(
        self,
        key: str,
        coro: Coroutine[Any, Any, T],
        done: Callable[[T], None] | None,
        failed: Callable[[Exception], None] | None,
    ) -> None:
        # The outcome is delivered from inside the task: once a task has been cancelled
        # it can no longer deliver, and a finished task has already delivered. The task
        # leaves the table before it reports, so a handler may start the same key again.
        try:
            result = await coro
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure goes to the UI, none crashes it
            if not _is_known(exc):
                log.error("task %r failed", key, exc_info=exc)
            self._leave(key)
            if not self._closed and failed is not None:
                failed(exc)
        else:
            self._leave(key)
            if not self._closed and done is not None:
                done(result)

    def _leave(self, key: str) -> None:
        if self._tasks.get(key) is asyncio.current_task():
            del self._tasks[key]

    def _task_done(self, task: asyncio.Task[Any], coro: Coroutine[Any, Any, Any]) -> None:
        # A task cancelled before its first step never started ``coro``: close it so
        # Python does not warn that it was never awaited (a no-op once it has run).
        coro.close()
        # Runs after the task's outcome handlers: tasks they started keep us busy.
        self._live.discard(task)
        self._quiet.discard(task)
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
