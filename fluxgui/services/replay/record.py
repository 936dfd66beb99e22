"""What a recorded session did, turn by turn: the user's message, the tool calls with
their recorded outputs, and the tools those calls imply (names and argument shapes).

Turns are numbered as :func:`fluxgui.core.turns.group_turns` numbers them (from 1, a
turn opened by each user message). Calls and outputs are paired by their call id in
both conventions (:mod:`.chatform`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fluxgui.core.model import Message
from fluxgui.core.turns import Turn, group_turns, starts_turn

from .chatform import chat_messages


@dataclass
class RecordedCall:
    """One recorded tool call: its id, the tool's name, the arguments as stored (text),
    what its recorded output said (``None``: no output was recorded)."""

    call_id: str
    name: str
    arguments: str
    output: str | None = None

    @property
    def parsed(self) -> Any:
        """The arguments as JSON (their text when they are not JSON)."""
        try:
            return json.loads(self.arguments) if self.arguments.strip() else {}
        except ValueError:
            return self.arguments

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.parsed}


@dataclass
class RecordedTurn:
    """One turn of the record: its number, its messages, its user message, its calls."""

    number: int
    messages: list[Message]
    calls: list[RecordedCall] = field(default_factory=list)

    @property
    def user(self) -> Message | None:
        first = self.messages[0] if self.messages else None
        return first if first is not None and starts_turn(first) else None


def recorded_calls(messages: Sequence[Message]) -> list[RecordedCall]:
    """The calls ``messages`` make, each with the output that answers it there."""
    chat = chat_messages(messages)
    outputs: dict[str, str] = {}
    for d in chat:
        if d["role"] == "tool" and d.get("tool_call_id"):
            outputs.setdefault(d["tool_call_id"], d.get("content") or "")
    return [
        RecordedCall(c["id"], c["function"]["name"], c["function"]["arguments"], outputs.get(c["id"]))
        for d in chat for c in d.get("tool_calls") or []
    ]


def recorded_turns(messages: Sequence[Message]) -> list[RecordedTurn]:
    """The session's turns (turn 0: what comes before the first user message)."""
    return [_recorded(t) for t in group_turns(messages)]


def _recorded(turn: Turn) -> RecordedTurn:
    return RecordedTurn(turn.number, list(turn.messages), recorded_calls(turn.messages))


#: JSON Schema's type of a Python value parsed from JSON (bool before int: it is one)
_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
    (list, "array"), (dict, "object"),
)


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "null")


def argument_schema(calls: Sequence[RecordedCall]) -> dict[str, Any]:
    """A JSON Schema for a tool's arguments inferred from its recorded calls: each key
    seen, with the types its values had; required: the keys every call gave."""
    objects = [c.parsed for c in calls if isinstance(c.parsed, dict)]
    types: dict[str, list[str]] = {}
    for args in objects:
        for key, value in args.items():
            seen = types.setdefault(key, [])
            kind = _json_type(value)
            if kind not in seen:
                seen.append(kind)
    props: dict[str, Any] = {}
    for key, kinds in types.items():
        if kinds == ["integer", "number"] or kinds == ["number", "integer"]:
            kinds = ["number"]
        props[key] = {"type": kinds[0] if len(kinds) == 1 else kinds}
    required = [k for k in types if objects and all(k in a for a in objects)]
    return {"type": "object", "properties": props, "required": required}


def recorded_tools(turns: Sequence[RecordedTurn]) -> dict[str, dict[str, Any]]:
    """tool name → the argument schema its recorded calls imply, in first-call order."""
    by_name: dict[str, list[RecordedCall]] = {}
    for t in turns:
        for c in t.calls:
            if c.name:
                by_name.setdefault(c.name, []).append(c)
    return {name: argument_schema(calls) for name, calls in by_name.items()}
