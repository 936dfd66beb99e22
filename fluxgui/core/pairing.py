"""Pair tool calls with their outputs (Agents SDK items; no Qt).

An Agents SDK session stores a tool call and its output as two items that share an id:
``function_call`` / ``function_call_output`` (and the ``computer_``, ``custom_tool_``,
``shell_``, ``apply_patch_`` … variants) share ``call_id``; a ``local_shell_call_output``
names its call in ``id``; an ``mcp_approval_response`` answers the
``mcp_approval_request`` whose ``id`` is its ``approval_request_id``.

flux rows carry no such ids, so they are never paired. Items arrive a page at a time,
so :class:`ToolPairs` grows with :meth:`ToolPairs.add` and answers for whatever has been
added so far, in any order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .model import Message

__all__ = ["ToolPairs", "call_key", "output_key", "pair_messages", "tool_name"]


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
    """A short name for a call (its tool's name, else its item type); ``""`` when unknown."""
    item = message.raw
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
        self.add(messages)

    def add(self, messages: Iterable[Message]) -> None:
        """Take in more messages (an earlier or a later page)."""
        for m in messages:
            key = call_key(m)
            if key is not None:
                self._calls.setdefault(key, m)
                continue
            key = output_key(m)
            if key is not None:
                self._outputs.setdefault(key, m)

    def clear(self) -> None:
        self._calls.clear()
        self._outputs.clear()

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
