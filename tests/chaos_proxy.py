"""A loopback HTTP proxy in front of the loopback Conversations API
(tests/conversations_server.py) that forwards every request as it came and can break
answers the way a bad proxy or a failing server does:

* :attr:`ChaosProxy.malformed_page` = ``k``: the ``k``-th listing of a conversation's items
  (``GET …/items``, counted from 1 since the proxy started, or since :meth:`reset`) is
  answered ``200`` with the body ``{not json`` (``Content-Type: application/json``), or
  :attr:`ChaosProxy.malformed_body`;
* :attr:`ChaosProxy.echo_status` = ``status``: every request is answered ``status`` in the
  API's error shape, its message echoing the request's ``Authorization`` header (as some
  gateways do);
* :attr:`ChaosProxy.retry_after` = ``"120"``: every request is answered ``429`` with that
  ``retry-after``.

Every request is counted (:attr:`ChaosProxy.seen`), forwarded or not.
"""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from conversations_server import ConversationsServer, error_body

#: the malformed body a broken proxy answers with
MALFORMED = b"{not json"
#: request headers that describe one hop, not the request
_HOP = {"host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"}
#: answer headers the proxy writes itself
_OWN = {"content-length", "content-type", "server", "date"}


class ChaosProxy:
    """A proxy to ``upstream`` (see the module text); a context manager."""

    def __init__(self, upstream: ConversationsServer) -> None:
        self.upstream = upstream
        self.malformed_page: int | None = None
        self.malformed_body = MALFORMED
        self.echo_status: int | None = None
        self.retry_after: str | None = None
        #: (method, path) of every request received
        self.seen: list[tuple[str, str]] = []
        self._listings = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def reset(self) -> None:
        """No faults; the listings counted from 1 again."""
        with self._lock:
            self.malformed_page = self.echo_status = self.retry_after = None
            self.malformed_body = MALFORMED
            self._listings = 0

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ChaosProxy:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's names
                owner._handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                owner._handle(self, "POST")

            def do_DELETE(self) -> None:  # noqa: N802
                owner._handle(self, "DELETE")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    # -- one request -------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        path = urlsplit(h.path).path
        with self._lock:
            self.seen.append((method, path))
            if method == "GET" and path.endswith("/items"):
                self._listings += 1
            listing = self._listings if method == "GET" and path.endswith("/items") else None
            malformed, echo, retry = self.malformed_page, self.echo_status, self.retry_after
            body_sent = self.malformed_body
        if retry is not None:
            doc = error_body("Rate limit reached for requests", "rate_limit_exceeded", "requests")
            self._send(h, 429, json.dumps(doc).encode(), {"retry-after": retry})
            return
        if echo is not None:
            given = h.headers.get("Authorization") or ""
            doc = error_body(f"bad auth header {given}", None)
            self._send(h, echo, json.dumps(doc).encode())
            return
        if malformed is not None and listing == malformed:
            self._send(h, 200, body_sent)
            return
        self._forward(h, method, body)

    def _forward(self, h: BaseHTTPRequestHandler, method: str, body: bytes) -> None:
        up = urlsplit(self.upstream.base_url)
        conn = http.client.HTTPConnection(up.hostname or "127.0.0.1", up.port, timeout=60)
        try:
            headers = {k: v for k, v in h.headers.items() if k.lower() not in _HOP}
            conn.request(method, h.path, body=body or None, headers=headers)
            answer = conn.getresponse()
            data = answer.read()
            kept = {k: v for k, v in answer.getheaders()
                    if k.lower() not in _HOP | _OWN}
            self._send(h, answer.status, data, kept)
        finally:
            conn.close()

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, data: bytes,
              headers: dict[str, str] | None = None) -> None:
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
