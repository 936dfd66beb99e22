"""Qt-free helpers for showing messages: colours, labels, times, raw JSON, escaping.

No Qt here. The conversation pane (:mod:`fluxgui.qt.conversation`) takes role colours,
kind labels, times and the raw JSON of a message from this module; :func:`esc` escapes
stored data wherever Qt would take a string for rich text (tooltips).
"""

from __future__ import annotations

import html
import json
from datetime import datetime
from typing import Any

from fluxgui.core.model import Message

ROLE_COLOURS = {
    "user": "#1d4ed8",
    "assistant": "#15803d",
    "system": "#7e22ce",
    "developer": "#7e22ce",
    "tool": "#b45309",
    "summary": "#0f766e",
}
KIND_LABELS = {
    "tool_call": "tool call",
    "tool_output": "tool output",
    "reasoning": "reasoning",
    "other": "other item",
}
#: role colours that read well on a dark background
ROLE_COLOURS_DARK = {
    "user": "#7aa7ff",
    "assistant": "#5fd08a",
    "system": "#c89bff",
    "developer": "#c89bff",
    "tool": "#f0b35a",
    "summary": "#4fd1c5",
}
def esc(value: object) -> str:
    """Escape any value for HTML text or a double-quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


def short_time(iso: str | None, *, seconds: bool = True) -> str:
    """An ISO 8601 time as local ``YYYY-MM-DD HH:MM[:SS]`` (naive times are shown as
    stored); ``""`` when missing, the text itself when unreadable."""
    if not iso:
        return ""
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if dt.tzinfo is not None:
        dt = dt.astimezone()
    return dt.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def role_colour(role: str, *, dark: bool = False) -> str:
    """The colour of a role's name and bar (``dark``: for a dark background)."""
    if dark:
        return ROLE_COLOURS_DARK.get(role, "#a3acb9")
    return ROLE_COLOURS.get(role, "#4b5563")


def kind_label(kind: str) -> str:
    """``"tool call"`` for ``"tool_call"``; ``"message"`` stays ``"message"``."""
    return KIND_LABELS.get(kind, kind.replace("_", " "))


def size_label(n_bytes: int) -> str:
    """A byte count for people: ``"812 B"``, ``"23.4 kB"``, ``"1.2 MB"``."""
    if n_bytes < 1000:
        return f"{n_bytes} B"
    if n_bytes < 1_000_000:
        return f"{n_bytes / 1000:.1f} kB"
    return f"{n_bytes / 1_000_000:.1f} MB"


def raw_document(message: Message, store_format: str | None = None) -> Any:
    """The stored form of a message, as "Copy raw JSON" and the inspector show it.

    An item store (Agents SDK, …) keeps JSON items: that item (or, when it was not valid
    JSON, its text). A flux row is the dict of its columns: ``role``, ``content`` and
    ``metadata`` (the metadata's own text when it is not a JSON object).
    """
    if store_format == "flux" or (store_format is None and message.raw is None):
        metadata: Any = message.metadata
        if metadata is None and message.raw is not None:
            metadata = message.raw
        return {"role": message.role, "content": message.text, "metadata": metadata}
    if message.raw is None:
        return message.to_dict()
    return message.raw


def raw_json(message: Message, store_format: str | None = None) -> str:
    """:func:`raw_document` as pretty JSON; a raw that is text (malformed JSON) as it is."""
    document = raw_document(message, store_format)
    if isinstance(document, str):
        return document
    try:
        return json.dumps(document, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(document)


def split_fences(text: str) -> list[tuple[bool, str, str]]:
    """Split Markdown text at ``` fences: ``(is_code, text, language)`` chunks in order.

    An unclosed fence runs to the end. Blank lines around fences are dropped.
    """
    out: list[tuple[bool, str, str]] = []
    buf: list[str] = []
    in_code, lang = False, ""

    def flush() -> None:
        chunk = "\n".join(buf)
        if not in_code:
            chunk = chunk.strip("\n")
        if chunk or in_code:
            out.append((in_code, chunk, lang))
        buf.clear()

    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3 and stripped.startswith("```"):
            flush()
            if in_code:
                in_code, lang = False, ""
            else:
                in_code, lang = True, stripped[3:].strip()
            continue
        buf.append(line)
    flush()
    return out
