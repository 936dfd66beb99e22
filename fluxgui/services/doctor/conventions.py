"""Which stored messages call a tool and which answer a call, in both conventions.

* **Agents SDK items** (Responses API input items): a call item and its output share a
  ``call_id``; the output's type is fixed by the call's (:data:`OUTPUT_TYPE`, the SDK's
  own table plus the MCP approval pair, whose response names the request's ``id`` in
  ``approval_request_id``; a ``local_shell_call_output`` names its call in ``id``).
* **flux and OpenAI-chat-style messages**: an assistant message lists its calls in
  ``metadata.tool_calls`` (``[{"id": …, "function": {"name": …}}]``, or flux's ``{"id",
  "name"}``), and a ``tool`` message names the call it answers in
  ``metadata.tool_call_id``. The same keys at the top of a chat-style item count too; an
  Agents SDK item a flux row keeps in ``metadata.agents_item`` is read as an item.

A function or custom tool call marked ``"async": true`` (status ``completed`` or none) is
an external call still running: openai-agents 0.25 keeps it without an output when it
reads a session and the API takes it so (``drop_orphan_function_calls``'s
``preserve_pending_async_calls``): it is no orphan (:attr:`Call.pending`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fluxgui.core.contentkey import item_of
from fluxgui.core.model import Message

#: call item type → the item type of its output (``agents.run_internal.items.
#: _TOOL_CALL_TO_OUTPUT_TYPE``, tested against it, and the MCP approval pair)
OUTPUT_TYPE: dict[str, str] = {
    "program": "program_output",
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "tool_search_call": "tool_search_output",
    "mcp_approval_request": "mcp_approval_response",
}
#: output item type → the call type it answers
CALL_TYPE: dict[str, str] = {out: call for call, out in OUTPUT_TYPE.items()}
#: the chat convention's "type" of a call and of its answer
CHAT_CALL, CHAT_OUTPUT = "tool_calls", "tool"
#: call types a text output can complete (a synthetic "cancelled" output)
TEXT_OUTPUTS = frozenset({"function_call", "custom_tool_call", CHAT_CALL})


@dataclass(frozen=True)
class Call:
    """One call a message makes: its id, its type (an item type, or ``tool_calls``),
    the type of the output that answers it, and the tool's name (``""``: unknown)."""

    call_id: str
    type: str
    output_type: str
    name: str = ""
    #: an external async call still running: needs no output yet (see the module)
    pending: bool = False


@dataclass(frozen=True)
class Answer:
    """What an output answers: the call id and the call type it must have."""

    call_id: str
    call_type: str
    type: str


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _chat_fields(m: Message) -> dict[str, Any]:
    """Where a chat-style message keeps ``tool_calls``/``tool_call_id``: its metadata,
    else the top of a chat-style item (no ``type``)."""
    meta = m.metadata if isinstance(m.metadata, dict) else {}
    if "tool_calls" in meta or "tool_call_id" in meta:
        return meta
    raw = m.raw
    if isinstance(raw, dict) and "type" not in raw:
        return raw
    return {}


def calls_of(m: Message) -> list[Call]:
    """The calls ``m`` makes (most messages: none)."""
    item = item_of(m)
    if item is not None and "type" in item:
        kind = item.get("type")
        out = OUTPUT_TYPE.get(kind) if isinstance(kind, str) else None
        if out is None:
            return []
        key = _text(item.get("id") if kind == "mcp_approval_request" else item.get("call_id"))
        if key is None:
            return []
        name = _text(item.get("name")) or _text(item.get("server_label")) or ""
        pending = (
            kind in ("function_call", "custom_tool_call") and item.get("async") is True
            and item.get("status") in (None, "completed")
        )
        return [Call(key, str(kind), out, name, pending)]
    fields = _chat_fields(m)
    listed = fields.get("tool_calls")
    if not isinstance(listed, list):
        return []
    found: list[Call] = []
    for entry in listed:
        if not isinstance(entry, dict):
            continue
        key = _text(entry.get("id")) or _text(entry.get("call_id"))
        if key is None:
            continue
        fn = entry.get("function")
        called = _text(fn.get("name")) if isinstance(fn, dict) else _text(entry.get("name"))
        found.append(Call(key, CHAT_CALL, CHAT_OUTPUT, called or ""))
    return found


def answer_of(m: Message) -> Answer | None:
    """The call ``m`` answers (``None``: not an output, or it names no call)."""
    item = item_of(m)
    if item is not None and "type" in item:
        kind = item.get("type")
        call = CALL_TYPE.get(kind) if isinstance(kind, str) else None
        if call is None:
            return None
        if kind == "mcp_approval_response":
            key = _text(item.get("approval_request_id"))
        elif kind == "local_shell_call_output":
            key = _text(item.get("call_id")) or _text(item.get("id"))
        else:
            key = _text(item.get("call_id"))
        return Answer(key, call, str(kind)) if key else None
    if m.role != "tool":
        return None
    key = _text(_chat_fields(m).get("tool_call_id"))
    return Answer(key, CHAT_CALL, CHAT_OUTPUT) if key else None


def is_tool_message(m: Message) -> bool:
    """A chat-style ``tool`` message (whether or not it names its call)."""
    return m.role == "tool" and item_of(m) is None


def item_id(m: Message) -> str | None:
    """An Agents SDK item's own ``id`` (``msg_…``, ``rs_…``, ``fc_…``), if it has one."""
    item = item_of(m)
    return _text(item.get("id")) if item is not None else None
