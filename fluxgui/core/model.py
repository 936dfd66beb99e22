"""One message model for every store format.

Each stored item (a flux row, an Agents SDK JSON item, …) becomes a :class:`Message`.
Normalisation never drops an item and never raises on bad data: an item of unknown
shape or malformed JSON becomes ``kind="other"`` with its raw text kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .items import is_compaction_item
from .times import iso_time

KINDS = ("message", "tool_call", "tool_output", "reasoning", "compaction", "other")
#: the role shown for a compaction item (it has none: ``responses.compact`` made it)
COMPACTION_ROLE = "compaction"

# Agents SDK item types that are not "<something>_call" but still start tool work.
_EXTRA_CALL_TYPES = {"mcp_list_tools", "mcp_approval_request", "handoff_call"}
_EXTRA_OUTPUT_TYPES = {"mcp_approval_response", "handoff_output"}
_TEXT_PART_TYPES = {"input_text", "output_text", "text", "summary_text", "reasoning_text"}


# json is imported when a message first needs it (listing sessions parses no JSON); then
# these names are json's own functions, called as directly as ``json.loads`` would be.
def _first_loads(text: str | bytes) -> Any:
    global _loads, _dumps
    import json

    _loads, _dumps = json.loads, partial(json.dumps, ensure_ascii=False)
    return _loads(text)


def _first_dumps(value: Any) -> str:
    _first_loads("0")
    return _dumps(value)


#: ``json.loads``
_loads: Callable[[str | bytes], Any] = _first_loads


def _loads_any(text: str) -> Any:
    """``json.loads``; a huge text a slice at a time (:func:`.jsonhead.loads_gently`: the
    interpreter's lock changes hands between slices)."""
    if len(text) <= 1_000_000:  # (jsonhead.GENTLE_CHARS)
        return _loads(text)
    from .jsonhead import loads_gently

    return loads_gently(text)
#: ``json.dumps(value, ensure_ascii=False)``
_dumps: Callable[[Any], str] = _first_dumps


@dataclass
class Message:
    """A stored item as a person reads it.

    ``id`` is the store's own row id (or the index for stores without one); ``raw`` is the
    item exactly as stored for formats that store JSON items (``None`` for flux rows).
    ``sort_key`` is the store's order key, used for keyset paging; it is not exported.
    ``ref`` is the store's own name of the item when that is not ``id`` (a Conversations
    item id, ``msg_…``): what the card header and ``show`` print.
    ``metadata`` is any JSON value (see :func:`meta_dict` for its keys).
    """

    id: int
    role: str
    kind: str
    text: str
    #: the metadata as the store's library returns it: usually a dict, but any JSON value
    #: (a flux row may hold a list or a string); ``None`` when there is none. Code that
    #: looks keys up goes through :func:`meta_dict`.
    metadata: Any = None
    created_at: str | None = None
    raw: Any = None
    sort_key: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    ref: str | None = field(default=None, compare=False)
    #: the length of the stored text ``raw`` and ``metadata`` were parsed from, when
    #: known: no string inside them is longer (a writer need not measure them)
    stored_chars: int | None = field(default=None, repr=False, compare=False)
    #: the stored item's size in bytes when only its start was read (a huge item read for
    #: the window: ``text`` and ``raw`` hold its start; the whole is read when asked for)
    partial: int | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        """How the message is named to people: its ``ref``, else ``#id``."""
        return self.ref if self.ref else f"#{self.id}"

    @property
    def short_label(self) -> str:
        """:attr:`label` for a narrow place (a card's header): a long ``ref`` keeps its
        type prefix, its start and its end (``msg_68c8f0…5725eb``)."""
        ref = self.ref
        if not ref or len(ref) <= 20:
            return self.label
        return f"{ref[:10]}…{ref[-6:]}"

    def to_dict(self) -> dict[str, Any]:
        """The exported (JSON) form: id, role, kind, text, metadata, created_at, raw."""
        return {
            "id": self.id,
            "role": self.role,
            "kind": self.kind,
            "text": self.text,
            "metadata": self.metadata,
            "created_at": self.created_at,
            "raw": self.raw,
        }


def meta_dict(m: Message) -> dict[str, Any]:
    """``m``'s metadata when it is a JSON object, else an empty dict (metadata that is a
    list, a string or a number has no keys to look up)."""
    return m.metadata if isinstance(m.metadata, dict) else {}


def message_badges(m: Message) -> list[str]:
    """Words that mark a message whose content is not plainly readable: ``expired``,
    ``locked`` or ``unreadable`` (encrypted items, from ``metadata["encryption"]``), or
    that an encrypted session's reader skips: ``plaintext``."""
    enc = meta_dict(m).get("encryption")
    state = enc.get("state") if isinstance(enc, dict) else None
    return [state] if state in ("expired", "locked", "unreadable", "plaintext") else []


def is_compaction(m: Message) -> bool:
    """Whether ``m`` is a compaction item (kind ``compaction``; see
    :func:`fluxgui.core.items.is_compaction_item` for the rule on a stored item)."""
    return m.kind == "compaction"


@dataclass
class SessionInfo:
    """One row of a session list. ``messages`` is the count; when ``count_exact`` is
    false it is only a lower bound (a server that tells no count: "≥ N")."""

    id: str
    messages: int
    created_at: str | None
    updated_at: str | None
    sort_key: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    count_exact: bool = True
    #: how many branches the session has (stores with branches; 0: not told)
    branches: int = 0

    @property
    def count_text(self) -> str:
        """The count as people read it: ``"12"``, or ``"≥ 100"`` when only a bound."""
        return str(self.messages) if self.count_exact else f"≥ {self.messages}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "messages": self.messages,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        if not self.count_exact:
            out["count_exact"] = False  # "messages" is a lower bound
        if self.branches > 1:
            out["branches"] = self.branches
        return out


# --------------------------------------------------------------------------- text helpers


def _as_text(value: Any) -> str:
    """Text a person reads for a stored scalar: bytes decoded, others via JSON or str."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (dict, list)):
        return _dumps(value)
    return str(value)


#: input parts that are no text: shown as a marker naming them (never fetched or decoded)
_MEDIA_PARTS = {"input_image", "image", "input_file", "file", "input_audio"}


def _reference(value: Any) -> str:
    """A URL or data reference as a person reads it: a ``data:`` URL by its type and size
    (never decoded), any other text cut at 200 characters."""
    text = _as_text(value)
    if text.startswith("data:"):
        head = text[: text.find(",")] if "," in text else text[:40]
        return f"{head} ({len(text):,} characters)"
    return text if len(text) <= 200 else text[:199] + "…"


def part_marker(part: dict[str, Any]) -> str:
    """The marker line of an image, file or audio input part: its type and what names it
    (file name, URL or file id, detail, size of inline data) — e.g.
    ``[input_image: https://x/cat.png · detail high]``."""
    kind = _as_text(part.get("type"))
    said: list[str] = []
    if part.get("filename"):
        said.append(_as_text(part["filename"]))
    for key in ("image_url", "file_url", "url", "file_id"):
        value = part.get(key)
        if isinstance(value, dict):  # {"url": ...} (Chat Completions' shape)
            value = value.get("url")
        if value:
            said.append(_reference(value))
    for key in ("file_data", "data"):
        if isinstance(part.get(key), str):
            said.append(f"{len(part[key]):,} characters of inline data")
    if isinstance(part.get("input_audio"), dict):
        audio = part["input_audio"]
        said.append(f"{_as_text(audio.get('format'))} audio, {len(_as_text(audio.get('data'))):,} characters")
    if part.get("detail"):
        said.append(f"detail {_as_text(part['detail'])}")
    return f"[{kind}" + (": " + " · ".join(said) if said else "") + "]"


def _parts_text(content: Any) -> str:
    """The ``text``/``refusal`` parts of an Agents SDK content list, joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return _as_text(content)
    texts: list[str] = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            kind = part.get("type")  # (any JSON value: a list is no part type)
            if kind == "refusal" and isinstance(part.get("refusal"), str):
                texts.append(part["refusal"])
            elif isinstance(part.get("text"), str) and (
                (isinstance(kind, str) and kind in _TEXT_PART_TYPES) or "type" not in part
            ):
                texts.append(part["text"])
            elif isinstance(kind, str) and kind in _MEDIA_PARTS:
                texts.append(part_marker(part))
    return "\n".join(texts)


# --------------------------------------------------------------------------- flux rows


def from_flux_row(
    row_id: int,
    role: Any,
    content: Any,
    metadata: Any,
    created_at: Any,
    *,
    utc: bool = True,
    sort_key: tuple[Any, ...] = (),
) -> Message:
    """Normalise one row of flux's ``messages`` table.

    The kind comes from the role (``tool``: a ``tool_output``). The metadata is what
    flux's ``get_messages()`` returns: the JSON value the column holds, whatever it is
    (an object, a list, a string…). Metadata that is not valid JSON (flux would raise
    reading it) makes the row ``kind="other"`` with that text in ``raw``.
    """
    role_text = _as_text(role) or "user"
    kind = "tool_output" if role_text == "tool" else "message"
    meta: Any = None
    raw: Any = None
    meta_text = None if metadata is None else _as_text(metadata)
    stored = len(meta_text) if meta_text else 0
    if meta_text:  # flux reads an empty column as no metadata, as it does NULL
        try:
            meta = _loads_any(meta_text)
        except (ValueError, RecursionError):
            meta = None
            kind, raw = "other", meta_text
    return Message(
        id=int(row_id),
        role=role_text,
        kind=kind,
        text=_as_text(content),
        metadata=meta,
        created_at=iso_time(created_at, utc=utc),
        raw=raw,
        sort_key=sort_key or (int(row_id),),
        stored_chars=stored,
    )


# --------------------------------------------------------------------------- Agents SDK items


def item_kind(item: Any) -> str:
    """Classify an Agents SDK input item."""
    if not isinstance(item, dict):
        return "other"
    item_type = item.get("type")
    if item_type is None:
        return "message" if "role" in item else "other"
    if not isinstance(item_type, str):
        return "other"
    if item_type == "message":
        return "message"
    if item_type == "reasoning":
        return "reasoning"
    if is_compaction_item(item):
        return "compaction"
    if item_type.endswith("_output") or item_type in _EXTRA_OUTPUT_TYPES:
        return "tool_output"
    if item_type.endswith("_call") or item_type in _EXTRA_CALL_TYPES:
        return "tool_call"
    return "other"


def _call_text(item: dict[str, Any]) -> str:
    if item.get("type") == "mcp_call":
        # an MCP call carries its output (or error) in the same item, and its server
        head = f"{_as_text(item.get('server_label'))} › {_as_text(item.get('name'))}({_as_text(item.get('arguments'))})"
        for key, mark in (("output", "→"), ("error", "✗")):
            if item.get(key) not in (None, ""):
                head += f"\n{mark} {_as_text(item[key])}"
        return head
    name = item.get("name") or item.get("server_label") or item.get("type")
    if "arguments" in item:
        args = item["arguments"]
    elif "input" in item:
        args = item["input"]
    elif "action" in item:
        args = item["action"]
    elif "queries" in item:
        args = item["queries"]
    else:
        args = ""
    return f"{_as_text(name)}({_as_text(args)})"


def item_text(item: Any, kind: str) -> str:
    """What a person reads for an Agents SDK item of the given kind (an item that is no
    JSON object as its JSON: ``null``, ``"just a string"`` with its quotes)."""
    if not isinstance(item, dict):
        return _dumps(item)
    if kind == "message":
        return _parts_text(item.get("content"))
    if kind == "tool_call":
        return _call_text(item)
    if kind == "tool_output":
        out = item.get("output")
        return _parts_text(out) if isinstance(out, list) else _as_text(out)
    if kind == "reasoning":
        summary = _parts_text(item.get("summary"))
        return summary if summary else _parts_text(item.get("content"))
    if kind == "compaction":
        return ""  # opaque: the encrypted content is no text to read or search
    return _dumps(item)


def _item_role(item: Any, kind: str) -> str:
    if isinstance(item, dict) and isinstance(role := item.get("role"), str):
        return role
    return {
        "tool_call": "assistant", "reasoning": "assistant", "tool_output": "tool",
        "compaction": COMPACTION_ROLE,
    }.get(kind, "unknown")


def from_agents_row(
    row_id: int,
    message_data: Any,
    created_at: Any,
    *,
    utc: bool = True,
    sort_key: tuple[Any, ...] = (),
) -> Message:
    """Normalise one ``agent_messages`` row (its ``message_data`` is a JSON item).

    Malformed JSON is kept as ``kind="other"`` with its text as ``raw``.
    """
    text_data = _as_text(message_data)
    try:
        item = _loads_any(text_data)
    except (ValueError, RecursionError):
        return Message(
            id=int(row_id),
            role="unknown",
            kind="other",
            text=text_data,
            created_at=iso_time(created_at, utc=utc),
            raw=text_data,
            sort_key=sort_key or (int(row_id),),
        )
    m = from_item(row_id, item, iso_time(created_at, utc=utc), sort_key=sort_key)
    m.stored_chars = len(text_data)
    return m


def from_item(
    item_id: int, item: Any, created_at: str | None, *, sort_key: tuple[Any, ...] = ()
) -> Message:
    """Normalise an already-parsed Agents SDK item."""
    kind = item_kind(item)
    return Message(
        id=int(item_id),
        role=_item_role(item, kind),
        kind=kind,
        text=item_text(item, kind),
        metadata=None,
        created_at=created_at,
        raw=item,
        sort_key=sort_key or (int(item_id),),
    )


def message_to_item(message: dict[str, Any]) -> dict[str, Any]:
    """Turn a flux-style message dict into an Agents SDK input item.

    A dict that already has a ``type`` is an item and is kept as it is. A ``tool`` message
    becomes a ``function_call_output``; other roles become an easy input message.
    """
    if "type" in message:
        return dict(message)
    role = message.get("role") or "user"
    content = message.get("content")
    if content is None:
        content = ""
    if role == "tool":
        return {
            "type": "function_call_output",
            "call_id": str(message.get("tool_call_id") or ""),
            "output": _as_text(content),
        }
    if not isinstance(content, (str, list)):
        content = _as_text(content)
    return {"role": role, "content": content}
