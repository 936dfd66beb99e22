"""How messages are shown, without Qt: role colours, kind labels, encryption badges,
times, sizes, raw JSON, and escaping for the few places Qt takes rich text.

The conversation pane, the inspector, the session list and the compare view take their
colours, labels and times from here; :func:`esc` escapes stored data wherever Qt would
take a string for rich text (tooltips). Colours are ``#rrggbb`` strings (the widgets turn them
into ``QColor`` values).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from .model import Message

ROLE_COLOURS = {
    "user": "#1d4ed8",
    "assistant": "#15803d",
    "system": "#7e22ce",
    "developer": "#7e22ce",
    "tool": "#b45309",
    "summary": "#0f766e",
    "compaction": "#0f766e",
}
KIND_LABELS = {
    "tool_call": "tool call",
    "tool_output": "tool output",
    "reasoning": "reasoning",
    "compaction": "compacted history",
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
    "compaction": "#4fd1c5",
}
#: badge colours by encryption state: (text, background), light and dark palettes
BADGE_COLOURS = {
    "expired": ("#7a4d00", "#fde9b8"),
    "locked": ("#374151", "#e2e5ea"),
    "unreadable": ("#842029", "#f8d7da"),
    "plaintext": ("#0b4f6c", "#d3ecf7"),
    "note": ("#5b21b6", "#ede9fe"),  # a review note on the message
}
BADGE_COLOURS_DARK = {
    "expired": ("#ffd58a", "#4a3810"),
    "locked": ("#d1d5db", "#3a404a"),
    "unreadable": ("#ffb3b8", "#4d1f24"),
    "plaintext": ("#a8dcf0", "#123a4a"),
    "note": ("#d8c8ff", "#2e1f4d"),
}
LOCK = "\U0001f512"
#: the header badge of an encrypted item by its state (a decrypted, unexpired item: none)
BADGE_TEXTS = {
    "expired": "expired",
    "locked": f"{LOCK} locked",
    "unreadable": "unreadable",
    "plaintext": "plaintext",
}


def encryption_state(m: Message) -> str | None:
    """An ``EncryptedSession`` item's state (``ok``, ``expired``, ``locked``,
    ``unreadable``; ``plaintext`` for an item in clear in an encrypted store) from its
    metadata; ``None`` for an item of a store that is not encrypted."""
    meta = m.metadata if isinstance(m.metadata, dict) else None
    enc = meta.get("encryption") if meta else None
    if not isinstance(enc, dict):
        return None
    state = enc.get("state")
    return state if state in ("ok", "expired", "locked", "unreadable", "plaintext") else None


def encryption_badge(m: Message) -> tuple[str, str, str] | None:
    """``(badge text, tooltip, state)`` for the header of an encrypted item that is not
    plainly readable: "expired" (shown, but the library no longer returns it),
    "🔒 locked" (no key), "unreadable" (the key does not open it). Plain text both."""
    state = encryption_state(m)
    if state is None or state == "ok":
        return None
    if state == "expired":
        enc = m.metadata.get("encryption", {}) if isinstance(m.metadata, dict) else {}
        when = short_time(enc.get("encrypted_at") if isinstance(enc, dict) else None)
        tip = (
            f"encrypted {when or 'at an unknown time'}, older than the TTL: "
            "the Agents SDK no longer returns this item"
        )
    elif state == "locked":
        tip = (
            "Encrypted by the Agents SDK's EncryptedSession: give the store's key "
            "(File › Enter Encryption Key…) to read it"
        )
    elif state == "plaintext":
        tip = (
            "Stored in clear inside an encrypted store: the Agents SDK's EncryptedSession "
            "skips items that are not encrypted, so the agent never reads this one back"
        )
    else:
        tip = "This item does not decrypt with the keys given: another key wrote it, or it is damaged"
    return BADGE_TEXTS[state], tip, state


def badge_colours(state: str, *, dark: bool = False) -> tuple[str, str]:
    """``(text colour, background)`` of an encryption badge."""
    table = BADGE_COLOURS_DARK if dark else BADGE_COLOURS
    return table.get(state, table["locked"])


def esc(value: object) -> str:
    """Escape any value for HTML text or a double-quoted attribute."""
    import html  # not at import: the command line never needs it

    return html.escape("" if value is None else str(value), quote=True)


#: how times are shown: in the machine's zone ("local") or in UTC ("utc")
TIME_ZONES = ("local", "utc")
_zone = ["local"]


def set_time_zone(zone: str) -> None:
    """Show times in the machine's zone (``"local"``) or in UTC (``"utc"``) from now on
    (the window's View › Times in UTC; cards, inspector and list alike)."""
    if zone not in TIME_ZONES:
        raise ValueError(f"unknown time zone setting {zone!r} (use local or utc)")
    _zone[0] = zone


def time_zone() -> str:
    """The zone times are shown in: ``"local"`` or ``"utc"``."""
    return _zone[0]


def short_time(iso: str | None, *, seconds: bool = True, zone: bool = True) -> str:
    """An ISO 8601 time as ``YYYY-MM-DD HH:MM[:SS] ZONE`` in the zone chosen
    (:func:`set_time_zone`: local by default), the zone named (``UTC``, ``CET``…; left out
    with ``zone=False``). A naive time is shown as stored, without a zone (none is
    known). ``""`` when missing, the text itself when unreadable."""
    if not iso:
        return ""
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    text_format = "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M"
    if dt.tzinfo is None:
        return dt.strftime(text_format)
    dt = dt.astimezone(timezone.utc) if _zone[0] == "utc" else dt.astimezone()
    text = dt.strftime(text_format)
    if zone:
        name = "UTC" if _zone[0] == "utc" else (dt.tzname() or dt.strftime("%z"))
        text += f" {name}"
    return text


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


#: what a compaction card says about its content
COMPACTION_NOTE = (
    "The content is opaque: it is encrypted by the model provider, and only the model can "
    "read it. The Agents SDK sends it back as it is and never compacts it again."
)


def compaction_facts(m: Message) -> tuple[int, str | None]:
    """``(size of the encrypted content in bytes, created_by or None)`` of a compaction
    item (``responses.compact`` output, as ``OpenAIResponsesCompactionSession`` stores it)."""
    item = m.raw if isinstance(m.raw, dict) else {}
    content = item.get("encrypted_content")
    size = len(content.encode("utf-8", "surrogatepass")) if isinstance(content, str) else 0
    created_by = item.get("created_by")
    return size, created_by if isinstance(created_by, str) and created_by else None


def compaction_summary(m: Message) -> str:
    """One line about a compaction item: its size and who made it, when recorded."""
    size, created_by = compaction_facts(m)
    line = f"{size_label(size)} of encrypted content"
    return f"{line} · created by {created_by}" if created_by else line


def raw_document(message: Message, columns: bool | None = None) -> Any:
    """The stored form of a message, as "Copy raw JSON" and the inspector show it.

    An item store (Agents SDK, …) keeps JSON items: that item (or, when it was not valid
    JSON, its text). A flux row is the dict of its columns: ``role``, ``content`` and
    ``metadata`` (the metadata's own text when it is not a JSON object).
    """
    if columns or (columns is None and message.raw is None):
        metadata: Any = message.metadata
        if metadata is None and message.raw is not None:
            metadata = message.raw
        return {"role": message.role, "content": message.text, "metadata": metadata}
    if message.raw is None:
        return message.to_dict()
    return message.raw


def raw_json(message: Message, columns: bool | None = None) -> str:
    """:func:`raw_document` as pretty JSON; a raw that is text (malformed JSON) as it is."""
    document = raw_document(message, columns)
    if isinstance(document, str):
        return document
    try:
        return json.dumps(document, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return str(document)
