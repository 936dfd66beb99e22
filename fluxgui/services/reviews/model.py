"""What a review holds, without a database: states, the rubric and its scores, notes.

A session's **state** is ``unreviewed`` (the default, not stored), ``in-review`` (claimed
by a reviewer until a time), ``reviewed`` or ``flagged`` (needs follow-up). A claim that
has expired counts as ``unreviewed`` again (:func:`effective_state`).

The **rubric** is defined once per review database: criteria that are categorical (a
list of options), numeric (a whole-number range) or boolean. :data:`DEFAULT_RUBRIC` is
the one fluxgui ships for customer-support review. :meth:`Rubric.parse` checks a score
given as text (``--score tone=4``) and gives its stored value.
"""

from __future__ import annotations

import getpass
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fluxgui.core.errors import FluxguiError, show_id

UNREVIEWED, IN_REVIEW, REVIEWED, FLAGGED = "unreviewed", "in-review", "reviewed", "flagged"
STATES: tuple[str, ...] = (UNREVIEWED, IN_REVIEW, REVIEWED, FLAGGED)
#: how long a claim holds a session for its reviewer unless renewed
CLAIM_SECONDS = 30 * 60


class ReviewError(FluxguiError):
    """A review request that cannot be done: unknown state, score name or value, a
    review database that is too new, a change that would overwrite someone else's."""


class Claimed(ReviewError):
    """A change refused because another reviewer holds a live claim on the session."""

    def __init__(self, message: str, claimed_by: str) -> None:
        super().__init__(message)
        self.claimed_by = claimed_by


def now() -> datetime:
    return datetime.now(UTC)


def stamp(when: datetime | None = None) -> str:
    """A time as the review database keeps it: UTC ISO 8601 with microseconds (sorts as
    text)."""
    return (when or now()).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def later(seconds: float) -> str:
    return stamp(now() + timedelta(seconds=seconds))


def default_reviewer() -> str:
    """The OS user name (``FLUXGUI_REVIEWER`` overrides it)."""
    name = os.environ.get("FLUXGUI_REVIEWER", "").strip()
    if name:
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "reviewer"


def check_state(state: str) -> str:
    if state not in STATES:
        raise ReviewError(f"unknown review state {show_id(state)} (use {', '.join(STATES)})")
    return state


def effective_state(state: str | None, claimed_until: str | None, at: str | None = None) -> str:
    """The state a reviewer sees: a claim past its time is ``unreviewed`` again."""
    if not state:
        return UNREVIEWED
    if state == IN_REVIEW and claimed_until is not None and claimed_until <= (at or stamp()):
        return UNREVIEWED
    return state


# --------------------------------------------------------------------------- rubric

KINDS = ("categorical", "numeric", "boolean")
_TRUE = {"yes", "true", "1", "y"}
_FALSE = {"no", "false", "0", "n"}


@dataclass(frozen=True)
class Criterion:
    """One thing a reviewer scores."""

    name: str
    kind: str
    label: str = ""
    options: tuple[str, ...] = ()
    minimum: int = 1
    maximum: int = 5

    def choices(self) -> list[Any]:
        """What the keys 1–9 pick, in order."""
        if self.kind == "categorical":
            return list(self.options)
        if self.kind == "boolean":
            return [True, False]
        return list(range(self.minimum, self.maximum + 1))

    def parse(self, text: Any) -> Any:
        """The stored value of a score given as text (or as a value already)."""
        raw = str(text).strip() if not isinstance(text, bool) else text
        if self.kind == "boolean":
            if isinstance(raw, bool):
                return raw
            if raw.lower() in _TRUE:
                return True
            if raw.lower() in _FALSE:
                return False
            raise ReviewError(f"score {show_id(self.name)} is yes or no, not {show_id(str(text))}")
        if self.kind == "numeric":
            try:
                value = int(str(raw))
            except ValueError:
                value = None
            if value is None or not self.minimum <= value <= self.maximum:
                raise ReviewError(
                    f"score {show_id(self.name)} is a whole number from {self.minimum} to "
                    f"{self.maximum}, not {show_id(str(text))}"
                )
            return value
        for option in self.options:
            if option == raw or option.lower() == str(raw).lower():
                return option
        raise ReviewError(
            f"score {show_id(self.name)} is one of {', '.join(self.options)}, not {show_id(str(text))}"
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.label:
            out["label"] = self.label
        if self.kind == "categorical":
            out["options"] = list(self.options)
        if self.kind == "numeric":
            out["min"], out["max"] = self.minimum, self.maximum
        return out


@dataclass(frozen=True)
class Rubric:
    """The criteria of a scorecard."""

    name: str
    criteria: tuple[Criterion, ...]

    def criterion(self, name: str) -> Criterion:
        for c in self.criteria:
            if c.name == name:
                return c
        known = ", ".join(c.name for c in self.criteria) or "none"
        raise ReviewError(f"no score named {show_id(name)} in the rubric (it has {known})")

    def parse(self, assignment: str) -> tuple[str, Any]:
        """``NAME=VALUE`` → ``(name, stored value)``."""
        name, sep, value = assignment.partition("=")
        if not sep or not name.strip():
            raise ReviewError(f"a score is NAME=VALUE, not {show_id(assignment)}")
        c = self.criterion(name.strip())
        return c.name, c.parse(value)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "criteria": [c.to_dict() for c in self.criteria]}

    @classmethod
    def from_dict(cls, data: Any) -> Rubric:
        """A rubric from its JSON form; a wrong one is one :class:`ReviewError` line."""
        if not isinstance(data, dict) or not isinstance(data.get("criteria"), list):
            raise ReviewError('a rubric is a JSON object with a "criteria" list')
        criteria: list[Criterion] = []
        for n, item in enumerate(data["criteria"], 1):
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"].strip():
                raise ReviewError(f"rubric criterion {n} needs a name")
            name, kind = item["name"].strip(), item.get("kind")
            if kind not in KINDS:
                raise ReviewError(f"rubric criterion {show_id(name)}: kind is one of {', '.join(KINDS)}")
            if any(c.name == name for c in criteria):
                raise ReviewError(f"rubric criterion {show_id(name)} is named twice")
            label = str(item.get("label") or "")
            if kind == "categorical":
                options = item.get("options")
                if (not isinstance(options, list) or not options or len(options) > 9
                        or not all(isinstance(o, str) and o.strip() for o in options)
                        or len(set(options)) != len(options)):
                    raise ReviewError(f"rubric criterion {show_id(name)}: options are 1 to 9 distinct texts")
                criteria.append(Criterion(name, kind, label, tuple(o.strip() for o in options)))
            elif kind == "numeric":
                lo, hi = item.get("min", 1), item.get("max", 5)
                if not (isinstance(lo, int) and isinstance(hi, int)) or lo > hi:
                    raise ReviewError(f"rubric criterion {show_id(name)}: min and max are whole numbers, min ≤ max")
                criteria.append(Criterion(name, kind, label, minimum=lo, maximum=hi))
            else:
                criteria.append(Criterion(name, kind, label))
        return cls(str(data.get("name") or "rubric"), tuple(criteria))

    @classmethod
    def from_json(cls, text: str) -> Rubric:
        try:
            data = json.loads(text)
        except RecursionError:
            raise ReviewError("the rubric is nested too deeply to read as JSON") from None
        except ValueError as exc:
            raise ReviewError(f"the rubric is not valid JSON ({exc})") from None
        return cls.from_dict(data)


