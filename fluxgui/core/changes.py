"""Reversible edits: what an edit of a session removed and added, as stored rows.

Every edit a store makes (clear, delete, pop, update, insert, fork) returns a
:class:`Change`; applying its :meth:`~Change.inverse` undoes it exactly (the removed rows
come back with their own ids and times), applying it again redoes it. Stores check, before
applying, that they still hold what the change expects (see the adapters' editors).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import show_id

Row = dict[str, Any]


def label_id(session_id: str) -> str:
    """A session id as an edit's label shows it (quoted, cut at 40 characters)."""
    text = show_id(session_id)
    return text if len(text) <= 40 else text[:38] + "…\""
Where = Literal["before", "after"]


@dataclass(frozen=True)
class SessionRow:
    """A session's own record (formats that keep one: a sessions-table row, a JSON
    session file's document, a Redis session hash): its two times, as stored, and what
    else the format needs to put the session back as it was (``extra``; ``None`` for
    the SQL formats)."""

    created_at: Any
    updated_at: Any
    extra: dict[str, Any] | None = field(default=None, compare=True, hash=False)


@dataclass(frozen=True)
class Change:
    """One edit of one session, reversible.

    ``removed``/``added`` are stored rows (column → value, with ``id``) in stored order.
    ``session_before``/``session_after`` are the session's row in a sessions table
    (``None``: no row); both ``None`` for formats without one.
    """

    session_id: str
    label: str
    removed: tuple[Row, ...] = ()
    added: tuple[Row, ...] = ()
    session_before: SessionRow | None = None
    session_after: SessionRow | None = None

    def inverse(self) -> Change:
        return Change(
            self.session_id,
            self.label,
            removed=self.added,
            added=self.removed,
            session_before=self.session_after,
            session_after=self.session_before,
        )

    @property
    def added_ids(self) -> list[int]:
        return [int(r["id"]) for r in self.added]

    @property
    def removed_ids(self) -> list[int]:
        return [int(r["id"]) for r in self.removed]
