"""The per-turn ledger: items, tool calls, tokens (recorded where the store has them,
estimated otherwise), an estimated cost when the model is known, and the time each turn
took.

Recorded usage: an ``AdvancedSQLiteSession`` store's ``turn_usage`` rows, or the
``metadata.usage`` a flux row carries (``input_tokens``/``prompt_tokens``,
``output_tokens``/``completion_tokens``, ``requests``). Otherwise the tokens are
estimated (:mod:`.tokens`): each request of a turn sends everything before it (a turn
makes one request, and one more after each run of tool outputs the model goes on from),
and the model's items are its output. Prices come from ``genai-prices``' bundled table
(offline; it never fetches an update here), for the model given or named in the
messages' metadata. A turn's time is from its first item's timestamp to its last's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

from fluxgui.core.contentkey import item_of
from fluxgui.core.roles import Store, refuse
from fluxgui.core.branches import TurnUsage
from fluxgui.core.model import Message
from fluxgui.core.times import unix_time
from fluxgui.core.turns import group_turns

from . import tokens
from .conventions import calls_of
from .reading import read_messages

#: the context window the gauge measures against when the model is not known
ASSUMED_WINDOW = 128_000


@dataclass(frozen=True)
class TurnLedger:
    """One turn's line of the ledger."""

    number: int
    items: int
    tool_calls: tuple[str, ...]
    requests: int
    input_tokens: int
    output_tokens: int
    #: the tokens are the store's record (else estimated)
    recorded: bool
    #: estimated tokens of the history once the turn is over (what the next one carries)
    context_tokens: int
    seconds: float | None
    cost: float | None
    first_id: int | None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["tool_calls"] = list(self.tool_calls)
        doc["total_tokens"] = self.total_tokens
        return doc


@dataclass(frozen=True)
class Ledger:
    """A session's turns, the model priced with, and the context-window gauge."""

    session_id: str
    model: str | None
    turns: tuple[TurnLedger, ...]
    context_window: int
    #: the window is the model's (else :data:`ASSUMED_WINDOW`)
    window_known: bool

    @property
    def price_note(self) -> str | None:
        """Why the costs are unknown (``None``: every turn is priced)."""
        if all(t.cost is not None for t in self.turns):
            return None
        if not self.model:
            return "no model known (give one with --model, or metadata.model): no prices"
        return (f"model {self.model[:80]!r} is not in genai-prices' offline table: no prices "
                "(its context window is assumed)")

    @property
    def largest_context(self) -> int:
        return max((t.context_tokens for t in self.turns), default=0)

    def scale(self, turn: TurnLedger) -> float:
        """The turn's bar, 0 to 1, against the most expensive turn (by cost when every
        turn is priced, else by tokens)."""
        priced = all(t.cost is not None for t in self.turns)

        def value(t: TurnLedger) -> float:
            return (t.cost or 0.0) if priced else float(t.total_tokens)

        top = max((value(t) for t in self.turns), default=0.0)
        return value(turn) / top if top else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "model": self.model,
            "turns": [t.to_dict() for t in self.turns],
            "price_note": self.price_note,
            "total_cost": (
                sum(t.cost or 0.0 for t in self.turns)
                if any(t.cost is not None for t in self.turns) else None
            ),
            "context": {
                "largest_turn_tokens": self.largest_context,
                "window": self.context_window,
                "window_known": self.window_known,
            },
        }


def _model_of(messages: Sequence[Message]) -> str | None:
    found = None
    for m in messages:
        meta = m.metadata if isinstance(m.metadata, dict) else {}
        if isinstance(meta.get("model"), str) and meta["model"]:
            found = meta["model"]
    return found


def _usage_of(messages: Sequence[Message]) -> tuple[int, int, int] | None:
    """``(requests, input, output)`` summed from the messages' ``metadata.usage``."""
    seen = False
    req = inp = out = 0
    for m in messages:
        usage = (m.metadata or {}).get("usage") if isinstance(m.metadata, dict) else None
        if not isinstance(usage, dict):
            continue
        seen = True
        inp += int(usage.get("input_tokens", usage.get("prompt_tokens", 0)) or 0)
        out += int(usage.get("output_tokens", usage.get("completion_tokens", 0)) or 0)
        req += int(usage.get("requests", 1) or 0)
    return (req, inp, out) if seen else None


def _model_made(m: Message) -> bool:
    return m.kind in ("reasoning", "tool_call") or (m.kind == "message" and m.role == "assistant")


def _tokens(m: Message) -> int:
    item = item_of(m)
    return tokens.count(tokens.item_text(item if item is not None else {"role": m.role, "content": m.text}))


def price(model: str | None, input_tokens: int, output_tokens: int) -> tuple[float | None, int | None]:
    """``(cost in USD, the model's context window)`` from genai-prices' bundled table;
    ``(None, None)`` when the model is not known to it."""
    if not model:
        return None, None
    try:
        import genai_prices
    except ImportError:
        return None, None
    try:
        calc = genai_prices.calc_price(
            genai_prices.Usage(input_tokens=input_tokens, output_tokens=output_tokens), model
        )
    except LookupError:
        return None, None
    total = calc.total_price
    window = getattr(calc.model, "context_window", None)
    return float(total if isinstance(total, Decimal) else Decimal(str(total))), window


def build_ledger(
    session_id: str, messages: Sequence[Message], usage: Sequence[TurnUsage], model: str | None
) -> Ledger:
    """The ledger of a session's messages (blocking: counts tokens; see :func:`ledger`)."""
    model = model or _model_of(messages)
    recorded = {u.user_turn_number: u for u in usage}
    lines: list[TurnLedger] = []
    context = 0
    window = None
    for turn in group_turns(messages):
        requests, est_in, est_out = 0, 0, 0
        new_request = True
        for m in turn.messages:
            n = _tokens(m)
            if _model_made(m):
                if new_request:
                    requests += 1
                    est_in += context
                    new_request = False
                est_out += n
            elif m.kind == "tool_output":
                new_request = True
            context += n
        own = recorded.get(turn.number)
        meta = _usage_of(turn.messages)
        if own is not None:
            req, inp, out, rec = own.requests or 0, own.input_tokens or 0, own.output_tokens or 0, True
        elif meta is not None:
            (req, inp, out), rec = meta, True
        else:
            req, inp, out, rec = requests, est_in, est_out, False
        cost, window = price(model, inp, out) if model else (None, window)
        times = [t for m in turn.messages if (t := unix_time(m.created_at)) is not None]
        names = tuple(c.name or c.type for m in turn.messages for c in calls_of(m))
        lines.append(TurnLedger(
            turn.number, len(turn.messages), names, req, inp, out, rec, context,
            (max(times) - min(times)) if times else None, cost,
            turn.messages[0].id if turn.messages else None,
        ))
    if model and window is None:
        _cost, window = price(model, 0, 0)
    return Ledger(session_id, model, tuple(lines), window or ASSUMED_WINDOW, window is not None)


async def ledger(
    store: Store, session_id: str, *, model: str | None = None, branch: str | None = None
) -> Ledger:
    """The ledger of ``session_id`` (token counting and prices off the event loop)."""
    messages = await read_messages(store, session_id, branch=branch)
    usage: list[TurnUsage] = []
    if store.usage is not None:
        usage = await (store.usage or refuse(store, "usage")).turn_usage(session_id, branch)
    return await asyncio.to_thread(build_ledger, session_id, messages, usage, model)
