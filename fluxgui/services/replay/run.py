"""Replay a recorded session from turn N with another model, prompt or temperature.

The session is forked at turn N's user message (the fork holds everything before turn N
and that message; the original is never changed), then each turn N, N+1, … is run
through flux's ``Runner`` with the chosen provider (offline | openai | ollama, as the
test chat makes them), the fork's history (every call with its output) and the turn's
recorded user message. The recorded tools are offered to the model and answered from the
record (:mod:`.tools`); nothing is executed. Each finished turn is appended to the fork
in one write (the user's message, the calls, their outputs, the answer), so a replay
stopped at an unmatched call, failed or cancelled leaves the turns completed before it.
Undo: delete the fork (:func:`undo_replay`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from flux.agent import Agent, AgentSettings
from flux.config import FluxConfig
from flux.models.base import ModelSettings
from flux.runner import Runner

from fluxgui.core.aio import run_to_end
from fluxgui.core.changes import Change
from fluxgui.core.errors import FluxguiError, ProviderError, show_id
from fluxgui.core.model import Message, meta_dict
from fluxgui.core.roles import Store, refuse

from ..chat import MAX_TURNS, AgentConfig
from ..chat_providers import as_provider_error, check_base_url, endpoint, make_model
from ..doctor.reading import read_messages
from .chatform import chat_messages, from_flux, stored_specs, to_flux
from .model import ReplayModel
from .record import RecordedTurn, recorded_tools, recorded_turns
from .tools import RecordedTool, StopCall, TurnMatcher, Unmatched


@dataclass
class ReplayOptions:
    """How to replay: the agent (provider, model, instructions, temperature), how calls
    are matched, the text for an unmatched call (``None``: stop there), the fork's id."""

    agent: AgentConfig = field(default_factory=AgentConfig)
    match: str = "strict"
    unmatched: str | None = None
    name: str | None = None


@dataclass
class ReplayEvent:
    """Progress: ``forked`` (data: fork, change), ``turn`` (a turn starts: turn), ``text``
    (a streamed piece), ``tool_call`` (id, name, arguments), ``tool_output`` (id, name,
    output, matched), ``turn_done`` (turn, usage), ``stopped`` (the stop's dict)."""

    kind: str
    turn: int
    data: dict[str, Any]


