"""The test chat's model providers, and their failures as one-line :class:`ProviderError`.

* ``openai``: flux's own :class:`~flux.models.openai_provider.OpenAIModel` (any
  OpenAI-compatible chat-completions endpoint, streamed), given a client with a short,
  configurable timeout and no silent retries, and a check that the stream really ended.
* ``ollama``: Ollama's ``/api/chat`` NDJSON stream. flux's ``OllamaModel`` needs
  aiohttp, which fluxgui does not ship, so :class:`OllamaChatModel` keeps flux's request
  building and reads the stream with httpx2 (what the ``openai`` package itself uses).
* ``offline``: :class:`~fluxgui.services.offline_model.OfflineModel`.

Nothing here writes the API key anywhere; error messages never include it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncGenerator
from typing import Any

from flux.context import Usage
from flux.exceptions import FluxError
from flux.exceptions import ProviderError as FluxProviderError
from flux.models.base import Model, ModelRequest, ModelResponse, StreamChunk, ToolCall
from flux.models.ollama import OllamaModel
from flux.models.openai_provider import OpenAIModel

from fluxgui.core.errors import ProviderError, ProviderKeyRefused, show_id
from fluxgui.core.redact import redact_url

from .offline_model import OfflineModel

PROVIDERS = ("offline", "openai", "ollama")
DEFAULT_MODELS = {"offline": "offline", "openai": "gpt-4o-mini", "ollama": "llama3.2"}
DEFAULT_URLS = {"openai": "https://api.openai.com/v1", "ollama": "http://127.0.0.1:11434"}
#: what a keyless local OpenAI-compatible server (LM Studio, vLLM, llama.cpp) is sent
NO_KEY = "not-needed"


class _Malformed(Exception):
    """The server's stream broke the protocol (internal; becomes a ProviderError)."""


class OpenAIChatModel(OpenAIModel):
    """flux's OpenAI provider with a bounded timeout, no retries, and a stream that must
    end properly (``finish_reason`` / ``[DONE]``) rather than just stop."""

    def __init__(self, model: str, api_key: str, base_url: str | None, timeout: float) -> None:
        super().__init__(model=model, api_key=api_key, base_url=base_url)
        self._timeout = timeout
        self._clients: list[Any] = []

    def _get_client(self) -> Any:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(
            api_key=self._api_key, base_url=self._base_url, timeout=self._timeout, max_retries=0
        )
        self._clients.append(client)  # closed when the stream ends, however it ends
        return client

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamChunk, None]:
        """The chat-completions SSE stream, read with httpx2 to its very end (a bad
        event is remembered, not raised mid-stream), so that httpx closes its own
        generators in this task; then the ``done`` chunk, as flux's provider gives it."""
        import httpx2

        params = self._build_params(request)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        url = f"{(self._base_url or 'https://api.openai.com/v1').rstrip('/')}/chat/completions"
        headers = {"Authorization": f"Bearer {self._api_key}"}
        problem: str | None = None
        finished = False
        usage: Usage | None = None
        calls: dict[int, dict[str, str]] = {}
        async with httpx2.AsyncClient(timeout=self._timeout) as client:
            async with client.stream("POST", url, json=params, headers=headers) as resp:
                if resp.status_code != 200:
                    body = (await resp.aread()).decode("utf-8", "replace")
                    raise FluxProviderError("openai", _server_message(body), resp.status_code)
                async with contextlib.aclosing(_lines(resp)) as lines:
                    async for line in lines:
                        if problem is not None or not line.startswith("data:"):
                            continue
                        data = line[5:].strip()
                        if data == "[DONE]":
                            finished = True
                            continue
                        try:
                            event = json.loads(data)
                        except ValueError:
                            problem = "an event is not JSON"
                            continue
                        if not isinstance(event, dict):
                            problem = "an event is not a JSON object"
                            continue
                        if event.get("usage"):
                            u = event["usage"]
                            usage = Usage(
                                input_tokens=int(u.get("prompt_tokens") or 0),
                                output_tokens=int(u.get("completion_tokens") or 0),
                                total_tokens=int(u.get("total_tokens") or 0),
                                requests=1,
                            )
                        for choice in event.get("choices") or []:
                            delta = choice.get("delta") or {}
                            if delta.get("content"):
                                yield StreamChunk(delta_text=str(delta["content"]))
                            for tc in delta.get("tool_calls") or []:
                                slot = calls.setdefault(
                                    int(tc.get("index") or 0), {"id": "", "name": "", "arguments": ""}
                                )
                                fn = tc.get("function") or {}
                                slot["id"] = tc.get("id") or slot["id"]
                                slot["name"] = fn.get("name") or slot["name"]
                                slot["arguments"] += fn.get("arguments") or ""
                            if choice.get("finish_reason"):
                                finished = True
        if problem is not None:
            raise _Malformed(problem)
        if not finished:
            raise _Malformed("the stream ended before the reply was complete")
        made = [
            ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"])
            for _i, c in sorted(calls.items())
            if c["name"]
        ]
        # flux's streamed runner takes one call per chunk; every call of the reply is
        # in ``raw`` too (a replay answers parallel calls: fluxgui.services.replay)
        yield StreamChunk(
            done=True, tool_call=made[0] if len(made) == 1 else None, usage=usage,
            raw={"tool_calls": made},
        )


