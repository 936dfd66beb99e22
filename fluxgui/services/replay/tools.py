"""Tools answered from the record: a replayed model's call is matched to a recorded call
of the same turn and given that call's recorded output. Nothing is ever executed.

* ``strict`` (the default): same name, JSON-equal arguments (key order and spacing do
  not matter), the first such call not used yet;
* ``name``: the first recorded call of that name not used yet.

A call with no match raises :class:`Unmatched` (the replay stops there), unless a fixed
text is given for such calls (``unmatched``), which is returned instead.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flux.context import ToolContext
from flux.tools.base import ToolResult

from .record import RecordedCall

MATCH_MODES = ("strict", "name")


def canonical(arguments: str) -> str:
    """Arguments as comparable text: their JSON with sorted keys, or the text itself."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: objects by keys (any order), arrays in order, numbers by value
    (``42`` equals ``42.0``), a boolean never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def parsed(arguments: str) -> Any:
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments


@dataclass
class StopCall:
    """Where a replay stopped: the turn, the call the model made, why, and the recorded
    calls of that turn nearest to it."""

    turn: int
    name: str
    arguments: str
    reason: str
    nearest: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "call": {"name": self.name, "arguments": parsed(self.arguments)},
            "reason": self.reason,
            "nearest": self.nearest,
        }


class Unmatched(Exception):
    """A call the record cannot answer (internal: stops the run)."""

    def __init__(self, stop: StopCall) -> None:
        super().__init__(stop.reason)
        self.stop = stop


class TurnMatcher:
    """The recorded calls of the turn being replayed, and which were used."""

    def __init__(self, mode: str = "strict", unmatched: str | None = None) -> None:
        if mode not in MATCH_MODES:
            raise ValueError(f"unknown match mode {mode!r}")
        self.mode = mode
        self.unmatched_text = unmatched
        self.turn = 0
        self.calls: list[RecordedCall] = []
        self.used: set[int] = set()
        self.matched = 0
        self.unmatched = 0
        #: what the model was answered, in order: (call id, name, output)
        self.answered: list[tuple[str, str, str]] = []
        self.on_answer: Callable[[str, str, str, bool], None] | None = None

    def start(self, turn: int, calls: Sequence[RecordedCall]) -> None:
        self.turn, self.calls, self.used = turn, list(calls), set()

    def _find(self, name: str, arguments: str) -> int | None:
        given = parsed(arguments)
        for i, c in enumerate(self.calls):
            if i in self.used or c.name != name or c.output is None:
                continue
            if self.mode == "name" or json_equal(parsed(c.arguments), given):
                return i
        return None

    def _reason(self, name: str, arguments: str) -> str:
        same = [i for i, c in enumerate(self.calls) if c.name == name]
        if not same:
            return f"turn {self.turn} recorded no call of {name!r}"
        if all(self.calls[i].output is None for i in same):
            return f"the recorded calls of {name!r} in turn {self.turn} have no recorded output"
        given = parsed(arguments)
        if self.mode == "strict" and not any(json_equal(parsed(self.calls[i].arguments), given) for i in same):
            return f"turn {self.turn} recorded no call of {name!r} with these arguments"
        return f"every recorded call of {name!r} in turn {self.turn} was already answered"

    def nearest(self, name: str, arguments: str, n: int = 3) -> list[dict[str, Any]]:
        key = canonical(arguments)

        def score(i: int) -> tuple[int, float]:
            c = self.calls[i]
            return (c.name == name, difflib.SequenceMatcher(None, key, canonical(c.arguments)).ratio())

        best = sorted(range(len(self.calls)), key=score, reverse=True)[:n]
        return [{**self.calls[i].to_dict(), "used": i in self.used} for i in best]

    def answer(self, call_id: str, name: str, arguments: str) -> str:
        """The recorded output for this call; raises :class:`Unmatched` when there is
        none and no fixed text is given."""
        i = self._find(name, arguments)
        if i is None:
            if self.unmatched_text is None:
                raise Unmatched(StopCall(
                    self.turn, name, arguments, self._reason(name, arguments),
                    self.nearest(name, arguments),
                ))
            self.unmatched += 1
            output, hit = self.unmatched_text, False
        else:
            self.used.add(i)
            self.matched += 1
            output, hit = self.calls[i].output or "", True
        self.answered.append((call_id, name, output))
        if self.on_answer is not None:
            self.on_answer(call_id, name, output, hit)
        return output


class RecordedTool:
    """A flux ``Tool`` named as a recorded one, answered by a :class:`TurnMatcher`."""

    def __init__(self, name: str, schema: dict[str, Any], matcher: TurnMatcher) -> None:
        self._name = name
        self._schema = schema
        self._matcher = matcher

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return f"The recorded tool {self._name} (answered from the recorded session)."

    @property
    def parameters_schema(self) -> dict[str, Any]:
        return self._schema

    async def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        # the arguments as the model wrote them (flux parsed them; a text that is not
        # JSON became {}), so that the comparison is of what was said
        output = self._matcher.answer(ctx.tool_call_id, self._name, ctx.tool_arguments)
        return ToolResult(output=output)
