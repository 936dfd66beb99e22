"""History entries and session documents, as HelloAgent writes them (times local, no
zone; content text; anything role + content cannot hold kept in ``metadata``)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from fluxgui.core.errors import InvalidItem, show_id
from fluxgui.core.imports import HELLO_ROLES
from fluxgui.core.model import Message, item_kind, item_text
from fluxgui.core.undecodable import strip_flag


def local_now() -> str:
    """Local time without a zone, as the library writes ``datetime.now().isoformat()``."""
    return datetime.now().isoformat()


def naive_local(value: str | None) -> str | None:
    """An ISO time as the library writes times (local, no zone); ``None`` if unreadable."""
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (dt.astimezone().replace(tzinfo=None) if dt.tzinfo else dt).isoformat()


def _content_text(value: Any) -> str:
    """HelloAgent content is text (its Message model refuses anything else)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


def entry_from_flux(message: Any, timestamp: str) -> dict[str, Any]:
    """A history entry (``Message.to_dict`` order: role, content, timestamp, metadata) for
    a flux message dict, or for an Agents SDK item (a dict with a ``type``), which is kept
    whole in ``metadata["agents_item"]`` with its text as content."""
    if not isinstance(message, dict):
        raise InvalidItem(f"a message must be a JSON object, not {type(message).__name__}")
    metadata = message.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidItem('"metadata" must be a JSON object or null')
    meta = dict(metadata or {})
    if "type" in message:
        kind = item_kind(message)
        role = message.get("role")
        if kind == "tool_output":
            role = "tool"
        elif role == "developer":
            role = "system"
        elif kind != "message" or role not in HELLO_ROLES:
            role = "assistant"
        content = item_text(message, kind)
        meta["agents_item"] = message
    else:
        role = message.get("role") or "user"
        if role == "developer":
            role = "system"
        if role not in HELLO_ROLES:
            raise InvalidItem(
                f"role {show_id(str(role))} is not one a JSON session file keeps "
                f"({', '.join(HELLO_ROLES)})"
            )
        content = _content_text(message.get("content"))
    return {"role": role, "content": content, "timestamp": timestamp, "metadata": meta}


def _plain(item: dict[str, Any], text: str) -> bool:
    """An item a role + content entry holds entirely."""
    return set(item) <= {"role", "content"} and item.get("content") == text


def entry_from_message(m: Message, timestamp: str | None) -> dict[str, Any]:
    """A history entry for a Message from another store or an export; an Agents SDK item
    that role + content cannot hold rides along in ``metadata["agents_item"]``."""
    role = m.role
    if role not in HELLO_ROLES:
        if role == "developer":
            role = "system"
        elif m.kind == "tool_output":
            role = "tool"
        elif m.kind in ("tool_call", "reasoning"):
            role = "assistant"
        else:
            role = "user"
    if m.metadata is not None and not isinstance(m.metadata, dict):
        # Metadata that is a list, a string…: kept as the same JSON value.
        return {"role": role, "content": m.text, "timestamp": timestamp, "metadata": m.metadata}
    meta = dict(m.metadata) if m.metadata else {}
    strip_flag(m, meta)  # a reader's flag (fluxgui.core.undecodable), not the message's
    if isinstance(m.raw, dict) and not _plain(m.raw, m.text):
        meta["agents_item"] = m.raw
    return {"role": role, "content": m.text, "timestamp": timestamp, "metadata": meta}


def new_document(sid: str, created: str, saved: str, history: list[Any]) -> dict[str, Any]:
    """A session file as ``SessionStore.save`` lays it out. ``metadata.created_at`` is
    where the agent keeps the creation time, so a later save by the library keeps it."""
    return {
        "session_id": sid,
        "created_at": created,
        "saved_at": saved,
        "agent_config": {},
        "history": history,
        "tool_schema_hash": None,
        "read_cache": {},
        "metadata": {"created_at": created},
    }
