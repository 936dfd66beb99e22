"""Keyring answers for the dialogs, never waited for on the UI thread.

Whether a keyring can take a password decides if a dialog offers "Remember password".
When keyring has already chosen its backend the answer costs nothing and comes at once;
otherwise (the first question of the session: keyring asks D-Bus, which may take seconds)
it is asked on a worker thread and the dialog updates its checkbox when it comes.
Keyring writes go to a worker thread too (:func:`fluxgui.services.credentials.file_password_soon`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import QObject

from fluxgui.services import credentials

T = TypeVar("T")

#: tasks started here and not finished (a task nobody holds may be collected unrun)
_tasks: set[asyncio.Task[Any]] = set()


def keyring_answer_now() -> bool | None:
    """Whether a keyring can store passwords, when that is known without waiting;
    ``None`` when asking would probe (see :func:`ask_keyring_available`)."""
    if not credentials.backend_chosen():
        return None
    return credentials.keyring_available()


def run_for(owner: QObject, coro: Coroutine[Any, Any, T], done: Callable[[T], None]) -> bool:
    """Run ``coro`` on the running event loop and hand its result to ``done`` — unless
    ``owner`` (the dialog asking) is gone by then. ``False`` (the coroutine closed,
    unrun) when no event loop runs in this thread."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        coro.close()
        return False

    async def deliver() -> None:
        result = await coro
        if shiboken6.isValid(owner):
            done(result)

    task = loop.create_task(deliver())
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return True


def ask_keyring_available(owner: QObject, done: Callable[[bool], None]) -> None:
    """Call ``done(available)`` with whether a keyring can store passwords: at once when
    that is known, else once a worker thread has asked keyring."""
    now = keyring_answer_now()
    if now is None and not run_for(owner, credentials.keyring_available_async(), done):
        now = credentials.keyring_available()  # no event loop to keep responsive: ask here
    if now is not None:
        done(now)
