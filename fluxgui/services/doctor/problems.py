"""What the doctor reports: a problem (its code, the messages involved, one sentence)
and a session's report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: how a problem's sentence quotes an id (cut: ids come from the data)
ID_MAX = 60


def quoted(value: str) -> str:
    """An id as a sentence quotes it: cut to 60 characters, unprintable ones as ``?``."""
    text = value if len(value) <= ID_MAX else value[: ID_MAX - 1] + "…"
    return "'" + "".join(ch if ch.isprintable() else "?" for ch in text) + "'"


#: every problem code, in the order reports list them
CODES: tuple[str, ...] = (
    "orphan_call",
    "orphan_output",
    "misordered_reasoning",
    "dangling_reasoning",
    "empty_reasoning",
    "duplicate_id",
    "duplicate_output",
    "repeated_items",
    "malformed_item",
    "broken_structure",
    "limit_split",
)
#: a code as a card's marker and the Doctor panel name it
LABELS: dict[str, str] = {
    "orphan_call": "orphan call",
    "orphan_output": "orphan output",
    "misordered_reasoning": "misordered reasoning",
    "dangling_reasoning": "dangling reasoning",
    "empty_reasoning": "empty reasoning",
    "duplicate_id": "duplicate id",
    "duplicate_output": "duplicate output",
    "repeated_items": "repeated items",
    "malformed_item": "malformed",
    "broken_structure": "broken structure",
    "limit_split": "split by limit",
}


@dataclass(frozen=True)
class Problem:
    """One thing that breaks (or changes) a resume: ``code`` (one of :data:`CODES`),
    the ids of the stored messages involved, and one sentence saying what and why."""

    code: str
    message_ids: tuple[int, ...]
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """``{"code", "message_ids": [...], "detail"}``."""
        return {"code": self.code, "message_ids": list(self.message_ids), "detail": self.detail}


@dataclass(frozen=True)
class SessionReport:
    """A session's problems, and the ids of the encrypted items that could not be
    checked (no key, or a key that does not open them): not checkable, not broken."""

    session_id: str
    problems: tuple[Problem, ...] = ()
    unchecked: tuple[int, ...] = field(default=())

    @property
    def clean(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        """``{"session_id", "problems": [...]}`` (with ``"unchecked"`` ids when any)."""
        doc: dict[str, Any] = {
            "session_id": self.session_id,
            "problems": [p.to_dict() for p in self.problems],
        }
        if self.unchecked:
            doc["unchecked"] = list(self.unchecked)
        return doc

    def by_message(self) -> dict[int, list[Problem]]:
        """message id → the problems it is involved in."""
        out: dict[int, list[Problem]] = {}
        for p in self.problems:
            for mid in p.message_ids:
                out.setdefault(mid, []).append(p)
        return out
