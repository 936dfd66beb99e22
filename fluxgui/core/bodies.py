"""What a message's body shows, decided without Qt: Markdown, text as typed, a code block
or a muted line; whole, or collapsed to a preview when it is long.

**Text fidelity.** What a person typed (user, system and developer text, a tool's
output) is shown as typed: every space and line break kept, nothing taken for Markdown
(``2*3*4``, ``__init__``, ``# 1 priority``). Only model-written text (an assistant's,
a summary, reasoning) is Markdown, with each single line break kept as a hard break —
unless the reader asks for it "as plain text". Every body shows hidden characters
(controls, bidi overrides, zero-width characters, lone surrogates) as visible markers
(:func:`fluxgui.core.visible.visible`); the stored text is never changed.

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
from .pairing import MessageCall, call_key, message_calls, tool_name
from .visible import visible

#: a body larger than this (UTF-8 bytes) is collapsed until the user asks for all of it
COLLAPSE_BYTES = 20_000
#: what a collapsed body shows: at most this many characters …
PREVIEW_CHARS = 2_000
#: … and this many lines
PREVIEW_LINES = 30
#: a body shown whole that is longer than this (characters) is shown as plain text, laid
#: out a chunk at a time and painted only where it is seen (a 2 MB log must not freeze
#: the window: Qt lays out 100 kB of Markdown in ~75 ms)
HUGE_CHARS = 60_000
#: a window reads an item stored in more bytes than this as its start only (stores that
#: can: ``capabilities.partial_reads``), :data:`HEAD_CHARS` of it; the whole text is read
#: when the viewer opens it (a 50 MB item read, parsed and measured whole stalls the
#: window for seconds and holds it several times in memory)
PARTIAL_BYTES = 4_000_000
HEAD_CHARS = 200_000
#: the size of one such chunk (characters, whole lines): ~1–3 ms of layout each, in monospace
CHUNK_CHARS = 3_000
#: roles whose message text is Markdown (written by a model); every other role's text is
#: shown as typed
MARKDOWN_ROLES = frozenset({"assistant", "summary"})


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


def is_huge(message: Message, *, full: bool) -> bool:
    """Whether ``message``'s body, shown whole (``full``), is laid out in chunks as plain
    text (over :data:`HUGE_CHARS`)."""
    if not full or is_compaction(message) or sealed(message):
        return False
    return len(body_source(message)) > HUGE_CHARS


def split_chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """``text`` cut into pieces of about ``size`` characters, each ending after a line's
    newline where one is near (a longer line is cut where it must):
    ``"".join(pieces) == text``."""
    if len(text) <= size:
        return [text]
    out: list[str] = []
    start, n = 0, len(text)
    while start < n:
        end = start + size
        if end >= n:
            out.append(text[start:])
            break
        cut = text.rfind("\n", start, end)
        end = cut + 1 if cut >= start else end
        out.append(text[start:end])
        start = end
    return out


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


def hard_breaks(text: str) -> str:
    """Markdown ``text`` with each single line break outside code fences made a hard
    break (two spaces before it), so that a four-line address stays four lines."""
    if "\n" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    fence = ""  # the open fence's marker, "" outside code
    last = len(lines) - 1
    for i, line in enumerate(lines):
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3 and stripped[:3] in ("```", "~~~"):
            run = len(stripped) - len(stripped.lstrip(stripped[0]))
            mark = stripped[0] * run
            if not fence:
                fence = mark
            elif stripped.rstrip() == stripped[0] * len(stripped.rstrip()) and run >= len(fence) \
                    and mark[0] == fence[0]:
                fence = ""
            out.append(line)
            continue
        if (
            not fence and i < last and line.strip() and lines[i + 1].strip()
            and not line.endswith(("  ", "\\"))
        ):
            line += "  "
        out.append(line)
    return "\n".join(out)


def is_markdown(message: Message) -> bool:
    """Whether ``message``'s text is Markdown (a model wrote it): an assistant's or a
    summary's message, or reasoning. Everything else is shown as typed."""
    if message.kind == "reasoning":
        return True
    return message.kind == "message" and message.role.lower() in MARKDOWN_ROLES


