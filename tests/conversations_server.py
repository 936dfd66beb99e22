"""A real loopback HTTP server that answers the OpenAI Conversations API calls the Agents
SDK's ``OpenAIConversationsSession`` (and fluxgui) make, in the API's own shapes.

Endpoints (under ``/v1``, as the ``openai`` client sends them):

* ``POST /conversations`` ``{"items": [...], "metadata": {...}}`` → a ``Conversation``
  (``{"id": "conv_…", "object": "conversation", "created_at", "metadata"}``); at most 20
  items.
* ``GET /conversations/{id}/items?after=&limit=&order=`` → a ``ConversationItemList``
  (``{"object": "list", "data", "first_id", "last_id", "has_more"}``); ``limit`` 1 to 100
  (default 20), ``order`` ``desc`` (the default) or ``asc``, ``after`` an item id.
* ``POST /conversations/{id}/items`` ``{"items": [...]}`` → a ``ConversationItemList`` of
  the created items; at most 20 a request.
* ``DELETE /conversations/{id}/items/{item_id}`` → the ``Conversation``.
* ``DELETE /conversations/{id}`` → ``{"id", "object": "conversation.deleted", "deleted": true}``.
* ``POST /responses/compact`` ``{"model", "input": [...]}`` → a ``CompactedResponse``
  (``object: "response.compaction"``): the input's user messages, then one compaction item
  with opaque ``encrypted_content`` — what ``OpenAIResponsesCompactionSession`` stores.

Input items become stored items as the API stores them: each gets an id of its type's
prefix (``msg_``, ``fc_``, ``cmp_``, …) and a ``status`` where the type has one; an easy
message's text becomes an ``input_text`` part (``output_text`` for the assistant). An
unknown conversation is a 404, a missing or wrong key a 401, in the API's error body
(``{"error": {"message", "type", "param", "code"}}``).

``fail`` makes requests fail on purpose: ``ConversationsServer.fail = (429, {"retry-after":
"300"})`` answers every request so until it is reset; ``hang`` accepts a request and
answers nothing until the server stops. Every request is recorded (method, path, query),
and the items the listings served are counted (``served``).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

#: the key the server accepts unless told otherwise
API_KEY = "sk-test-conversations-0123456789"
#: item id prefixes by type, as the API names them
PREFIXES = {
    "message": "msg", "function_call": "fc", "function_call_output": "fco",
    "reasoning": "rs", "compaction": "cmp", "custom_tool_call": "ctc",
    "custom_tool_call_output": "ctco", "web_search_call": "ws", "file_search_call": "fs",
}
#: item types that carry a ``status`` once stored
WITH_STATUS = {"message", "function_call", "function_call_output", "custom_tool_call",
               "web_search_call", "file_search_call", "computer_call"}


def error_body(message: str, code: str | None, kind: str = "invalid_request_error",
               param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def stored_item(item: dict[str, Any]) -> dict[str, Any]:
    """An input item as the Conversations API stores it (a new id, a status)."""
    out = dict(item)
    kind = out.get("type") or ("message" if "role" in out else "unknown")
    out["type"] = kind
    if kind == "message":
        content = out.get("content")
        if isinstance(content, str):
            part = "output_text" if out.get("role") == "assistant" else "input_text"
            extra: dict[str, Any] = {"annotations": []} if part == "output_text" else {}
            out["content"] = [{"type": part, "text": content, **extra}]
    if kind in WITH_STATUS:
        out.setdefault("status", "completed")
    out["id"] = f"{PREFIXES.get(kind, 'item')}_{secrets.token_hex(24)}"
    return out


class ConversationsServer:
    """One loopback Conversations API; use as a context manager (or ``start``/``stop``)."""

    def __init__(self, *, api_key: str = API_KEY) -> None:
        self.api_key = api_key
        self.conversations: dict[str, dict[str, Any]] = {}
        self.items: dict[str, list[dict[str, Any]]] = {}
        self.requests: list[dict[str, Any]] = []
        #: how many items the item listings served, in all
        self.served = 0
        #: answer every request with this status and these headers (``None``: normally)
        self.fail: tuple[int, dict[str, str]] | None = None
        #: accept requests and answer nothing until the server stops
        self.hang = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> ConversationsServer:
        self._server, self._thread = serve(self._handle)
        return self

    def stop(self) -> None:
        self._stop.set()
        assert self._server is not None and self._thread is not None
        stop_serving(self._server, self._thread)

    def __enter__(self) -> ConversationsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """What a user gives as ``--base-url``: ``http://127.0.0.1:PORT/v1``."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    # -- test helpers (the state, never a shortcut the client could take) --------------

    def stored(self, conversation_id: str) -> list[dict[str, Any]]:
        """The items of a conversation, oldest first (copies)."""
        with self._lock:
            return [dict(i) for i in self.items.get(conversation_id, [])]

    def item_requests(self, conversation_id: str, method: str = "GET") -> list[dict[str, Any]]:
        """The recorded requests to a conversation's items."""
        path = f"/v1/conversations/{conversation_id}/items"
        return [r for r in self.requests if r["method"] == method and r["path"] == path]

    # -- one request -----------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        with self._lock:
            self.requests.append({"method": method, "path": parts.path, "query": query, "body": body})
        if self.hang:
            self._stop.wait(60)
            return
        if self.fail is not None:
            status, headers = self.fail
            message = "Rate limit reached for requests" if status == 429 else "failed on purpose"
            self._send(h, status, error_body(message, "rate_limit_exceeded" if status == 429 else None,
                                             "requests" if status == 429 else "server_error"),
                       headers)
            return
        if h.headers.get("Authorization") != f"Bearer {self.api_key}":
            shown = (h.headers.get("Authorization") or "").removeprefix("Bearer ")
            self._send(h, 401, error_body(
                f"Incorrect API key provided: {shown[:6]}*****. You can find your API key "
                "at https://platform.openai.com/account/api-keys.", "invalid_api_key"))
            return
        segments = [unquote(s) for s in parts.path.split("/") if s]
        if segments == ["v1", "responses", "compact"] and method == "POST":
            self._send(h, 200, self._compact(body or {}))
            return
        if segments[:2] != ["v1", "conversations"]:
            self._send(h, 404, error_body(f"Invalid URL ({method} {parts.path})", None))
            return
        with self._lock:
            status, doc = self._route(method, segments[2:], query, body)
        self._send(h, status, doc)

    def _route(self, method: str, rest: list[str], query: dict[str, str],
               body: Any) -> tuple[int, dict[str, Any]]:
        if not rest:
            if method == "POST":
                return self._create(body or {})
            return 405, error_body("Method not allowed", None)
        cid = rest[0]
        if cid not in self.conversations:
            return 404, error_body(f"Conversation with id '{cid}' not found.", None, param="conversation_id")
        if len(rest) == 1:
            if method == "DELETE":
                del self.conversations[cid]
                del self.items[cid]
                return 200, {"id": cid, "object": "conversation.deleted", "deleted": True}
            return 200, self.conversations[cid]
        if rest[1] != "items":
            return 404, error_body("Invalid URL", None)
        if len(rest) == 2 and method == "GET":
            return self._list(cid, query)
        if len(rest) == 2 and method == "POST":
            items = (body or {}).get("items")
            if not isinstance(items, list) or len(items) > 20:
                return 400, error_body("'items': at most 20 items can be added at a time.", "array_above_max_length", param="items")
            made = [stored_item(i) for i in items]
            self.items[cid].extend(made)
            return 200, self._page(made, has_more=False)
        if len(rest) == 3 and method == "DELETE":
            kept = [i for i in self.items[cid] if i["id"] != rest[2]]
            if len(kept) == len(self.items[cid]):
                return 404, error_body(f"Item with id '{rest[2]}' not found.", None, param="item_id")
            self.items[cid] = kept
            return 200, self.conversations[cid]
        return 405, error_body("Method not allowed", None)

    def _create(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        items = body.get("items") or []
        if len(items) > 20:
            return 400, error_body("'items': at most 20 items can be added at a time.", "array_above_max_length", param="items")
        cid = f"conv_{secrets.token_hex(24)}"
        self.conversations[cid] = {
            "id": cid, "object": "conversation", "created_at": int(time.time()),
            "metadata": body.get("metadata") or {},
        }
        self.items[cid] = [stored_item(i) for i in items]
        return 200, self.conversations[cid]

    def _compact(self, body: dict[str, Any]) -> dict[str, Any]:
        kept = []
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("role") == "user":
                kept.append(stored_item({**item, "type": "message"}))
        compaction = {
            "id": f"cmp_{secrets.token_hex(24)}", "type": "compaction",
            "encrypted_content": "gAAAAA" + secrets.token_urlsafe(600),
        }
        return {
            "id": f"resp_{secrets.token_hex(24)}", "object": "response.compaction",
            "created_at": int(time.time()), "output": kept + [compaction],
            "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 150},
        }

    def seed(self, conversation_id: str, items: list[dict[str, Any]] | None = None) -> None:
        """Make a conversation under a chosen id, holding ``items`` stored as the
        endpoints store them (fixture set-up only: the API names conversations itself,
        so tests that need names of their own use this; and a 10,000-item conversation
        written through the SDK, 20 items a request, takes a minute here)."""
        with self._lock:
            self.conversations[conversation_id] = {
                "id": conversation_id, "object": "conversation",
                "created_at": int(time.time()), "metadata": {},
            }
            self.items[conversation_id] = [stored_item(i) for i in items or []]

    def _list(self, cid: str, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        try:
            limit = int(query.get("limit", "20"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            return 400, error_body("Invalid 'limit': must be between 1 and 100.", "invalid_value", param="limit")
        order = query.get("order", "desc")
        if order not in ("asc", "desc"):
            return 400, error_body("Invalid 'order'.", "invalid_value", param="order")
        items = self.items[cid] if order == "asc" else self.items[cid][::-1]
        after = query.get("after")
        if after is not None:
            at = next((n for n, i in enumerate(items) if i["id"] == after), None)
            if at is None:
                return 400, error_body(f"Invalid 'after': no item with id '{after}'.", "invalid_value", param="after")
            items = items[at + 1 :]
        page = items[:limit]
        self.served += len(page)
        return 200, self._page(page, has_more=len(items) > limit)

    @staticmethod
    def _page(data: list[dict[str, Any]], *, has_more: bool) -> dict[str, Any]:
        return {
            "object": "list",
            "data": data,
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
            "has_more": has_more,
        }

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, doc: dict[str, Any],
              headers: dict[str, str] | None = None) -> None:
        send(h, status, json.dumps(doc).encode("utf-8"), headers)


# --------------------------------------------------------------------------- HTTP plumbing


def serve(handle: Callable[[BaseHTTPRequestHandler, str], None]) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """A loopback HTTP/1.1 server on a free port calling ``handle(handler, method)`` for
    every GET, POST and DELETE, serving in a thread of its own."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's names
            handle(self, "GET")

        def do_POST(self) -> None:  # noqa: N802
            handle(self, "POST")

        def do_DELETE(self) -> None:  # noqa: N802
            handle(self, "DELETE")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    return server, thread


def stop_serving(server: ThreadingHTTPServer, thread: threading.Thread) -> None:
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def send(h: BaseHTTPRequestHandler, status: int, data: bytes,
         headers: dict[str, str] | None = None) -> None:
    """Answer ``status`` with the JSON body ``data`` (as bytes: it may be malformed)."""
    try:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client went away


# --------------------------------------------------------------------------- test helpers

import contextlib  # noqa: E402 - helpers below the server
from collections.abc import AsyncIterator  # noqa: E402

import pytest  # noqa: E402


def use_test_key(monkeypatch: Any) -> None:
    """For commands run as processes: the test key in ``OPENAI_API_KEY``, no keyring, no
    ``OPENAI_BASE_URL``."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def conv_server():
    """A running loopback Conversations API."""
    with ConversationsServer() as server:
        yield server


@contextlib.asynccontextmanager
async def sdk_session(server: ConversationsServer, conversation_id: str | None = None) -> AsyncIterator[Any]:
    """The Agents SDK's own ``OpenAIConversationsSession`` on ``server`` (its client
    closed afterwards)."""
    from agents import OpenAIConversationsSession
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=server.base_url, api_key=server.api_key)
    try:
        yield OpenAIConversationsSession(conversation_id=conversation_id, openai_client=client)
    finally:
        await client.close()


async def sdk_write(server: ConversationsServer, items: list[dict[str, Any]], conversation_id: str | None = None) -> str:
    """Write ``items`` with ``OpenAIConversationsSession.add_items`` (a new conversation
    unless one is named); its id."""
    async with sdk_session(server, conversation_id) as session:
        await session.add_items(items)
        return session.session_id


async def sdk_items(server: ConversationsServer, conversation_id: str, limit: int | None = None) -> list[dict[str, Any]]:
    """What ``OpenAIConversationsSession(conversation_id=…).get_items(limit)`` returns."""
    async with sdk_session(server, conversation_id) as session:
        return await session.get_items(limit)


def texts(n: int, prefix: str = "m") -> list[dict[str, Any]]:
    """``n`` alternating user/assistant easy messages ``m0``, ``m1``, …"""
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"{prefix}{i}"} for i in range(n)]


@contextlib.contextmanager
def memory_keyring():
    """A keyring backend that keeps passwords in a dict, installed for the block (keyring's
    own backend API; the dict is the yielded ``values``)."""
    import keyring
    from keyring.backend import KeyringBackend

    values: dict[tuple[str, str], str] = {}

    class Memory(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def get_password(self, service: str, username: str) -> str | None:
            return values.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            values[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            values.pop((service, username), None)

    previous = keyring.get_keyring()
    keyring.set_keyring(Memory())
    try:
        yield values
    finally:
        keyring.set_keyring(previous)
