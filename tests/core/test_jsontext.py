"""JSON as a person edits it (fluxgui.core.jsontext): escapes that round-trip, strict
parsing with one-line errors, and the editor forms read without Qt."""

from __future__ import annotations

import json

import pytest

from fluxgui.core.jsontext import (
    FieldProblem,
    JsonProblem,
    display_id,
    escape_hidden,
    flux_spec,
    item_spec,
    item_text,
    json_text,
    metadata_text,
    parse_json,
)
from fluxgui.core.model import Message


def test_hidden_characters_are_escapes_that_parse_back() -> None:
    value = {"text": "rtl\u202eevil\u2028next\u00a0nbsp 😀 👩\u200d💻 \x1b[31m"}
    text = json_text(value)
    assert "\u202e" not in text and "\u2028" not in text and "\x1b" not in text
    assert "\\u202e" in text and "\\u2028" in text
    assert "👩\u200d💻" in text and "\u00a0" in text  # kept: visible, or emoji glue
    assert json.loads(text) == value
    assert escape_hidden("a\nb\u200bc", keep="\n") == "a\nb\\u200bc"
    assert escape_hidden("\U000e0041") == "\\udb40\\udc41"  # a tag: as a surrogate pair


def test_display_id_elides_between_characters() -> None:
    assert display_id("plain") == "“plain”"
    shown = display_id("\u202e" * 30 + "z" * 80)
    assert "\u202e" not in shown and len(shown) <= 52 and "…" in shown
    assert "\\u202" not in shown.split("…")[0][-5:]  # never cut inside an escape


def test_strict_parsing() -> None:
    assert parse_json('{"a": [1, 2]}') == {"a": [1, 2]}
    for bad, words in (("NaN", "NaN is not allowed"), ('{"a": 1, "a": 2}', "appears twice"),
                       ('{"a": }', "line 1, column 7")):
        with pytest.raises(JsonProblem) as info:
            parse_json(bad)
        assert words in str(info.value)
    with pytest.raises(JsonProblem) as info:
        parse_json('{\n"a": x}')
    assert info.value.line == 2


def test_the_editor_forms() -> None:
    assert flux_spec("user", "hi", "") == {"role": "user", "content": "hi", "metadata": None}
    assert flux_spec("user", "hi", '{"k": 1}')["metadata"] == {"k": 1}
    with pytest.raises(FieldProblem) as info:
        flux_spec("user", "hi", "[1]")
    assert info.value.field == "metadata" and "not a list" in str(info.value)
    with pytest.raises(FieldProblem) as info:
        flux_spec("user", "hi", "{\n,")
    assert str(info.value).startswith("Metadata: JSON error at line 2") and info.value.line == 2
    assert item_spec('{"role": "user"}') == {"role": "user"}
    for source, words in (("  ", "Enter the item"), ("[]", "not a list"), ("{", "JSON error")):
        with pytest.raises(FieldProblem) as info:
            item_spec(source)
        assert info.value.field == "item" and words in str(info.value)


def test_editor_texts_of_stored_messages() -> None:
    item = Message(1, "user", "message", "hi", raw={"role": "user", "content": "hi"})
    assert json.loads(item_text(item)) == item.raw
    broken = Message(2, "user", "other", "x", raw="{not json")
    assert item_text(broken) == "{not json"
    flux = Message(3, "user", "message", "hi", metadata={"a": 1})
    assert json.loads(metadata_text(flux)) == {"a": 1}
    assert metadata_text(None) == "" and metadata_text(Message(4, "user", "message", "x")) == ""
