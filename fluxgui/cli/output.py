"""Terminal-safe text output: one-line fields, messages, JSON, sizes.

Stored text may hold anything: control characters, bidi overrides, zero-width
characters, lone surrogates. What the commands print shows such characters as visible
markers (:func:`fluxgui.core.visible.visible`), so a stored string cannot move the
cursor, recolour the terminal or reorder a line; ``--json`` output keeps every value
exact and escapes the characters a terminal might obey.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, TextIO

from fluxgui.core.visible import visible

if TYPE_CHECKING:
    from fluxgui.core.model import Message

#: characters --json escapes although JSON allows them raw: C1 controls (a terminal may
#: obey U+009B as CSI), DEL, line/paragraph separators and bidi controls. The value the
#: JSON holds is unchanged. (A pattern, compiled by re when --json first needs it.)
_JSON_ESCAPE = "[\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON that is safe to print: exact, non-ASCII kept readable, with
    the characters of :data:`_JSON_ESCAPE` as ``\\uXXXX`` escapes; a number JSON cannot
    hold (``NaN``, an infinity: a stored item may) as the string ``"NaN"``,
    ``"Infinity"`` or ``"-Infinity"``, as the export writes it."""
    # (only --json needs it: a listing in text does not load it)
    from fluxgui.core.jsonsafe import Counter, dumps

    text = dumps(value, Counter(), indent=indent)
    return re.sub(_JSON_ESCAPE, lambda m: f"\\u{ord(m.group(0)):04x}", text)


def print_json(out: TextIO, value: Any) -> None:
    """``value`` as indented JSON and a newline."""
    out.write(json_text(value, indent=2))
    out.write("\n")


def write_json_stream(
    out: TextIO, head: dict[str, Any], pages: AsyncIterator[list[Message]]
) -> Coroutine[Any, Any, None]:
    """Write ``{head…, "messages": [...]}`` while the pages stream in (bounded memory)."""

    async def run() -> None:
        text = json_text(head)
        out.write(text[:-1] + ', "messages": [')
        first = True
        async for page in pages:
            for m in page:
                out.write(("\n  " if first else ",\n  ") + json_text(m.to_dict()))
                first = False
        out.write("\n]}\n" if not first else "]}\n")

    return run()


def one_line(text: str, width: int = 200) -> str:
    """``text`` on one line for a terminal: hidden characters (controls, bidi, zero-width)
    as visible markers, runs of white space as one space, at most ``width`` characters."""
    flat = " ".join(visible(text, keep_layout=False).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def print_message(out: TextIO, m: Message) -> None:
    """A message as ``show`` prints it: a header line, then its text indented."""
    # Imported here: ``ls`` prints no message.
    from fluxgui.core.display import compaction_summary
    from fluxgui.core.model import is_compaction, message_badges
    from fluxgui.core.pairing import message_calls

    kind = "" if m.kind == "message" else f" [{one_line(m.kind, 40)}]"
    badges = "".join(f" [{b}]" for b in message_badges(m))
    out.write(f"{one_line(m.label, 80)} {one_line(m.created_at or '-', 60)} {one_line(m.role, 60)}{kind}{badges}\n")
    text = f"(compacted history: {compaction_summary(m)}; opaque)" if is_compaction(m) else m.text
    out.writelines(f"    {line}\n" for line in lines(visible(text or "")))
    for call in message_calls(m):  # OpenAI-chat-style calls a flux row keeps in its metadata
        ident = f" {one_line(call.call_id, 80)}" if call.call_id else ""
        out.write(f"    [tool call {one_line(call.name or '?', 80)}{ident}]\n")
        out.writelines(f"      {line}\n" for line in lines(visible(call.arguments)))


def lines(text: str) -> Iterator[str]:
    """``text.split("\n")``, a line at a time (a 50 MB message is not held again as a
    list of its lines)."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def size(n: int) -> str:
    """A file size: ``1 byte``, ``912 bytes``, ``1.5 KB`` … ``2.0 TB``."""
    if n < 1024:
        return f"{n} byte" if n == 1 else f"{n} bytes"
    value = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")
