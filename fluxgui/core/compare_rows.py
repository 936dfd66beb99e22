"""A comparison as the Compare view shows it, in words: one row per aligned turn, its
label and token usage, and the first lines of each message on either side.

Pure Python: the Compare view (:mod:`fluxgui.qt.compare`) paints what this module says.
Message text stays as it was written (tags and all) — it is painted as plain text — but
one row line is one line: control characters become ``\ufffd`` and long lines are cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .diff import Comparison, Side, TurnDiff
from .display import kind_label
from .model import Message
from .text import plural

#: the marker of a turn by its status
MARKERS = {"same": "=", "differs": "≠", "only_a": "−", "only_b": "+"}
#: text lines shown per message (its first non-blank lines)
TEXT_LINES = 2
#: messages shown per side of one turn before "… N more"
MAX_SHOWN = 40
#: characters of one line kept before eliding (eliding a megabyte line is slow)
LINE_CHARS = 400

# control characters draw as boxes or nothing; a line separator would break the row
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def text_lines(text: str, n: int = TEXT_LINES) -> list[str]:
    """The first ``n`` non-blank lines of ``text``, one line each, control characters as
    ``\ufffd`` and cut to :data:`LINE_CHARS`; ``[""]`` for blank text."""
    out: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        line = _CONTROLS.sub("\ufffd", line.replace("\t", "    ").rstrip())
        out.append(line[:LINE_CHARS])
        if len(out) == n:
            break
    return out or [""]


def _tokens(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def usage_text(t: TurnDiff) -> str:
    """``"tokens A 120 · B 350 (+230)"``; ``""`` when neither side knows the turn's usage."""
    if t.tokens_a is None and t.tokens_b is None:
        return ""
    delta = t.token_delta
    return f"tokens A {_tokens(t.tokens_a)} · B {_tokens(t.tokens_b)}" + (
        "" if delta is None else f" ({delta:+,})"
    )


def turn_label(t: TurnDiff) -> str:
    """``"Turn 2 differs"``, ``"Turn 1 — same on both sides"``, ``"Turn 4 — only in B"``."""
    return {
        "same": f"Turn {t.number} — same on both sides",
        "differs": f"Turn {t.number} differs",
        "only_a": f"Turn {t.number} — only in A",
        "only_b": f"Turn {t.number} — only in B",
    }[t.status]


def gist(t: TurnDiff) -> str:
    """The first line of the turn's user message (or, in turn 0, of its first message)."""
    first = t.a or t.b
    if first is None or not first.messages:
        return ""
    return text_lines(first.user_text or first.messages[0].text, 1)[0]


def collapsed_label(t: TurnDiff) -> str:
    """The one line of a turn shown closed: its label, its message count, its gist."""
    label = f"{turn_label(t)} · {plural(len(t.messages_a), 'message')}"
    words = gist(t)
    return label + (f" · “{words}”" if words else "")


def turn_tooltip(t: TurnDiff) -> str:
    """The lines of a row's tooltip (plain text: the view escapes it)."""
    lines = [turn_label(t)]
    first = t.a or t.b
    if first is not None and first.user_text:
        lines.append(text_lines(first.user_text, 1)[0][:200])
    lines.append(f"A: {plural(len(t.messages_a), 'message')} · B: {plural(len(t.messages_b), 'message')}")
    if usage_text(t):
        lines.append(usage_text(t))
    return "\n".join(lines)


@dataclass
class Block:
    """One message as a row shows it."""

    role: str
    kind: str  # "" for a plain message
    lines: list[str]
    mark: str  # "" same, "changed", "added", "removed"


def blocks(t: TurnDiff, side: str) -> list[Block]:
    """The message blocks of side ``"A"`` or ``"B"`` of a turn: each message's role,
    kind and first lines, marked where it changed or stands alone."""
    if side == "A":
        messages, changed, lone = t.messages_a, t.changed_in_a(), "removed"
        pairs = {c.a: c for c in t.changes if c.a is not None}
    else:
        messages, changed, lone = t.messages_b, t.changed_in_b(), "added"
        pairs = {c.b: c for c in t.changes if c.b is not None}
    out: list[Block] = []
    for i, m in enumerate(messages[:MAX_SHOWN]):
        mark = ""
        if i in changed:
            mark = "changed" if pairs[i].op == "changed" else lone
        out.append(_block(m, mark))
    if len(messages) > MAX_SHOWN:
        more = len(messages) - MAX_SHOWN
        out.append(Block("", "", [f"… {plural(more, 'more message', 'more messages')}"], ""))
    return out


def _block(m: Message, mark: str) -> Block:
    return Block(
        text_lines(m.role, 1)[0][:40] or "?",
        "" if m.kind == "message" else kind_label(m.kind),
        text_lines(m.text),
        mark,
    )


def side_text(label: str, side: Side) -> str:
    """A column header: ``"A: origin  (store.db) — 12 messages, 4 turns"``."""
    where = f"  ({side.target})" if side.target else ""
    return f"{label}: {side.label}{where} — {plural(side.messages, 'message')}, {plural(side.turns, 'turn')}"


def summary_text(c: Comparison) -> str:
    """One line: how many turns differ, where the first difference is, tokens."""
    counts = c.counts
    if not c.turns:
        return "Both sides are empty."
    parts = []
    if counts["differs"]:
        n = counts["differs"]
        parts.append(f"{plural(n, 'turn')} {'differs' if n == 1 else 'differ'}")
    if counts["only_a"]:
        parts.append(f"{counts['only_a']} only in A")
    if counts["only_b"]:
        parts.append(f"{counts['only_b']} only in B")
    parts.append(f"{counts['same']} same")
    text = ", ".join(parts)
    first = c.first_difference
    text = "Identical: every turn is the same." if first is None else f"{text} — first difference: turn {first}."
    usage = c.usage_dict()
    if usage is not None:
        text += f"  Tokens A {_tokens(usage['a_total_tokens'])} · B {_tokens(usage['b_total_tokens'])}"
        if usage["delta_total_tokens"] is not None:
            text += f" ({usage['delta_total_tokens']:+,})"
    return text
