"""Test chat: talk to a session through a flux ``Agent`` and keep the turn in the store.

:func:`chat` runs ``flux.Runner.run_streamed`` with the session's history, read through
the store's flux ``Session`` adapter (``store.session(id)``), and streams the reply to
``on_event`` as it arrives. Only when the reply is complete are the user's message and
the reply written, in one ``add_messages`` call (one transaction) through the same
adapter. So a cancelled task (Stop) or a provider error leaves the store as it was, and
a retry does not duplicate the user's message.

flux's ``Runner.run_streamed`` takes no ``session`` (only ``Runner.run`` does, and it
also saves only after a complete reply); this module does for the stream what
``Runner.run`` does for a session: history first, then ``user`` + ``assistant`` saved
at the end.

With ``copy=True`` the session is forked at its last message and the turn lands on the
fork; the original is not touched. The fork is made when the reply is complete (with
the turn, under one shielded commit), so a failed or cancelled chat leaves no empty fork.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

from flux.agent import Agent, AgentSettings
from flux.config import FluxConfig
from flux.models.base import Message as FluxMessage
from flux.models.base import Model, ModelRequest, ModelResponse, ModelSettings, StreamChunk
from flux.runner import Runner
from flux.streaming.events import MessageCompleteEvent, TextDeltaEvent, ToolCallEvent

from fluxgui.core.roles import refuse
from fluxgui.core.errors import FluxguiError, InvalidItem, ProviderError, show_id

from .chat_providers import PROVIDERS, as_provider_error, check_base_url, endpoint, make_model

#: the roles a chat model is sent from the stored history (others are left out: tool
#: outputs without their call, reasoning items, …); "developer" is sent as "system"
_HISTORY_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
#: how many model calls one chat may take (tool calls loop back to the model)
MAX_TURNS = 4


@dataclass
class AgentConfig:
    """The agent a test chat runs. ``api_key`` is never written anywhere by fluxgui."""

    name: str = "assistant"
    instructions: str = ""
    model: str = "offline"
    temperature: float = 0.7
    provider: str = "offline"  # "offline" | "openai" | "ollama"
    #: an OpenAI-compatible endpoint (…/v1) or Ollama's (http://127.0.0.1:11434)
    base_url: str | None = None
    #: given, or taken from OPENAI_API_KEY when None
    api_key: str | None = None
    #: seconds to wait for the server (connect, and between stream pieces)
    timeout: float = 60.0

    def to_settings(self) -> dict[str, Any]:
        """Everything but ``api_key``: what the panel may store per store."""
        out = asdict(self)
        out.pop("api_key")
        return out

    @classmethod
    def from_settings(cls, d: dict[str, Any]) -> AgentConfig:
        """The config stored with :meth:`to_settings` (unknown keys and ``api_key`` ignored,
        bad values replaced by the defaults)."""
        default = cls()
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            if f.name == "api_key" or f.name not in d:
                continue
            value = d[f.name]
            if f.name in ("temperature", "timeout"):
                try:
                    value = float(value)
                except (TypeError, ValueError):
                    continue
            elif f.name == "base_url":
                value = str(value) if value else None
            else:
                value = "" if value is None else str(value)
            kwargs[f.name] = value
        config = cls(**kwargs)
        if config.provider not in PROVIDERS:
            config.provider = default.provider
        return config


@dataclass
class ChatEvent:
    """Something that happened during a chat.

    ``kind``: ``"text"`` (a streamed delta in ``text``), ``"tool_call"`` (``data``: id,
    name, arguments), ``"tool_output"`` (``data``: id, name, output — what the tool gave
    back, reported when the run hands it to the model), ``"message"`` (a finished model message in ``text``), ``"done"``
    (``text``: the reply; ``data``: session_id, added), ``"error"`` (``text``: the
    one-line error, raised right after).
    """

    kind: str
    text: str = ""
    data: dict[str, Any] | None = None


@dataclass
class ChatResult:
    """A finished chat: where the turn was saved, the reply, how many messages were added."""

    session_id: str
    reply: str
    added: int


def history_messages(stored: list[dict[str, Any]]) -> list[FluxMessage]:
    """The stored history (flux ``Session.get_messages`` dicts) as the model's messages."""
    out: list[FluxMessage] = []
    for m in stored:
        role = _HISTORY_ROLES.get(str(m.get("role") or ""))
        content = m.get("content")
        if role is None or content is None:
            continue
        text = content if isinstance(content, str) else _text_of(content)
        if text:
            out.append(FluxMessage(role=role, content=text))
    return out


