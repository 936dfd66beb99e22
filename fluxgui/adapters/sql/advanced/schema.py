"""``AdvancedSQLiteSession``'s own tables, and the library's small text rules.

On top of the plain Agents SDK tables the library keeps ``message_structure`` (one row
per item per branch, pointing at a shared ``agent_messages`` row, ordered by a
per-session ``sequence_number``), ``turn_usage`` (token usage per user turn per branch),
``branch_reservations`` (every branch id ever used in a session: ids are never reused)
and ``session_clear_generations`` (bumped by ``clear_session``, so that a session object
still pointing at a deleted branch falls back to ``main``).
"""

from __future__ import annotations

import json
from typing import Any

from ..detect import STRUCTURE, STRUCTURE_COLUMNS

__all__ = [
    "GENERATIONS",
    "MESSAGE_ROW",
    "RESERVATIONS",
    "STRUCTURE",
    "STRUCTURE_COLUMNS",
    "STRUCTURE_ROW",
    "USAGE",
    "USAGE_ROW",
    "content_preview",
    "details",
]

USAGE = "turn_usage"
RESERVATIONS = "branch_reservations"
GENERATIONS = "session_clear_generations"

#: the columns of each table, as a change records its rows (the structure's: the ones
#: a store must have, in the library's order, then the two it may lack)
STRUCTURE_ROW = (*STRUCTURE_COLUMNS, "tool_name", "created_at")
USAGE_ROW = (
    "id",
    "session_id",
    "branch_id",
    "user_turn_number",
    "requests",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "input_tokens_details",
    "output_tokens_details",
    "created_at",
)
MESSAGE_ROW = ("id", "session_id", "message_data", "created_at")


def content_preview(content: Any, max_length: int | None = None) -> str:
    """The library's preview of a turn: a string as it is, anything else as JSON; then cut."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if max_length is not None and len(text) > max_length:
        return text[:max_length] + "..."
    return text


def details(value: Any) -> Any:
    """A usage row's ``*_tokens_details`` JSON (``None``: none, or unreadable)."""
    if not value:
        return None
    try:
        return json.loads(value)
    except (ValueError, TypeError):
        return None
