"""Checking items and flux messages before they are written (fluxgui/core/items.py).

Valid items are the SDK's own (OpenAI types dumped as the SDK does); where the Agents SDK's
Chat Completions converter can judge an item, it is the oracle: what fluxgui accepts the
SDK can send to a model, and what the SDK chokes on fluxgui refuses.
"""

from __future__ import annotations

import json

import pytest
from agents.models.chatcmpl_converter import Converter
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseFunctionWebSearch,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_output_item import McpCall
from openai.types.responses.response_reasoning_item import Summary

from fluxgui.core.errors import InvalidItem
from fluxgui.core.items import MESSAGE_ROLES, validate_flux_message, validate_item


def _dump(model) -> dict:
    return model.model_dump(exclude_unset=True)


SDK_ITEMS = {
    "user-text": {"role": "user", "content": "hi"},
    "system": {"role": "system", "content": "Be terse."},
    "developer": {"role": "developer", "content": "rules"},
    "user-parts": {"role": "user", "content": [{"type": "input_text", "text": "Danke! 日本語"}]},
    "assistant-output": _dump(
        ResponseOutputMessage(
            id="msg_1",
            type="message",
            role="assistant",
            status="completed",
            content=[
                ResponseOutputText(type="output_text", text="It is 22 °C.", annotations=[]),
                ResponseOutputRefusal(type="refusal", refusal="No forecast."),
            ],
        )
    ),
    "function_call": _dump(
        ResponseFunctionToolCall(
            type="function_call", call_id="call_1", name="get_weather",
            arguments=json.dumps({"city": "Zürich"}), id="fc_1", status="completed",
        )
    ),
    "function_call_output": {"type": "function_call_output", "call_id": "call_1", "output": "22 °C"},
    "function_call_output-parts": {
        "type": "function_call_output", "call_id": "call_1",
        "output": [{"type": "input_text", "text": "22 °C"}],
    },
    "reasoning": _dump(
        ResponseReasoningItem(
            id="rs_1", type="reasoning", summary=[Summary(type="summary_text", text="Need the tool.")]
        )
    ),
    "web_search_call": _dump(
        ResponseFunctionWebSearch(
            id="ws_1", type="web_search_call", status="completed", action={"type": "search", "query": "q"}
        )
    ),
    "mcp_call": _dump(
        McpCall(id="mcp_1", type="mcp_call", name="lookup", server_label="srv", arguments="{}")
    ),
}

#: items the Chat Completions converter turns into chat messages (it refuses some others)
CONVERTIBLE = [
    "user-text", "system", "developer", "user-parts", "assistant-output",
    "function_call", "function_call_output", "reasoning",
]


@pytest.mark.parametrize("name", list(SDK_ITEMS))
def test_sdk_items_are_valid_and_returned_as_they_are(name):
    item = SDK_ITEMS[name]
    before = json.dumps(item, sort_keys=True)
    assert validate_item(item) is item
    assert json.dumps(item, sort_keys=True) == before  # not changed in place


@pytest.mark.parametrize("name", CONVERTIBLE)
def test_valid_items_are_ones_the_sdk_converter_accepts(name):
    item = SDK_ITEMS[name]
    validate_item(item)
    assert Converter.items_to_messages([SDK_ITEMS["user-text"], item])


def without(item: dict, key: str) -> dict:
    return {k: v for k, v in item.items() if k != key}


FC = SDK_ITEMS["function_call"]
FCO = SDK_ITEMS["function_call_output"]