def _text_of(content: Any) -> str:
    """Text of a list of content parts ({"type": "input_text", "text": …}, …)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


async def chat(
    store: Any,
    session_id: str,
    message: str,
    config: AgentConfig,
    *,
    on_event: Callable[[ChatEvent], None] | None = None,
    copy: bool = False,
    branch: str | None = None,
    new: bool = False,
) -> ChatResult:
    """Send ``message`` to the agent ``config`` describes, with the session's history
    (of ``branch``, for stores with branches; default ``main``), stream the reply to
    ``on_event``, and save the turn (user + assistant) when complete.

    Raises a one-line :class:`ProviderError` when the provider fails (nothing saved),
    ``ReadOnlyError``/``InvalidItem`` before calling the model when the store cannot take
    the turn, ``SessionNotFound`` for an unknown session unless ``new`` (start it: a
    typo must not make a new session). Cancelling the task
    saves nothing unless the reply was already complete and being written.
    """
    emit = on_event or (lambda event: None)
    if not message.strip():
        raise InvalidItem("the message is empty")
    check_base_url(config.base_url)
    fork_at: int | None = None
    if copy:
        (store.editor or refuse(store, "editor")).check_editable()
        await store.reader.require_session(session_id)
        last = await store.reader.page_messages(session_id, limit=1, branch=branch)
        if not last:
            raise FluxguiError(
                f"session {show_id(session_id)} has no messages to copy: chat on it directly"
            )
        fork_at = int(last[-1].id)
    else:
        if not new:
            await store.reader.require_session(session_id)
        # Adding nothing runs the store's checks (read-only, a format it cannot add to)
        # before anything is sent anywhere.
        await (store.writer or refuse(store, "writer")).add_messages(session_id, [], branch=branch)
    if fork_at is None:
        history = history_messages(await store.session(session_id, branch=branch).get_messages())
    else:  # what the fork will hold: the session up to its last message
        history = history_messages(await _fork_history(store, session_id, fork_at, branch))

    model = make_model(config.provider, config.model, config.base_url, config.api_key, config.timeout)
    agent = Agent(
        name=config.name or "assistant",
        instructions=config.instructions,
        model=model,
        settings=AgentSettings(
            max_turns=MAX_TURNS, model_settings=ModelSettings(temperature=config.temperature)
        ),
    )
    where = endpoint(config.provider, config.base_url)
    try:
        reply = await _stream_reply(agent, model, [*history, FluxMessage(role="user", content=message)], emit)
    except Exception as exc:  # a cancel (BaseException) passes through: nothing saved
        err = exc if isinstance(exc, ProviderError) else as_provider_error(exc, where, config.timeout)
        if err is None:
            raise  # a bug: the caller reports it with its traceback
        emit(ChatEvent("error", str(err)))
        raise err from exc

    turn = [{"role": "user", "content": message}, {"role": "assistant", "content": reply}]
    # Shielded: once the reply is complete, a Stop must not cut the write in two (the
    # fork without its turn); the write finishes and the cancel is delivered after it.
    target = await asyncio.shield(_commit(store, session_id, fork_at, turn, branch))
    emit(ChatEvent("done", reply, {"session_id": target, "added": len(turn)}))
    return ChatResult(target, reply, len(turn))


async def _fork_history(
    store: Any, session_id: str, fork_at: int, branch: str | None
) -> list[dict[str, Any]]:
    """flux message dicts of the session up to and including message ``fork_at``."""
    out: list[dict[str, Any]] = []
    async for page in store.reader.iter_messages(session_id, branch=branch):
        for m in page:
            if m.id is not None and int(m.id) > fork_at:
                return out
            out.append({"role": m.role, "content": m.text})
    return out


class _ReportToolOutputs(Model):
    """The provider's model, reporting the tool results each request carries.

    flux's streamed runner runs the tools itself and emits no event for their results;
    they reach the model as ``role="tool"`` messages in the next request. So the model
    is where they can be seen: each is reported once, as a ``tool_output`` event.
    """

    def __init__(self, model: Model, emit: Callable[[ChatEvent], None]) -> None:
        self._model = model
        self._emit = emit
        self._seen: set[int] = set()

    def _report(self, request: ModelRequest) -> None:
        for n, m in enumerate(request.messages):
            if m.role != "tool" or n in self._seen:
                continue
            self._seen.add(n)
            self._emit(ChatEvent("tool_output", m.content or "", {
                "id": m.tool_call_id or "", "name": m.name or "", "output": m.content or "",
            }))

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self._report(request)
        return await self._model.complete(request)

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamChunk, None]:
        self._report(request)
        async for chunk in self._model.stream(request):
            yield chunk

    def __getattr__(self, name: str) -> Any:  # anything else the runner may ask for
        return getattr(self._model, name)


async def _stream_reply(
    agent: Agent, model: Any, messages: list[FluxMessage], emit: Callable[[ChatEvent], None]
) -> str:
    """Run the agent streamed; emit deltas, tool calls and tool outputs; return the final
    text."""
    config = FluxConfig(event_bus_enabled=False, default_max_turns=MAX_TURNS)
    # History messages from the store are never reported as this run's tool outputs.
    watching = _ReportToolOutputs(model, emit)
    watching._seen.update(range(len(messages)))
    result = await Runner.run_streamed(agent, messages, config=config, model=watching)
    stream = aiter(result)
    final: str | None = None
    try:
        async for event in stream:
            if isinstance(event, TextDeltaEvent):
                emit(ChatEvent("text", event.delta))
            elif isinstance(event, ToolCallEvent):
                emit(ChatEvent("tool_call", event.name, {
                    "id": event.tool_call_id, "name": event.name, "arguments": event.arguments,
                }))
            elif isinstance(event, MessageCompleteEvent):
                if event.content:
                    emit(ChatEvent("message", event.content))
                if not event.tool_calls:
                    if not event.content:
                        raise ProviderError("the model returned an empty reply")
                    final = event.content
    finally:
        await stream.aclose()  # closes the HTTP stream too
    if final is None:
        raise ProviderError(f"the model did not give a final reply within {MAX_TURNS} calls")
    return final


async def _commit(
    store: Any,
    session_id: str,
    fork_at: int | None,
    turn: list[dict[str, Any]],
    branch: str | None,
) -> str:
    if fork_at is None:
        await store.session(session_id, branch=branch).add_messages(turn)
        return session_id
    change = await (store.forks or refuse(store, "forks")).fork_session(session_id, fork_at, branch=branch)
    try:
        await store.session(change.session_id).add_messages(turn)
    except BaseException:
        await (store.writer or refuse(store, "writer")).apply_change(change.inverse())  # no fork without its turn
        raise
    return str(change.session_id)
