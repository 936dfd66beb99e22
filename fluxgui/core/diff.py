"""Compare two conversations turn by turn (no Qt, no I/O).

Two sessions forked from the same origin share a prefix of turns and then go their own
ways. :func:`compare_turns` lines them up by turn *number* — turn N of A against turn N
of B, also after the first difference — so a fork that changed one answer differs in
that one turn only. A turn that one side has and the other lacks is "only in A" or
"only in B".

Two messages are the same when their role, kind, text, metadata and stored item are
equal (across formats, where one side has no stored item: role, kind and text). Row ids
and times never count (a copy or a fork gets new ones), and neither does the ``"id"``
field of an Agents SDK item: it is the id the model API gave the item, not what was
said. Inside a differing turn, :class:`MessageChange` says which messages
changed, were added (only in B) or removed (only in A), found with
:class:`difflib.SequenceMatcher` over ``(role, kind, text)``.

Token usage is optional per side: a mapping of turn number to a usage dict (the Agents
SDK's ``turn_usage`` rows: ``requests``, ``input_tokens``, ``output_tokens``,
``total_tokens``). Where both sides know a turn's total, its difference is reported.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .model import Message
from .turns import Turn, group_turns

#: how an aligned pair of turns compares
Status = Literal["same", "differs", "only_a", "only_b"]
#: what happened to one message inside a differing turn
ChangeOp = Literal["changed", "added", "removed"]

#: the usage fields kept from a usage row (others, such as token details, are dropped)
USAGE_FIELDS = ("requests", "input_tokens", "output_tokens", "total_tokens")

Usage = dict[int, dict[str, int]]


# --------------------------------------------------------------------------- messages


def _content(raw: Any) -> Any:
    # An Agents SDK item's "id" is the model API's id for it, not its content.
    if isinstance(raw, dict) and "id" in raw:
        return {k: v for k, v in raw.items() if k != "id"}
    return raw


def same_message(a: Message, b: Message) -> bool:
    """Whether two messages say the same thing: role, kind, text, metadata and stored item
    equal; row ids, times and an item's own ``"id"`` field are ignored.

    Across formats (a flux row, which has no stored item, against an Agents SDK item) only
    role, kind and text can be compared: the two formats keep the rest differently.
    """
    if a.role != b.role or a.kind != b.kind or a.text != b.text:
        return False
    if (a.raw is None) != (b.raw is None):
        return True
    return bool(a.metadata == b.metadata and _content(a.raw) == _content(b.raw))


def _key(m: Message) -> tuple[str, str, str]:
    return (m.role, m.kind, m.text)


@dataclass(frozen=True)
class MessageChange:
    """One message that differs inside an aligned turn.

    ``a`` / ``b`` are positions in that turn's message lists (``None`` on the side that
    lacks the message): ``changed`` has both, ``removed`` only ``a``, ``added`` only ``b``.
    """

    op: ChangeOp
    a: int | None
    b: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"change": self.op, "a": self.a, "b": self.b}


def diff_messages(a: list[Message], b: list[Message]) -> list[MessageChange]:
    """The messages that differ between two lists, in order (empty: they are the same)."""
    changes: list[MessageChange] = []
    matcher = difflib.SequenceMatcher(None, [_key(m) for m in a], [_key(m) for m in b], autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            # Same role, kind and text; the stored item or metadata may still differ.
            for i, j in zip(range(a0, a1), range(b0, b1)):
                if not same_message(a[i], b[j]):
                    changes.append(MessageChange("changed", i, j))
        elif op == "delete":
            changes.extend(MessageChange("removed", i, None) for i in range(a0, a1))
        elif op == "insert":
            changes.extend(MessageChange("added", None, j) for j in range(b0, b1))
        else:  # replace: pair them up in order, the rest was removed or added
            paired = min(a1 - a0, b1 - b0)
            changes.extend(MessageChange("changed", a0 + k, b0 + k) for k in range(paired))
            changes.extend(MessageChange("removed", i, None) for i in range(a0 + paired, a1))
            changes.extend(MessageChange("added", None, j) for j in range(b0 + paired, b1))
    return changes


# --------------------------------------------------------------------------- usage


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _as_mapping(row: Any) -> Any:
    # a usage row object (the advanced store's TurnUsage) rather than a dict
    if not isinstance(row, Mapping) and callable(getattr(row, "to_dict", None)):
        return row.to_dict()
    return row


def _usage_row(row: Any) -> dict[str, int]:
    row = _as_mapping(row)
    if not isinstance(row, Mapping):
        return {}
    out: dict[str, int] = {}
    for name in USAGE_FIELDS:
        n = _int(row.get(name))
        if n is not None:
            out[name] = n
    if "total_tokens" not in out and "input_tokens" in out and "output_tokens" in out:
        out["total_tokens"] = out["input_tokens"] + out["output_tokens"]
    return out


def normalise_usage(value: Any) -> Usage | None:
    """Per-turn usage as ``{turn number: {field: int}}``, or ``None`` when unknown.

    Takes a mapping of turn number to a usage dict, or a list of usage rows with a
    ``user_turn_number`` (what ``AdvancedSQLiteSession.get_turn_usage()`` returns; rows
    may be objects with ``to_dict()``). Fields that are not whole numbers are dropped; a
    row with no field left is dropped; no rows at all is ``None`` (unknown).
    """
    if value is None:
        return None
    rows: Iterable[tuple[Any, Any]]
    if isinstance(value, Mapping):
        rows = value.items()
    elif isinstance(value, (list, tuple)):
        mapped = [_as_mapping(r) for r in value]
        rows = ((r.get("user_turn_number") if isinstance(r, Mapping) else None, r) for r in mapped)
    else:
        return None
    out: Usage = {}
    for number, row in rows:
        if isinstance(number, str):
            n = int(number) if number.isdigit() else None
        else:
            n = _int(number)
        usage = _usage_row(row)
        if n is not None and usage:
            out[n] = usage
    return out or None


# --------------------------------------------------------------------------- turns


@dataclass
class TurnDiff:
    """Turn ``number`` of A against turn ``number`` of B (``None`` where a side lacks it)."""

    number: int
    a: Turn | None
    b: Turn | None
    changes: list[MessageChange] = field(default_factory=list)
    usage_a: dict[str, int] | None = None
    usage_b: dict[str, int] | None = None

    @property
    def status(self) -> Status:
        if self.a is None:
            return "only_b"
        if self.b is None:
            return "only_a"
        return "differs" if self.changes else "same"

    @property
    def same(self) -> bool:
        return self.status == "same"

    @property
    def messages_a(self) -> list[Message]:
        return self.a.messages if self.a is not None else []

    @property
    def messages_b(self) -> list[Message]:
        return self.b.messages if self.b is not None else []

    @property
    def tokens_a(self) -> int | None:
        return (self.usage_a or {}).get("total_tokens")

    @property
    def tokens_b(self) -> int | None:
        return (self.usage_b or {}).get("total_tokens")

    @property
    def token_delta(self) -> int | None:
        """B's total tokens minus A's for this turn, when both are known."""
        if self.tokens_a is None or self.tokens_b is None:
            return None
        return self.tokens_b - self.tokens_a

    def changed_in_a(self) -> set[int]:
        """Positions in A's messages that changed or were removed."""
        return {c.a for c in self.changes if c.a is not None}

    def changed_in_b(self) -> set[int]:
        """Positions in B's messages that changed or were added."""
        return {c.b for c in self.changes if c.b is not None}

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.number,
            "status": self.status,
            "same": self.same,
            "a": [m.to_dict() for m in self.messages_a],
            "b": [m.to_dict() for m in self.messages_b],
            "changes": [c.to_dict() for c in self.changes],
        }


