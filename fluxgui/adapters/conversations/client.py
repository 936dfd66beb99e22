"""The ``openai`` client a Conversations store talks through, and how its errors read.

:class:`ConversationsBackend` is the store's :class:`~fluxgui.adapters.parts.StoreBackend`:
an ``AsyncOpenAI`` client on the base URL (its own retries: twice, honouring
``retry-after``) in a worker thread (:mod:`.worker`: :meth:`~ConversationsBackend.run`),
``writable``, no change token (the API has none), no local files.
:func:`failing` turns the client's errors into one line each — a refused key (401/403),
an unknown conversation (404), rate limiting (429, with the server's ``retry-after``),
a timeout, no network, an answer that is not the API's JSON — never showing the key or
the server's echo of it (every server text goes through
:func:`fluxgui.core.redact.redact_text` with the key).

A call (one request and the client's retries) keeps to the store's ``api_timeout``: a
server that asks to wait (``retry-after``) longer than the call has left is not waited
for; the error says how long it asked (:class:`AskedToWait`).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import openai
from openai import AsyncOpenAI

from fluxgui.core.errors import (
    ApiKeyRefused,
    Conflict,
    FluxguiError,
    InvalidItem,
    SessionNotFound,
    StoreUnavailable,
    show_id,
)
from fluxgui.core.redact import redact_text, redact_url

from .answers import NotTheApi
from .target import location
from .worker import ClientThread

T = TypeVar("T")

#: seconds to connect; a request's whole wait is the store's ``api_timeout``
CONNECT_TIMEOUT = 10.0
#: the client's own retries of a failed request (its default)
RETRIES = 2
#: ids the client refuses to put in a path (it never sends them)
UNSENDABLE = frozenset({"", ".", ".."})
#: statuses the client tries again, after the wait the server asks for (its own rule)
RETRIED = frozenset({408, 409, 429})
#: when the call on the client's thread must be over (``time.monotonic``)
_deadline: contextvars.ContextVar[float] = contextvars.ContextVar("fluxgui_api_deadline")


class AskedToWait(openai.OpenAIError):
    """The server answered ``status`` and asked to wait ``seconds`` before trying again:
    longer than the call has left. Raised from the HTTP client's response hook, which the
    ``openai`` client passes on as it is, without retrying."""

    def __init__(self, status: int, seconds: float, body: object) -> None:
        super().__init__(f"the server asked to wait {seconds:g} s ({status})")
        self.status_code = status
        self.seconds = seconds
        self.body = body


async def _refuse_long_waits(response: Any) -> None:
    """The response hook: see :class:`AskedToWait`."""
    status = response.status_code
    if status not in RETRIED and status < 500:
        return
    seconds = _wait_of(response.headers)
    deadline = _deadline.get(None)
    if seconds is None or deadline is None or seconds <= deadline - time.monotonic():
        return
    await response.aread()
    try:
        body: object = json.loads(response.content)
    except ValueError:
        body = None
    raise AskedToWait(status, seconds, body)


def make_client(base_url: str, api_key: str, timeout: float) -> AsyncOpenAI:
    """The client (no request is made)."""
    import httpx2

    return AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        timeout=httpx2.Timeout(timeout, connect=min(CONNECT_TIMEOUT, timeout)),
        max_retries=RETRIES,
        http_client=openai.DefaultAsyncHttpxClient(
            event_hooks={"response": [_refuse_long_waits]}
        ),
    )


class ConversationsBackend:
    """What a Conversations store needs of its back-end (see the module text)."""

    def __init__(self, api_key: str, base_url: str, *, writable: bool, timeout: float) -> None:
        self._client = ClientThread(lambda: make_client(base_url, api_key, timeout))
        #: masked in every text a server sends (never shown)
        self._secrets = (api_key,)
        self.base_url = base_url
        self.writable = writable
        self.timeout = timeout
        #: the server as errors name it (secrets hidden)
        self.url = redact_url(base_url)
        self.display = f"the Conversations API at {self.url}"

    def location(self) -> str:
        """``openai-conversations:https://api.openai.com/v1``: the server, never the key."""
        return location(self.base_url)

    async def change_token(self) -> Any:
        """``None``: the API tells nothing cheap about changes."""
        return None

    def local_paths(self) -> list[Path]:
        """None: the store is on a server."""
        return []

    async def run(self, call: Callable[[AsyncOpenAI], Awaitable[T]]) -> T:
        """``await call(client)`` on the client's own thread (see :mod:`.worker`), within
        the API timeout's waits (see the module text)."""

        async def timed(client: AsyncOpenAI) -> T:
            _deadline.set(time.monotonic() + self.timeout)
            return await call(client)

        return await self._client.run(timed)

    async def close(self) -> None:
        await self._client.close()

    @contextlib.contextmanager
    def failing(self, conversation: str | None = None) -> Iterator[None]:
        """Turn the client's errors into one line (see the module text); a 404 names
        ``conversation``."""
        if conversation is not None and conversation in UNSENDABLE:
            # The client refuses these before sending (no path segment can be one).
            raise self.unknown(conversation)
        try:
            yield
        except AskedToWait as exc:
            raise self.asked_to_wait(exc) from None
        except openai.APIError as exc:
            raise self.error(exc, conversation) from None
        except ValueError as exc:  # JSON that does not parse, or not the API's shape
            raise self.malformed(exc) from None

    def unknown(self, conversation: str) -> SessionNotFound:
        return SessionNotFound(f"unknown conversation id {show_id(conversation)} at {self.url} (404)")

    def malformed(self, exc: ValueError) -> StoreUnavailable:
        """An answer that is not what the API sends: an error, never the end of a
        conversation."""
        if isinstance(exc, json.JSONDecodeError):
            what = "not JSON"
        else:
            what = f"not in the API's shape: {exc}" if isinstance(exc, NotTheApi) else "not in the API's shape"
        return StoreUnavailable(f"{self.display} sent an answer fluxgui cannot read ({what})")

    def asked_to_wait(self, exc: AskedToWait) -> StoreUnavailable:
        doing = ("is rate-limiting requests" if exc.status_code == 429
                 else f"answered {exc.status_code}")
        code = _body_error(exc.body).get("code")
        return StoreUnavailable(
            f"{self.display} {doing} ({exc.status_code}{_of(str(code) if code else None)}) and "
            f"asked to wait {exc.seconds:g} s, longer than the API timeout "
            f"({self.timeout:g} s): retry after {exc.seconds:g} s"
        )

    def error(self, exc: openai.APIError, conversation: str | None) -> FluxguiError:
        """The one line for a client error."""
        where = self.display
        if isinstance(exc, openai.APITimeoutError):
            return StoreUnavailable(
                f"{where} did not answer within {self.timeout:g} s (tried {RETRIES + 1} times)"
            )
        if isinstance(exc, openai.APIConnectionError):
            return StoreUnavailable(f"cannot reach {where}: {_reason(exc)}")
        if not isinstance(exc, openai.APIStatusError):
            return StoreUnavailable(f"{where} failed: {_short(str(exc), secrets=self._secrets)}")
        status, code = exc.status_code, _code(exc)
        if isinstance(exc, openai.AuthenticationError):
            # Never the server's message: it echoes the start of the key.
            return ApiKeyRefused(
                f"{where} refused the API key (401{_of(code)}): give a valid key with "
                "OPENAI_API_KEY or the keyring"
            )
        if isinstance(exc, openai.PermissionDeniedError):
            return StoreUnavailable(
                f"{where} does not let this API key use conversations (403{_of(code)})"
            )
        if isinstance(exc, openai.NotFoundError) and conversation is not None:
            return self.unknown(conversation)
        if isinstance(exc, openai.RateLimitError):
            wait = _retry_after(exc)
            later = f"retry after {wait}" if wait else "retry later"
            return StoreUnavailable(
                f"{where} is rate-limiting requests (429{_of(code)}), also after the "
                f"client's retries: {later}"
            )
        message = _short(_message(exc), secrets=self._secrets)
        if status == 400 and "after" in message.lower():
            return Conflict(
                f"the item to page from is no longer in the conversation at {where}: "
                "read it again"
            )
        if status in (400, 422):
            return InvalidItem(f"{where} refused the request ({status}): {message}")
        return StoreUnavailable(f"{where} answered {status}: {message}")


