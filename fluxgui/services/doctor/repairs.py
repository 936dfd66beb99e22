"""Repairs: a plan of what to drop, add and move, previewed before and after, written
in one transaction as one reversible change (undo puts everything back).

A plan is made on the messages in memory, checked again and made again until the fixes
chosen find nothing more (dropping an orphan call can leave the reasoning before it
dangling), so ``--fix all`` leaves a session the checks find clean of those codes. Each
round is linear in the session's length. Only stores that declare single-message edits
(``store.editor``, in place) take repairs; the write is the store's own ``rewrite_messages``
(no SQL here).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fluxgui.core.changes import Change
from fluxgui.core.errors import FluxguiError, ReadOnlyError
from fluxgui.core.model import Message, from_item
from fluxgui.core.text import plural
from fluxgui.core.roles import Store

from ..edits import edit_reason
from .checks import check_messages
from .conventions import CHAT_CALL, TEXT_OUTPUTS, answer_of, calls_of
from .problems import Problem
from .restore import RoundView

#: the codes a repair fixes (``--fix all``); the others are reported only
REPAIRABLE: tuple[str, ...] = (
    "orphan_call", "orphan_output", "misordered_reasoning", "dangling_reasoning",
    "empty_reasoning", "duplicate_id", "duplicate_output", "repeated_items", "malformed_item",
)
#: which of several differing outputs of one call a repair keeps unless told
KEEP_CHOICES = ("last", "first")
#: what a synthetic output completing an orphan call says, unless told otherwise
CANCEL_TEXT = "The call was cancelled: it returned no output."
#: rounds of check-and-fix before a plan gives up growing
_ROUNDS = 8


@dataclass(frozen=True)
class Insert:
    """A message a repair adds right after the stored message ``after``: ``spec`` is what
    the store writes (an item, or a flux message), ``message`` how it reads."""

    after: int
    spec: dict[str, Any]
    message: Message


@dataclass(frozen=True)
class Move:
    """A stored message a repair moves to right before the stored message ``before``
    (its row keeps its values, its time included; the store gives it a new id)."""

    message_id: int
    before: int


@dataclass(frozen=True)
class DiffLine:
    """One line of a plan's preview: ``" "`` kept, ``"-"`` dropped, ``"+"`` added."""

    mark: str
    message: Message


