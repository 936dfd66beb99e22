"""Matching a replayed call to a recorded one (issue 38): JSON-equal arguments in
``strict`` mode, the first unused call of the name in ``name`` mode; a call answered
once is not answered again from the same record."""

from __future__ import annotations

import pytest

from fluxgui.services.replay.record import RecordedCall
from fluxgui.services.replay.tools import TurnMatcher, Unmatched, json_equal


def test_json_equality():
    assert json_equal({"a": 1, "b": [1, 2.0]}, {"b": [1.0, 2], "a": 1.0})
    assert not json_equal({"a": True}, {"a": 1})
    assert not json_equal([1, 2], [2, 1])
    assert not json_equal({"a": 1}, {"a": 1, "b": None})
    assert not json_equal("1", 1)


def _matcher(mode: str = "strict", unmatched: str | None = None) -> TurnMatcher:
    m = TurnMatcher(mode, unmatched)
    m.start(3, [
        RecordedCall("c1", "search", '{"q": "a", "limit": 5}', "A"),
        RecordedCall("c2", "search", '{"q": "b"}', "B"),
        RecordedCall("c3", "orphan", "{}", None),
    ])
    return m


def test_strict_answers_equal_arguments_once():
    m = _matcher()
    assert m.answer("x", "search", '{"limit": 5.0, "q": "a"}') == "A"
    assert m.answer("y", "search", '{"q":"b"}') == "B"
    with pytest.raises(Unmatched) as stop:
        m.answer("z", "search", '{"q": "b"}')
    assert stop.value.stop.reason == "every recorded call of 'search' in turn 3 was already answered"
    assert [c["used"] for c in stop.value.stop.nearest[:2]] == [True, True]
    with pytest.raises(Unmatched) as stop:
        m.answer("w", "orphan", "{}")
    assert "have no recorded output" in stop.value.stop.reason
    assert (m.matched, m.unmatched) == (2, 0)


def test_name_mode_takes_the_first_unused_call_of_the_name():
    m = _matcher("name")
    assert m.answer("x", "search", '{"q": "zzz"}') == "A"
    assert m.answer("y", "search", "not json") == "B"
    with pytest.raises(Unmatched):
        m.answer("z", "search", "{}")


def test_a_fixed_text_answers_what_the_record_cannot():
    m = _matcher(unmatched="(none)")
    assert m.answer("x", "delete", "{}") == "(none)"
    assert m.answer("y", "search", '{"q": "a", "limit": 5}') == "A"
    assert (m.matched, m.unmatched) == (1, 1)
    assert m.answered == [("x", "delete", "(none)"), ("y", "search", "A")]
