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

from conversations_server import ConversationsServer, error_body, send, serve, stop_serving

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
        self._server, self._thread = serve(self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        stop_serving(self._server, self._thread)

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
            send(h, 429, json.dumps(doc).encode(), {"retry-after": retry})
            return
        if echo is not None:
            given = h.headers.get("Authorization") or ""
            doc = error_body(f"bad auth header {given}", None)
            send(h, echo, json.dumps(doc).encode())
            return
        if malformed is not None and listing == malformed:
            send(h, 200, body_sent)
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
            send(h, answer.status, data, kept)
        finally:
            conn.close()
