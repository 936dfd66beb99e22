"""Hidden characters made visible: what a reviewer must see and a terminal must not obey.

Stored text may hold characters that display as nothing, or that change how the text
around them displays: control characters (NUL, ESC, BEL… — an ESC sequence printed raw
can recolour, retitle or rewrite a terminal), bidirectional controls (a right-to-left
override makes "evil" display as "live"), zero-width characters, the line and paragraph
separators U+2028/U+2029 (a line break no reader sees in the stored text), invisible "tag"
characters (used to smuggle instructions to a model in text a person cannot see) and lone
surrogates (not text at all). :func:`visible` replaces each with a marker a person can
read:

* C0 controls and DEL as their Unicode control pictures (``␀``, ``␛``, ``␇``, ``␡``;
  tab and newline kept unless asked otherwise) — or, with ``pictures=False``, as their
  names in angle brackets (``⟨NUL⟩``, ``⟨ESC⟩``: the window's fonts often have no glyph
  for the control pictures, and a box would hide which control it is);
* everything else as its code point in angle brackets: ``⟨U+202E⟩``.

A zero-width joiner between two pictographs (the glue of emoji like 👩‍💻) is text, not a
hidden character, and is kept.

The raw value is never changed where it is data (JSON output, exports that round-trip,
the inspector's tree): only what is displayed goes through here.
"""

from __future__ import annotations

import re

#: bidirectional formatting characters (embeddings, overrides, isolates, marks)
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: characters that take no room and show nothing
ZERO_WIDTH = frozenset(
    "\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063"
    "\u2064\u3164\ufeff\uffa0"
)
_ZWJ = "\u200d"
#: the Unicode line and paragraph separators: they break a line where a reader sees no
#: line break in the stored text (and JSON tools pass them through): marked like the rest
LINE_BREAKS = frozenset("\u2028\u2029")

#: every hidden character (less the closing bracket: tab and newline join it for one-line
#: text). Its compiled form costs milliseconds to make (a character class over the whole
#: Basic Multilingual Plane): it is compiled when text beyond ASCII first needs it.
_HIDDEN_CLASS = (
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"
    + "".join(sorted(BIDI | ZERO_WIDTH | LINE_BREAKS))
    + "\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f"
)
#: the hidden characters ASCII text can hold (C0 controls, DEL): quick to compile
_ASCII_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_ASCII_HIDDEN_WITH_LAYOUT = re.compile("[\x00-\x1f\x7f]")
#: ... and the ones Latin-1 text can hold (C1 controls, the soft hyphen too)
_LATIN1_CLASS = "[\x00-\x08\x0b-\x1f\x7f-\x9f" + "".join(
    sorted(ch for ch in BIDI | ZERO_WIDTH if ord(ch) < 0x100)
)
_LATIN1_HIDDEN = re.compile(_LATIN1_CLASS + "]")
_LATIN1_HIDDEN_WITH_LAYOUT = re.compile(_LATIN1_CLASS + "\t\n]")
#: keep_layout → the compiled pattern of every hidden character, once made
_HIDDEN: dict[bool, re.Pattern[str]] = {}


def _hidden(keep_layout: bool) -> re.Pattern[str]:
    """The pattern of every hidden character (``keep_layout``: not tab and newline)."""
    pattern = _HIDDEN.get(keep_layout)
    if pattern is None:
        pattern = _HIDDEN[keep_layout] = re.compile(_HIDDEN_CLASS + ("]" if keep_layout else "\t\n]"))
    return pattern


def _not_ascii(text: str, keep_layout: bool) -> re.Pattern[str]:
    """The pattern for text beyond ASCII: until the full one is compiled, Latin-1 text is
    checked with its own small one (telling costs a copy; none once the full one exists)."""
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return _hidden(keep_layout)
    return _LATIN1_HIDDEN if keep_layout else _LATIN1_HIDDEN_WITH_LAYOUT


def _is_pictograph(ch: str) -> bool:
    import unicodedata  # (only for a zero-width joiner)

    return unicodedata.category(ch) in ("So", "Sk") or ch in "\ufe0f\u20e3" or (
        "\U0001f3fb" <= ch <= "\U0001f3ff"
    )


#: the C0 controls' abbreviations (and DEL's), for ``pictures=False``
C0_NAMES = (
    "NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI DLE DC1 DC2 DC3 DC4 NAK SYN "
    "ETB CAN EM SUB ESC FS GS RS US"
).split()


def marker(ch: str, *, pictures: bool = True) -> str:
    """The visible form of one hidden character."""
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code) if pictures else f"⟨{C0_NAMES[code]}⟩"
    if code == 0x7F:
        return "\u2421" if pictures else "⟨DEL⟩"
    return f"⟨U+{code:04X}⟩"


def visible(text: str, *, keep_layout: bool = True, pictures: bool = True) -> str:
    """``text`` with every hidden character replaced by its :func:`marker`.

    ``keep_layout`` keeps tabs and newlines (a message body); without it they are marked
    too (an id, a one-line field). ``pictures``: C0 controls as control pictures (``␀``),
    else as their names (``⟨NUL⟩``).
    """
    if text.isascii():  # (a flag of the string: no scan)
        pattern = _ASCII_HIDDEN if keep_layout else _ASCII_HIDDEN_WITH_LAYOUT
    else:
        pattern = _HIDDEN.get(keep_layout) or _not_ascii(text, keep_layout)
    if not pattern.search(text):
        return text

    def replace(match: re.Match[str]) -> str:
        ch = match.group(0)
        if ch == _ZWJ:
            at = match.start()
            before = text[at - 1] if at > 0 else ""
            after = text[at + 1] if at + 1 < len(text) else ""
            if before and after and _is_pictograph(before) and _is_pictograph(after):
                return ch
        return marker(ch, pictures=pictures)

    return pattern.sub(replace, text)


def hidden_characters(text: str) -> list[str]:
    """The distinct bidi controls, zero-width and tag characters in ``text`` (what a card's
    warning badge lists), in order of first appearance, as ``U+XXXX NAME``."""
    found: dict[str, None] = {}
    for match in _hidden(True).finditer(text):
        ch = match.group(0)
        if ch in BIDI or ch in ZERO_WIDTH or ch in LINE_BREAKS or "\U000e0000" <= ch <= "\U000e007f":
            if ch == _ZWJ and visible(text[max(match.start() - 1, 0) : match.end() + 1]).find(
                "⟨"
            ) == -1:
                continue
            found.setdefault(ch, None)
    import unicodedata

    return [f"U+{ord(ch):04X} {unicodedata.name(ch, 'UNNAMED')}" for ch in found]
