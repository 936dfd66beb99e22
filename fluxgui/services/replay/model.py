"""The replayed model: the chosen provider's model, read as a stream (as the test chat
reads it) and handed to flux's ``Runner`` as one complete response per request, with
every tool call of the reply (parallel calls too), the usage, and events on the way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flux.context import Usage
from flux.models.base import Model, ModelRequest, ModelResponse, ToolCall

from .tools import RecordedTool, TurnMatcher


class ReplayModel:
    """Wraps a provider's flux ``Model`` for a replay run."""

    def __init__(
        self, model: Model, tools: list[Any], matcher: TurnMatcher,
        emit: Callable[[str, dict[str, Any]], None],
    ) -> None:
        self._model = model
        #: the agent's own tool list: a call of a tool the record does not know gets a
        #: tool of that name (which the matcher answers or stops at), not flux's
        #: "not found" text the model would read as the tool's output
        self._tools = tools
        self._matcher = matcher
        self._emit = emit
        self.usage = Usage()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        text = ""
        calls: list[ToolCall] = []
        usage: Usage | None = None
        stream = self._model.stream(request)
        try:
            async for chunk in stream:
                if chunk.delta_text:
                    text += chunk.delta_text
                    self._emit("text", {"text": chunk.delta_text})
                if chunk.tool_call is not None:
                    calls.append(chunk.tool_call)
                raw = chunk.raw
                if isinstance(raw, dict) and isinstance(raw.get("tool_calls"), list):
                    known = {(c.id, c.name, c.arguments) for c in calls}
                    calls += [c for c in raw["tool_calls"] if (c.id, c.name, c.arguments) not in known]
                usage = chunk.usage or usage
                if chunk.done:
                    break
        finally:
            closing = getattr(stream, "aclose", None)
            if closing is not None:
                await closing()
        if usage is not None:
            self.usage += usage
        names = {t.name for t in self._tools}
        for c in calls:
            self._emit("tool_call", {"id": c.id, "name": c.name, "arguments": c.arguments})
            if c.name not in names:
                names.add(c.name)
                self._tools.append(RecordedTool(c.name, {"type": "object", "properties": {}}, self._matcher))
        return ModelResponse(content=text or None, tool_calls=calls, usage=usage,
                             finish_reason="tool_calls" if calls else "stop")

    async def stream(self, request: ModelRequest) -> Any:  # the Runner.run path uses complete
        raise NotImplementedError