def looks_like_json(text: str) -> bool:
    """Whether ``text`` is a JSON object or array (shown in monospace, as stored)."""
    return pretty_json(text) is not None


# --------------------------------------------------------------------------- per message


def sealed(message: Message) -> bool:
    """An encrypted item that did not open (no key, or not this key)."""
    return encryption_state(message) in ("locked", "unreadable")


def body_source(message: Message) -> str:
    """The text a message's body is built from (what "show all" reveals in full)."""
    if sealed(message):
        return message.text  # what the lock means, not the envelope's ciphertext
    if message.kind == "tool_call":
        if is_mcp_call(message):
            return message.text  # server, tool, arguments and the output it carries
        args = call_arguments(message)
        return args if args is not None else message.text
    if message.kind == "other" and isinstance(message.raw, (dict, list)):
        try:
            return json.dumps(message.raw, indent=2, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return message.text
    return message.text


def is_mcp_call(message: Message) -> bool:
    """An MCP call item: its output (or error) is part of the call, not another item."""
    return isinstance(message.raw, dict) and message.raw.get("type") == "mcp_call"


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
    """How a message's body is built: Markdown ``text``, text as typed (``mode="plain"``,
    every space and line break kept; ``language="json"``: in monospace), a code block
    (``mode="code"``, with ``language``, an optional ``title``/``subtitle`` line),
    ``"empty"``, or a
    ``"note"``: a bold ``title``, a muted ``subtitle`` line and ``text`` in muted italics
    (a compaction item's card)."""

    mode: str
    text: str
    language: str = ""
    title: str = ""
    subtitle: str = ""
    #: the calls an assistant message holds in ``metadata.tool_calls`` (a flux row),
    #: shown after its text: name, pretty arguments, call id
    calls: tuple[MessageCall, ...] = ()


def body_plan(
    message: Message, *, full: bool, plain: bool = False, pictures: bool = False
) -> BodyPlan:
    """What the body of ``message`` shows (``full``: whole, however long; ``plain``:
    Markdown text as typed too). Hidden characters are shown as visible markers
    (``pictures``: control characters as control pictures, ``␀``, else ``⟨NUL⟩``)."""
    plan = _plan(message, full=full, plain=plain)

    def shown(text: str, keep_layout: bool = True) -> str:
        return visible(text, keep_layout=keep_layout, pictures=pictures)

    calls = tuple(
        MessageCall(shown(c.call_id, False), shown(c.name, False),
                    shown(pretty_json(c.arguments) or c.arguments))
        for c in message_calls(message)
    )
    if calls and plan.mode == "empty":
        plan = BodyPlan("plain", "")
    if plan.mode in ("empty", "note"):
        return plan
    return BodyPlan(plan.mode, shown(plan.text), plan.language,
                    shown(plan.title, False), shown(plan.subtitle, False), calls)


def _plan(message: Message, *, full: bool, plain: bool) -> BodyPlan:
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
        if is_mcp_call(message):  # with its output: shown whole, as stored
            server = message.raw.get("server_label") if isinstance(message.raw, dict) else None
            return BodyPlan("code", text, "", f"{server} › {name}" if server else name, call_id)
        if call_arguments(message) is None:
            return BodyPlan("code", message.text, "", name, call_id)
        pretty = None if cut else pretty_json(text)
        # coloured as JSON only when it is JSON (free text "Pantheon" was coloured mid-word;
        # a cut preview: when it starts as JSON does)
        parses = pretty is not None or (cut and text.lstrip()[:1] in ("{", "["))
        return BodyPlan("code", pretty or text, "json" if parses else "", name, call_id)
    if kind == "tool_output" or kind == "other":
        pretty = None if cut else pretty_json(text)
        if pretty is not None:
            return BodyPlan("code", pretty, "json")
        if kind == "other" and isinstance(message.raw, (dict, list)):
            return BodyPlan("code", text, "json")
        return BodyPlan("code", text)
    if is_markdown(message) and not plain:
        return BodyPlan("markdown", hard_breaks(text))
    if not cut and looks_like_json(text):
        return BodyPlan("plain", text, "json")
    return BodyPlan("plain", text)
