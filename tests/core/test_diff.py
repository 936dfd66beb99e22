"""Turn-by-turn comparison (pure Python)."""

from __future__ import annotations

import json

from fluxgui.core.diff import (
    MessageChange,
    compare_messages,
    compare_turns,
    diff_messages,
    normalise_usage,
    same_message,
)
from fluxgui.core.model import Message
from fluxgui.core.turns import group_turns


def msg(i: int, role: str, text: str, kind: str = "message", raw: object = None, **kw: object) -> Message:
    return Message(id=i, role=role, kind=kind, text=text, raw=raw, **kw)  # type: ignore[arg-type]


def convo(*pairs: tuple[str, str], start: int = 1) -> list[Message]:
    return [msg(start + i, role, text) for i, (role, text) in enumerate(pairs)]


BASE = [
    ("system", "Be brief."),
    ("user", "q1"),
    ("assistant", "a1"),
    ("user", "q2"),
    ("assistant", "a2"),
    ("user", "q3"),
    ("assistant", "a3"),
]


def test_identical_sessions_ignore_ids_times_and_item_ids() -> None:
    a = convo(*BASE)
    b = [
        Message(m.id + 100, m.role, m.kind, m.text, created_at="2024-01-01T00:00:00+00:00")
        for m in a
    ]
    c = compare_messages(a, b, session_a="x", session_b="y")
    assert c.identical and c.first_difference is None
    assert [t.number for t in c.turns] == [0, 1, 2, 3]
    assert c.counts == {"same": 4, "differs": 0, "only_a": 0, "only_b": 0}
    # an Agents SDK item's own "id" is not content; the rest of the item is
    one = msg(1, "assistant", "hi", raw={"id": "msg_1", "type": "message", "role": "assistant"})
    two = msg(2, "assistant", "hi", raw={"id": "msg_2", "type": "message", "role": "assistant"})
    assert same_message(one, two)
    three = msg(3, "assistant", "hi", raw={"id": "msg_2", "type": "message", "status": "x"})
    assert not same_message(one, three)
    # flux metadata is stored content too
    assert not same_message(msg(1, "user", "t", metadata={"a": 1}), msg(1, "user", "t"))
    # a flux row against an Agents SDK item: only role, kind and text can be compared
    item = msg(1, "user", "t", raw={"role": "user", "content": "t"})
    assert same_message(msg(1, "user", "t", metadata={"a": 1}), item)
    assert not same_message(msg(1, "user", "u"), item)


def test_one_changed_answer_and_an_extra_turn_on_b() -> None:
    a = convo(*BASE)
    pairs = list(BASE)
    pairs[4] = ("assistant", "a2 but different")
    b = convo(*pairs, ("user", "q4"), ("assistant", "a4"))
    c = compare_messages(a, b, session_a="fork-a", session_b="fork-b")
    statuses = {t.number: t.status for t in c.turns}
    assert statuses == {0: "same", 1: "same", 2: "differs", 3: "same", 4: "only_b"}
    assert c.first_difference == 2
    assert c.counts == {"same": 3, "differs": 1, "only_a": 0, "only_b": 1}
    turn2 = c.turn(2)
    assert turn2 is not None
    assert turn2.changes == [MessageChange("changed", 1, 1)]
    assert turn2.changed_in_a() == {1} and turn2.changed_in_b() == {1}
    assert [t.number for t in c.differing()] == [2, 4]
    assert c.turn(4).messages_a == [] and len(c.turn(4).messages_b) == 2  # type: ignore[union-attr]
    # aligned by number after the difference: turn 3 is still compared with turn 3
    assert c.turn(3).same  # type: ignore[union-attr]


def test_only_in_a_and_turn_zero_on_one_side() -> None:
    a = convo(*BASE)
    b = convo(*BASE[1:5])  # no system prompt, two turns
    c = compare_messages(a, b)
    assert {t.number: t.status for t in c.turns} == {0: "only_a", 1: "same", 2: "same", 3: "only_a"}
    assert c.first_difference == 0


