"""A JSON value as a tree of cells shows it (the message inspector): its type, one line
for its cell, and the whole of it for a value pane.

Plain text throughout: nothing here is ever markup. The raw value is shown as stored
(its hidden characters are the inspector's to show, not this module's to change).
"""

from __future__ import annotations

import json
from typing import Any

#: a value longer than this is cut in its tree cell (the value pane shows all of it)
CELL_CHARS = 240


def json_type(value: Any) -> str:
    """The JSON type of ``value`` as a tree's type column shows it ("string",
    "object (3)", "array (2)", …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return f"object ({len(value)})"
    if isinstance(value, (list, tuple)):
        return f"array ({len(value)})"
    return type(value).__name__


def cell_text(value: Any) -> str:
    """One line for a tree cell: a string in quotes (newlines as ⏎), an object or array as
    its size, others as JSON. Plain text either way: nothing here is ever markup."""
    if isinstance(value, dict):
        n = len(value)
        return f"{{ {n} key{'' if n == 1 else 's'} }}" if n else "{}"
    if isinstance(value, (list, tuple)):
        n = len(value)
        return f"[ {n} item{'' if n == 1 else 's'} ]" if n else "[]"
    if isinstance(value, str):
        text, quote = value, '"'
    else:
        quote = ""
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(value)
    cut = len(text) > CELL_CHARS
    text = text[:CELL_CHARS].replace("\r\n", "⏎").replace("\n", "⏎").replace("\t", " ")
    return f"{quote}{text}…" if cut else f"{quote}{text}{quote}"


def full_text(value: Any) -> str:
    """The whole value for the value pane: strings as they are, the rest as pretty JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(value)
