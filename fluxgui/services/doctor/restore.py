"""What a repair round looks up in the session as it reads before the round: where each
message is, which calls are answered later, and what an orphan MCP approval response's
turn says of the request it answers. Built once per round, so that a round stays linear
however many problems it fixes.

An approval resumed through the Agents SDK's "run again" path can leave the turn's
deferred items unsaved: the session keeps the output and loses its call. For a hosted
MCP tool the output is an ``mcp_approval_response`` (it names the request's id) and the
model's ``mcp_call`` that followed the approval names the same ``approval_request_id``
with the tool's name, arguments and server: the request is put back from those. For
function tools the SDK stores no approval items, so nothing identifies the lost call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fluxgui.core.contentkey import content_key, item_of
from fluxgui.core.model import Message

from .conventions import Call, answer_of


def _is_user(m: Message) -> bool:
    return m.kind == "message" and m.role == "user"


class RoundView:
    """One round's session (``messages``, in the order they will be read) and its
    lookups."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.messages = list(messages)
        self.index: dict[int, int] = {}
        self._last_answer: dict[tuple[str, str], int] = {}
        self._turn: list[int] = []
        self._mcp_calls: dict[tuple[int, str], dict[str, Any]] = {}
        turn = 0
        for i, m in enumerate(self.messages):
            self.index[m.id] = i
            if _is_user(m):
                turn += 1
            self._turn.append(turn)
            answer = answer_of(m)
            if answer is not None:
                self._last_answer[(answer.call_id, answer.call_type)] = i
            item = item_of(m)
            if item is not None and item.get("type") == "mcp_call":
                request = item.get("approval_request_id")
                if isinstance(request, str) and request:
                    self._mcp_calls.setdefault((turn, request), item)

    def answered_after(self, call: Call, at: int) -> bool:
        """Whether an output of ``call`` comes after position ``at``."""
        return self._last_answer.get((call.call_id, call.type), -1) > at

    def same_content(self, ids: Sequence[int]) -> bool:
        """Whether the messages ``ids`` hold the same thing (ids and times aside)."""
        found = [self.messages[self.index[i]] for i in ids if i in self.index]
        return len({content_key(m) for m in found}) <= 1

    def approval_request(self, at: int) -> dict[str, Any] | None:
        """The ``mcp_approval_request`` the orphan response at ``at`` answers, rebuilt
        from the ``mcp_call`` of its turn that names it; ``None`` when nothing
        identifies it."""
        answer = answer_of(self.messages[at])
        if answer is None or answer.type != "mcp_approval_response":
            return None
        call = self._mcp_calls.get((self._turn[at], answer.call_id))
        if call is None:
            return None
        spec = {"type": "mcp_approval_request", "id": answer.call_id}
        for key in ("name", "arguments", "server_label"):
            if not isinstance(call.get(key), str):
                return None
            spec[key] = call[key]
        return spec
