"""Huge JSON items: every prefix of an item made whole is valid JSON holding the item's
start; a huge text parsed a slice at a time gives ``json.loads``'s value exactly
(escapes, surrogate pairs and backslash runs cut anywhere by the slices)."""

from __future__ import annotations

import json
import random

import pytest

from fluxgui.core import jsonhead
from fluxgui.core.jsonhead import close_prefix, loads_gently

ALPHABET = ["a", "b", '"', "\\", "\n", "é", "😀", "\u2028", "\x00", "/", "u", "\ud83d", " "]
ITEMS = [
    {"type": "function_call_output", "call_id": "c1", "output": 'line\n"two" é😀 \\ end \\u12' * 3,
     "n": [1, 2.5, {"a": True, "b": None}], "m": {}, "e": []},
    {"role": "user", "content": [{"type": "input_text", "text": "abc " * 20},
                                 {"type": "input_text", "text": "xyz"}]},
    "just a string \\\\", [1, 2, 3, [], {}], [[[[]]]], {"a": {"b": {"c": "d"}}},
]


@pytest.mark.parametrize("item", ITEMS)
@pytest.mark.parametrize("ascii_only", [True, False])
def test_every_prefix_closes_to_valid_json_holding_the_start(item: object, ascii_only: bool) -> None:
    text = json.dumps(item, ensure_ascii=ascii_only)
    assert json.loads(close_prefix(text)) == item  # the whole closes to itself
    for cut in range(len(text)):
        closed = close_prefix(text[:cut])
        if closed is not None:
            json.loads(closed)  # valid
    whole = json.dumps(ITEMS[0])
    for cut in range(whole.index('"output": "') + 12, whole.index('", "n"')):
        # the string being written when the prefix ends: its start, cut there
        output = json.loads(close_prefix(whole[:cut]))["output"]
        assert ITEMS[0]["output"].startswith(output) and len(output) >= (cut - whole.index('"output": "') - 12) // 6


def test_slices_give_json_loads_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonhead, "SLICE", 64)
    monkeypatch.setattr(jsonhead, "GENTLE_CHARS", 10)
    rng = random.Random(7)
    for _ in range(1500):
        s = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 400)))
        value = {"type": "x", "big": s, "list": [s[:70], 1.5, None, {"k" + s[:80]: s}], "n": 3}
        for ascii_only in (True, False):
            text = json.dumps(value, ensure_ascii=ascii_only)
            assert loads_gently(text) == json.loads(text), text[:200]
    plain = {"big": "z" * 300, "other": "w" * 200 + "\n"}  # one string without an escape, one with
    assert loads_gently(json.dumps(plain)) == plain
    # a raw control character is refused as json.loads refuses it, escape or none around it
    for bad in ('{"a": "' + "x" * 100, '{"a": "' + "x" * 100 + '\\q"}', '[' + '"' + "y" * 100 + '"',
                '{"a": "' + "x" * 100 + '\x01"}', '{"a": "' + "x" * 100 + '\x01\\n"}'):
        with pytest.raises(ValueError):
            loads_gently(bad)
