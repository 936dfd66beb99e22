"""What a detector is made of: :class:`Rule` (a pattern and how to read its match) and
:class:`Finding` (a span of text of one kind), and :func:`mask` (a finding shown without
its value).

A rule runs only on a text holding one of its ``triggers`` (a key's prefix: a substring
test costs next to nothing, a regular expression's search much more); its pattern
starts with a literal or a class of characters (what lets ``re`` skip ahead fast), what
must not stand before a match being checked by ``check``. ``check(match)`` reads the
match and gives the findings in it (none: a candidate that fails its checksum or its
context). A rule whose
pattern has a group ``v`` and no ``check`` reports only that group (the value after
``Bearer``, the password of a URL).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple


class Finding(NamedTuple):
    """``text[start:end]`` is a value of ``kind`` (``EMAIL``, ``OPENAI_KEY``, …)."""

    start: int
    end: int
    kind: str


#: a rule's reading of its match: the findings in it (positions in the whole text)
Check = Callable[["re.Match[str]"], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """One detector pattern: its ``kind`` (the placeholder's name), its ``group``
    (``secrets``, ``pii`` or ``custom``), its regular expression (no named groups but
    ``v``), and ``check`` (``None``: the match, or its group ``v``, is the finding)."""

    kind: str
    group: str
    pattern: str
    check: Check | None = None
    flags: int = 0
    #: the rule runs only on a text holding one of these (empty: always); ``lower``:
    #: looked for in the text in lower case
    triggers: tuple[str, ...] = ()
    lower: bool = False
    #: the rule runs only on a text holding a digit
    digits: bool = False
    #: rules of one family (``""``: none) share one search of all their triggers first
    #: (``sk-`` for ``sk-`` and ``sk-ant-``): a text holding none skips them all at once
    family: str = ""
    #: where every match starts, in the text's :func:`shape` (``"AA00"``: two capital
    #: letters, two digits): the pattern is tried only there, a string search finds
    #: (``""``: ``re`` searches the whole text)
    anchor: str = ""
    #: where the pattern is searched (``None``: the whole text): ``windows(text, shaped)``
    #: gives spans of the text, in order, apart, outside of which the pattern matches
    #: nothing and which no match crosses (``shaped``: the text's :func:`shape`)
    windows: Callable[[str, str], Iterable[tuple[int, int]]] | None = None


#: :func:`shape`'s classes: a digit is ``0``, a capital ``A``, a small letter, ``_`` and
#: ``/`` are ``a``; ``+ ( . -`` stay; a space and ``)`` are a space; any other character
#: (non-ASCII ones too) is ``!``. One character for one, so positions stay. (What a number
#: is glued to: ``0 A a + . -``; what a number is made of: ``0 + ( . -`` and spaces.)
_SHAPE_OF = {**{c: "0" for c in "0123456789"}, **{c: "A" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
             **{c: "a" for c in "abcdefghijklmnopqrstuvwxyz_/"}, "+": "+", "(": "(", ".": ".", "-": "-",
             " ": " ", ")": " "}
_SHAPES = bytes(ord(_SHAPE_OF.get(chr(c), "!")) for c in range(256))
_SHAPES_STR = {c: chr(_SHAPES[c]) for c in range(128)}
_SHAPES_TABLE = str.maketrans(_SHAPES_STR)


def shape(text: str) -> str:
    """``text`` with each character replaced by its class (see ``_SHAPES``), position for
    position: a pattern's first characters looked for as a string, which a string
    search finds many times faster than ``re`` finds a class of characters. (ASCII text
    is translated as it is; other text as its ASCII bytes, each other character one
    ``?``: a str's translation of it is slow.)"""
    if text.isascii():
        return text.translate(_SHAPES_TABLE)
    return text.encode("ascii", "replace").translate(_SHAPES).decode("ascii")


def starts_token(match: re.Match[str], before: str) -> bool:
    """Whether nothing of ``before`` (characters) stands just before ``match``."""
    at = match.start()
    return at == 0 or match.string[at - 1] not in before


def value_span(match: re.Match[str], name: str = "v") -> tuple[int, int]:
    """The span of group ``name`` of ``match``, else of the whole match."""
    try:
        span = match.span(name)
    except IndexError:
        return match.span()
    return span if span[0] >= 0 else match.span()


def mask(kind: str, value: str) -> str:
    """``value`` shown without itself: the start of a key and its last four characters
    (``sk-…a1f3``), an address's first letter and domain (``j…@example.com``), the last
    digits of a number (``…4242``); short values show one character."""
    value = value.strip()
    if kind == "EMAIL":
        local, _at, domain = value.rpartition("@")
        return f"{local[:1]}…@{domain}"
    if kind in ("PHONE", "CARD"):
        digits = re.sub(r"\D", "", value)
        return f"…{digits[-4:] if kind == 'CARD' else digits[-2:]}"
    if kind == "IBAN":
        compact = value.replace(" ", "")
        return f"{compact[:2]}…{compact[-2:]}"
    if kind == "PRIVATE_KEY":
        first = value.splitlines()[0] if value else ""
        return first[:40] + "…"
    if len(value) >= 16:
        head = 3 if not value[:3].isalnum() or "-" in value[:4] or "_" in value[:4] else 2
        return f"{value[:head]}…{value[-4:]}"
    return f"{value[:1]}…"
