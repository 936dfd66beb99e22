"""Where Qt's Markdown reader differs from GitHub's, and what makes it read as GitHub does
(issue 37): ``_x_`` and ``__x__`` are underline to Qt but emphasis and strong emphasis to
GitHub (CommonMark), so they are rewritten to ``*x*`` and ``**x**`` first (never inside
code, never within a word: ``snake_case_name`` stays); and Qt gives separate fenced code
blocks no boundary between them, so :func:`fence_lines` tells where each one ends."""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1", re.DOTALL)
_STRONG = re.compile(r"(?<![\w\\_])__(?=[^\s_])(.+?)(?<=[^\s_\\])__(?![\w_])", re.DOTALL)
_EMPHASIS = re.compile(r"(?<![\w\\_])_(?=[^\s_])(.+?)(?<=[^\s_\\])_(?![\w_])", re.DOTALL)


def _split_fences(text: str) -> list[tuple[bool, list[str]]]:
    """The lines of ``text`` in runs: ``(True, lines)`` for a fenced code block's body,
    ``(False, lines)`` for the Markdown around them (fence lines included there)."""
    runs: list[tuple[bool, list[str]]] = [(False, [])]
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is None:
            runs[-1][1].append(line)
            if match:
                fence = match.group(1)
                runs.append((True, []))
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                and not line.strip()[len(match.group(1)):].strip():
            fence = None
            runs.append((False, [line]))
        else:
            runs[-1][1].append(line)
    return runs


def fence_lines(text: str) -> list[int]:
    """How many lines each fenced code block of ``text`` holds, in order (an empty block
    counts one: Qt makes it one empty line)."""
    return [max(1, len(lines)) for code, lines in _split_fences(text) if code]


def _emphasis(prose: str) -> str:
    out, at = [], 0
    for span in _CODE_SPAN.finditer(prose):  # code spans stay as written
        out.append(_EMPHASIS.sub(r"*\1*", _STRONG.sub(r"**\1**", prose[at:span.start()])))
        out.append(span.group(0))
        at = span.end()
    out.append(_EMPHASIS.sub(r"*\1*", _STRONG.sub(r"**\1**", prose[at:])))
    return "".join(out)


def github_emphasis(text: str) -> str:
    """``text`` with ``_x_``/``__x__`` emphasis written with asterisks, outside code."""
    if "_" not in text:
        return text
    return "\n".join(
        "\n".join(lines) if code else _emphasis("\n".join(lines)) for code, lines in _split_fences(text)
    )