DEFAULT_RUBRIC = Rubric.from_dict({
    "name": "customer support",
    "criteria": [
        {"name": "resolution", "kind": "categorical", "label": "Resolved?",
         "options": ["solved", "partly", "not solved"]},
        {"name": "accuracy", "kind": "categorical", "label": "Answers correct?",
         "options": ["correct", "minor errors", "wrong"]},
        {"name": "tone", "kind": "numeric", "label": "Tone (1–5)", "min": 1, "max": 5},
        {"name": "policy", "kind": "boolean", "label": "Followed policy?"},
        {"name": "escalation", "kind": "categorical", "label": "Escalation",
         "options": ["not needed", "handled", "missed"]},
    ],
})


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Note:
    """A note on a session (``message_id`` None) or on one of its messages."""

    id: int
    message_id: str | None
    text: str
    reviewer: str
    at: str

    def to_dict(self) -> dict[str, Any]:
        return {"message_id": self.message_id, "text": self.text, "reviewer": self.reviewer, "at": self.at}


@dataclass(frozen=True)
class Change:
    """One line of a review's history."""

    field: str
    old: Any
    new: Any
    reviewer: str
    at: str

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "old": self.old, "new": self.new, "reviewer": self.reviewer, "at": self.at}

    def text(self) -> str:
        """``ann set state: unreviewed → flagged`` (as the window's tooltip shows it)."""
        def shown(v: Any) -> str:
            return "–" if v is None else ("yes" if v is True else "no" if v is False else str(v))

        return f"{self.reviewer}: {self.field} {shown(self.old)} → {shown(self.new)}"


@dataclass
class Review:
    """A session's review as read (an unreviewed session: ``Review(session_id)``)."""

    session_id: str
    state: str = UNREVIEWED
    stored_state: str | None = None
    reviewer: str | None = None
    claimed_by: str | None = None
    claimed_until: str | None = None
    updated_at: str | None = None
    version: int = 0
    tags: list[str] = field(default_factory=list)
    scores: dict[str, Any] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)

    @property
    def session_notes(self) -> list[Note]:
        return [n for n in self.notes if n.message_id is None]

    def message_notes(self, message_id: str | int) -> list[Note]:
        key = str(message_id)
        return [n for n in self.notes if n.message_id == key]

    @property
    def claimed(self) -> bool:
        """Someone holds a live claim on it."""
        return self.state == IN_REVIEW and bool(self.claimed_by)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id, "state": self.state, "tags": list(self.tags),
            "scores": dict(self.scores), "notes": [n.to_dict() for n in self.notes],
            "reviewer": self.reviewer, "updated_at": self.updated_at,
            **({"claimed_by": self.claimed_by, "claimed_until": self.claimed_until} if self.claimed else {}),
        }


@dataclass(frozen=True)
class ReviewFilter:
    """Which reviews a list shows (every field: any when empty)."""

    state: str | None = None
    tag: str | None = None
    reviewer: str | None = None
    has_notes: bool = False
    flagged: bool = False

    @property
    def active(self) -> bool:
        return bool(self.state or self.tag or self.reviewer or self.has_notes or self.flagged)

    @property
    def wants_unreviewed(self) -> bool:
        """Only sessions without a review state (the store is paged and reviewed ones
        dropped) — as opposed to a filter the review database answers."""
        return self.state == UNREVIEWED and not self.flagged