@dataclass
class Side:
    """One side of a comparison: which session (and branch), how big."""

    session_id: str
    messages: int
    turns: int
    branch: str | None = None
    target: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "session_id": self.session_id,
            "messages": self.messages,
            "turns": self.turns,
        }
        if self.branch is not None:
            out["branch"] = self.branch
        if self.target is not None:
            out["target"] = self.target
        return out

    @property
    def label(self) -> str:
        """``session`` or ``session @ branch``."""
        return self.session_id if self.branch is None else f"{self.session_id} @ {self.branch}"


@dataclass
class Comparison:
    """Two conversations aligned turn by turn."""

    a: Side
    b: Side
    turns: list[TurnDiff]
    usage_a: Usage | None = None
    usage_b: Usage | None = None

    @property
    def first_difference(self) -> int | None:
        """The number of the first turn that is not the same on both sides."""
        return next((t.number for t in self.turns if not t.same), None)

    @property
    def identical(self) -> bool:
        return all(t.same for t in self.turns)

    @property
    def counts(self) -> dict[str, int]:
        """How many aligned turns are ``same``, ``differs``, ``only_a``, ``only_b``."""
        out = {"same": 0, "differs": 0, "only_a": 0, "only_b": 0}
        for t in self.turns:
            out[t.status] += 1
        return out

    def differing(self) -> list[TurnDiff]:
        """The turns that are not the same (differing or only on one side), in order."""
        return [t for t in self.turns if not t.same]

    def turn(self, number: int) -> TurnDiff | None:
        return next((t for t in self.turns if t.number == number), None)

    def usage_dict(self) -> dict[str, Any] | None:
        """Token usage per turn and in total; ``None`` when neither side knows any."""
        if self.usage_a is None and self.usage_b is None:
            return None
        turns = []
        for t in self.turns:
            if t.usage_a is None and t.usage_b is None:
                continue
            turns.append(
                {"turn": t.number, "a": t.usage_a, "b": t.usage_b, "delta_total_tokens": t.token_delta}
            )

        def total(usage: Usage | None) -> int | None:
            if usage is None:
                return None
            return sum(u.get("total_tokens", 0) for u in usage.values())

        a_total, b_total = total(self.usage_a), total(self.usage_b)
        return {
            "a_total_tokens": a_total,
            "b_total_tokens": b_total,
            "delta_total_tokens": (
                b_total - a_total if a_total is not None and b_total is not None else None
            ),
            "turns": turns,
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``fluxgui diff --json``)."""
        return {
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
            "first_difference": self.first_difference,
            "counts": self.counts,
            "turns": [t.to_dict() for t in self.turns],
            "usage": self.usage_dict(),
        }


def compare_turns(
    turns_a: list[Turn],
    turns_b: list[Turn],
    *,
    a: Side | None = None,
    b: Side | None = None,
    usage_a: Any = None,
    usage_b: Any = None,
) -> Comparison:
    """Align two lists of turns (from :func:`~fluxgui.core.turns.group_turns`) by turn
    number and compare each pair. ``usage_a`` / ``usage_b``: per-turn usage as
    :func:`normalise_usage` takes it, or ``None`` when unknown."""
    by_a = {t.number: t for t in turns_a}
    by_b = {t.number: t for t in turns_b}
    ua, ub = normalise_usage(usage_a), normalise_usage(usage_b)
    out: list[TurnDiff] = []
    for n in sorted(by_a.keys() | by_b.keys()):
        ta, tb = by_a.get(n), by_b.get(n)
        changes = diff_messages(ta.messages, tb.messages) if ta is not None and tb is not None else []
        out.append(
            TurnDiff(
                n,
                ta,
                tb,
                changes,
                usage_a=ua.get(n) if ua is not None else None,
                usage_b=ub.get(n) if ub is not None else None,
            )
        )
    if a is None:
        a = Side("A", sum(len(t.messages) for t in turns_a), len(turns_a))
    if b is None:
        b = Side("B", sum(len(t.messages) for t in turns_b), len(turns_b))
    return Comparison(a, b, out, ua, ub)


def compare_messages(
    messages_a: list[Message],
    messages_b: list[Message],
    *,
    session_a: str = "A",
    session_b: str = "B",
    branch_a: str | None = None,
    branch_b: str | None = None,
    usage_a: Any = None,
    usage_b: Any = None,
) -> Comparison:
    """:func:`compare_turns` over two whole message lists (grouped into turns here)."""
    turns_a, turns_b = group_turns(messages_a), group_turns(messages_b)
    return compare_turns(
        turns_a,
        turns_b,
        a=Side(session_a, len(messages_a), len(turns_a), branch_a),
        b=Side(session_b, len(messages_b), len(turns_b), branch_b),
        usage_a=usage_a,
        usage_b=usage_b,
    )
