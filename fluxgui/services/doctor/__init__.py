"""The session doctor: what breaks a resume, repairs with undo, what the model will be
sent, and a per-turn ledger. Qt-free; one module per job:

* :mod:`.checks` — the checks over a session's messages (:mod:`.conventions` says which
  messages call and answer; :mod:`.structure` judges an Advanced store's bookkeeping);
* :mod:`.repairs` — repair and rewind plans, previewed and written as one change;
* :mod:`.preflight` — the input the Agents SDK (or flux's Runner) would send;
* :mod:`.tokens` — ``o200k_base`` token estimates, offline;
* :mod:`.ledger` — usage, estimates, prices and times per turn.

This module runs the checks on a store: :func:`check_session` for one session,
:func:`check_sessions` for several or all (paged).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence

from fluxgui.core.roles import Store
from fluxgui.core.model import Message

from .checks import check_messages
from .problems import CODES, LABELS, Problem, SessionReport
from .reading import read_messages
from .structure import structure_problems

__all__ = [
    "CODES",
    "LABELS",
    "Problem",
    "SessionReport",
    "check_messages",
    "check_session",
    "check_sessions",
    "read_messages",
    "report_for",
]


async def report_for(
    store: Store, session_id: str, messages: Sequence[Message], *, limit: int | None = None
) -> SessionReport:
    """The report of ``messages`` (a session's, as read), with an Advanced store's
    structure checked too."""
    # In a worker thread: the window's event loop runs meanwhile (a huge item's content
    # key is made a slice at a time, so the interpreter's lock changes hands between).
    report = await asyncio.to_thread(
        check_messages, session_id, messages, items=store.traits.items, limit=limit
    )
    if store.branches is None:
        return report
    extra = structure_problems(session_id, await store.branches.structure_report(session_id))
    return SessionReport(session_id, report.problems + tuple(extra), report.unchecked)


async def check_session(
    store: Store, session_id: str, *, limit: int | None = None, branch: str | None = None,
    batch: int = 1000,
) -> SessionReport:
    """The problems of one session (of ``branch``; an Advanced store's ``main`` by
    default, the branch a fresh reader resumes), read ``batch`` messages at a time."""
    messages = await read_messages(store, session_id, branch=branch, batch=batch)
    return await report_for(store, session_id, messages, limit=limit)


async def check_sessions(
    store: Store, session_ids: Sequence[str] = (), *, limit: int | None = None
) -> AsyncGenerator[SessionReport, None]:
    """The report of each session named, or of every session (listed a page at a time,
    most recently active first) when none is."""
    if session_ids:
        for sid in session_ids:
            yield await check_session(store, sid, limit=limit)
        return
    cursor = None
    while True:
        page = await store.reader.list_sessions(limit=200, cursor=cursor)
        for info in page.sessions:
            yield await check_session(store, info.id, limit=limit)
        if page.cursor is None:
            return
        cursor = page.cursor