@dataclass
class ReplayReport:
    """A finished (or stopped) replay."""

    fork: str
    #: the fork as made (undo deletes the fork: :func:`undo_replay`)
    change: Change
    from_turn: int
    replayed_turns: int = 0
    stopped: StopCall | None = None
    matched: int = 0
    unmatched: int = 0
    #: per replayed turn: turn, requests, input_tokens, output_tokens, total_tokens
    usage: list[dict[str, int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"fork", "replayed_turns", "stopped": null | {"turn", "call": {"name",
        "arguments"}, "reason"}, "tool_calls": {"matched", "unmatched"}}``."""
        stop = None
        if self.stopped is not None:
            whole = self.stopped.to_dict()
            stop = {"turn": whole["turn"], "call": whole["call"], "reason": whole["reason"]}
        return {
            "fork": self.fork, "replayed_turns": self.replayed_turns, "stopped": stop,
            "tool_calls": {"matched": self.matched, "unmatched": self.unmatched},
        }


def pick_turns(turns: list[RecordedTurn], from_turn: int, session_id: str) -> list[RecordedTurn]:
    """The turns from ``from_turn`` on (each opened by a user message); an error naming
    the turns there are when there is no such turn."""
    numbered = [t for t in turns if t.user is not None]
    picked = [t for t in numbered if t.number >= from_turn]
    if from_turn >= 1 and picked and picked[0].number == from_turn:
        return picked
    have = f"turns 1–{numbered[-1].number}" if numbered else "no turns (no user message)"
    raise FluxguiError(f"session {show_id(session_id)} has no turn {from_turn}: it has {have}")


def _user_spec(m: Message, *, items: bool) -> dict[str, Any]:
    """A recorded user message as the store's writer appends it again."""
    if items and isinstance(m.raw, dict):
        return dict(m.raw)
    spec: dict[str, Any] = {"role": "user", "content": m.text}
    if meta_dict(m):
        spec["metadata"] = dict(meta_dict(m))
    return spec


async def replay(
    store: Store, session_id: str, from_turn: int, options: ReplayOptions, *,
    on_event: Callable[[ReplayEvent], None] | None = None,
) -> ReplayReport:
    """Replay ``session_id`` from turn ``from_turn`` into a fork (see the module).

    Raises a one-line :class:`~fluxgui.core.errors.FluxguiError` before anything is
    written for a turn that does not exist, a store that cannot fork, a bad provider; a
    :class:`ProviderError` naming the fork when the provider fails mid-way (the turns
    before stay). A cancel passes through (the turns written stay in the fork)."""
    emit = on_event or (lambda event: None)
    forks = store.forks or refuse(store, "forks")
    writer = store.writer or refuse(store, "writer")
    check_base_url(options.agent.base_url)
    turns = recorded_turns(await read_messages(store, session_id))
    picked = pick_turns(turns, from_turn, session_id)
    config = options.agent
    model = make_model(config.provider, config.model, config.base_url, config.api_key, config.timeout)
    matcher = TurnMatcher(options.match, options.unmatched)
    tools: list[Any] = [RecordedTool(n, s, matcher) for n, s in recorded_tools(turns).items()]
    where = endpoint(config.provider, config.base_url)
    first = picked[0].user
    assert first is not None
    # Adding nothing runs the writer's checks (read-only, a store it cannot append to)
    # before a fork is made or anything is sent.
    await writer.add_messages(session_id, [])
    change = await forks.fork_session(session_id, first.id, options.name)
    fork = str(change.session_id)
    report = ReplayReport(fork, change, from_turn)
    emit(ReplayEvent("forked", from_turn, {"fork": fork, "change": change}))
    items = store.traits.items
    for k, turn in enumerate(picked):
        n = turn.number
        current = n

        def relay(kind: str, data: dict[str, Any]) -> None:
            emit(ReplayEvent(kind, current, data))

        matcher.on_answer = lambda cid, name, out, hit: relay(
            "tool_output", {"id": cid, "name": name, "output": out, "matched": hit})
        emit(ReplayEvent("turn", n, {}))
        chat = chat_messages(await read_messages(store, fork))
        user = turn.user
        assert user is not None
        added = [] if k == 0 else [_user_spec(user, items=items)]
        if k > 0:
            chat += chat_messages([user])
        matcher.start(n, turn.calls)
        before = (matcher.matched, matcher.unmatched)
        wrapped = ReplayModel(model, tools, matcher, relay)
        agent = Agent(
            name=config.name or "assistant", instructions=config.instructions, model=wrapped,
            tools=cast(Any, tools),  # a list the model may add an unknown tool's name to
            settings=AgentSettings(
                max_turns=max(MAX_TURNS, len(turn.calls) + 2),
                model_settings=ModelSettings(temperature=config.temperature),
            ),
        )
        sent = to_flux(chat)
        try:
            result = await Runner.run(
                agent, sent, config=FluxConfig(event_bus_enabled=False), model=wrapped,
            )
        except Unmatched as stop:
            report.matched, report.unmatched = matcher.matched, matcher.unmatched
            report.stopped = stop.stop
            emit(ReplayEvent("stopped", n, stop.stop.to_dict()))
            return report
        except Exception as exc:  # a cancel (BaseException) passes through
            err = exc if isinstance(exc, ProviderError) else as_provider_error(exc, where, config.timeout)
            if err is None:
                raise
            if report.replayed_turns == 0:  # nothing replayed: no fork left behind
                await asyncio.shield(writer.apply_change(change.inverse()))
                kept = "no fork was kept"
            else:
                done = report.replayed_turns
                kept = f"the fork {show_id(fork)} keeps the {done} turn{'s' if done != 1 else ''} replayed before"
            raise ProviderError(f"replaying turn {n}: {err}; {kept}") from exc
        added += stored_specs(from_flux(result.messages[len(sent):]), items=items)
        u = wrapped.usage
        usage = {"turn": n, "requests": u.requests, "input_tokens": u.input_tokens,
                 "output_tokens": u.output_tokens, "total_tokens": u.total_tokens}
        if not items and added:  # chat messages keep it: the ledger and Compare show it
            _note_usage(added[-1], usage, str(getattr(model, "model", "") or config.model))
        # Run to its end: a cancel must not cut a turn in two; it is seen once the turn
        # is written (so a caller that cancelled knows the fork holds whole turns only).
        await run_to_end(writer.add_messages(fork, added))
        report.replayed_turns += 1
        report.matched, report.unmatched = matcher.matched, matcher.unmatched
        report.usage.append(usage)
        emit(ReplayEvent("turn_done", n, {"usage": usage, "tool_calls": {
            "matched": matcher.matched - before[0], "unmatched": matcher.unmatched - before[1]}}))
    return report


def _note_usage(spec: dict[str, Any], usage: dict[str, int], model: str) -> None:
    """Note a replayed turn's usage and model in its answer's metadata (chat messages:
    where :mod:`fluxgui.services.doctor.ledger` and the comparison read them)."""
    if spec.get("role") != "assistant" or not usage["requests"]:
        return
    meta = dict(spec.get("metadata") or {})
    meta["usage"] = {k: v for k, v in usage.items() if k != "turn"}
    if model:
        meta["model"] = model
    spec["metadata"] = meta


async def turn_at(store: Store, session_id: str, message_id: int) -> int | None:
    """The number of the turn holding message ``message_id`` (what "Replay from here…"
    on a user message replays from); ``None`` when no turn opened by a user message
    holds it."""
    for turn in recorded_turns(await read_messages(store, session_id)):
        if turn.user is not None and any(m.id == message_id for m in turn.messages):
            return turn.number
    return None


async def undo_replay(store: Store, fork: str) -> Change:
    """Delete a replay's fork (the original was never changed): the deletion's change,
    which an undo of the undo applies again."""
    return await (store.writer or refuse(store, "writer")).delete_session(fork)