def _reason(exc: BaseException) -> str:
    """What stopped the connection, from the chain of causes (the client's own message
    is the same for all of them)."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    text = " ".join(f"{e} {type(e).__name__}" for e in chain).lower()
    if "refused" in text:
        return "connection refused"
    if "name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
        return "the host name does not resolve"
    if "unreachable" in text:
        return "the network is unreachable"
    return _short(str(chain[-1])) or "no connection"


def _body_error(body: object) -> dict[str, Any]:
    """The ``error`` object of an error answer's body (``{}`` when it has none)."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return inner
    return {}


def _code(exc: openai.APIStatusError) -> str | None:
    code = _body_error(exc.body).get("code")
    return str(code) if code else None


def _of(code: str | None) -> str:
    return f" {code}" if code else ""


def _message(exc: openai.APIStatusError) -> str:
    message = _body_error(exc.body).get("message")
    return str(message) if message else f"HTTP {exc.status_code}"


def _short(text: str, width: int = 200, secrets: tuple[str, ...] = ()) -> str:
    """``text`` on one line, at most ``width`` characters, URLs, keys and ``secrets``
    masked (:func:`~fluxgui.core.redact.redact_text`)."""
    flat = " ".join(redact_text(text, secrets).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _wait_of(headers: Any) -> float | None:
    """The seconds a server's ``retry-after-ms`` or ``retry-after`` (a number or an HTTP
    date) asks to wait; ``None`` when it asks nothing readable."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        seconds: float | None
        try:
            seconds = float(value) / divisor
        except ValueError:
            seconds = _date_wait(value)
        if seconds is not None and not math.isnan(seconds) and seconds >= 0:
            return seconds
    return None


def _date_wait(value: str) -> float | None:
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _retry_after(exc: openai.APIStatusError) -> str | None:
    """The server's ``retry-after`` (``retry-after-ms``) as ``"20 s"``."""
    seconds = _wait_of(exc.response.headers)
    if seconds is None or not math.isfinite(seconds):
        value = exc.response.headers.get("retry-after")
        return _short(value, 60) if value else None
    return f"{seconds:g} s"
