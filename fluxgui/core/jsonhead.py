"""Huge JSON items: the start of one made whole, and one parsed without holding the
interpreter's lock for long.

:func:`close_prefix` takes a prefix of a JSON value and gives valid JSON: what a reader
shows of a huge item it read only the first characters of. The string being written
when the prefix ends is cut there (a half escape left out) and closed, a key without its
value and a trailing comma are left out, and the open objects and arrays are closed. A
number or literal cut short is left out too (its value is unknown).

:func:`loads_gently` is ``json.loads`` for a huge text whose size is in a few long
strings (a tool's output, a pasted file): ``json.loads`` holds the interpreter's lock
for the whole of it (300 ms for 50 MB), so a worker thread parsing it freezes the event
loop as surely as the loop itself would; here each long string is decoded a slice at a
time, and the lock changes hands between slices.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
#: the rest of a string once its opening quote is read: the contents and closing quote
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SCALAR = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
#: the end of a string's contents cut short: backslashes, then maybe an unfinished \u
_TAIL = re.compile(r"(\\+)(u[0-9a-fA-F]{0,3})?$")
#: ... or the first half of a surrogate pair
_PAIR_START = re.compile(r"(\\+)u[dD][89abAB][0-9a-fA-F]{2}$")


def close_prefix(prefix: str) -> str | None:
    """Valid JSON made of ``prefix`` (the start of a JSON value) and what closes it;
    ``None`` when nothing of a value is in it."""
    stack: list[str] = []  # the open containers: "{" or "["
    # ``expect`` says what may come next: a value, a key (after "{" or ","), ":" after a
    # key, or "," / a closing bracket after a value
    expect = "value"
    good: tuple[int, int] | None = None  # (end, depth) of the last point one can close at
    first_in = True  # nothing in the open container yet (so "]" / "}" may come)
    i, n = 0, len(prefix)
    while True:
        i = _SPACE.match(prefix, i).end()  # type: ignore[union-attr]
        if i >= n:
            break
        ch = prefix[i]
        if ch == '"':
            m = _STRING_REST.match(prefix, i + 1)
            if m is None:  # the string goes on past the end
                if expect != "value":
                    break  # a key cut short: close before it
                body = _whole_escapes(prefix[i + 1 :])
                return prefix[:i] + '"' + body + '"' + _closers(stack)
            i = m.end()
            if expect == "key":
                expect = ":"
                continue
            if expect != "value":
                return _close_at(prefix, good, stack)
        elif ch in "{[":
            if expect != "value":
                return _close_at(prefix, good, stack)
            stack.append(ch)
            i += 1
            expect = "key" if ch == "{" else "value"
            first_in = True
            good = (i, len(stack))
            continue
        elif ch in "}]":
            if not stack or stack[-1] != ("{" if ch == "}" else "[") or (
                expect in ("value", "key") and not first_in
            ) or expect == ":":
                return _close_at(prefix, good, stack)
            stack.pop()
            i += 1
        elif ch == ",":
            if expect != "after" or not stack:
                return _close_at(prefix, good, stack)
            i += 1
            expect = "key" if stack[-1] == "{" else "value"
            first_in = False
            continue
        elif ch == ":":
            if expect != ":":
                return _close_at(prefix, good, stack)
            i += 1
            expect = "value"
            first_in = False
            continue
        else:
            m = _SCALAR.match(prefix, i)
            if m is None or expect != "value" or m.end() >= n:
                break  # (a number or literal at the very end may be cut short)
            i = m.end()
        # a whole value just ended
        expect = "after"
        first_in = False
        good = (i, len(stack))
        if not stack:
            return prefix[:i]
    return _close_at(prefix, good, stack)


def _whole_escapes(body: str) -> str:
    """A string's contents cut short, without the escape the cut split (an odd run of
    backslashes ends in one that escapes what was cut off), nor the first half of a
    surrogate pair whose second half it cut off."""
    m = _TAIL.search(body)
    if m is not None and len(m.group(1)) % 2:
        body = body[: m.start()] + m.group(1)[:-1]
    m = _PAIR_START.search(body)
    if m is not None and len(m.group(1)) % 2:
        body = body[: m.end(1) - 1]
    return body


def _closers(stack: list[str]) -> str:
    return "".join("}" if c == "{" else "]" for c in reversed(stack))


def _close_at(prefix: str, good: tuple[int, int] | None, stack: list[str]) -> str | None:
    if good is None:
        return None
    end, depth = good
    # the containers open at that point are the first ``depth`` of the stack as it was
    # then; every container opened later was closed before it or is still open
    return prefix[:end] + _closers(_stack_at(prefix[:end], depth))


def _stack_at(text: str, depth: int) -> list[str]:
    """The open containers at the end of ``text`` (a good point: ``depth`` of them)."""
    stack: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            m = _STRING_REST.match(text, i + 1)
            i = m.end() if m else n
            continue
        if ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
        i += 1
    assert len(stack) == depth
    return stack


#: a JSON text longer than this (characters) is parsed by :func:`loads_gently`
GENTLE_CHARS = 1_000_000
#: characters decoded at once (~2 ms)
SLICE = 1 << 20
#: a text with more string delimiters than this is parsed whole (its size is structure)
_MAX_QUOTES = 20_000
#: what makes a string's JSON contents differ from the string: an escape, or a control
#: character ``json.loads`` refuses
_ESCAPED_OR_RAW = re.compile(r"[\\\x00-\x1f]")
_HIGH_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}$")


def loads_gently(text: str) -> Any:
    """``json.loads(text)``, each string longer than :data:`SLICE` decoded a slice at a
    time (see the module text); the same value, and a ``ValueError`` for what
    ``json.loads`` refuses."""
    if len(text) <= GENTLE_CHARS or _many_quotes(text):
        return json.loads(text)
    mark = f"\x00{uuid.uuid4().hex}:"
    parts: list[str] = []
    spans: list[tuple[int, int]] = []  # (start, end) of each long string's contents
    pos = i = 0
    while (q := text.find('"', i)) >= 0:
        end = _string_end(text, q)
        if end is None:
            return json.loads(text)  # (json says what is wrong)
        if end - q - 1 > SLICE:
            parts += [text[pos:q], json.dumps(f"{mark}{len(spans)}")]
            spans.append((q + 1, end))
            pos = end + 1
        i = end + 1
    if not spans:
        return json.loads(text)
    parts.append(text[pos:])
    skeleton = json.loads("".join(parts))
    values = {f"{mark}{k}": _decode(text, a, b) for k, (a, b) in enumerate(spans)}
    return _put_back(skeleton, values)


def _many_quotes(text: str) -> bool:
    """Whether ``text`` holds more than :data:`_MAX_QUOTES` quotes (counted a slice at a
    time: one count of 50 MB holds the lock 30 ms)."""
    seen = 0
    for start in range(0, len(text), SLICE):
        seen += text.count('"', start, start + SLICE)
        if seen > _MAX_QUOTES:
            return True
    return False


def _string_end(text: str, quote: int) -> int | None:
    """Where the string opened at ``quote`` closes (``None``: it does not)."""
    n, j = len(text), quote + 1
    while True:
        e = text.find('"', j, min(n, j + SLICE))  # (a bounded search: a short lock hold)
        if e < 0:
            if j + SLICE >= n:
                return None
            j += SLICE
            continue
        k = e
        while text[k - 1] == "\\" and k - 1 > quote:
            k -= 1
        if (e - k) % 2 == 0:  # an even run of backslashes: the quote is not escaped
            return e
        j = e + 1


def _decode(text: str, start: int, end: int) -> str:
    """The string whose JSON contents are ``text[start:end]``, a slice at a time, never
    cut inside an escape or between the halves of a surrogate pair.

    Contents without an escape or a control character are the string as it is (one copy
    of the slice); others grow one string a slice at a time, where a list of pieces and
    their join would hold the text twice (CPython appends in place to a string that only
    the loop's variable holds: on 3.11, in a ``for`` loop, not in a ``while`` loop — a
    50 MB text's decoding peaks at 51 MB, against 100 MB with a join; another interpreter
    only uses more memory)."""
    if not any(_ESCAPED_OR_RAW.search(text, a, min(end, a + SLICE)) for a in range(start, end, SLICE)):
        return text[start:end]
    out = ""
    for a, b in _slices(text, start, end):
        out += json.loads(f'"{text[a:b]}"')
    return out


def _slices(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The spans of ``text[start:end]`` that :func:`_decode` decodes one at a time: at most
    :data:`SLICE` long, never cut inside an escape or between a surrogate pair's halves."""
    while start < end:
        cut = min(end, start + SLICE)
        if cut < end:
            k = text.rfind("\\", max(start, cut - 12), cut)
            while k >= 0:
                run = k
                while run > start and text[run - 1] == "\\":
                    run -= 1
                if (k - run) % 2 == 0:  # text[k] begins an escape
                    if k + (6 if text[k + 1 : k + 2] == "u" else 2) > cut:
                        cut = k
                    break
                k = text.rfind("\\", max(start, cut - 12), k)
            if _HIGH_SURROGATE.search(text, start, cut) and cut - 6 > start:
                run = cut - 6
                while run > start and text[run - 1] == "\\":
                    run -= 1
                if (cut - 6 - run) % 2 == 0:
                    cut -= 6
        yield start, cut
        start = cut


def _put_back(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        return values.get(value, value)
    if isinstance(value, list):
        return [_put_back(v, values) for v in value]
    if isinstance(value, dict):
        return {values.get(k, k): _put_back(v, values) for k, v in value.items()}
    return value
