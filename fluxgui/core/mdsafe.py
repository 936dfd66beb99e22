"""Stored text as Markdown that a renderer shows safely: nothing runs, nothing loads.

Pure Python, no Qt. Used by the Markdown export (:mod:`fluxgui.core.export`); every
function returns (or yields) Markdown text meant for a CommonMark renderer, GFM included.

**Text "as typed"** (user, system, developer and tool text: :func:`literal_block`) goes
in a fenced code block whose fence is longer than any backtick run inside the text. A
CommonMark renderer shows a code block's content exactly, character for character:
every line break, every leading space and tab, ``2*3*4``, ``__init__``, ``# 1``,
``<script>``, ``[x](javascript:…)``, ``&amp;`` — nothing inside is parsed, and no
extension (tables, math, emoji, linkify, typographer) applies inside code. Backslash
escaping would render in a proportional font and wrap long lines, but it depends on
every punctuation rule of every flavour and extension being anticipated, replaces
leading indentation with U+00A0 and fills the .md file with backslashes; a fence is
provably literal and keeps the .md readable and greppable as typed. The cost: such text
shows in a monospace block (long lines may scroll rather than wrap).

**Assistant text** (:func:`markdown`) stays Markdown, with three changes:

* every single line break is kept, as a hard break (two spaces before it);
* raw HTML cannot appear: each ``<`` outside code is written ``\\<`` (so HTML tags,
  comments, ``<details>``, ``<script>`` and autolinks show as text), and code keeps
  its ``<`` literal;
* no image is ever an image (``![`` becomes ``\\![``, so ``![alt](x)`` is at most a
  link to ``x``), and a link is active only with a plain ``http://``, ``https://`` or
  ``mailto:`` target: any other inline link ``[x](javascript:…)`` (``data:``,
  ``file:``, ``vbscript:``, relative, ``<…>``) or reference definition
  ``[x]: javascript:…`` gets its ``]`` escaped and shows as text. A reference link can
  then only use a definition with a safe target.

What counts as code is decided conservatively, so that a mistake can only over-escape
(show a stray backslash inside code) and never leave live HTML or a link outside it:

* a fence is protected (copied verbatim) when its opening line is indented 0–3 spaces
  with no container marker before it; its content ends at a closing fence indented
  0–3 spaces. When a fence line appears after a list marker or ``>``, or indented 4+,
  or a content line of an indented fence is indented less than its opener (a list
  item may have ended there), nothing later in that text is treated as a protected
  fence — its ``<`` show as ``\\<`` even inside such code;
* a code span is protected only when it opens and closes on the same line, the line
  has no ``|`` (a GFM table row splits cells before it looks for code), it holds no
  reference-definition ``]:`` to escape, and no earlier backtick run since the last
  blank line was left unmatched (the renderer may still be inside a code span that
  began on an earlier line); otherwise its backticks are plain text and its content is
  escaped like any text;
* indented (4-space) code blocks are not recognised: their ``<`` show as ``\\<``.

An unclosed protected fence is closed at the end of the text, so one message cannot
turn the rest of the transcript into code.

Bare-URL autolinking (GFM's extension, markdown-it's ``linkify``) is not CommonMark and
is left alone in message text: it links ``www.``/``http(s)://``/e-mail text, and in some
renderers ``ftp://`` or ``//host`` text. :func:`inline_text` (ids, roles, titles)
escapes ``/`` and ``:`` too, so it links nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .jsonsafe import SLICE

_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>!&~|#$^={}:/])")
_SAFE_TARGET = re.compile(r"(?:https?://|mailto:)", re.IGNORECASE)
_SPECIAL = re.compile(r"[\\`<!\]\n]")
_TICK_RUN = re.compile(r"`+")
_FENCE_OPEN = re.compile(r"( {0,3})(`{3,}|~{3,})([^\n]*)")
_FENCE_CLOSE = re.compile(r"([ \t]*)(`{3,}|~{3,})[ \t]*$")
#: a fence-like line after a container marker or indentation (a fence we do not track)
_OTHER_FENCE = re.compile(r"[ \t>*+\-0-9.)]*(?:`{3,}|~{3,})")
_DEF_PREFIX = re.compile(r"[ \t>*+\-.)0-9]*")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_TAIL_ESCAPE = re.compile(r"\\[!-/:-@\[-`{-~]|[`<\[\]!]")
_HARD_BREAK = re.compile(r"(?<=[^\n])(?<!  )\n(?=[ \t]*[^ \t\n])")
_NEEDS_SCAN = re.compile(r"[\\`<]|!\[|\][(:]|~~~")
_BLANK = re.compile(r"[ \t]*")
_MARK = re.compile(r"```|~~~")
#: link destination characters up to a parenthesis, a space, a control character
_DEST_RUN = re.compile(r"(?:[^\x00-\x20\x7f()\\]|\\[!-/:-@\[-`{-~]?)*")
_BLANK_AHEAD = re.compile(r"[ \t]*(?:\n|\Z)")


def slices(text: str, start: int = 0, end: int | None = None, size: int = SLICE) -> Iterator[str]:
    """``text[start:end]`` in pieces of at most ``size`` characters."""
    end = len(text) if end is None else end
    if start == 0 and end == len(text) and end <= size:
        yield text
        return
    for i in range(start, end, size):
        yield text[i : min(i + size, end)]


def inline_text(text: str) -> str:
    """``text`` as literal inline Markdown on one line (headings, bold roles, titles):
    whitespace runs become one space and every character that means something inline
    (``/`` and ``:`` included, against autolinking) is backslash-escaped."""
    return _INLINE_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def fence_for(text: str, char: str = "`") -> str:
    """A code fence longer than any run of ``char`` inside ``text`` (at least 3)."""
    fence = char * 3
    while fence in text:
        fence += char
    return fence


def fence_for_pieces(pieces: Iterable[str]) -> str:
    """:func:`fence_for` of the text the ``pieces`` make up (runs may cross pieces)."""
    longest = carry = 0
    for piece in pieces:
        rest = piece.lstrip("`")
        lead = len(piece) - len(rest)
        if not rest:  # all backticks: the run goes on
            carry += lead
            longest = max(longest, carry)
            continue
        longest = max(longest, carry + lead)
        run = "`" * (longest + 1)
        while run in rest:
            run += "`"
        longest = len(run) - 1
        carry = len(rest) - len(rest.rstrip("`"))
    return "`" * max(3, longest + 1)


def literal_block(text: str, lang: str = "text") -> Iterator[str]:
    """``text`` exactly as stored, in a fenced code block (see the module docstring)."""
    fence = fence_for(text)
    yield f"{fence}{lang}\n"
    yield from slices(text)
    yield f"\n{fence}\n"


def quote(pieces: Iterable[str]) -> Iterator[str]:
    """Markdown ``pieces`` as a block quote (every line prefixed with ``> ``)."""
    yield "> "
    for piece in pieces:
        yield piece.replace("\n", "\n> ")
    yield "\n"


def _newlines(text: str) -> str:
    """CommonMark line endings (CR LF, CR, LF) as LF, so that lines are what we see."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def markdown(text: str) -> Iterator[str]:
    """Assistant Markdown made safe to render (see the module docstring), in pieces."""
    text = _newlines(text)
    end = len(text)
    while end and text[end - 1] == "\n":  # (not rstrip: no copy of a big text)
        end -= 1
    if end <= SLICE and not _NEEDS_SCAN.search(text, 0, end):
        # no code, no HTML, no link or image: only the hard breaks to add
        text = text[:end]
        yield _HARD_BREAK.sub("  \n", text) if "\n" in text else text
        return
    yield from _Sanitiser(text, end).run()


