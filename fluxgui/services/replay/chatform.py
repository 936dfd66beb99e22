"""A session's messages as OpenAI chat messages, every tool call with its output.

Both conventions are read (:mod:`fluxgui.services.doctor.conventions` says which message
calls and which answers): Agents SDK items (``function_call`` / ``function_call_output``
sharing a ``call_id``; an assistant ``message`` item; reasoning, which the chat format
cannot carry, is left out) and flux rows (an assistant row's ``metadata.tool_calls``, a
``tool`` row's ``metadata.tool_call_id``). The result is what a chat-completions model is
sent: ``{"role", "content"}`` with an assistant's ``tool_calls`` (``[{"id", "type":
"function", "function": {"name", "arguments"}}]``) and each ``tool`` message's
``tool_call_id``. The same form feeds flux's ``Runner`` (:func:`to_flux`) and the eval
datasets.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from flux.models.base import Message as FluxMessage
from flux.models.base import ToolCall

from fluxgui.core.contentkey import item_of
from fluxgui.core.model import Message, meta_dict
from fluxgui.core.pairing import message_calls


#: a stored role as the chat format names it ("developer" is sent as "system")
ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
#: the item types whose call a chat model can make (a function, a custom tool)
CALL_TYPES = ("function_call", "custom_tool_call")
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")


def output_text(value: Any) -> str:
    """A tool output as text: a string as it is, content parts' text joined, any other
    JSON value as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        texts = [str(p.get("text", "")) for p in value if "text" in p]
        if texts:
            return "".join(texts)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def item_call(m: Message) -> tuple[str, str, str] | None:
    """``(call_id, name, arguments)`` of an Agents SDK call item a chat model can make."""
    item = item_of(m)
    if item is None or item.get("type") not in CALL_TYPES:
        return None
    args = item.get("arguments") if item.get("type") == "function_call" else item.get("input")
    if not isinstance(args, str):
        args = json.dumps(args if args is not None else {}, ensure_ascii=False)
    return str(item.get("call_id") or ""), str(item.get("name") or ""), args


def item_output(m: Message) -> tuple[str, str] | None:
    """``(call_id, output text)`` of an Agents SDK output item answering such a call."""
    item = item_of(m)
    if item is None or item.get("type") not in OUTPUT_TYPES:
        return None
    return str(item.get("call_id") or ""), output_text(item.get("output"))


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def chat_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """``messages`` (stored order) as chat messages. Calls that follow an assistant
    message join it (as the chat format keeps them); a call after a tool output or a user
    message starts an assistant message of its own (content ``None``)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        call = item_call(m)
        if call is not None:
            last = out[-1] if out else None
            if last is None or last["role"] != "assistant":
                last = {"role": "assistant", "content": None}
                out.append(last)
            last.setdefault("tool_calls", []).append(_call(*call))
            continue
        answer = item_output(m)
        if answer is not None:
            out.append({"role": "tool", "tool_call_id": answer[0], "content": answer[1]})
            continue
        if item_of(m) is None and m.role == "tool":  # a flux tool row
            key = meta_dict(m).get("tool_call_id")
            out.append({"role": "tool", "tool_call_id": str(key or ""), "content": m.text})
            continue
        role = ROLES.get(m.role)
        if m.kind != "message" or role is None:
            continue  # reasoning, hosted tools' items, compaction: not in a chat request
        doc: dict[str, Any] = {"role": role, "content": m.text}
        calls = message_calls(m) if role == "assistant" else []
        if calls:
            doc["content"] = m.text or None
            doc["tool_calls"] = [_call(c.call_id, c.name, c.arguments) for c in calls]
        elif not m.text:
            continue  # an empty message says nothing (an API refuses some)
        out.append(doc)
    return out


def to_flux(chat: Sequence[dict[str, Any]]) -> list[FluxMessage]:
    """Chat messages as flux ``Message`` objects (what its ``Runner`` takes)."""
    out: list[FluxMessage] = []
    for doc in chat:
        calls = [
            ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
            for c in doc.get("tool_calls") or []
        ]
        out.append(FluxMessage(
            role=doc["role"], content=doc.get("content"),
            tool_call_id=doc.get("tool_call_id"), tool_calls=calls or None,
        ))
    return out


def from_flux(messages: Sequence[FluxMessage]) -> list[dict[str, Any]]:
    """flux ``Message`` objects (a run's new messages) as chat messages."""
    out: list[dict[str, Any]] = []
    for m in messages:
        doc: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            doc["tool_calls"] = [_call(c.id, c.name, c.arguments) for c in m.tool_calls]
        if m.role == "tool":
            doc["tool_call_id"] = m.tool_call_id or ""
            if m.name:
                doc["name"] = m.name
        out.append(doc)
    return out


def stored_specs(chat: Sequence[dict[str, Any]], *, items: bool) -> list[dict[str, Any]]:
    """Chat messages (a replayed turn's) as what a store's writer appends: Agents SDK
    items (``items``) or flux message dicts with the calls in their metadata."""
    names = {c["id"]: c["function"]["name"] for d in chat for c in d.get("tool_calls") or []}
    out: list[dict[str, Any]] = []
    for d in chat:
        calls = d.get("tool_calls") or []
        if items:
            if d["role"] == "tool":
                out.append({"type": "function_call_output", "call_id": d.get("tool_call_id") or "",
                            "output": d.get("content") or ""})
                continue
            if d.get("content"):
                role = d["role"]
                if role == "assistant":
                    out.append({"type": "message", "role": "assistant", "status": "completed",
                                "content": [{"type": "output_text", "text": d["content"],
                                             "annotations": []}]})
                else:
                    out.append({"role": role, "content": d["content"]})
            out += [{"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                     "arguments": c["function"]["arguments"]} for c in calls]
            continue
        spec: dict[str, Any] = {"role": d["role"], "content": d.get("content") or ""}
        if calls:
            spec["metadata"] = {"tool_calls": calls}
        elif d["role"] == "tool":
            key = d.get("tool_call_id") or ""
            spec["metadata"] = {"tool_call_id": key, "name": d.get("name") or names.get(key, "")}
        out.append(spec)
    return out
