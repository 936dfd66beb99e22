"""Valid JSON from stored values, in bounded memory.

Pure Python, no Qt. Used by the export writers (:mod:`fluxgui.core.export`).

**Not-a-number and infinities.** Python's ``json`` reads and writes ``NaN``,
``Infinity`` and ``-Infinity`` by default, and the libraries store items with those
defaults (an Agents SDK item ``{"score": NaN}`` is stored as such), but they are not
JSON: another reader refuses the whole file. Here each non-finite float becomes the
*string* ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (the spelling Python uses, so a
reader that wants the number back can call ``float()`` on it; ``null`` would lose which
one it was), and every replacement is counted so that the caller can say so.

**Big values.** :func:`is_big` tells, cheaply and with an early exit, whether a value
holds more than a threshold of text; :func:`iter_json` then writes it as pieces (a long
string in slices of :data:`SLICE` characters) instead of one
``json.dumps`` of the whole record, so a 200 MB message is never held twice as JSON.
Its output is exactly ``json.dumps(value, ensure_ascii=False)`` for finite values.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from json.encoder import encode_basestring
from typing import Any

#: pieces of at most this many characters (1 MB at most in memory) when a long text is
#: copied out (here, and by :mod:`.mdsafe`)
SLICE = 1 << 18

#: a record holding more characters than this is written in pieces
BIG = 4 << 20

_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


class Counter:
    """How many non-finite numbers were replaced (see the module docstring)."""

    def __init__(self) -> None:
        self.replaced = 0

    def non_finite(self, x: float) -> str:
        self.replaced += 1
        return "NaN" if x != x else _NON_FINITE[x]


def dumps(value: Any, counter: Counter, **kw: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kw)``, valid JSON: the fast path is one
    C-encoded dump; only when it meets a non-finite number is the value copied with such
    numbers replaced (and counted) and dumped again."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, **kw)
    except ValueError:
        return json.dumps(finite(value, counter), ensure_ascii=False, allow_nan=False, **kw)


def finite(value: Any, counter: Counter) -> Any:
    """``value`` with every non-finite float replaced by its name (counted)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else counter.non_finite(value)
    if isinstance(value, dict):
        return {k: finite(v, counter) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v, counter) for v in value]
    return value


def is_big(value: Any, limit: int = BIG) -> bool:
    """Whether the strings inside ``value`` (a JSON value: str, dict, list…) add up to
    more than ``limit`` characters. Stops as soon as they do; keys count as short."""
    t = type(value)
    if t is str:
        return len(value) > limit
    if t is not dict and t is not list:
        return False
    total, stack = 0, [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        v = pop()
        t = type(v)
        if t is str:
            total += len(v)
            if total > limit:
                return True
        elif t is dict:
            total += 16 * len(v)
            extend(v.values())
        elif t is list or t is tuple:
            total += 8 * len(v)
            extend(v)
    return total > limit


def iter_json(value: Any, counter: Counter) -> Iterator[str]:
    """``value`` as compact-separator JSON (``", "``, ``": "``, as ``json.dumps``) in
    pieces; non-finite numbers replaced and counted; long strings in slices."""
    if isinstance(value, str):
        if len(value) <= SLICE:
            yield encode_basestring(value)
        else:
            yield '"'
            for i in range(0, len(value), SLICE):
                yield encode_basestring(value[i : i + SLICE])[1:-1]
            yield '"'
    elif isinstance(value, dict):
        yield "{"
        first = True
        for k, v in value.items():
            if not first:
                yield ", "
            first = False
            key = k if isinstance(k, str) else json.dumps(k)
            yield encode_basestring(key) + ": "
            yield from iter_json(v, counter)
        yield "}"
    elif isinstance(value, (list, tuple)):
        yield "["
        for n, v in enumerate(value):
            if n:
                yield ", "
            yield from iter_json(v, counter)
        yield "]"
    elif isinstance(value, float) and not math.isfinite(value):
        yield encode_basestring(counter.non_finite(value))
    else:
        yield json.dumps(value, ensure_ascii=False)
