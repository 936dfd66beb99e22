"""A built-in flux ``Model`` that needs no network: the test chat's "offline" provider.

It answers deterministically, so a person can try the chat panel (and tests can assert
on it) without an API key or a server::

    [offline] You said: <the last user message>. I was given N earlier messages as history.

and streams that reply a word at a time.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator

from flux.context import Usage
from flux.models.base import Model, ModelRequest, ModelResponse, StreamChunk


def offline_reply(request: ModelRequest) -> str:
    """The reply :class:`OfflineModel` gives to ``request``."""
    messages = list(request.messages)
    last_user = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None)
    said = (messages[last_user].content or "") if last_user is not None else ""
    earlier = last_user if last_user is not None else len(messages)
    noun = "message" if earlier == 1 else "messages"
    # What the model was sent, not what the session stores: items a flux chat history
    # cannot carry (reasoning, tool calls and outputs of Agents SDK stores) are not sent.
    return f"[offline] You said: {said}. I was given {earlier} earlier {noun} as history."


def split_words(text: str) -> list[str]:
    """``text`` as word-sized pieces (each word with the spaces after it); joined, ``text``."""
    return re.findall(r"\S+\s*|\s+", text) or [text]


class OfflineModel(Model):
    """Deterministic, network-free model (see :func:`offline_reply`)."""

    model = "offline"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        reply = offline_reply(request)
        return ModelResponse(content=reply, usage=_usage(request, reply), finish_reason="stop")

    async def stream(self, request: ModelRequest) -> AsyncGenerator[StreamChunk, None]:
        reply = offline_reply(request)
        for piece in split_words(reply):
            yield StreamChunk(delta_text=piece)
            # Give the loop a turn between pieces, as a network stream would: a Stop
            # (task cancel) lands mid-reply and the UI repaints between deltas.
            await asyncio.sleep(0)
        yield StreamChunk(done=True, usage=_usage(request, reply))


def _usage(request: ModelRequest, reply: str) -> Usage:
    prompt = sum(len((m.content or "").split()) for m in request.messages)
    out = len(reply.split())
    return Usage(input_tokens=prompt, output_tokens=out, total_tokens=prompt + out, requests=1)
