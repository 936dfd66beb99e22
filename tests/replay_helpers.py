"""Recorded sessions with tool calls, written by the real libraries, for the replay and
eval tests; and a scripted model on a loopback OpenAI-compatible server.

Both sessions hold the same conversation: turn 1 asks for an order's status (the agent
calls ``lookup_order`` and answers), turn 2 asks for a refund (two calls: ``lookup_order``
again and ``refund`` with an amount), turn 3 says thanks (no call).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from helpers import write_agents, write_flux

SID = "conv-1"
USERS = ["Where is order 42?", "Please refund order 42.", "Thanks!"]
#: the recorded calls per turn: (call id, name, arguments, output)
CALLS: dict[int, list[tuple[str, str, dict[str, Any], str]]] = {
    1: [("call_a1", "lookup_order", {"order_id": 42}, '{"status": "shipped", "eta": "Friday"}')],
    2: [
        ("call_b1", "lookup_order", {"order_id": 42}, '{"status": "shipped", "paid": 19.5}'),
        ("call_b2", "refund", {"order_id": 42, "amount": 19.5}, '{"refund_id": "R-7", "ok": true}'),
    ],
    3: [],
}
ANSWERS = ["Order 42 has shipped; it arrives Friday.", "Refunded 19.50 (R-7).", "You're welcome!"]


def agents_items() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "system", "content": "You are a support agent."}]
    for n, text in enumerate(USERS, 1):
        items.append({"role": "user", "content": text})
        for cid, name, args, _out in CALLS[n]:
            items.append({"type": "function_call", "call_id": cid, "name": name,
                          "arguments": json.dumps(args), "id": f"fc_{cid}", "status": "completed"})
        for cid, _name, _args, out in CALLS[n]:
            items.append({"type": "function_call_output", "call_id": cid, "output": out})
        items.append({"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                      "content": [{"type": "output_text", "text": ANSWERS[n - 1], "annotations": []}]})
    return items


def flux_messages() -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a support agent."}]
    for n, text in enumerate(USERS, 1):
        msgs.append({"role": "user", "content": text})
        if CALLS[n]:
            msgs.append({"role": "assistant", "content": "", "metadata": {"tool_calls": [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for cid, name, args, _out in CALLS[n]]}})
            for cid, name, _args, out in CALLS[n]:
                msgs.append({"role": "tool", "content": out,
                             "metadata": {"tool_call_id": cid, "name": name}})
        msgs.append({"role": "assistant", "content": ANSWERS[n - 1]})
    return msgs


def write_session(path: Path, fmt: str, sid: str = SID) -> None:
    """The conversation written by the owning library (``fmt``: agents or flux)."""
    if fmt == "agents":
        write_agents(path, {sid: agents_items()})
    else:
        write_flux(path, {sid: flux_messages()})


#: a script step that answers HTTP 500
FAIL = "!fail"


class ScriptedServer:
    """A loopback OpenAI-compatible chat-completions server whose model follows a
    script: for the request whose last message is the user's ``USERS[i]`` (or a tool
    message after it), the next step of that turn's script. A step is a list of calls
    ``(name, arguments)`` or a final text. Every request is recorded."""

    def __init__(self, script: dict[str, list[Any]]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> ScriptedServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(n))
                owner.requests.append(body)
                if owner._action(body["messages"]) == FAIL:
                    raw = json.dumps({"error": {"message": "the model is overloaded"}}).encode()
                    self.send_response(500)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                    return
                if self.path.endswith("/api/chat"):  # Ollama: NDJSON lines
                    raw = "".join(json.dumps(e) + "\n" for e in owner._ollama(body)).encode()
                    kind = "application/x-ndjson"
                else:
                    events = owner._events(body)
                    data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
                    raw = data.encode()
                    kind = "text/event-stream"
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def root_url(self) -> str:
        """The server without ``/v1`` (what the ollama provider is given)."""
        return self.base_url[: -len("/v1")]

    def _action(self, msgs: list[dict[str, Any]]) -> Any:
        last_user = max(i for i, m in enumerate(msgs) if m["role"] == "user")
        user = msgs[last_user]["content"]
        step = sum(1 for m in msgs[last_user:] if m["role"] == "assistant")
        steps = self.script.get(user) or ["(no script)"]
        return steps[min(step, len(steps) - 1)]

    def _ollama(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        action = self._action(body["messages"])
        end = {"model": body["model"], "done": True, "prompt_eval_count": 10, "eval_count": 5}
        if isinstance(action, str):
            return [{"model": body["model"], "message": {"role": "assistant", "content": action}, "done": False}, end]
        calls = [{"function": {"name": name, "arguments": args}} for name, args in action]
        return [{"model": body["model"], "message": {"role": "assistant", "content": "", "tool_calls": calls},
                 "done": False}, end]

    def _events(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        msgs = body["messages"]
        action = self._action(msgs)
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": body["model"]}
        usage = {**base, "choices": [], "usage": {"prompt_tokens": 10 + len(msgs),
                                                 "completion_tokens": 5, "total_tokens": 15 + len(msgs)}}
        if isinstance(action, str):
            return [
                {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": action}}]},
                {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                usage,
            ]
        calls = [
            {"index": i, "id": f"call_r{len(self.requests)}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(action)
        ]
        return [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": calls}}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            usage,
        ]


def faithful_script() -> dict[str, list[Any]]:
    """A model that calls the recorded tools with the recorded arguments (argument keys
    in another order: JSON-equal), then answers."""
    out: dict[str, list[Any]] = {}
    for n, text in enumerate(USERS, 1):
        steps: list[Any] = []
        if CALLS[n]:
            steps.append([(name, dict(reversed(list(args.items())))) for _c, name, args, _o in CALLS[n]])
        steps.append(f"replayed answer {n}")
        out[text] = steps
    return out
