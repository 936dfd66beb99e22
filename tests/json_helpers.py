"""HelloAgent ``SessionStore`` session files, written and read the way the library does.

``hello-agents`` 1.0.0 cannot be installed beside the Agents SDK (it pins ``openai<2``),
so these follow its code (``hello_agents/core/session_store.py`` and ``core/message.py``,
``Agent.load_session``) step by step:

* :func:`hello_save` is ``SessionStore.save(..., session_name=name)``: a new
  ``session_id``, ``created_at`` from ``metadata["created_at"]`` (else now), ``saved_at``
  now, history entries as ``Message.to_dict()`` (role, content, timestamp, metadata),
  ``json.dump(indent=2, ensure_ascii=False)`` to ``<file>.tmp`` and ``os.replace``.
* :func:`hello_load` is ``SessionStore.load`` and :func:`hello_history` what
  ``Agent.load_session`` does with its history: ``Message.from_dict`` for each entry, with
  the checks its pydantic model makes (content text, a known role, a timestamp that
  ``datetime.fromisoformat`` reads, metadata an object or null).
* :func:`hello_list` is ``SessionStore.list_sessions`` (newest ``saved_at`` first).
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

HELLO_ROLES = ("user", "assistant", "system", "tool", "summary")


def hello_entry(
    role: str, content: str, timestamp: str | None = None, metadata: dict | None = None
) -> dict[str, Any]:
    """``Message(content, role, ...).to_dict()``: the timestamp defaults to now, the
    metadata to ``{}``, as the library's ``Message.__init__`` does."""
    return {
        "role": role,
        "content": content,
        "timestamp": timestamp if timestamp is not None else datetime.now().isoformat(),
        "metadata": metadata if metadata is not None else {},
    }


def hello_save(
    folder: Path,
    name: str,
    history: list[dict[str, Any]],
    *,
    metadata: dict[str, Any] | None = None,
    agent_config: dict[str, Any] | None = None,
    tool_schema_hash: str = "abc123",
    read_cache: dict[str, Any] | None = None,
) -> Path:
    """``SessionStore(folder).save(agent_config, history, tool_schema_hash, read_cache,
    metadata, session_name=name)``."""
    folder.mkdir(parents=True, exist_ok=True)  # SessionStore.__init__
    metadata = metadata if metadata is not None else {"total_tokens": 12}
    session_id = f"s-{datetime.now().strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
    filepath = folder / f"{name}.json"
    session_data = {
        "session_id": session_id,
        "created_at": metadata.get("created_at", datetime.now().isoformat()),
        "saved_at": datetime.now().isoformat(),
        "agent_config": agent_config if agent_config is not None else {"name": "assistant", "llm_model": "gpt-4"},
        "history": history,
        "tool_schema_hash": tool_schema_hash,
        "read_cache": read_cache if read_cache is not None else {},
        "metadata": metadata,
    }
    temp_path = str(filepath) + ".tmp"
    with open(temp_path, "w", encoding="utf-8") as f:
        json.dump(session_data, f, indent=2, ensure_ascii=False)
    os.replace(temp_path, filepath)
    return filepath


def hello_load(path: Path) -> dict[str, Any]:
    """``SessionStore.load``."""
    with open(path, "r", encoding="utf-8") as f:
        return json.load(f)


@dataclass
class HelloMessage:
    """What ``Message.from_dict`` makes of one history entry."""

    role: str
    content: str
    timestamp: datetime
    metadata: dict[str, Any] | None


def hello_history(session_data: dict[str, Any]) -> list[HelloMessage]:
    """``Agent.load_session``'s ``Message.from_dict(msg_data)`` for each history entry;
    raises ``ValueError`` (as its pydantic model would) on an entry it refuses."""
    out = []
    for n, data in enumerate(session_data.get("history", []), 1):
        timestamp = data.get("timestamp")
        if timestamp and isinstance(timestamp, str):
            timestamp = datetime.fromisoformat(timestamp)
        content, role, metadata = data["content"], data["role"], data.get("metadata")
        if not isinstance(content, str):
            raise ValueError(f"entry {n}: content must be a string")
        if role not in HELLO_ROLES:
            raise ValueError(f"entry {n}: role {role!r} is not a MessageRole")
        if not isinstance(timestamp, datetime):  # `timestamp: datetime = None` refuses None
            raise ValueError(f"entry {n}: timestamp must be a datetime")
        if metadata is not None and not isinstance(metadata, dict):
            raise ValueError(f"entry {n}: metadata must be a dict")
        out.append(HelloMessage(role, content, timestamp, metadata))
    return out


def hello_list(folder: Path) -> list[dict[str, Any]]:
    """``SessionStore.list_sessions``: every readable ``*.json``, newest ``saved_at``
    first (unreadable files are skipped, the library prints a warning)."""
    sessions = []
    for filepath in Path(folder).glob("*.json"):
        try:
            with open(filepath, "r", encoding="utf-8") as f:
                data = json.load(f)
            sessions.append(
                {
                    "filename": filepath.name,
                    "filepath": str(filepath),
                    "session_id": data.get("session_id"),
                    "created_at": data.get("created_at"),
                    "saved_at": data.get("saved_at"),
                    "metadata": data.get("metadata", {}),
                }
            )
        except Exception:  # noqa: BLE001 - as the library does
            pass
    sessions.sort(key=lambda x: x.get("saved_at", ""), reverse=True)
    return sessions


def library_bytes(session_data: dict[str, Any]) -> bytes:
    """The bytes ``SessionStore.save`` writes for this document."""
    return json.dumps(session_data, indent=2, ensure_ascii=False).encode("utf-8")
