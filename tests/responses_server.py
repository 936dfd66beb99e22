"""A loopback OpenAI Responses API server (``POST /v1/responses``, not streamed) that
checks the ``input`` of each request the way the real API does and answers in its
formats: a 400 with ``{"error": {"message", "type": "invalid_request_error", "param",
"code"}}`` for an input it refuses, else a completed ``response`` with one assistant
message.

What it refuses, each with the real API's sentence:

* a function/custom tool call with no output after it ("No tool output found for
  function call call_…"), unless it is an external async call still running
  (``"async": true``, status completed or none: the API takes it so, as openai-agents
  0.25's replay says);
* an output whose call_id no earlier call has ("No tool call found for function call
  output with call_id …");
* a reasoning item not followed by the model's next item ("Item 'rs_…' of type
  'reasoning' was provided without its required following item.");
* an item id seen twice ("Duplicate item found with id …");
* a reasoning item with an empty summary and no encrypted_content, an input item that
  is not an object, a message with an unknown role (invalid items).

Every request body is recorded (``requests``), so a test compares the ``input`` the
Agents SDK really sent with what fluxgui's preflight says it would send.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from http.server import BaseHTTPRequestHandler
from typing import Any

from chat_servers import ChatServer

CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
ROLES = ("assistant", "system", "developer", "user")


def input_error(items: list[Any]) -> tuple[str, str] | None:
    """``(message, param)`` of the first thing the API refuses in ``items``; ``None``."""
    ids: set[str] = set()
    calls: set[tuple[str, str]] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            kind = "an array" if isinstance(item, list) else type(item).__name__
            return f"Invalid type for 'input[{i}]': expected an object, but got {kind} instead.", f"input[{i}]"
        kind = item.get("type", "message")
        if isinstance(item.get("id"), str):
            if item["id"] in ids:
                return (f"Duplicate item found with id {item['id']}. Remove duplicate items "
                        "from your input and try again.", "input")
            ids.add(item["id"])
        if kind == "message" and item.get("role") not in ROLES:
            return (f"Invalid value: {item.get('role')!r}. Supported values are: 'assistant', "
                    "'system', 'developer', and 'user'.", f"input[{i}].role")
        if kind == "reasoning":
            if not item.get("summary") and not item.get("encrypted_content"):
                return (f"Invalid value for 'input[{i}]': a reasoning item needs a summary "
                        "or encrypted_content.", f"input[{i}].summary")
            nxt = items[i + 1] if i + 1 < len(items) else None
            follows = isinstance(nxt, dict) and (
                nxt.get("type") in CALLS
                or (nxt.get("type", "message") == "message" and nxt.get("role") == "assistant")
            )
            if not follows:
                return (f"Item '{item.get('id')}' of type 'reasoning' was provided without its "
                        "required following item.", "input")
        pending = (kind in ("function_call", "custom_tool_call") and item.get("async") is True
                   and item.get("status") in (None, "completed"))
        if kind in CALLS and not pending:  # (an async call still running needs no output yet)
            later = items[i + 1 :]
            out = CALLS[kind]
            if not any(isinstance(x, dict) and x.get("type") == out and x.get("call_id") == item.get("call_id") for x in later):
                return f"No tool output found for function call {item.get('call_id')}.", "input"
            calls.add((out, item.get("call_id")))
        if kind in CALLS.values() and (kind, item.get("call_id")) not in calls:
            return (f"No tool call found for function call output with call_id "
                    f"{item.get('call_id')}.", "input")
    return None


class ResponsesServer(ChatServer):
    """One loopback Responses API server; use as a context manager (the loopback
    plumbing is :class:`chat_servers.ChatServer`'s; ``requests`` holds each body)."""

    def __init__(self, reply: str = "Resumed fine.") -> None:
        super().__init__("openai", reply=reply)
        self.requests: list[dict[str, Any]] = []
        self.refusals: list[str] = []

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = json.loads(h.rfile.read(length) or b"null")
        self.requests.append(body)
        if h.path != "/v1/responses":
            self._send_json(h, 404, {"error": {"message": f"Invalid URL (POST {h.path})",
                                          "type": "invalid_request_error", "param": None, "code": None}})
            return
        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        refused = input_error(items or [])
        if refused is not None:
            self.refusals.append(refused[0])
            self._send_json(h, 400, {"error": {"message": refused[0], "type": "invalid_request_error",
                                          "param": refused[1], "code": None}})
            return
        n = len(self.requests)
        self._send_json(h, 200, {
            "id": f"resp_{n}", "object": "response", "created_at": 1_700_000_000 + n,
            "status": "completed", "model": body.get("model", "gpt-4o"), "error": None,
            "incomplete_details": None, "instructions": body.get("instructions"),
            "metadata": {}, "parallel_tool_calls": True, "temperature": 1.0, "top_p": 1.0,
            "tool_choice": "auto", "tools": [],
            "output": [{
                "type": "message", "id": f"msg_srv{n}", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": self.reply, "annotations": []}],
            }],
            "usage": {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}},
        })


@contextlib.asynccontextmanager
async def sdk_model(server: ResponsesServer) -> AsyncIterator[Any]:
    """An Agents SDK Responses model pointed at ``server`` (tracing off: nothing leaves
    the machine); its client is closed afterwards (an unclosed one warns later, in
    whatever test runs when it is collected)."""
    from agents import set_tracing_disabled
    from agents.models.openai_responses import OpenAIResponsesModel
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    try:
        yield OpenAIResponsesModel(model="gpt-4o", openai_client=client)
    finally:
        await client.close()
