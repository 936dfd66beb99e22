"""Turns: each store counts the user messages before a point as the core's rule does
(the SQL fast paths against the generic page walk), on the four stores."""

from __future__ import annotations

from test_editing import SID, kind  # noqa: F401 - the four-store fixture

from fluxgui.adapters import open_store
from fluxgui.adapters.reading import ListingReader
from fluxgui.core.turns import group_turns, starts_turn, turn_numbers
from helpers import all_messages


async def test_count_turns_before_every_message(kind):  # noqa: F811
    async with await open_store(kind.target, writable=True) as store:
        # A malformed row and a user-role tool output must not count; a user message
        # whose metadata is a list or a text (flux keeps any JSON value) does.
        extra = (
            [{"role": "user", "content": "listed", "metadata": [1, 2]},
             {"role": "user", "content": "noted", "metadata": "a note"},
             {"role": "user", "content": "tail", "metadata": None}]
            if kind.fmt == "flux"
            else [{"type": "function_call_output", "call_id": "c", "output": "user"},
                  {"role": "user", "content": [{"type": "input_text", "text": "tail"}]}]
        )
        await store.writer.add_messages(SID, extra)
        messages = await all_messages(store, SID)
        expected = [sum(starts_turn(m) for m in messages[:i]) for i in range(len(messages))]
        got = [await store.reader.count_turns_before(SID, m.sort_key) for m in messages]
        generic = [await ListingReader.count_turns_before(store.reader, SID, m.sort_key) for m in messages]
        assert got == expected == generic
        assert expected[-1] >= 2  # the fixture has user turns to count


def test_turns_group_a_conversation():
    from fluxgui.core.model import Message

    def msg(n: int, role: str, item_kind: str = "message") -> Message:
        return Message(id=n, role=role, kind=item_kind, text=str(n))

    ms = [msg(1, "system"), msg(2, "user"), msg(3, "assistant", "tool_call"),
          msg(4, "tool", "tool_output"), msg(5, "assistant"), msg(6, "user"), msg(7, "assistant")]
    assert turn_numbers(ms) == [0, 1, 1, 1, 1, 2, 2]
    assert turn_numbers(ms[5:], start=1) == [2, 2]
    turns = group_turns(ms)
    assert [(t.number, [m.id for m in t.messages]) for t in turns] == [
        (0, [1]), (1, [2, 3, 4, 5]), (2, [6, 7])
    ]
    assert turns[1].user_text == "2" and turns[0].user_text == ""