@dataclass(frozen=True)
class Plan:
    """What a repair (or a rewind) does to one session (see the module text)."""

    session_id: str
    label: str
    delete: tuple[int, ...] = ()
    insert: tuple[Insert, ...] = ()
    before: tuple[Message, ...] = ()
    #: the problems the plan fixes, and those it leaves (reported only, or not chosen)
    fixed: tuple[Problem, ...] = ()
    left: tuple[Problem, ...] = field(default=())
    moves: tuple[Move, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.delete and not self.insert and not self.moves

    @property
    def after(self) -> list[Message]:
        """The session as it will read once the plan is written."""
        return [line.message for line in self.diff() if line.mark != "-"]

    def diff(self) -> list[DiffLine]:
        """The session before and after, message by message, in stored order (a moved
        message is ``-`` where it was and ``+`` where it goes)."""
        dropped = set(self.delete)
        adds: dict[int, list[Insert]] = {}
        for ins in self.insert:
            adds.setdefault(ins.after, []).append(ins)
        by_id = {m.id: m for m in self.before} if self.moves else {}
        arrive: dict[int, list[Message]] = {}
        for mv in self.moves:
            arrive.setdefault(mv.before, []).append(by_id[mv.message_id])
        moved = {mv.message_id for mv in self.moves}
        lines: list[DiffLine] = []
        for m in self.before:
            lines += [DiffLine("+", x) for x in arrive.get(m.id, [])]
            lines.append(DiffLine("-" if m.id in dropped or m.id in moved else " ", m))
            lines += [DiffLine("+", ins.message) for ins in adds.get(m.id, [])]
        return lines

    def summary(self) -> str:
        """One line: how many messages go and come, for which problems."""
        if self.empty:
            return f"session {self.session_id}: nothing to change"
        counts: dict[str, int] = {}
        for p in self.fixed:
            counts[p.code] = counts.get(p.code, 0) + 1
        why = ", ".join(f"{code} ×{n}" for code, n in counts.items())
        parts = [f"removes {plural(len(self.delete), 'message')}"] if self.delete else []
        if self.insert:
            parts.append(f"adds {plural(len(self.insert), 'message')}")
        if self.moves:
            parts.append(f"moves {plural(len(self.moves), 'message')}")
        return f"{' and '.join(parts)} ({why})" if why else " and ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """``{"session_id", "delete": [ids], "insert": [{"after", "item"}], "move":
        [{"message_id", "before"}], "fixed", "left", "before": n, "after": n}``."""
        return {
            "session_id": self.session_id,
            "delete": list(self.delete),
            "insert": [{"after": i.after, "item": i.spec} for i in self.insert],
            "move": [{"message_id": m.message_id, "before": m.before} for m in self.moves],
            "fixed": [p.to_dict() for p in self.fixed],
            "left": [p.to_dict() for p in self.left],
            "before": len(self.before),
            "after": len(self.after),
        }


def _output_spec(call_type: str, output_type: str, call_id: str, text: str, *, items: bool) -> dict[str, Any]:
    if call_type == CHAT_CALL or not items:
        return {"role": "tool", "content": text, "metadata": {"tool_call_id": call_id}}
    return {"type": output_type, "call_id": call_id, "output": text}


def _synthetic(n: int, spec: dict[str, Any], anchor: Message) -> Message:
    if "type" in spec:
        return from_item(n, spec, anchor.created_at)
    return Message(n, "tool", "tool_output", spec["content"], spec["metadata"], anchor.created_at)


def plan_repair(
    session_id: str,
    messages: Sequence[Message],
    fixes: Iterable[str],
    *,
    items: bool,
    cancel_text: str = CANCEL_TEXT,
    drop_calls: bool = False,
    keep: str = "last",
    keep_ids: Collection[int] = (),
) -> Plan:
    """The repair of ``fixes`` (codes of :data:`REPAIRABLE`) for a session's messages.

    An orphan call is completed with an output saying ``cancel_text`` where its type
    takes a text output (function and custom tool calls, chat-style tool calls), else
    (or with ``drop_calls``) dropped. An orphan MCP approval response gets its request
    back when the turn's ``mcp_call`` names it (else it is dropped, as every other orphan
    output). A misordered reasoning item moves back before its item. Of several outputs
    of one call, identical copies leave the first; differing ones leave the one in
    ``keep_ids``, else the ``keep`` one (``last``: the one the Agents SDK sends, or
    ``first``). Every other fix drops the messages involved (of a duplicated item, the
    later copies; of a repeated run, the run)."""
    chosen = set(fixes)
    unknown = chosen - set(REPAIRABLE)
    if unknown:
        raise FluxguiError(
            f"cannot repair {', '.join(sorted(unknown))}: repairs fix "
            f"{', '.join(REPAIRABLE)} (or all)"
        )
    if keep not in KEEP_CHOICES:
        raise FluxguiError(f"keep {keep!r}: say first or last")
    deleted: set[int] = set()
    inserts: list[Insert] = []
    moves: dict[int, Move] = {}
    fixed: list[Problem] = []
    left: list[Problem] = []
    by_id = {m.id: m for m in messages}
    for _round in range(_ROUNDS):
        current = _draft(session_id, messages, deleted, inserts, moves).after
        report = check_messages(session_id, current, items=items)
        todo = [p for p in report.problems if p.code in chosen]
        left = [p for p in report.problems if p.code not in chosen]
        if not todo:
            break
        fixed += todo
        view = RoundView(current)
        for p in todo:
            drop: list[int] = []
            if p.code == "orphan_call":
                for mid in p.message_ids:
                    drop += _complete(mid, view, by_id, inserts, cancel_text, items, drop_calls)
            elif p.code == "orphan_output":
                drop = [] if _restore(p.message_ids[0], view, inserts) else list(p.message_ids)
            elif p.code == "misordered_reasoning":
                mid, owner = p.message_ids
                if mid >= 0 and owner >= 0:
                    moves[mid] = Move(mid, owner)
            elif p.code == "duplicate_output":
                drop = _extra_outputs(p, view, keep, keep_ids)
            elif p.code == "duplicate_id":
                drop = list(p.message_ids[1:])
            else:
                drop = list(p.message_ids)
            for mid in drop:
                if mid < 0:
                    inserts = [i for i in inserts if i.message.id != mid]
                else:
                    deleted.add(mid)
                    moves.pop(mid, None)
    order = {m.id: i for i, m in enumerate(messages)}
    return Plan(
        session_id,
        f"Repair session {session_id[:40]}",
        tuple(sorted(deleted, key=order.__getitem__)),
        tuple(inserts),
        tuple(messages),
        tuple(fixed),
        tuple(left),
        tuple(moves.values()),
    )


def _draft(
    sid: str, messages: Sequence[Message], deleted: set[int], inserts: list[Insert],
    moves: dict[int, Move],
) -> Plan:
    return Plan(sid, "", tuple(deleted), tuple(inserts), tuple(messages), moves=tuple(moves.values()))


def _complete(
    mid: int, view: RoundView, by_id: dict[int, Message], inserts: list[Insert],
    text: str, items: bool, drop_calls: bool,
) -> list[int]:
    """Complete the orphan calls of message ``mid`` (adding to ``inserts``); return the
    ids to drop instead (a call that takes no text output, or ``drop_calls``)."""
    at = view.index[mid]
    orphans = [c for c in calls_of(view.messages[at]) if not view.answered_after(c, at)]
    if drop_calls or any(c.type not in TEXT_OUTPUTS for c in orphans) or mid < 0:
        return [mid]
    anchor = by_id[mid]
    for call in orphans:
        spec = _output_spec(call.type, call.output_type, call.call_id, text, items=items)
        inserts.append(Insert(mid, spec, _synthetic(-1 - len(inserts), spec, anchor)))
    return []


def _restore(mid: int, view: RoundView, inserts: list[Insert]) -> bool:
    """Put back the request an orphan MCP approval response answers, right before it,
    when the turn's ``mcp_call`` names it (False: nothing identifies it)."""
    at = view.index.get(mid)
    if at is None or at == 0 or mid < 0:
        return False
    spec = view.approval_request(at)
    prev = view.messages[at - 1]
    if spec is None or prev.id < 0:
        return False
    message = from_item(-1 - len(inserts), spec, view.messages[at].created_at)
    inserts.append(Insert(prev.id, spec, message))
    return True


