"""Pair tool calls with their outputs (Agents SDK items; no Qt).

An Agents SDK session stores a tool call and its output as two items that share an id:
``function_call`` / ``function_call_output`` (and the ``computer_``, ``custom_tool_``,
``shell_``, ``apply_patch_`` … variants) share ``call_id``; a ``local_shell_call_output``
names its call in ``id``; an ``mcp_approval_response`` answers the
``mcp_approval_request`` whose ``id`` is its ``approval_request_id``.

flux rows keep OpenAI-chat-style calls in their metadata when the application stored
them there (flux itself drops ``tool_calls`` / ``tool_call_id`` / ``name`` from a
message): an assistant row's ``metadata.tool_calls`` (``[{"id", "type": "function",
"function": {"name", "arguments"}}]``, or flux's own flat ``{"id", "name",
"arguments"}``) and a ``tool`` row's ``metadata.tool_call_id`` / ``metadata.name``. The
assistant row stays one message (kind ``message``) holding its calls
(:func:`message_calls`); each ``tool`` row pairs with it by the call id.

Items arrive a page at a time, so :class:`ToolPairs` grows with :meth:`ToolPairs.add`
and answers for whatever has been added so far, in any order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .model import Message, meta_dict

__all__ = [
    "MessageCall", "ToolPairs", "call_key", "message_calls", "output_key", "pair_messages",
    "tool_name",
]


@dataclass(frozen=True)
class MessageCall:
    """One call of an assistant message's ``metadata.tool_calls`` (a flux row): its id
    (``""`` when it has none), the tool's name and the arguments as stored (text)."""

    call_id: str
    name: str
    arguments: str


def message_calls(message: Message) -> list[MessageCall]:
    """The OpenAI-chat-style calls an assistant message keeps in ``metadata.tool_calls``
    (empty for any other message)."""
    if message.kind != "message" or message.raw is not None:
        return []
    calls = meta_dict(message).get("tool_calls")
    if not isinstance(calls, list):
        return []
    out: list[MessageCall] = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        source = function if isinstance(function, dict) else call
        name = source.get("name")
        args = source.get("arguments", "")
        if not isinstance(args, str):
            try:
                args = json.dumps(args, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):
                args = str(args)
        out.append(MessageCall(_text_id(call.get("id")) or "",
                               name if isinstance(name, str) else "", args))
    return out


def _text_id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def call_key(message: Message) -> str | None:
    """The id a tool call's output will name, or ``None`` (not a call, or no id)."""
    item = message.raw
    if message.kind != "tool_call" or not isinstance(item, dict):
        return None
    if item.get("type") == "mcp_approval_request":
        return _text_id(item.get("id"))
    return _text_id(item.get("call_id"))


def output_key(message: Message) -> str | None:
    """The id of the call a tool output answers, or ``None``."""
    item = message.raw
    if message.kind == "tool_output" and item is None:  # a flux ``tool`` row
        return _text_id(meta_dict(message).get("tool_call_id"))
    if message.kind != "tool_output" or not isinstance(item, dict):
        return None
    item_type = item.get("type")
    if item_type == "mcp_approval_response":
        return _text_id(item.get("approval_request_id"))
    if item_type == "local_shell_call_output":
        # Its ``id`` is the call id of the local_shell_call it answers.
        return _text_id(item.get("call_id")) or _text_id(item.get("id"))
    return _text_id(item.get("call_id"))


def tool_name(message: Message) -> str:
    """A short name for a call (its tool's name, else its item type), or the tool name a
    flux ``tool`` row keeps in its metadata; ``""`` when unknown."""
    item = message.raw
    if item is None:
        name = meta_dict(message).get("name")
        return name if isinstance(name, str) else ""
    if not isinstance(item, dict):
        return ""
    for key in ("name", "server_label", "type"):
        value = item.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


class ToolPairs:
    """call id → call message and call id → output message, for the messages added so far.

    A call id seen twice keeps the first call and the first output (a store that repeats
    an id is unusual; the first match is the one a reader expects).
    """

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._calls: dict[str, Message] = {}
        self._outputs: dict[str, Message] = {}
        self._names: dict[str, str] = {}  # call id → tool name, for calls held in a message
        self.add(messages)

    def add(self, messages: Iterable[Message]) -> None:
        """Take in more messages (an earlier or a later page)."""
        for m in messages:
            key = call_key(m)
            if key is not None:
                self._calls.setdefault(key, m)
                continue
            if m.kind == "message":
                for call in message_calls(m):
                    if call.call_id:
                        self._calls.setdefault(call.call_id, m)
                        self._names.setdefault(call.call_id, call.name)
                continue
            key = output_key(m)
            if key is not None:
                self._outputs.setdefault(key, m)

    def clear(self) -> None:
        self._calls.clear()
        self._outputs.clear()
        self._names.clear()

    def output_for_id(self, call_id: str) -> Message | None:
        """The output answering the call ``call_id`` (``None``: not seen)."""
        return self._outputs.get(call_id)

    def call_name(self, call_id: str) -> str:
        """The tool name of a call kept in an assistant message's metadata (``""``)."""
        return self._names.get(call_id, "")

    def output_for(self, call: Message) -> Message | None:
        """The output answering ``call`` (``None``: not a call, or its output not seen)."""
        key = call_key(call)
        return self._outputs.get(key) if key is not None else None

    def call_for(self, output: Message) -> Message | None:
        """The call that ``output`` answers (``None``: not an output, or call not seen)."""
        key = output_key(output)
        return self._calls.get(key) if key is not None else None

    def partner(self, message: Message) -> Message | None:
        """The other half of ``message``'s pair, whichever half it is."""
        if message.kind == "tool_call":
            return self.output_for(message)
        if message.kind == "tool_output":
            return self.call_for(message)
        for call in message_calls(message):  # an assistant message holding calls
            out = self._outputs.get(call.call_id) if call.call_id else None
            if out is not None:
                return out
        return None

    @property
    def outputs(self) -> dict[str, Message]:
        """call id → output message (a copy)."""
        return dict(self._outputs)

    @property
    def calls(self) -> dict[str, Message]:
        """call id → call message (a copy)."""
        return dict(self._calls)

    def __len__(self) -> int:
        """How many complete pairs (call and output both seen)."""
        return sum(1 for key in self._calls if key in self._outputs)


def pair_messages(messages: Iterable[Message]) -> dict[str, tuple[Message | None, Message | None]]:
    """call id → ``(call, output)`` for every id seen; a missing half is ``None``."""
    pairs = ToolPairs(messages)
    calls, outputs = pairs.calls, pairs.outputs
    return {key: (calls.get(key), outputs.get(key)) for key in {*calls, *outputs}}