class OllamaChatModel(OllamaModel):
    """Ollama's ``/api/chat``, streamed as newline-delimited JSON over httpx2."""

    def __init__(self, model: str, base_url: str, timeout: float) -> None:
        super().__init__(model=model, base_url=base_url)
        self._timeout = timeout

    async def complete(self, request: ModelRequest) -> ModelResponse:
        text = ""
        usage = None
        async for chunk in self.stream(request):
            text += chunk.delta_text or ""
            usage = chunk.usage or usage
        return ModelResponse(content=text or None, usage=usage, finish_reason="stop")

    def _build_payload(self, request: ModelRequest, stream: bool) -> dict[str, Any]:
        """flux's payload, with each earlier call's arguments as the JSON object Ollama
        takes (flux passes the arguments' text)."""
        payload: dict[str, Any] = super()._build_payload(request, stream)
        for m in payload.get("messages") or []:
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                if isinstance(fn.get("arguments"), str):
                    try:
                        fn["arguments"] = json.loads(fn["arguments"] or "{}")
                    except ValueError:
                        pass  # not JSON: sent as it was stored
        return payload

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamChunk, None]:
        import httpx2

        payload = self._build_payload(request, stream=True)
        end: StreamChunk | None = None
        made: list[ToolCall] = []
        async with httpx2.AsyncClient(timeout=self._timeout) as client:
            async with client.stream("POST", f"{self.base_url}/api/chat", json=payload) as resp:
                if resp.status_code != 200:
                    body = (await resp.aread()).decode("utf-8", "replace")
                    raise FluxProviderError("ollama", _server_message(body), resp.status_code)
                async with contextlib.aclosing(_lines(resp)) as lines:
                    async for line in lines:
                        if not line.strip():
                            continue
                        try:
                            data = json.loads(line)
                        except ValueError:
                            raise _Malformed("a line of the stream is not JSON") from None
                        if not isinstance(data, dict):
                            raise _Malformed("a line of the stream is not a JSON object")
                        if data.get("error"):
                            raise FluxProviderError("ollama", str(data["error"]), None)
                        message = data.get("message") or {}
                        content = message.get("content") or ""
                        if content:
                            yield StreamChunk(delta_text=str(content))
                        made += _ollama_calls(message.get("tool_calls"), len(request.messages), len(made))
                        if data.get("done"):
                            n_in = int(data.get("prompt_eval_count") or 0)
                            n_out = int(data.get("eval_count") or 0)
                            end = StreamChunk(done=True, usage=Usage(
                                input_tokens=n_in, output_tokens=n_out,
                                total_tokens=n_in + n_out, requests=1,
                            ), tool_call=made[0] if len(made) == 1 else None,
                                raw={"tool_calls": made})
                            # No break: reading the stream to its end lets httpx close
                            # its own generators here, not later in another task.
        # flux's Runner stops reading at ``done`` and never closes this generator: the
        # HTTP stream is closed above, before that last chunk goes out.
        if end is None:
            raise _Malformed("the stream ended before the reply was complete")
        yield end


def _ollama_calls(calls: Any, sent: int, before: int) -> list[ToolCall]:
    """The tool calls of an Ollama stream line (``message.tool_calls``: each a
    ``function`` with ``name`` and ``arguments`` as an object). Ollama gives them no id:
    each gets ``call_<messages sent>_<n>``, unique within a conversation (the history
    grows with every request) and the same for the same request."""
    out: list[ToolCall] = []
    for n, call in enumerate(calls if isinstance(calls, list) else [], before):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not fn.get("name"):
            continue
        args = fn.get("arguments")
        text = args if isinstance(args, str) else json.dumps(args if args is not None else {})
        out.append(ToolCall(id=str(call.get("id") or f"call_{sent}_{n}"), name=str(fn["name"]), arguments=text))
    return out


