"""How the doctor's results read as text (shared by the command line and the window):
a message in one line, a ledger's numbers."""

from __future__ import annotations

import json
from typing import Any

from fluxgui.core.contentkey import item_of
from fluxgui.core.display import kind_label
from fluxgui.core.model import Message



def describe(m: Message, width: int = 100) -> str:
    """``#id role kind: text`` in one line (a new message shows ``new`` for its id); a row
    that is not an item shows its raw stored text."""
    ident = f"#{m.id}" if m.id >= 0 else "new"
    kind = "" if m.kind == "message" else f" {kind_label(m.kind)}"
    if m.role == "tool" and m.kind == "tool_output":
        kind = " output"
    text = m.raw if m.kind == "other" and isinstance(m.raw, str) else m.text
    if m.kind == "other" and not isinstance(m.raw, str) and m.raw is not None:
        text = json.dumps(m.raw, ensure_ascii=False)
    flat = " ".join(str(text or "").split())
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    return f"{ident} {m.role}{kind}: {flat}"


def describe_item(item: Any, width: int = 100) -> str:
    """An input item as preflight lists it: its type (or role) and its text."""
    from fluxgui.core.model import from_item

    m = from_item(0, item, None)
    label = item.get("type", m.role) if isinstance(item, dict) else "item"
    flat = " ".join((m.text or "").split())
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    return f"{label} {m.role}: {flat}" if label != m.role else f"{m.role}: {flat}"


def tokens_text(n: int) -> str:
    """``812``, ``12.4k``, ``1.2M`` tokens."""
    if n < 10_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def cost_text(cost: float | None) -> str:
    """``$0.0035``; ``—`` when unknown."""
    if cost is None:
        return "—"
    return f"${cost:.4f}" if cost < 1 else f"${cost:,.2f}"


def seconds_text(seconds: float | None) -> str:
    """``0 s``, ``12 s``, ``3 min 4 s``; ``—`` when unknown."""
    if seconds is None:
        return "—"
    s = int(round(seconds))
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60} s"


def bar(fraction: float, width: int = 20) -> str:
    """A bar of ``width`` cells, ``fraction`` of them full."""
    full = max(0, min(width, round(fraction * width)))
    return "█" * full + "·" * (width - full)


def kept(m: Message) -> bool:
    """Whether a message holds an item (for the preview's counts)."""
    return item_of(m) is not None


def markers(report: Any) -> dict[int, tuple[str, str]]:
    """A report's card markers: message id → ``(text, sentence)``, the text naming the
    first problem (``+N`` more), the sentence every problem's detail."""
    from .problems import LABELS

    out: dict[int, tuple[str, str]] = {}
    for mid, problems in report.by_message().items():
        text = LABELS.get(problems[0].code, problems[0].code)
        if len(problems) > 1:
            text += f" +{len(problems) - 1}"
        out[mid] = (text, "\n".join(p.detail for p in problems))
    return out
