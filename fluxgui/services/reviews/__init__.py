"""Reviews of conversations: states, rubric scores, tags, notes, claims — fluxgui's own
data, kept in a review database beside the agent's store, never in it.

* :mod:`.model` — states, the rubric (and the shipped default), review records, filters;
* :mod:`.schema` — the tables, their version, the migrations;
* :mod:`.database` — where the review database is (``--reviews``, ``FLUXGUI_REVIEWS``,
  the data folder), its engine, its errors in one line;
* :mod:`.apart` — never a store being reviewed;
* :mod:`.repository` — :class:`ReviewDB`: reading, changing (with history), filtering;
* :mod:`.claims` — the queue: next unreviewed session, claims with row locks and expiry;
* :mod:`.listing` — the session list under a review filter, still paged;
* :mod:`.results` — export rows (CSV, JSON) and the review block of session exports.

Everything is keyed by ``(store key, session id)``; the store key is
``core.storekey.choose(store.store_key, label)``.
"""

from __future__ import annotations

from fluxgui.core.storekey import choose

from .model import (
    DEFAULT_RUBRIC,
    FLAGGED,
    IN_REVIEW,
    REVIEWED,
    STATES,
    UNREVIEWED,
    Claimed,
    Criterion,
    Note,
    Review,
    ReviewError,
    ReviewFilter,
    Rubric,
    default_reviewer,
)
from .repository import Edit, ReviewDB


def review_key(store_key: str, label: str | None) -> str:
    """The key reviews of a store are filed under (the label, when given)."""
    return choose(store_key, label)


__all__ = [
    "DEFAULT_RUBRIC", "FLAGGED", "IN_REVIEW", "REVIEWED", "STATES", "UNREVIEWED",
    "Claimed", "Criterion", "Edit", "Note", "Review", "ReviewDB", "ReviewError", "ReviewFilter",
    "Rubric", "default_reviewer", "review_key",
]