def test_message_changes_added_removed_changed() -> None:
    u = msg(1, "user", "q")
    call = msg(2, "assistant", "lookup({})", kind="tool_call")
    out = msg(3, "tool", "{}", kind="tool_output")
    ans = msg(4, "assistant", "answer")
    ans2 = msg(5, "assistant", "other answer")
    assert diff_messages([u, call, out, ans], [u, call, out, ans]) == []
    # B dropped the tool call and its output
    assert diff_messages([u, call, out, ans], [u, ans]) == [
        MessageChange("removed", 1, None),
        MessageChange("removed", 2, None),
    ]
    assert diff_messages([u, ans], [u, call, out, ans]) == [
        MessageChange("added", None, 1),
        MessageChange("added", None, 2),
    ]
    assert diff_messages([u, ans], [u, ans2, out]) == [
        MessageChange("changed", 1, 1),
        MessageChange("added", None, 2),
    ]
    # same role, kind and text but a different stored item: changed
    raw_a = msg(4, "assistant", "answer", raw={"type": "message", "status": "completed"})
    raw_b = msg(4, "assistant", "answer", raw={"type": "message", "status": "incomplete"})
    assert diff_messages([u, raw_a], [u, raw_b]) == [MessageChange("changed", 1, 1)]


def test_usage_rows_and_deltas() -> None:
    assert normalise_usage(None) is None
    assert normalise_usage("nonsense") is None
    rows = [
        {"user_turn_number": 1, "requests": 1, "input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
         "input_tokens_details": {"cached_tokens": 0}},
        {"user_turn_number": 2, "input_tokens": 20, "output_tokens": 7},  # total derived
        {"user_turn_number": "x", "total_tokens": 3},  # no turn number: dropped
        {"user_turn_number": 3, "total_tokens": True},  # not a number: dropped
    ]
    assert normalise_usage(rows) == {
        1: {"requests": 1, "input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        2: {"input_tokens": 20, "output_tokens": 7, "total_tokens": 27},
    }
    a = convo(*BASE)
    b = convo(*BASE)
    c = compare_messages(a, b, usage_a=rows, usage_b={1: {"total_tokens": 30}, "3": {"total_tokens": 4}})
    t1, t2, t3 = c.turn(1), c.turn(2), c.turn(3)
    assert t1 and t2 and t3
    assert (t1.tokens_a, t1.tokens_b, t1.token_delta) == (15, 30, 15)
    assert (t2.tokens_a, t2.tokens_b, t2.token_delta) == (27, None, None)
    assert (t3.tokens_a, t3.tokens_b, t3.token_delta) == (None, 4, None)
    usage = c.usage_dict()
    assert usage is not None
    assert usage["a_total_tokens"] == 42 and usage["b_total_tokens"] == 34
    assert usage["delta_total_tokens"] == -8
    assert [u["turn"] for u in usage["turns"]] == [1, 2, 3]
    assert compare_messages(a, b).usage_dict() is None


def test_to_dict_is_json_with_the_documented_shape() -> None:
    a = convo(*BASE)
    pairs = list(BASE)
    pairs[4] = ("assistant", "<b>x</b> \u202eevil")
    b = convo(*pairs)
    d = compare_messages(a, b, session_a="sa", session_b="sb").to_dict()
    text = json.dumps(d, ensure_ascii=False)
    back = json.loads(text)
    assert back["a"] == {"session_id": "sa", "messages": 7, "turns": 4}
    assert back["b"]["session_id"] == "sb"
    assert back["first_difference"] == 2
    assert back["usage"] is None
    turn2 = back["turns"][2]
    assert turn2["turn"] == 2 and turn2["same"] is False and turn2["status"] == "differs"
    assert [m["text"] for m in turn2["b"]] == ["q2", "<b>x</b> \u202eevil"]
    assert turn2["changes"] == [{"change": "changed", "a": 1, "b": 1}]
    assert set(turn2["a"][0]) == {"id", "role", "kind", "text", "metadata", "created_at", "raw"}


def test_compare_turns_keeps_given_turn_numbers() -> None:
    # turns that start later (a page of a longer session) still align by number
    a = group_turns(convo(("user", "q5"), ("assistant", "a5")), start=4)
    b = group_turns(convo(("user", "q5"), ("assistant", "other")), start=4)
    c = compare_turns(a, b)
    assert [t.number for t in c.turns] == [5]
    assert c.first_difference == 5 and c.a.session_id == "A" and c.b.messages == 2


def test_empty_sides() -> None:
    c = compare_messages([], [])
    assert c.turns == [] and c.identical and c.first_difference is None
    c = compare_messages([], convo(("user", "hi")))
    assert [t.status for t in c.turns] == ["only_b"] and c.first_difference == 1
