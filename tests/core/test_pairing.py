"""Tool calls paired with their outputs (Qt-free)."""

from __future__ import annotations

import json

from fluxgui.core.model import from_agents_row, from_flux_row, from_item
from fluxgui.core.pairing import ToolPairs, call_key, output_key, pair_messages, tool_name


def _items(*items):
    return [from_item(i + 1, item, None) for i, item in enumerate(items)]


def test_function_call_and_output_pair_both_ways():
    call, out, reply = _items(
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
        {"type": "message", "role": "assistant", "content": "done"},
    )
    pairs = ToolPairs([call, out, reply])
    assert pairs.output_for(call) is out
    assert pairs.call_for(out) is call
    assert pairs.partner(call) is out and pairs.partner(out) is call
    assert pairs.partner(reply) is None
    assert len(pairs) == 1
    assert tool_name(call) == "lookup"
    assert call_key(call) == "c1" and output_key(out) == "c1"


def test_pages_added_in_any_order():
    call, out = _items(
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"},
    )
    pairs = ToolPairs([out])  # the latest page holds only the output
    assert pairs.call_for(out) is None
    pairs.add([call])  # the earlier page arrives
    assert pairs.call_for(out) is call and pairs.output_for(call) is out
    pairs.clear()
    assert pairs.output_for(call) is None and len(pairs) == 0


def test_variants_mcp_local_shell_custom_and_computer():
    msgs = _items(
        {"type": "mcp_approval_request", "id": "apr1", "name": "rm", "server_label": "fs",
         "arguments": "{}"},
        {"type": "mcp_approval_response", "approval_request_id": "apr1", "approve": False},
        {"type": "local_shell_call", "call_id": "ls1", "id": "x", "status": "completed",
         "action": {"type": "exec", "command": ["ls"], "env": {}}},
        {"type": "local_shell_call_output", "id": "ls1", "output": "a b"},
        {"type": "custom_tool_call", "call_id": "ct1", "name": "grammar", "input": "x"},
        {"type": "custom_tool_call_output", "call_id": "ct1", "output": "ok"},
        {"type": "computer_call", "call_id": "cc1", "action": {"type": "click"}},
        {"type": "computer_call_output", "call_id": "cc1", "output": {"type": "x"}},
    )
    pairs = ToolPairs(msgs)
    for call, out in zip(msgs[::2], msgs[1::2], strict=True):
        assert pairs.output_for(call) is out, call.raw
        assert pairs.call_for(out) is call, out.raw
    assert tool_name(msgs[0]) == "rm"
    assert tool_name(msgs[6]) == "computer_call"


def test_unpaired_and_unusual_items():
    orphan_out, orphan_call, no_id, web = _items(
        {"type": "function_call_output", "call_id": "gone", "output": "x"},
        {"type": "function_call", "call_id": "waiting", "name": "f", "arguments": "{}"},
        {"type": "function_call", "name": "f", "arguments": "{}"},
        {"type": "web_search_call", "id": "ws1", "status": "completed"},
    )
    pairs = ToolPairs([orphan_out, orphan_call, no_id, web])
    assert pairs.call_for(orphan_out) is None
    assert pairs.output_for(orphan_call) is None
    assert call_key(no_id) is None and pairs.output_for(no_id) is None
    assert pairs.output_for(web) is None
    table = pair_messages([orphan_out, orphan_call])
    assert table == {"gone": (None, orphan_out), "waiting": (orphan_call, None)}


def test_first_of_a_repeated_id_wins():
    a, b, out = _items(
        {"type": "function_call", "call_id": "dup", "name": "first", "arguments": "{}"},
        {"type": "function_call", "call_id": "dup", "name": "second", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "dup", "output": "x"},
    )
    pairs = ToolPairs([a, b, out])
    assert pairs.call_for(out) is a


def test_flux_rows_and_malformed_items_never_pair():
    rows = [
        from_flux_row(1, "assistant", "calling", json.dumps({"call_id": "c1"}), None),
        from_flux_row(2, "tool", "result", json.dumps({"call_id": "c1"}), None),
        from_agents_row(3, "{not json", None),
        from_agents_row(4, json.dumps(["a", "list"]), None),
        from_agents_row(5, json.dumps({"type": "function_call_output", "call_id": 7}), None),
    ]
    pairs = ToolPairs(rows)
    assert len(pairs) == 0
    assert all(pairs.partner(m) is None for m in rows)
    assert pairs.calls == {} and pairs.outputs == {}
