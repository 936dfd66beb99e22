"""What flux's columns hold for a value fluxgui writes: the text of a content value, text
a database can store, and whether an item fits the role + content columns whole."""

from __future__ import annotations

from typing import Any

from fluxgui.core import undecodable


def text_value(value: Any) -> Any:
    """The text flux's column ends up holding for a content value (SQLite's TEXT affinity
    turns a number into its text; other back-ends need the text given)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    import json  # (json loads when a write needs it: listing sessions never does)

    return json.dumps(value, ensure_ascii=False)


#: text a database can store: a lone surrogate (JSON can carry one, UTF-8 cannot) as U+FFFD
storable = undecodable.storable


def plain_message(item: dict[str, Any]) -> bool:
    """An item flux's role + content columns hold entirely."""
    return (
        set(item) <= {"role", "content"}
        and isinstance(item.get("content"), str)
        and isinstance(item.get("role"), str)
    )