def make_model(provider: str, model: str, base_url: str | None, api_key: str | None, timeout: float) -> Model:
    """The flux ``Model`` for a provider (raises ProviderError for an unknown one)."""
    if provider == "offline":
        return OfflineModel()
    # "offline" (AgentConfig's default) or nothing: the provider's usual model
    name = model if model and model != "offline" else DEFAULT_MODELS.get(provider, "")
    if provider == "openai":
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not base_url:
                raise ProviderError("no API key for OpenAI: set OPENAI_API_KEY")
            key = NO_KEY
        return OpenAIChatModel(name, key, base_url or None, timeout)
    if provider == "ollama":
        return OllamaChatModel(name, base_url or DEFAULT_URLS["ollama"], timeout)
    raise ProviderError(f"unknown chat provider {provider!r} (use one of {', '.join(PROVIDERS)})")


def endpoint(provider: str, base_url: str | None) -> str:
    """The URL a provider talks to, as errors show it (password and keys hidden)."""
    return redact_url((base_url or DEFAULT_URLS.get(provider, provider)).rstrip("/"))


def check_base_url(base_url: str | None) -> None:
    """One line (``ProviderError``) for a base URL no client can use: not http(s), no
    host, a port out of range. Checked before anything is sent."""
    if not base_url:
        return
    from urllib.parse import urlsplit

    shown = show_id(redact_url(base_url))
    try:
        parts = urlsplit(base_url)
        parts.port  # noqa: B018 - raises ValueError when out of range
    except ValueError as exc:
        raise ProviderError(f"bad base URL {shown}: {exc}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ProviderError(f"bad base URL {shown}: use http://HOST[:PORT]/… or https://…")


def as_provider_error(exc: BaseException, where: str, timeout: float) -> ProviderError | None:
    """A one-line ProviderError for a failure of the model call, or ``None`` for a bug.

    ``where`` is the endpoint's URL. The chain (``__cause__``/``__context__``) is searched:
    flux wraps the openai client's errors in its own ProviderError.
    """
    chain = _chain(exc)
    names = {type(e).__name__ for e in chain}
    status = _status(chain)
    if status == 401:
        return ProviderKeyRefused(f"the endpoint refused the API key ({where})")
    if names & {"APITimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout",
                "WriteTimeout", "PoolTimeout", "TimeoutError"}:
        return ProviderError(f"{where} did not answer within {timeout:g} s")
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or any(
        "refused" in str(e).lower() for e in chain if type(e).__name__ in ("ConnectError", "OSError")
    ):
        return ProviderError(f"cannot reach {where}: connection refused (is the server running?)")
    if names & {"APIConnectionError", "ConnectError", "NetworkError", "ReadError",
                "RemoteProtocolError", "ProxyError"} or any(isinstance(e, OSError) for e in chain):
        return ProviderError(f"cannot reach {where}: {_reason(chain)}")
    for e in chain:
        if isinstance(e, _Malformed):
            return ProviderError(f"{where} sent a malformed stream: {e}")
        if isinstance(e, json.JSONDecodeError):
            return ProviderError(f"{where} sent a malformed stream: an event is not JSON")
    if status is not None:
        detail = _server_detail(chain)
        return ProviderError(f"{where} answered HTTP {status}" + (f": {detail}" if detail else ""))
    for e in chain:
        if isinstance(e, FluxProviderError):
            return ProviderError(f"{where}: {e}")
        if isinstance(e, FluxError):
            return ProviderError(f"the model run failed: {e}")
        if type(e).__module__.split(".")[0] in ("openai", "httpx2"):
            return ProviderError(f"{where}: {e}")
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        out.append(e)
        todo += [e.__cause__, e.__context__]
        if isinstance(e, BaseExceptionGroup):  # anyio task groups (httpx2) raise these
            todo += list(e.exceptions)
    return out


def _status(chain: list[BaseException]) -> int | None:
    for e in chain:
        code = getattr(e, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def _reason(chain: list[BaseException]) -> str:
    for e in reversed(chain):  # the innermost cause says most
        text = str(e).strip()
        if text:
            return " ".join(text.split())[:200]
    return "the connection failed"


def _server_detail(chain: list[BaseException]) -> str:
    for e in chain:
        body = getattr(e, "body", None)
        if isinstance(body, dict):
            err = body.get("error")
            message = err.get("message") if isinstance(err, dict) else (err or body.get("message"))
            if message:
                return " ".join(str(message).split())[:200]
        if isinstance(e, FluxProviderError):
            return " ".join(str(e).split(": ", 1)[-1].split())[:200]
    return ""


def _server_message(body: str) -> str:
    try:
        doc = json.loads(body)
    except ValueError:
        return " ".join(body.split())[:200]
    if isinstance(doc, dict) and doc.get("error"):
        err = doc["error"]
        return str(err.get("message") if isinstance(err, dict) else err)[:200]
    return " ".join(body.split())[:200]


async def _lines(resp: Any) -> AsyncGenerator[str, None]:
    """The lines of a streamed answer (its stream closed with this generator)."""
    async with contextlib.aclosing(resp.aiter_lines()) as lines:
        async for line in lines:
            yield line
