"""What a message's body shows, decided without Qt: Markdown, a code block or a muted
line; whole, or collapsed to a preview when it is long.

:func:`body_plan` is the decision (pure Python, any thread): the conversation pane builds
the Qt document it describes (:func:`fluxgui.qt.markdown.message_document`), and the
code blocks it names are lexed ahead of time in a worker thread
(:mod:`fluxgui.core.highlight`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .display import COMPACTION_NOTE, compaction_summary, encryption_state
from .model import Message, is_compaction
from .pairing import call_key, tool_name

#: a body larger than this (UTF-8 bytes) is collapsed until the user asks for all of it
COLLAPSE_BYTES = 20_000
#: what a collapsed body shows: at most this many characters …
PREVIEW_CHARS = 2_000
#: … and this many lines
PREVIEW_LINES = 30


# --------------------------------------------------------------------------- sizes & text


def utf8_size(text: str) -> int:
    """The UTF-8 size of ``text`` in bytes (lone surrogates count as three)."""
    return len(text.encode("utf-8", "surrogatepass"))


def is_long(text: str) -> bool:
    """Whether a body of this text is collapsed by default (over :data:`COLLAPSE_BYTES`)."""
    # Cheap check first: a str of n code points has at least n UTF-8 bytes, at most 4n.
    if len(text) * 4 <= COLLAPSE_BYTES:
        return False
    return len(text) > COLLAPSE_BYTES or utf8_size(text) > COLLAPSE_BYTES


def preview(text: str) -> str:
    """The start of a long text: whole lines, at most PREVIEW_LINES / PREVIEW_CHARS."""
    head = text[:PREVIEW_CHARS]
    lines = head.split("\n")
    if len(lines) > PREVIEW_LINES:
        head = "\n".join(lines[:PREVIEW_LINES])
    elif len(text) > PREVIEW_CHARS and "\n" in head:
        head = head[: head.rfind("\n")]
    return head


def pretty_json(text: str) -> str | None:
    """``text`` re-indented when it is a JSON object or array, else ``None``."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None


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


# --------------------------------------------------------------------------- per message


def sealed(message: Message) -> bool:
    """An encrypted item that did not open (no key, or not this key)."""
    return encryption_state(message) in ("locked", "unreadable")


def body_source(message: Message) -> str:
    """The text a message's body is built from (what "show all" reveals in full)."""
    if sealed(message):
        return message.text  # what the lock means, not the envelope's ciphertext
    if message.kind == "tool_call":
        args = call_arguments(message)
        return args if args is not None else message.text
    if message.kind == "other" and isinstance(message.raw, (dict, list)):
        try:
            return json.dumps(message.raw, indent=2, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return message.text
    return message.text


def call_arguments(message: Message) -> str | None:
    """A tool call's arguments as text (``None`` when the item has none)."""
    item = message.raw
    if not isinstance(item, dict):
        return None
    for key in ("arguments", "input", "action", "queries", "code"):
        if key in item:
            value = item[key]
            if isinstance(value, str):
                return value
            try:
                return json.dumps(value, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):
                return str(value)
    return None


@dataclass(frozen=True)
class BodyPlan:
    """How a message's body is built: Markdown ``text``, or a code block (``mode="code"``,
    with ``language``, an optional ``title``/``subtitle`` line), ``"empty"``, or a
    ``"note"``: a bold ``title``, a muted ``subtitle`` line and ``text`` in muted italics
    (a compaction item's card)."""

    mode: str
    text: str
    language: str = ""
    title: str = ""
    subtitle: str = ""


def body_plan(message: Message, *, full: bool) -> BodyPlan:
    """What the body of ``message`` shows (``full``: whole, however long)."""
    if is_compaction(message):  # opaque: what it is, never its encrypted content
        return BodyPlan("note", COMPACTION_NOTE, title="Compacted history",
                        subtitle=compaction_summary(message))
    source = body_source(message)
    cut = not full and is_long(source)
    text = preview(source) if cut else source
    kind = message.kind
    if not source.strip() and kind != "tool_call":
        return BodyPlan("empty", "(empty)")
    if sealed(message):  # a sentence about the lock, muted; never the ciphertext
        return BodyPlan("empty", source)
    if kind == "tool_call":
        name = tool_name(message) or "tool call"
        call_id = call_key(message) or ""
        if call_arguments(message) is None:
            return BodyPlan("code", message.text, "", name, call_id)
        pretty = None if cut else pretty_json(text)
        return BodyPlan("code", pretty or text, "json", name, call_id)
    if kind == "tool_output" or kind == "other":
        pretty = None if cut else pretty_json(text)
        if pretty is not None:
            return BodyPlan("code", pretty, "json")
        if kind == "other" and isinstance(message.raw, (dict, list)):
            return BodyPlan("code", text, "json")
        return BodyPlan("code", text)
    return BodyPlan("markdown", text)
