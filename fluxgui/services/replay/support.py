"""What the window needs around a replay: which turn a message is in (and how many
turns follow), and the replay's fork as one undoable change for its undo stack.

A replay writes its fork in several steps (the fork, then one write per turn), so no
single :class:`~fluxgui.core.changes.Change` of the store says "this session was made".
:func:`fork_as_change` reads one from the store itself (the writer's ``created_change``:
the fork's rows with their own ids and times, nothing written). Its inverse deletes the whole fork (Undo), applying it again restores it
(Redo), as for any edit. The original session is never touched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace

from fluxgui.core.changes import Change, label_id
from fluxgui.core.errors import ProviderError
from fluxgui.core.roles import Store, refuse

from ..doctor.reading import read_messages
from .record import recorded_turns
from .run import ReplayEvent, ReplayOptions, ReplayReport, replay


async def turns_from(store: Store, session_id: str, message_id: int) -> tuple[int | None, int]:
    """The turn holding message ``message_id`` (``None``: no turn opened by a user
    message holds it) and how many turns a replay from there runs (it and those after)."""
    turns = [t for t in recorded_turns(await read_messages(store, session_id)) if t.user is not None]
    for turn in turns:
        if any(m.id == message_id for m in turn.messages):
            return turn.number, sum(1 for t in turns if t.number >= turn.number)
    return None, 0


@dataclass
class ReplayOutcome:
    """How a replay ended: its report (done, or stopped at an unmatched call), or
    cancelled, or failed (``error``); ``fork`` whenever a fork was made (it holds the
    turns replayed before the end)."""

    report: ReplayReport | None = None
    cancelled: bool = False
    error: Exception | None = None
    fork: str | None = None
    replayed_turns: int = 0


async def replay_until(
    stop: asyncio.Event, store: Store, session_id: str, from_turn: int, options: ReplayOptions,
    on_event: Callable[[ReplayEvent], None],
) -> ReplayOutcome:
    """:func:`~.run.replay` until it ends or ``stop`` is set (then it is cancelled once
    its fork is made, and ends once the turn being written is written). Every end is an
    outcome: a failure too, with the fork it left (if any)."""
    outcome = ReplayOutcome()

    forked = asyncio.Event()

    def track(event: ReplayEvent) -> None:
        if event.kind == "forked":
            outcome.fork = str(event.data["fork"])
            forked.set()
        elif event.kind == "turn_done":
            outcome.replayed_turns += 1
        on_event(event)

    work = asyncio.ensure_future(replay(store, session_id, from_turn, options, on_event=track))
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({work, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the caller went away: so does the replay
        work.cancel()
        raise
    finally:
        waiter.cancel()
    if not work.done() and outcome.fork is None:
        # A fork being made is let finish and named first: a cancel never leaves a fork
        # nobody knows of (the fork is one short write).
        named = asyncio.ensure_future(forked.wait())
        try:
            await asyncio.wait({work, named}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            work.cancel()
            raise
        finally:
            named.cancel()
    if not work.done():
        work.cancel()
        await asyncio.wait({work})
    if work.cancelled():
        outcome.cancelled = True
    elif work.exception() is not None:
        error = work.exception()
        if not isinstance(error, Exception):
            raise error  # type: ignore[misc]
        outcome.error = error
        if isinstance(error, ProviderError) and outcome.replayed_turns == 0:
            outcome.fork = None  # the replay deleted its empty fork itself
    else:
        outcome.report = work.result()
    return outcome


def replay_label(session_id: str, from_turn: int, fork: str) -> str:
    """How the undo stack names a replay."""
    return f"Replay {label_id(session_id)} from turn {from_turn} into {label_id(fork)}"


async def fork_as_change(store: Store, fork: str, label: str) -> Change:
    """The replay's fork ``fork`` as one change that made it (see the module)."""
    made = await (store.writer or refuse(store, "writer")).created_change(fork)
    return replace(made, label=label)