#: (item, words the one-line message must contain, the SDK converter fails on it too)
INVALID = {
    "function_call-no-call_id": (without(FC, "call_id"), ["function_call", "call_id"], True),
    "function_call-no-name": (without(FC, "name"), ["function_call", "name"], True),
    "function_call-arguments-object": ({**FC, "arguments": {"city": "x"}}, ["arguments"], False),
    "function_call_output-no-call_id": (without(FCO, "call_id"), ["call_id"], True),
    "function_call_output-no-output": (without(FCO, "output"), ["output"], True),
    "function_call_output-output-number": ({**FCO, "output": 5}, ["output"], False),
    "role-wizard": ({"role": "wizard", "content": "x"}, ["role", "wizard"], True),
    "no-role": ({"content": "x"}, ["role"], True),
    "message-no-content": ({"role": "user"}, ["content"], True),
    "content-number": ({"role": "user", "content": 3}, ["content"], False),
    "part-no-type": ({"role": "user", "content": [{"text": "x"}]}, ["part 1", "type"], False),
    "part-text-not-text": (
        {"role": "user", "content": [{"type": "input_text", "text": "ok"}, {"type": "input_text", "text": 7}]},
        ["part 2", "text"],
        False,
    ),
    "part-a-bare-string": ({"role": "user", "content": ["loose text"]}, ["part 1", "object"], False),
    "refusal-without-refusal": (
        {"type": "message", "role": "assistant", "content": [{"type": "refusal", "text": "no"}]},
        ["refusal"],
        False,
    ),
    "reasoning-no-summary": ({"type": "reasoning", "id": "rs"}, ["summary"], False),
    "reasoning-summary-text": ({"type": "reasoning", "summary": "thinking"}, ["summary"], False),
    "mcp_call-no-server_label": (without(SDK_ITEMS["mcp_call"], "server_label"), ["server_label"], False),
    "type-empty": ({"type": "", "role": "user", "content": "x"}, ["type"], False),
    "type-number": ({"type": 3}, ["type"], False),
    "unknown-type": ({"type": "made_up_call", "x": 1}, ["unknown", "made_up_call"], True),
}


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_items_are_refused_with_one_line(name):
    item, words, _ = INVALID[name]
    with pytest.raises(InvalidItem) as err:
        validate_item(item)
    text = str(err.value)
    assert "\n" not in text
    for word in words:
        assert word in text, (word, text)


@pytest.mark.parametrize("name", [n for n, (_, _, sdk_fails) in INVALID.items() if sdk_fails])
def test_items_the_sdk_converter_chokes_on_are_refused(name):
    item = INVALID[name][0]
    with pytest.raises(Exception):  # noqa: B017 - the SDK raises KeyError, UserError, ...
        Converter.items_to_messages([item])
    with pytest.raises(InvalidItem):
        validate_item(item)


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "null"), ([1, 2], "a list"), ("text", "a text"), (3, "a number"), (True, "a boolean")],
)
def test_non_object_item_is_refused_naming_its_json_type(value, shown):
    with pytest.raises(InvalidItem) as err:
        validate_item(value)
    assert shown in str(err.value)


def test_unknown_type_is_kept_only_when_it_is_the_items_own_type():
    future = {"type": "some_future_item", "payload": {"nested": [1]}}
    assert validate_item(future, original_type="some_future_item") is future
    with pytest.raises(InvalidItem):
        validate_item(future)
    with pytest.raises(InvalidItem):
        validate_item(future, original_type="message")


def test_original_type_does_not_excuse_a_broken_known_type():
    with pytest.raises(InvalidItem):
        validate_item(without(FC, "call_id"), original_type="function_call")


def test_every_message_role_is_accepted():
    for role in MESSAGE_ROLES:
        validate_item({"role": role, "content": "x"})
        validate_item({"type": "message", "role": role, "content": []})


def test_long_values_are_shortened_in_the_message():
    with pytest.raises(InvalidItem) as err:
        validate_item({"role": "w" * 500, "content": "x"})
    assert len(str(err.value)) < 200


# --------------------------------------------------------------------------- flux messages


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "x", "metadata": {"model": "m", "n": [1, {"a": None}]}},
        {"role": "tool", "content": None},
        {"content": "no role: flux writes user"},
        {"role": "user", "content": "x", "metadata": None},
        {"role": "custom-role", "content": ""},
    ],
)
def test_valid_flux_messages(message):
    assert validate_flux_message(message) is message


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ({"role": "user", "content": "x", "metadata": [1, 2]}, ["metadata", "a list"]),
        ({"role": "user", "content": "x", "metadata": "{}"}, ["metadata", "a text"]),
        ({"role": "user", "content": "x", "metadata": 3}, ["metadata", "a number"]),
        ({"role": "", "content": "x"}, ["role"]),
        ({"role": "   ", "content": "x"}, ["role"]),
        ({"role": 5, "content": "x"}, ["role"]),
        ({"role": "user", "content": ["a"]}, ["content", "a list"]),
        ({"role": "user", "content": {"a": 1}}, ["content", "an object"]),
        (["role", "user"], ["object", "a list"]),
        ("hello", ["object", "a text"]),
    ],
)
def test_invalid_flux_messages(message, words):
    with pytest.raises(InvalidItem) as err:
        validate_flux_message(message)
    for word in words:
        assert word in str(err.value)


def test_flux_metadata_that_is_not_an_object_is_kept_only_as_stored():
    for stored in ([1, "two"], "a note", 3, True):
        assert validate_flux_message({"role": "user", "metadata": stored}, stored_metadata=stored)
    for given, stored in (([1], [1, "two"]), ([1, "two"], None), (1, True), ("3", 3)):
        with pytest.raises(InvalidItem):
            validate_flux_message({"role": "user", "metadata": given}, stored_metadata=stored)
