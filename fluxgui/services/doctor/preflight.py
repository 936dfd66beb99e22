"""Preflight: what the model will be sent if a session is resumed now.

* **Agents SDK stores** (``agents`` format: SQL, Redis, Advanced on ``main``, encrypted):
  the input list exactly as ``Runner.run(agent, …, session=…)`` builds it — the SDK's own
  ``prepare_input_with_session`` (with ``SessionSettings(limit)``: its limit, its orphan
  handling, normalisation and de-duplication) over the items the library's session would
  return (:mod:`.sdk_session`), then the Responses model's own clean-up of the input.
  The new user message a resume would add comes after these.
* **flux stores and JSON session folders**: the message list flux's ``Runner`` builds
  from ``session.get_messages()`` (role and content only: flux drops the metadata), as
  its OpenAI provider sends it.

With an estimated token count per item and in total (:mod:`.tokens`, an estimate) and
the problems of that input that would make the request fail.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fluxgui.core.errors import FluxguiError
from fluxgui.core.model import Message, from_item
from fluxgui.core.roles import Store

from . import tokens
from .checks import check_messages, malformed
from .problems import Problem
from .reading import read_messages
from .sdk_session import StoredItemsSession, stored_items

AGENTS_SDK_MISSING = (
    "preflight of Agents SDK sessions runs the SDK's own code: install openai-agents "
    "(pip install 'fluxgui[agents]')"
)


@dataclass(frozen=True)
class Preflight:
    """What would be sent: ``input`` (items or chat messages), each one's estimated
    tokens, the problems of that input, and whose code built it (``agents`` or ``flux``)."""

    session_id: str
    source: str
    input: tuple[Any, ...]
    per_item: tuple[int, ...]
    problems: tuple[Problem, ...]
    #: the stored message each input item came from (``None``: none found)
    origins: tuple[int | None, ...]
    limit: int | None = None

    @property
    def total(self) -> int:
        return sum(self.per_item)

    def to_dict(self) -> dict[str, Any]:
        """``{"input": [...], "tokens": {"total", "per_item", "encoding", "estimate"},
        "problems": [...]}`` (and the source, session id and limit)."""
        return {
            "session_id": self.session_id,
            "source": self.source,
            "limit": self.limit,
            "input": list(self.input),
            "tokens": {
                "total": self.total,
                "per_item": list(self.per_item),
                "encoding": tokens.ENCODING,
                "estimate": True,
            },
            "problems": [p.to_dict() for p in self.problems],
        }


def _canonical(item: Any) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)


def _origins(sent: Sequence[Any], stored: Sequence[tuple[int, Any]]) -> list[int | None]:
    """The stored message each sent item came from: the next stored item, in order, with
    the same content (the SDK normalises some; those match on what is left)."""
    out: list[int | None] = []
    at = 0
    keys = [_canonical(item) for _mid, item in stored]
    for item in sent:
        key = _canonical(item)
        found = next((j for j in range(at, len(keys)) if keys[j] == key), None)
        if found is None:
            out.append(None)
        else:
            out.append(stored[found][0])
            at = found + 1
    return out


#: what is stored twice does not fail a request by itself (repeated ids do: duplicate_id)
_NOT_REFUSALS = frozenset({"duplicate_output", "repeated_items"})


def _problems_of(
    sid: str, sent: Sequence[Any], origins: Sequence[int | None], *, items: bool
) -> list[Problem]:
    """The checks over what is sent that make the request fail, each problem naming
    stored message ids."""
    fake = [
        from_item(-1 - i, item, None) if items else
        Message(-1 - i, str(item.get("role", "")), "tool_output" if item.get("role") == "tool"
                else "message", str(item.get("content") or ""))
        for i, item in enumerate(sent)
    ]
    report = check_messages(sid, fake, items=items)
    back = {-1 - i: mid for i, mid in enumerate(origins)}
    return [
        Problem(p.code, tuple(m for i in p.message_ids if (m := back.get(i)) is not None), p.detail)
        for p in report.problems
        if p.code not in _NOT_REFUSALS
    ]


async def _agents_input(
    sid: str, messages: Sequence[Message], *, encrypted: bool, limit: int | None
) -> tuple[list[Any], list[tuple[int, Any]]]:
    try:
        from agents.items import ItemHelpers
        from agents.memory import SessionSettings
        from agents.models.openai_responses import OpenAIResponsesModel
        from agents.run_internal.session_persistence import prepare_input_with_session
        from agents.util._json import _to_dump_compatible
    except ImportError:
        raise FluxguiError(AGENTS_SDK_MISSING) from None
    stored = stored_items(messages, encrypted=encrypted)
    session = StoredItemsSession(sid, [item for _mid, item in stored])
    try:
        prepared, _new = await prepare_input_with_session(
            [], session, None, SessionSettings(limit=limit)  # type: ignore[arg-type]
        )
        # What the Responses model does to its input before it is sent.
        sent = _to_dump_compatible(ItemHelpers.input_to_new_input_list(prepared))
        sent = OpenAIResponsesModel._remove_openai_responses_api_incompatible_fields(
            _Cleaner(), sent  # type: ignore[arg-type]
        )
    except FluxguiError:
        raise
    except Exception as exc:  # noqa: BLE001 - the SDK's own refusal is the answer
        raise FluxguiError(f"the Agents SDK cannot build a request from this session: {exc}") from None
    return list(sent), stored


class _Cleaner:
    """The one method of the Responses model its input clean-up calls on itself."""

    def _clean_item_for_openai(self, item: Any) -> Any:
        from agents.models.openai_responses import OpenAIResponsesModel

        return OpenAIResponsesModel._clean_item_for_openai(self, item)  # type: ignore[arg-type]


def _flux_input(messages: Sequence[Message], history: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    # flux's Runner keeps role and content (Message(role, content)); its OpenAI provider
    # sends {"role", "content"} for each (tool_calls/tool_call_id are never set).
    return [{"role": sm["role"], "content": sm.get("content", "")} for sm in history]


async def preflight(
    store: Store, session_id: str, *, limit: int | None = None, branch: str | None = None
) -> Preflight:
    """What resuming ``session_id`` now sends (see the module text)."""
    messages = await read_messages(store, session_id, branch=branch)
    items = store.traits.items
    if items:
        sent, stored = await _agents_input(
            session_id, messages, encrypted=store.needs_key or store.has_key, limit=limit
        )
        origins = _origins(sent, stored)
        problems = _problems_of(session_id, sent, origins, items=True)
        source = "agents"
    else:
        history = await store.session(session_id, branch=branch).get_messages()
        sent = _flux_input(messages, history)
        origins = [m.id for m in messages] if len(messages) == len(sent) else [None] * len(sent)
        problems = _problems_of(session_id, sent, origins, items=False)
        if store.traits.strict_metadata:
            # flux's SQLiteSession reads every row's metadata as JSON: one that is not
            # stops the run before anything is sent.
            problems = [
                Problem("malformed_item", (m.id,), why[:1].upper() + why[1:])
                for m in messages
                if (why := malformed(m, items=False)) is not None
            ] + problems
        source = "flux"
    per_item = await _count(sent)
    return Preflight(
        session_id, source, tuple(sent), tuple(per_item), tuple(problems), tuple(origins), limit
    )


async def _count(items: Sequence[Any]) -> list[int]:
    import asyncio

    # The encoding loads once (a fraction of a second), then counting is quick; both
    # off the event loop so that the window never waits on them.
    return await asyncio.to_thread(tokens.item_tokens, list(items))
