"""The checks: what in a stored session makes the next request fail, or differ from
what is stored. Pure functions over a session's messages in stored order (no I/O).

Each problem names its code, the ids of the messages involved and one sentence (see
:mod:`.problems`). Encrypted items that did not open (no key, a wrong key) are not
checkable: they are listed apart, and the checks that depend on the order of items are
left out for such a session, since a locked item could be the missing half of any pair.
"""

from __future__ import annotations

from collections.abc import Sequence

from fluxgui.core.contentkey import item_of
from fluxgui.core.display import encryption_state
from fluxgui.core.errors import InvalidItem
from fluxgui.core.items import json_type, validate_item
from fluxgui.core.model import Message

from .conventions import CHAT_CALL, answer_of, calls_of, is_tool_message, item_id
from .problems import CODES, ID_MAX, Problem, SessionReport, quoted
from .repeats import duplicate_outputs, repeated_items

__all__ = ["check_messages", "malformed", "quoted", "unchecked"]


def unchecked(m: Message) -> bool:
    """An encrypted item that did not open (no key, or not with this key)."""
    return encryption_state(m) in ("locked", "unreadable")


def malformed(m: Message, *, items: bool) -> str | None:
    """Why the stored row of ``m`` is malformed (``None``: it is not). ``items``: the
    store keeps Agents SDK items (else flux-style messages)."""
    meta = m.metadata if isinstance(m.metadata, dict) else {}
    if "undecodable" in meta:
        return "its stored text is not valid UTF-8, so the owning library cannot read it"
    if not items:
        if m.kind != "other":
            return None
        return (
            "its metadata is not a JSON object, so flux's SQLiteSession fails on the "
            "session when it reads it" if isinstance(m.raw, str) else None
        )
    raw = m.raw
    if m.kind == "other" and isinstance(raw, str):
        return "it is not JSON: the Agents SDK skips it when it reads the session"
    if not isinstance(raw, dict):
        return (
            f"it is JSON but not an object ({json_type(raw)}): the Agents SDK sends it "
            "as an item and the API rejects it"
        )
    kind = raw.get("type", "message")
    try:
        validate_item(raw, original_type=kind if isinstance(kind, str) else None)
    except InvalidItem as exc:
        return f"it is not a valid item: {exc}"
    return None


def _skipped(m: Message, *, items: bool) -> bool:
    """A row the owning library leaves out when it reads (not JSON, not UTF-8)."""
    meta = m.metadata if isinstance(m.metadata, dict) else {}
    if "undecodable" in meta:
        return True
    return items and m.kind == "other" and isinstance(m.raw, str)


def _label(kind: str) -> str:
    return "tool call" if kind == CHAT_CALL else kind


def _pair_problems(seq: Sequence[Message]) -> list[tuple[int, Problem]]:
    found: list[tuple[int, Problem]] = []
    answered: dict[tuple[str, str], int] = {}  # (call id, call type) → first output index
    for i, m in enumerate(seq):
        answer = answer_of(m)
        if answer is not None:
            answered.setdefault((answer.call_id, answer.call_type), i)
    seen: set[tuple[str, str]] = set()
    for i, m in enumerate(seq):
        for call in calls_of(m):
            seen.add((call.call_id, call.type))
            at = answered.get((call.call_id, call.type))
            if (at is None and not call.pending) or (at is not None and at < i):
                found.append((i, Problem(
                    "orphan_call", (m.id,),
                    f"{_label(call.type)} {quoted(call.call_id)}"
                    f"{' (' + call.name + ')' if call.name else ''} has no "
                    f"{call.output_type} after it: the API rejects the request (No tool "
                    f"output found for function call {call.call_id[:ID_MAX]})",
                )))
        answer = answer_of(m)
        if answer is not None and (answer.call_id, answer.call_type) not in seen:
            if answer.type == "mcp_approval_response":
                why = ("the API rejects an approval of a request it was not sent (an approval "
                       "resumed without its deferred items?)")
            else:
                why = ("the API rejects the request (No tool call found for function call "
                       f"output with call_id {answer.call_id[:ID_MAX]})")
            found.append((i, Problem(
                "orphan_output", (m.id,),
                f"{answer.type} for {quoted(answer.call_id)} answers no earlier "
                f"{_label(answer.call_type)}: {why}",
            )))
        elif answer is None and is_tool_message(m):
            found.append((i, Problem(
                "orphan_output", (m.id,),
                "this tool message names no tool_call_id, so it answers no call: the chat "
                "API rejects a tool message that follows no tool_calls",
            )))
    return found


def _follows_reasoning(m: Message | None) -> bool:
    """Whether ``m`` can be the item a reasoning item belongs to (what the model said
    after it: an answer, a call, a hosted tool's item)."""
    if m is None or m.kind in ("reasoning", "tool_output"):
        return False
    if m.kind == "message":
        return m.role == "assistant"
    return True


