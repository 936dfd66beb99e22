"""Qt-free helpers for showing messages: colours, labels, times, raw JSON, escaped HTML.

No Qt here. The conversation pane (:mod:`fluxgui.qt.conversation`) takes role colours,
kind labels, times and the raw JSON of a message from this module. The HTML functions
(:func:`conversation_html`, :func:`placeholder_html`) build a string for
``QTextBrowser.setHtml``; in them message content is data, never markup: text, roles,
kinds and ids all pass through :func:`html.escape`, so ``<img src=…>`` or ``<script>``
in a message is shown as those characters and nothing is fetched or run.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from fluxgui.core.model import Message, SessionInfo

#: a message longer than this is cut in the pane (the store is not changed)
MAX_CHARS = 20_000

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
_BACKGROUNDS = {
    "message": "#ffffff",
    "tool_call": "#f6f8fa",
    "tool_output": "#f6f8fa",
    "reasoning": "#fbfaf5",
    "other": "#fff8f0",
}
_MONO_KINDS = {"tool_call", "tool_output", "other"}
_MONO = "'DejaVu Sans Mono', 'Menlo', 'Consolas', monospace"


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


def _clip(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS] + f"\n… [{len(text) - MAX_CHARS:,} more characters not shown]"


def message_html(m: Message) -> str:
    """One message as a two-cell table row: a role-coloured bar and the content."""
    colour = role_colour(m.role)
    meta = [f'<span style="color:{colour}; font-weight:600;">{esc(m.role)}</span>']
    if m.kind != "message":
        label = KIND_LABELS.get(m.kind, m.kind)
        meta.append(f'<span style="color:#6b7280;">&nbsp;·&nbsp;{esc(label)}</span>')
    when = short_time(m.created_at)
    if when:
        meta.append(f'<span style="color:#6b7280;">&nbsp;·&nbsp;{esc(when)}</span>')
    meta.append(f'<span style="color:#9ca3af;">&nbsp;·&nbsp;#{esc(m.id)}</span>')
    background = _BACKGROUNDS.get(m.kind, "#ffffff")
    return (
        '<table width="100%" cellspacing="0" cellpadding="0" '
        f'style="margin-bottom:6px;" bgcolor="{background}">'
        f'<tr><td width="4" bgcolor="{colour}"></td>'
        '<td style="padding:6px 10px 8px 10px;">'
        f'<p style="margin:0 0 4px 0;">{"".join(meta)}</p>'
        f"{_body_html(m)}"
        "</td></tr></table>"
    )


def _body_html(m: Message) -> str:
    if not m.text:
        return '<p style="margin:0; color:#9ca3af;">(empty)</p>'
    text = _clip(m.text)
    if m.kind in _MONO_KINDS:
        return _text_block(text, f"font-family:{_MONO}; font-size:90%;")
    if m.kind == "reasoning":
        return _text_block(text, "color:#57534e; font-style:italic;")
    # A message: its fenced code blocks in a monospace box, the rest as written. The
    # fence lines go; everything else (Markdown marks included) is shown literally.
    parts: list[str] = []
    for is_code, chunk, lang in split_fences(text):
        if not is_code:
            parts.append(_text_block(chunk, ""))
            continue
        label = (
            f'<p style="margin:0 0 2px 0; color:#9ca3af; font-size:85%;">{esc(lang)}</p>'
            if lang
            else ""
        )
        parts.append(
            '<table width="100%" cellspacing="0" cellpadding="6" bgcolor="#f1f3f5" '
            'style="margin:4px 0 4px 0;"><tr><td>'
            f"{label}{_text_block(chunk, f'font-family:{_MONO}; font-size:90%;')}"
            "</td></tr></table>"
        )
    return "".join(parts)


def _text_block(text: str, style: str) -> str:
    return f'<p style="margin:0; white-space:pre-wrap; {style}">{esc(text)}</p>'


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


def conversation_html(info: SessionInfo, messages: Sequence[Message]) -> str:
    """The whole pane: a header line, then each message (oldest first)."""
    shown = len(messages)
    if info.messages > shown:
        count = f"the latest {shown} of {info.messages} messages"
    else:
        count = f"{info.messages} message" + ("" if info.messages == 1 else "s")
    times = []
    if info.created_at:
        times.append(f"started {short_time(info.created_at, seconds=False)}")
    if info.updated_at:
        times.append(f"last active {short_time(info.updated_at, seconds=False)}")
    head = (
        f'<p style="margin:0 0 2px 0; font-size:115%; font-weight:600;">{esc(info.id)}</p>'
        f'<p style="margin:0 0 10px 0; color:#6b7280;">{esc(" · ".join([count, *times]))}</p>'
    )
    if not messages:
        body = '<p style="color:#6b7280;">This session has no messages.</p>'
    else:
        body = "".join(message_html(m) for m in messages)
    return f"<html><body>{head}{body}</body></html>"


def placeholder_html(text: str) -> str:
    """A grey centred note for an empty pane."""
    return f'<p align="center" style="color:#6b7280; margin-top:40px;">{esc(text)}</p>'
