"""Real loopback HTTP servers that speak the chat protocols fluxgui's test chat uses.

* OpenAI chat completions (``POST …/v1/chat/completions`` with ``"stream": true``): a
  Server-Sent-Events body of ``data: {chunk}`` lines whose ``choices[0].delta.content``
  carries the text, then ``data: [DONE]``.
* Ollama (``POST /api/chat``): newline-delimited JSON objects with ``message.content``,
  the last one ``"done": true``.

Each server runs ``http.server`` in a thread on 127.0.0.1 and records every request
(path, headers with lower-case names, parsed JSON body). ``mode`` chooses the behaviour:

``ok``         stream ``reply`` in ``chunks`` pieces
``401``        refuse the API key (OpenAI's error body)
``malformed``  a stream whose second event is not JSON
``hang``       accept the request and send nothing until the server stops
``stall``      send the first piece of the reply, then nothing until the server stops
               (``first_sent`` is set as that piece goes out)
``truncated``  send the first piece of the reply, then close the connection
``tool``       (OpenAI) the first request is answered with a call of the tool
               ``lookup``; later ones stream ``reply``

With ``api_key`` given, a request without ``Authorization: Bearer API_KEY`` is refused
as ``401`` is, whatever the mode (a wrong key, then the right one).

``closed_port()`` gives a port nothing listens on (connection refused).
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def closed_port() -> int:
    """A loopback port that was free a moment ago and has no listener."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def split_reply(reply: str, chunks: int) -> list[str]:
    """``reply`` in ``chunks`` consecutive pieces (some may be empty when it is short)."""
    size = max(1, -(-len(reply) // chunks))
    return [reply[i : i + size] for i in range(0, len(reply), size)] or [""]


class ChatServer:
    """One loopback server; use as a context manager. ``kind`` is "openai" or "ollama"."""

    def __init__(self, kind: str = "openai", mode: str = "ok", *, reply: str = "Hello there, friend.", chunks: int = 4,
                 api_key: str | None = None, tool_arguments: str = '{"q": "weather"}') -> None:
        assert kind in ("openai", "ollama"), kind
        self.kind = kind
        self.mode = mode
        self.reply = reply
        self.chunks = chunks
        self.api_key = api_key
        #: the "tool" mode's call's arguments
        self.tool_arguments = tool_arguments
        self.requests: list[dict[str, Any]] = []
        self.received = threading.Event()   # a request arrived
        self.first_sent = threading.Event()  # "stall": the first piece went out
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def __enter__(self) -> ChatServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                owner._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()  # release hanging handlers
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """What a user types: ``http://127.0.0.1:PORT/v1`` (OpenAI) or the host (Ollama)."""
        root = f"http://127.0.0.1:{self.port}"
        return root + "/v1" if self.kind == "openai" else root

    # -- one request -----------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        self.requests.append({"path": h.path, "headers": {k.lower(): v for k, v in h.headers.items()}, "body": body})
        self.received.set()
        expected = "/v1/chat/completions" if self.kind == "openai" else "/api/chat"
        if h.path != expected:
            self._send_json(h, 404, {"error": f"no route {h.path}"})
            return
        refused = self.api_key is not None and h.headers.get("Authorization") != f"Bearer {self.api_key}"
        if self.mode == "401" or refused:
            # (as the API does, the refusal echoes the key's start and end)
            given = (h.headers.get("Authorization") or "").removeprefix("Bearer ")
            echoed = f"{given[:8]}****{given[-4:]}" if refused else "sk-wrong."
            self._send_json(h, 401, {"error": {
                "message": f"Incorrect API key provided: {echoed}", "type": "invalid_request_error",
                "param": None, "code": "invalid_api_key",
            }})
            return
        if self.mode == "hang":
            self._stop.wait(60)
            return
        pieces = split_reply(self.reply, self.chunks)
        h.send_response(200)
        if self.kind == "openai":
            h.send_header("Content-Type", "text/event-stream")
        else:
            h.send_header("Content-Type", "application/x-ndjson")
        h.send_header("Connection", "close")
        h.end_headers()
        try:
            self._stream(h, pieces, body or {})
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (a cancelled chat)

    def _stream(self, h: BaseHTTPRequestHandler, pieces: list[str], body: dict[str, Any]) -> None:
        model = body.get("model", "m")
        if self.mode == "tool" and len(self.requests) == 1:
            self._write(h, self._tool_call(model))
            return
        for i, piece in enumerate(pieces):
            if self.mode == "malformed" and i == 1:
                self._write(h, "data: {this is not json\n\n" if self.kind == "openai" else "{not json\n")
                return
            if self.mode == "stall":
                # Set before the write: a client that has read the piece sees it set.
                self.first_sent.set()
            self._write(h, self._event(model, piece))
            if self.mode == "stall":
                self._stop.wait(60)
                return
            if self.mode == "truncated":
                return
        self._write(h, self._last(model))

    def _event(self, model: str, piece: str) -> str:
        if self.kind == "openai":
            chunk = {
                "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}],
            }
            return f"data: {json.dumps(chunk)}\n\n"
        return json.dumps({"model": model, "created_at": "2024-01-01T00:00:00Z",
                           "message": {"role": "assistant", "content": piece}, "done": False}) + "\n"

    def _tool_call(self, model: str) -> str:
        def chunk(delta: dict[str, Any], finish: str | None) -> str:
            doc = {"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1, "model": model,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return f"data: {json.dumps(doc)}\n\n"

        call = {"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "lookup", "arguments": self.tool_arguments}}
        return (chunk({"role": "assistant", "tool_calls": [call]}, None)
                + chunk({}, "tool_calls") + "data: [DONE]\n\n")

    def _last(self, model: str) -> str:
        if self.kind == "openai":
            chunk = {
                "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            }
            return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
        return json.dumps({"model": model, "created_at": "2024-01-01T00:00:01Z",
                           "message": {"role": "assistant", "content": ""}, "done": True,
                           "done_reason": "stop", "prompt_eval_count": 7, "eval_count": 5}) + "\n"

    @staticmethod
    def _write(h: BaseHTTPRequestHandler, text: str) -> None:
        h.wfile.write(text.encode("utf-8"))
        h.wfile.flush()

    @staticmethod
    def _send_json(h: BaseHTTPRequestHandler, status: int, doc: dict[str, Any]) -> None:
        data = json.dumps(doc).encode("utf-8")
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.send_header("Connection", "close")
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()