def _misordered_after(seq: Sequence[Message], i: int) -> Message | None:
    """The item a dangling reasoning item ``seq[i]`` belongs to when rows written in the
    same instant read back out of order: the assistant message or call right before it,
    stored at the same time, that has no reasoning of its own before it."""
    if i == 0:
        return None
    prev, m = seq[i - 1], seq[i]
    if prev.kind in ("reasoning", "tool_output") or not _follows_reasoning(prev):
        return None
    if prev.created_at is None or prev.created_at != m.created_at:
        return None
    if i >= 2 and seq[i - 2].kind == "reasoning":
        return None
    return prev


def _reasoning_problems(seq: Sequence[Message]) -> list[tuple[int, Problem]]:
    found: list[tuple[int, Problem]] = []
    for i, m in enumerate(seq):
        item = item_of(m)
        if m.kind != "reasoning" or item is None:
            continue
        rid = quoted(str(item.get("id") or f"#{m.id}"))
        nxt = seq[i + 1] if i + 1 < len(seq) else None
        refusal = (f"the API rejects it (Item {rid} of type 'reasoning' was provided without "
                   "its required following item)")
        owner = None if _follows_reasoning(nxt) else _misordered_after(seq, i)
        if owner is not None:
            kind = (item_of(owner) or {}).get("type")
            what = "assistant message" if owner.kind == "message" else str(kind or owner.kind)
            found.append((i, Problem(
                "misordered_reasoning", (m.id, owner.id),
                f"reasoning {rid} comes right after the {what} #{owner.id} it belongs to "
                f"(stored in the same instant, read back out of order): {refusal}; repair "
                "moves it back before that item",
            )))
        elif not _follows_reasoning(nxt):
            what = (
                "the end of the session" if nxt is None
                else "another reasoning item" if nxt.kind == "reasoning"
                else f"a {nxt.role} message" if nxt.kind == "message"
                else "a tool output"
            )
            found.append((i, Problem(
                "dangling_reasoning", (m.id,),
                f"reasoning {rid} is followed by {what}, not by the item it belongs to: "
                f"{refusal}",
            )))
        summary = item.get("summary")
        if not summary and not item.get("encrypted_content"):
            found.append((i, Problem(
                "empty_reasoning", (m.id,),
                f"reasoning {rid} has an empty summary and no encrypted_content: the API "
                "rejects it as an invalid item",
            )))
    return found


def _duplicates(messages: Sequence[Message]) -> list[tuple[int, Problem]]:
    where: dict[str, list[int]] = {}
    first: dict[str, int] = {}
    for i, m in enumerate(messages):
        key = item_id(m)
        if key is not None:
            where.setdefault(key, []).append(m.id)
            first.setdefault(key, i)
    return [
        (first[key], Problem(
            "duplicate_id", tuple(ids),
            f"item id {quoted(key)} is there {len(ids)} times: the API rejects the "
            f"request (Duplicate item found with id {key[:ID_MAX]})",
        ))
        for key, ids in where.items()
        if len(ids) > 1
    ]


def _limit_split(seq: Sequence[Message], limit: int) -> list[tuple[int, Problem]]:
    if limit <= 0 or limit >= len(seq):
        return []
    cut = len(seq) - limit
    calls: dict[tuple[str, str], Message] = {}
    for m in seq[:cut]:
        for call in calls_of(m):
            calls.setdefault((call.call_id, call.type), m)
    found: list[tuple[int, Problem]] = []
    for i, m in enumerate(seq[cut:], cut):
        answer = answer_of(m)
        call_msg = calls.get((answer.call_id, answer.call_type)) if answer else None
        if answer is not None and call_msg is not None:
            found.append((i, Problem(
                "limit_split", (call_msg.id, m.id),
                f"with SessionSettings(limit={limit}) the kept history starts after the "
                f"call {quoted(answer.call_id)} but keeps its output: the Agents SDK drops "
                "the output, so the model never sees that tool's result",
            )))
    return found


def check_messages(
    session_id: str, messages: Sequence[Message], *, items: bool, limit: int | None = None
) -> SessionReport:
    """The problems of one session's messages (in stored order). ``items``: the store
    keeps Agents SDK items; ``limit``: also check what ``SessionSettings(limit)`` keeps."""
    locked = tuple(m.id for m in messages if unchecked(m))
    readable = [m for m in messages if not unchecked(m)]
    found: list[tuple[int, Problem]] = []
    position = {m.id: i for i, m in enumerate(readable)}
    for m in readable:
        why = malformed(m, items=items)
        if why is not None:
            found.append((position[m.id], Problem("malformed_item", (m.id,), why[:1].upper() + why[1:])))
    found += _duplicates(readable)
    seq = [m for m in readable if not _skipped(m, items=items)]
    at = {m.id: position[m.id] for m in seq}
    ordered: list[tuple[int, Problem]] = duplicate_outputs(seq)
    if not locked:  # a locked item may be the other half of anything: no order checks
        ordered += _pair_problems(seq) + _reasoning_problems(seq) + repeated_items(seq)
        if limit is not None:
            ordered += _limit_split(seq, limit)
    else:
        ordered += [(i, p) for i, p in _reasoning_problems(seq) if p.code == "empty_reasoning"]
    found += [(at[seq[i].id], p) for i, p in ordered]
    found.sort(key=lambda f: (f[0], CODES.index(f[1].code)))
    return SessionReport(session_id, tuple(p for _i, p in found), locked)
