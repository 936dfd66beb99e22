"""Normalising stored items into one Message: Agents SDK items, flux rows, timestamps.

Agents SDK items are built with the OpenAI types the SDK itself uses (``model_dump`` as the
SDK does when it turns output into input items), so their shapes are the real ones. Each
expected text is taken from the item's own fields, not restated.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from openai.types.responses import (
    ResponseComputerToolCall,
    ResponseFunctionToolCall,
    ResponseFunctionWebSearch,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_output_item import McpCall
from openai.types.responses.response_reasoning_item import Summary

from fluxgui.core.model import (
    KINDS,
    Message,
    from_agents_row,
    from_flux_row,
    meta_dict,
)
from fluxgui.core.times import iso_time


def dump(model) -> dict:
    """What the SDK stores for an output item (``to_input_item`` dumps unset fields out)."""
    return model.model_dump(exclude_unset=True)


def row(item, row_id: int = 7, created_at: str | None = "2024-05-06 07:08:09") -> Message:
    """Normalise ``item`` the way it comes out of ``agent_messages`` (JSON text)."""
    return from_agents_row(row_id, json.dumps(item), created_at)


# --------------------------------------------------------------------------- messages


def test_user_message_with_string_content():
    item = {"role": "user", "content": "Hello, wörld 👋\nsecond line"}
    m = row(item, row_id=3)
    assert (m.id, m.role, m.kind, m.text) == (3, "user", "message", item["content"])
    assert m.raw == item
    assert m.metadata is None
    assert m.kind in KINDS


def test_message_with_content_list_joins_text_and_refusal_parts():
    text_a = ResponseOutputText(type="output_text", text="first part", annotations=[])
    refusal = ResponseOutputRefusal(type="refusal", refusal="I can't help with that")
    text_b = ResponseOutputText(type="output_text", text="last part", annotations=[])
    item = dump(
        ResponseOutputMessage(
            id="msg_1",
            type="message",
            role="assistant",
            status="completed",
            content=[text_a, refusal, text_b],
        )
    )
    m = row(item)
    assert m.kind == "message"
    assert m.role == "assistant"
    lines = m.text.split("\n")
    assert lines == [text_a.text, refusal.refusal, text_b.text]
    assert m.raw == item


def test_input_content_list_keeps_text_and_names_images():
    item = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "look at this"},
            {"type": "input_image", "image_url": "https://example.invalid/x.png", "detail": "auto"},
            {"type": "input_text", "text": "and this"},
        ],
    }
    m = row(item)
    assert m.kind == "message"
    # the image is named (issue 37: it showed nothing), never fetched
    assert m.text.split("\n") == [
        "look at this", "[input_image: https://example.invalid/x.png · detail auto]", "and this"]


def test_function_call_reads_as_name_of_arguments():
    call = ResponseFunctionToolCall(
        type="function_call",
        call_id="call_1",
        name="get_weather",
        arguments=json.dumps({"city": "Zürich", "unit": "C"}),
    )
    m = row(dump(call))
    assert m.kind == "tool_call"
    assert m.role == "assistant"
    assert m.text == f"{call.name}({call.arguments})"


def test_function_call_output():
    item = {"type": "function_call_output", "call_id": "call_1", "output": "22 °C, sunny"}
    m = row(item)
    assert m.kind == "tool_output"
    assert m.role == "tool"
    assert m.text == item["output"]


def test_function_call_output_with_content_list():
    item = {
        "type": "function_call_output",
        "call_id": "call_2",
        "output": [{"type": "input_text", "text": "part one"}, {"type": "input_text", "text": "two"}],
    }
    m = row(item)
    assert m.kind == "tool_output"
    assert m.text.split("\n") == ["part one", "two"]


def test_reasoning_summary():
    reasoning = ResponseReasoningItem(
        id="rs_1",
        type="reasoning",
        summary=[
            Summary(type="summary_text", text="Thinking about the weather."),
            Summary(type="summary_text", text="Deciding to call a tool."),
        ],
    )
    m = row(dump(reasoning))
    assert m.kind == "reasoning"
    assert m.role == "assistant"
    assert m.text.split("\n") == [s.text for s in reasoning.summary]


@pytest.mark.parametrize(
    "model",
    [
        pytest.param(
            ResponseFunctionWebSearch(
                id="ws_1",
                type="web_search_call",
                status="completed",
                action={"type": "search", "query": "fluxgui"},
            ),
            id="web_search_call",
        ),
        pytest.param(
            ResponseComputerToolCall(
                id="cu_1",
                call_id="call_c",
                type="computer_call",
                status="completed",
                pending_safety_checks=[],
                action={"type": "click", "button": "left", "x": 10, "y": 20},
            ),
            id="computer_call",
        ),
        pytest.param(
            McpCall(
                id="mcp_1",
                type="mcp_call",
                server_label="files",
                name="read_file",
                arguments=json.dumps({"path": "/tmp/x"}),
            ),
            id="mcp_call",
        ),
    ],
)
def test_hosted_and_mcp_calls_are_tool_calls(model):
    item = dump(model)
    m = row(item)
    assert m.kind == "tool_call"
    assert m.role == "assistant"
    assert m.raw == item
    # The text names the tool: the function name for MCP (after its server), the item
    # type otherwise.
    name = item.get("name") or item["type"]
    if item["type"] == "mcp_call":
        name = f"{item['server_label']} › {name}"
    assert m.text.startswith(f"{name}(")
    if "arguments" in item:
        assert m.text == f"{name}({item['arguments']})"
    else:
        # the action is shown, readable as the JSON of what was stored
        shown = m.text[len(name) + 1 : -1]
        assert json.loads(shown) == item["action"]


def test_unknown_item_type_is_other_with_its_json():
    item = {"type": "brand_new_thing", "payload": {"x": [1, 2, "ü"]}}
    m = row(item)
    assert m.kind == "other"
    assert m.raw == item
    assert json.loads(m.text) == item


@pytest.mark.parametrize("part_type", [["output_text"], {"x": 1}, 3, None])
def test_content_part_whose_type_is_no_string_is_skipped_not_a_crash(part_type):
    # a hand-edited or foreign item: the part's "type" may be any JSON value
    item = {"type": "message", "role": "assistant", "content": [
        {"type": part_type, "text": "odd"}, {"type": "output_text", "text": "kept"}]}
    m = row(item)
    assert m.kind == "message"
    assert m.text == "kept"
    out = row({"type": "function_call_output", "call_id": "c", "output": [{"type": ["x"], "text": "y"}]})
    assert out.kind == "tool_output" and out.text == ""


@pytest.mark.parametrize("value", [[1, 2, 3], "just a string", 42, None, True])
def test_non_object_json_is_other(value):
    m = row(value)
    assert m.kind == "other"
    assert m.raw == value


@pytest.mark.parametrize(
    "text", ['{"role": "user", "content": "cut off', "not json at all", "", "{'single': 'quotes'}"]
)
def test_malformed_json_is_kept_as_other_with_its_raw_text(text):
    m = from_agents_row(11, text, "2024-01-02 03:04:05")
    assert m.kind == "other"
    assert m.id == 11
    assert m.raw == text
    assert m.text == text
    assert m.created_at is not None


def test_bytes_message_data_is_decoded():
    item = {"role": "user", "content": "bytes ✓"}
    m = from_agents_row(1, json.dumps(item).encode("utf-8"), None)
    assert m.kind == "message"
    assert m.text == item["content"]


def test_to_dict_is_json_serialisable_and_has_the_exported_keys():
    m = row({"role": "user", "content": "x"})
    d = m.to_dict()
    assert set(d) == {"id", "role", "kind", "text", "metadata", "created_at", "raw"}
    assert json.loads(json.dumps(d)) == d


# --------------------------------------------------------------------------- flux rows


def test_flux_row_plain_message_with_metadata():
    meta = {"source": "web", "n": 3, "nested": {"ok": True}}
    m = from_flux_row(5, "assistant", "hello", json.dumps(meta), "2024-05-06 07:08:09")
    assert (m.id, m.role, m.kind, m.text) == (5, "assistant", "message", "hello")
    assert m.metadata == meta
    assert m.raw is None


def test_flux_role_tool_is_tool_output():
    m = from_flux_row(1, "tool", "42", None, None)
    assert m.kind == "tool_output"
    assert m.role == "tool"
    assert m.text == "42"


def test_flux_null_content_is_empty_text():
    m = from_flux_row(1, "assistant", None, None, None)
    assert m.text == ""
    assert m.kind == "message"


@pytest.mark.parametrize("bad", ["{not json", "[1, 2", "nope"])
def test_flux_malformed_metadata_is_other_with_raw(bad):
    m = from_flux_row(9, "user", "content survives", bad, None)
    assert m.kind == "other"
    assert m.raw == bad
    assert m.metadata is None
    assert m.text == "content survives"


@pytest.mark.parametrize(
    ("stored", "value"),
    [('["a", "list", 3]', ["a", "list", 3]), ('"a string"', "a string"), ("17", 17), ("false", False)],
)
@pytest.mark.parametrize(("role", "kind"), [("user", "message"), ("tool", "tool_output")])
def test_flux_metadata_that_is_valid_json_but_no_object_is_kept_as_that_value(
    stored, value, role, kind
):
    # flux's get_messages() returns json.loads of the column, whatever it is.
    m = from_flux_row(9, role, "content survives", stored, None)
    assert (m.kind, m.metadata, m.raw, m.text) == (kind, value, None, "content survives")
    assert meta_dict(m) == {}


def test_flux_json_null_metadata_is_no_metadata():
    m = from_flux_row(1, "user", "x", "null", None)
    assert m.kind == "message"
    assert m.metadata is None


# --------------------------------------------------------------------------- timestamps


def test_iso_time_sqlite_current_timestamp_gets_utc():
    value = "2024-05-06 07:08:09"
    out = iso_time(value, utc=True)
    parsed = datetime.fromisoformat(out)
    assert parsed.utcoffset() == timedelta(0)
    assert parsed.replace(tzinfo=None) == datetime(2024, 5, 6, 7, 8, 9)


def test_iso_time_naive_stays_naive_when_zone_unknown():
    out = iso_time("2024-05-06 07:08:09", utc=False)
    parsed = datetime.fromisoformat(out)
    assert parsed.tzinfo is None
    assert parsed == datetime(2024, 5, 6, 7, 8, 9)


def test_iso_time_keeps_an_explicit_zone():
    out = iso_time("2024-05-06T07:08:09+02:00", utc=True)
    assert datetime.fromisoformat(out).utcoffset() == timedelta(hours=2)
    out_z = iso_time("2024-05-06T07:08:09Z", utc=False)
    assert datetime.fromisoformat(out_z).utcoffset() == timedelta(0)


def test_iso_time_of_text_is_what_datetime_writes():
    """The plain ``YYYY-MM-DD HH:MM:SS`` path gives, character for character, what
    ``datetime`` parses and writes — and ``None`` for what it refuses."""
    texts = ["2024-05-06 07:08:09", "2024-05-06T07:08:09", " 2024-05-06 07:08:09\n", "2024-02-29 00:00:00",
             "2023-02-29 00:00:00", "2024-13-01 00:00:00", "2024-01-01 24:00:00", "2024-01-01 23:60:00",
             "0001-01-01 00:00:00", "9999-12-31 23:59:59", "2024-05-06 07:08:09.5", "2024-05-06 07:08:09Z",
             "2024-05-06 07:08:09+05:30", "\u0662\u0660\u0662\u0664-05-06 07:08:09", "2024-05-06_07:08:09", ""]
    for text in texts:
        for utc in (True, False):
            stripped = text.strip()
            try:
                dt = datetime.fromisoformat(stripped[:-1] + "+00:00" if stripped.endswith("Z") else stripped)
            except ValueError:
                want = None
            else:
                want = (dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None and utc else dt).isoformat()
            assert iso_time(text, utc=utc) == want, (text, utc)


def test_iso_time_datetime_and_epoch():
    naive = datetime(2024, 1, 2, 3, 4, 5, 678901)
    assert datetime.fromisoformat(iso_time(naive, utc=True)) == naive.replace(tzinfo=timezone.utc)
    assert datetime.fromisoformat(iso_time(naive, utc=False)) == naive
    epoch = 1_700_000_000
    assert datetime.fromisoformat(iso_time(epoch, utc=False)) == datetime.fromtimestamp(
        epoch, tz=timezone.utc
    )


@pytest.mark.parametrize("garbage", ["yesterday", "2024-13-45 99:99:99", "", "   ", None, b"\xff\xfe", 10**30])
def test_iso_time_garbage_is_none(garbage):
    assert iso_time(garbage, utc=True) is None


def test_row_timestamps_follow_the_utc_flag():
    assert datetime.fromisoformat(row({"role": "user", "content": "x"}).created_at).tzinfo is not None
    m = from_agents_row(1, "{}", "2024-05-06 07:08:09", utc=False)
    assert datetime.fromisoformat(m.created_at).tzinfo is None
    f = from_flux_row(1, "user", "x", None, "garbage time")
    assert f.created_at is None
