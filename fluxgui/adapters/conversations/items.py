"""Conversation items as messages, and messages as the items the Agents SDK writes.

An item is read as ``OpenAIConversationsSession.get_items`` returns it: the client's
model dumped with ``exclude_unset=True`` under the API's own field names
(``by_alias``: ``async``, not the client's ``async_``). Its id (``msg_…``) is a string; a
:class:`~fluxgui.core.model.Message` needs a number, so ``Message.id`` is a stable 63-bit
hash of the item id (the same on every machine and in every run) and ``ref`` the item id
itself; ``sort_key`` is ``(item id,)``, the API's paging cursor.

What is written is what the SDK writes to a conversation
(``_sanitize_openai_conversation_item``): no ``id`` (the server gives new ones) except
on reasoning items and the types whose id the API requires, no ``provider_data``, none
of the SDK's own replay keys; a flux message becomes the SDK's input item (a user or
system text) or its assistant output message.
"""

from __future__ import annotations

import hashlib
from typing import Any

from fluxgui.core.errors import InvalidItem
from fluxgui.core.items import MESSAGE_ROLES
from fluxgui.core.model import Message, meta_dict, from_item, message_to_item

#: at most this many items per create request (the API's limit, as the SDK sends them)
BATCH = 20
#: item types whose top-level id the Conversations create-item schema requires
KEEPS_ID = frozenset({
    "file_search_call", "web_search_call", "computer_call", "code_interpreter_call",
    "image_generation_call", "local_shell_call", "local_shell_call_output", "mcp_list_tools",
    "mcp_approval_request", "mcp_call", "item_reference", "program", "program_output",
})
#: keys the SDK keeps for itself and strips before an item is written or replayed
SDK_KEYS = ("_agents_tool_description", "_agents_tool_title", "created_by", "provider_data")
#: the SDK's placeholder id for providers that give none (never a server id)
FAKE_ID = "__fake_id__"
_MASK = 2**63 - 1


def message_id(item_id: str) -> int:
    """The number a conversation item is known by (a stable hash of its id, never 0)."""
    digest = hashlib.blake2b(item_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & _MASK or 1


def to_message(item: dict[str, Any]) -> Message:
    """A stored conversation item as a Message (see the module text)."""
    item_id = item.get("id")
    ref = item_id if isinstance(item_id, str) else ""
    m = from_item(message_id(ref), item, None, sort_key=(ref,))
    m.ref = ref or None
    return m


def dump(model: Any) -> dict[str, Any]:
    """An item of the client's page as the SDK's ``get_items`` gives it."""
    if isinstance(model, dict):
        return model
    out: dict[str, Any] = model.model_dump(exclude_unset=True, by_alias=True)
    return out


def for_conversation(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` as the Agents SDK writes it to a conversation (see the module text)."""
    clean = {k: v for k, v in item.items() if k not in SDK_KEYS}
    if clean.get("id") == FAKE_ID or (
        clean.get("type") != "reasoning" and clean.get("type") not in KEEPS_ID
    ):
        clean.pop("id", None)
    return clean


def assistant_item(text: str) -> dict[str, Any]:
    """An assistant reply as the SDK saves a model's output message (its id stripped)."""
    return {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def from_flux(message: dict[str, Any]) -> dict[str, Any]:
    """A flux message dict (or an item, a dict with a ``type``) as the item to write."""
    if not isinstance(message, dict):
        raise InvalidItem(f"an item must be a JSON object, not {type(message).__name__}")
    if "type" in message:
        return for_conversation(message)
    role = message.get("role") or "user"
    content = message.get("content")
    if role == "assistant" and isinstance(content, str):
        return assistant_item(content)
    return message_to_item({**message, "role": role})


def from_message(m: Message) -> dict[str, Any]:
    """A message of another store as the item to write (the item it holds, as the SDK
    writes it; a flux message mapped; a summary as a system text)."""
    if isinstance(m.raw, dict):
        return for_conversation(m.raw)
    if isinstance(meta_dict(m).get("agents_item"), dict):
        return for_conversation(meta_dict(m)["agents_item"])
    role = m.role
    if role not in MESSAGE_ROLES and role != "tool":
        role = "system" if role == "summary" else "user"
    meta = meta_dict(m)
    return from_flux({"role": role, "content": m.text, "tool_call_id": meta.get("tool_call_id")})


def batches(items: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """``items`` in requests of at most :data:`BATCH`."""
    return [items[i : i + BATCH] for i in range(0, len(items), BATCH)]
