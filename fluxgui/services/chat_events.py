"""What the chat panel shows while a chat runs, without Qt: the agent's tool calls and
their outputs as the :class:`~fluxgui.core.model.Message`\\ s stored items of those kinds
become (so they are drawn like stored ones), and the id of a chat in a new session."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from fluxgui.core.model import Message, from_item

if TYPE_CHECKING:
    from .chat import ChatEvent


def event_message(event: ChatEvent, number: int) -> Message | None:
    """A tool call or a tool output as the :class:`Message` a stored Agents SDK item of
    that kind becomes (``None`` for other events), so it is drawn like a stored one."""
    data = event.data or {}
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if event.kind == "tool_call":
        args = data.get("arguments", "")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        item = {
            "type": "function_call",
            "call_id": str(data.get("id") or ""),
            "name": str(data.get("name") or event.text or "tool"),
            "arguments": args,
        }
    elif event.kind == "tool_output":
        output = data.get("output", event.text)
        if not isinstance(output, str):
            output = json.dumps(output, ensure_ascii=False)
        item = {"type": "function_call_output", "call_id": str(data.get("id") or ""), "output": output}
    else:
        return None
    return from_item(number, item, when)


def new_session_id() -> str:
    """A fresh id for a chat in a new session: ``chat-<UTC time>``."""
    return "chat-" + datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