def _indent(text: str, start: int, end: int) -> int:
    """Columns of leading whitespace of the line ``text[start:end]`` (tab stops of 4)."""
    col = 0
    for i in range(start, end):
        c = text[i]
        if c == " ":
            col += 1
        elif c == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def _escaped(text: str, i: int, lo: int) -> bool:
    """Whether ``text[i]`` is preceded by an odd number of backslashes (from ``lo``)."""
    n = 0
    while i - n - 1 >= lo and text[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


class _Sanitiser:
    """One assistant text: block pass (fences) over line positions, inline pass over the
    lines between fences. Yields pieces: slices of the text and the escapes between."""

    def __init__(self, text: str, end: int) -> None:
        self.text = text
        self.end = end  # the text is text[:end]
        self.ambiguous = False  # a fence we cannot track was seen: protect no more fences
        # the inline pass's output so far: pieces, their size, the text consumed up to
        self._out: list[str] = []
        self._size = 0
        self._last = 0

    def run(self) -> Iterator[str]:
        text, n = self.text, self.end
        if text.find("```", 0, n) < 0 and text.find("~~~", 0, n) < 0:  # no fence: one region
            yield from self._inline(0, n)
            return
        pos, region = 0, 0
        fence: tuple[str, int, int] | None = None  # (char run, length, indent) when inside
        while pos <= n:
            if fence is None or fence[2] == 0:
                # only lines with ``` or ~~~ can change anything here: go to the next one
                mark = _MARK.search(text, pos, n)
                if mark is None or fence is None and self.ambiguous:
                    break
                pos = max(pos, text.rfind("\n", 0, mark.start()) + 1)
            end = text.find("\n", pos, n)
            end = n if end < 0 else end
            if fence is not None:
                closer = _FENCE_CLOSE.match(text, pos, end)
                blank = _BLANK.fullmatch(text, pos, end) is not None
                indent = _indent(text, pos, end)
                if not blank and indent < fence[2] or closer and indent > 3:
                    # a list item's fence may have ended: from here on, nothing is protected
                    self.ambiguous = True
                    yield from slices(text, region, pos)
                    fence, region = None, pos
                    continue
                if closer and closer.group(2)[0] == fence[0] and len(closer.group(2)) >= fence[1]:
                    yield from slices(text, region, min(end + 1, n))
                    fence, region = None, end + 1
            elif not self.ambiguous and (m := _FENCE_OPEN.match(text, pos, end)) and not (
                m.group(2)[0] == "`" and "`" in m.group(3) or "|" in m.group(3)
            ):  # (with a "|", markdown-it reads the line as a table header if it can)
                yield from self._inline(region, pos)
                fence, region = (m.group(2)[0], len(m.group(2)), len(m.group(1))), pos
            elif not self.ambiguous and _OTHER_FENCE.match(text, pos, end):
                self.ambiguous = True
            pos = end + 1
        if fence is not None:
            yield from slices(text, region, n)
            yield "\n" + fence[0] * fence[1]
        else:
            yield from self._inline(region, n)

    # ----------------------------------------------------------------- inline pass

    def _definition_breaks(self, a: int, b: int) -> set[int]:
        """Positions of ``]`` that end a possible reference definition ``[label]: dest``
        whose destination is not safe. Definitions are found before inline parsing, so
        code spans do not hide them: this looks at every ``]:``."""
        text, out = self.text, set()
        j = text.find("]:", a, b)
        while j >= 0:
            if not _escaped(text, j, a) and self._opens_definition(j, a) and not self._safe_target(j + 2, b):
                out.add(j)
            j = text.find("]:", j + 1, b)
        return out

    def _opens_definition(self, j: int, a: int) -> bool:
        """Whether the ``]`` at ``j`` may close a definition label: the last unescaped
        bracket before it (within 1000 characters, no blank line between) is a ``[`` at
        the start of a line, after container markers only."""
        text = self.text
        lo = max(a, j - 1000)
        for blank in _BLANK_LINE.finditer(text, lo, j):
            lo = blank.end() - 1
        k = j
        while True:  # the last unescaped bracket before j
            k = max(text.rfind("[", lo, k), text.rfind("]", lo, k))
            if k < lo:
                return False
            if not _escaped(text, k, lo):
                break
        if text[k] != "[":
            return False
        line_start = text.rfind("\n", a, k) + 1 or a
        return _DEF_PREFIX.fullmatch(text, line_start, k) is not None

    def _safe_target(self, p: int, b: int) -> bool:
        """Whether the link destination starting at ``p`` (after optional spaces and one
        line ending) is a plain http(s) or mailto target."""
        q = self._skip_space(p, b)
        return q is not None and _SAFE_TARGET.match(self.text, q, b) is not None

    def _skip_space(self, p: int, b: int) -> int | None:
        """``p`` past spaces/tabs and at most one line ending (``None``: a blank line)."""
        text = self.text
        while p < b and text[p] in " \t":
            p += 1
        if p < b and text[p] == "\n":
            p += 1
            while p < b and text[p] in " \t":
                p += 1
            if p < b and text[p] == "\n":
                return None
        return p

    def _link_tail(self, p: int, b: int) -> int | None:
        """The end (after ``)``) of an inline link's ``(destination "title")`` whose
        ``(`` is just before ``p``, as CommonMark parses it; ``None`` when it is not one."""
        text = self.text
        q = self._skip_space(p, b)
        if q is None:
            return None
        depth, start = 0, q
        while True:
            run = _DEST_RUN.match(text, q, b)  # up to a parenthesis, a space or the end
            q = run.end() if run is not None else q
            c = text[q] if q < b else ""
            if c == "(":
                depth += 1
                if depth > 32:
                    return None
            elif c == ")" and depth:
                depth -= 1
            else:
                break
            q += 1
        if q == start or depth:
            return None
        r = self._skip_space(q, b)
        if r is None:
            return None
        if r < b and r > q and text[r] in "\"'(":
            close = ")" if text[r] == "(" else text[r]
            t = r + 1
            while t < b and text[t] != close:
                if text[t] == "\\" and t + 1 < b and text[t + 1] in _ASCII_PUNCT:
                    t += 1
                elif text[t] == "(" and close == ")":
                    return None
                elif text.startswith("\n", t) and _BLANK_LINE.match(text, t):
                    return None
                t += 1
            if t >= b:
                return None
            r = self._skip_space(t + 1, b)
            if r is None:
                return None
        return r + 1 if r < b and text[r] == ")" else None

    def _insert(self, j: int, s: str) -> None:
        """Output up to ``j`` and then ``s`` (the text from ``j`` on follows later)."""
        piece = self.text[self._last : j]
        self._out.append(piece)
        self._out.append(s)
        self._size += len(piece) + len(s)
        self._last = j

    def _inline(self, a: int, b: int) -> Iterator[str]:
        """Inline-escape ``text[a:b]``: whole lines outside protected fences."""
        text = self.text
        if a >= b:
            return
        breaks = self._definition_breaks(a, b)
        tainted = False  # an unmatched backtick run since the last blank line
        line_start = i = self._last = a
        self._out, self._size = [], 0
        search, insert = _SPECIAL.search, self._insert
        while True:
            if self._size >= SLICE or len(self._out) >= 4096:  # (small strings cost ~50 B each)
                yield "".join(self._out)
                self._out, self._size = [], 0
            m = search(text, i, b)
            if m is None:
                break
            j = m.start()
            if j - self._last > SLICE:  # a long stretch without escapes: pass it on in slices
                yield "".join(self._out)
                self._out, self._size = [], 0
                yield from slices(text, self._last, j)
                self._last = j
            c = text[j]
            if c == "\n":
                i = j + 1
                if _BLANK_AHEAD.match(text, i, b):
                    tainted = False  # a blank line ends any paragraph (and code span)
                elif not tainted and j > line_start:
                    # a hard break, unless the line has one or is blank (and not while a
                    # code span may run on from an earlier line: no spaces inside it)
                    last_char = text[j - 1]
                    if last_char not in " \t\\" or not (
                        _BLANK.fullmatch(text, line_start, j) or self._hard_break_at(line_start, j)
                    ):
                        insert(j, "  ")
                line_start = i
            elif c == "<":
                insert(j, "\\")
                i = j + 1
            elif c == "\\":
                i = j + 2 if j + 1 < b and text[j + 1] in _ASCII_PUNCT else j + 1
            elif c == "!":
                if text.startswith("[", j + 1):
                    insert(j, "\\")
                i = j + 1
            elif c == "]":
                i = j + 1
                if j in breaks:
                    insert(j, "\\")
                elif text.startswith("(", j + 1):
                    if not self._safe_target(j + 2, b):
                        insert(j, "\\")
                    elif (end := self._link_tail(j + 2, b)) is not None:
                        # a safe link: its destination and title are not scanned for code
                        # spans by the renderer, so make sure nothing in them can start one
                        insert(j + 2, _TAIL_ESCAPE.sub(_escape_tail, text[j + 2 : end]))
                        self._last = i = end
                    else:
                        tainted = True
            else:  # a backtick run
                k = j
                while k < b and text[k] == "`":
                    k += 1
                close = None if tainted else self._span_end(j, k, b, breaks)
                if close is None:
                    tainted = True
                    i = k
                else:
                    i = close
        yield "".join(self._out)
        yield from slices(text, self._last, b)

    def _span_end(self, j: int, k: int, b: int, breaks: set[int]) -> int | None:
        """End of a protected code span opened by the backtick run ``text[j:k]``:
        closed on the same line by a run of the same length, on a line without ``|``,
        with no definition ``]`` to escape inside. ``None``: not protected."""
        text = self.text
        line_end = text.find("\n", k, b)
        line_end = b if line_end < 0 else line_end
        n = k - j
        for run in _TICK_RUN.finditer(text, k, line_end):
            if run.end() - run.start() == n:
                line_start = text.rfind("\n", 0, j) + 1
                if text.find("|", line_start, line_end) >= 0:
                    return None
                if any(j < x < run.end() for x in breaks):
                    return None
                return run.end()
        return None

    def _hard_break_at(self, line_start: int, j: int) -> bool:
        """Whether the line ending at ``j`` already ends in a hard break."""
        text = self.text
        if text.endswith("  ", line_start, j):
            return True
        n = 0
        while j - n - 1 >= line_start and text[j - n - 1] == "\\":
            n += 1
        return n % 2 == 1


def _escape_tail(m: re.Match[str]) -> str:
    s = m.group()
    return s if len(s) == 2 else "\\" + s