def _extra_outputs(p: Problem, view: RoundView, keep: str, keep_ids: Collection[int]) -> list[int]:
    """The outputs of a ``duplicate_output`` problem that go (see :func:`plan_repair`)."""
    ids = list(p.message_ids)
    picked = [i for i in ids if i in keep_ids]
    if picked:
        stays = picked[-1]
    elif view.same_content(ids):
        stays = ids[0]
    else:
        stays = ids[-1] if keep == "last" else ids[0]
    return [i for i in ids if i != stays]


def plan_rewind(
    session_id: str, messages: Sequence[Message], *, to_turn: int | None = None, last: bool = False
) -> Plan:
    """Remove whole turns: everything after turn ``to_turn``, or (``last``) the last
    turn. A turn is a user message and everything up to the next one; what comes before
    the first user message is turn 0 and stays."""
    from fluxgui.core.turns import group_turns

    turns = [t for t in group_turns(messages) if t.number > 0]
    if not turns:
        raise FluxguiError(f"session {session_id[:60]} has no user turn to rewind")
    top = turns[-1].number
    keep = top - 1 if last else to_turn
    if keep is None:
        raise FluxguiError("say which turn to rewind to (--to-turn N) or --last")
    if keep >= top:
        raise FluxguiError(
            f"session {session_id[:60]} has {plural(top, 'turn')}: nothing comes after turn {keep}"
        )
    drop = tuple(m.id for t in turns if t.number > keep for m in t.messages)
    label = f"Rewind session {session_id[:40]} to turn {keep}"
    return Plan(session_id, label, drop, (), tuple(messages))


async def apply_plan(store: Store, plan: Plan) -> Change:
    """Write ``plan`` in one transaction (the store's ``rewrite_messages``); the returned
    change undoes it with ``inverse()``. Refused, with the reason, by stores that cannot
    edit single messages."""
    if plan.empty:
        raise FluxguiError(f"session {plan.session_id[:60]}: nothing to change")
    editor = store.editor
    if editor is None or not editor.in_place:
        raise ReadOnlyError(edit_reason(store) or f"{store.target}: this store cannot be edited")
    return await editor.rewrite_messages(
        plan.session_id,
        delete=list(plan.delete),
        insert_after=[(i.after, i.spec) for i in plan.insert],
        move_before=[(m.message_id, m.before) for m in plan.moves],
        label=plan.label,
    )


def with_label(plan: Plan, label: str) -> Plan:
    """``plan`` under another undo label."""
    return replace(plan, label=label)
