"""Review results out: ``review export`` rows (CSV, JSON) and the review block the
session exports carry when asked (``export --with-reviews``).

CSV has one row per reviewed session: session id, state, reviewer, one column per rubric
criterion, the tags joined with ``; ``, the number of notes, the first note's text and
the time of the last change. JSON carries every review whole, message notes included.
Both are written to a temporary file beside the target and renamed into place; no CSV
cell is one a spreadsheet reads as a formula (:mod:`fluxgui.core.csvcells`).
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterable
from typing import Any

from fluxgui.core import csvcells

from .model import UNREVIEWED, Review, Rubric

CSV_FIXED = ("session_id", "state", "reviewer")
CSV_TAIL = ("tags", "notes", "first_note", "updated_at")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def csv_text(reviews: Iterable[Review], rubric: Rubric) -> str:
    out = io.StringIO()
    names = [c.name for c in rubric.criteria]
    writer = csvcells.writer(out, lineterminator="\n")  # (no cell a spreadsheet runs)
    writer.writerow([*CSV_FIXED, *names, *CSV_TAIL])
    for r in reviews:
        if r.state == UNREVIEWED and not r.scores and not r.notes and not r.tags:
            continue
        first = r.notes[0].text if r.notes else ""
        writer.writerow([
            r.session_id, r.state, r.reviewer or "", *(_cell(r.scores.get(n)) for n in names),
            "; ".join(r.tags), len(r.notes), first, r.updated_at or "",
        ])
    return out.getvalue()


def json_text(store_key: str, reviews: Iterable[Review], rubric: Rubric,
              histories: dict[str, list[Any]] | None = None) -> str:
    """Everything: each review whole and its history (every change, oldest first)."""
    rows = []
    for r in reviews:
        row = r.to_dict()
        if histories is not None:
            row["history"] = [c.to_dict() for c in histories.get(r.session_id, [])]
        rows.append(row)
    return json.dumps(
        {"store_key": store_key, "rubric": rubric.to_dict(), "reviews": rows}, ensure_ascii=False, indent=2,
    ) + "\n"


def review_lines(review: Review) -> list[str]:
    """The review of one session as plain lines (state, scores, tags, notes) for the
    Markdown and HTML exports, which escape them as they escape message text."""
    lines = [f"Review: {review.state}" + (f" by {review.reviewer}" if review.reviewer else "")
             + (f" ({review.updated_at})" if review.updated_at else "")]
    if review.scores:
        lines.append("Scores: " + ", ".join(f"{k} = {_cell(v)}" for k, v in review.scores.items()))
    if review.tags:
        lines.append("Tags: " + ", ".join(review.tags))
    for n in review.notes:
        where = "" if n.message_id is None else f" on message {n.message_id}"
        lines.append(f"Note{where} by {n.reviewer} ({n.at}): {n.text}")
    return lines


def annotator(db: Any, store_key: str) -> Any:
    """``annotate`` for :func:`fluxgui.services.export.export_to_stream`: each session's
    review as :func:`review_lines` and as its record (``Review.to_dict`` without the
    session id); nothing for an unreviewed session without notes."""

    async def annotate(session_id: str) -> tuple[list[str], dict[str, Any] | None]:
        review = await db.get(store_key, session_id)
        if review.state == UNREVIEWED and not (review.scores or review.tags or review.notes):
            return [], None
        record = review.to_dict()
        del record["session_id"]
        return review_lines(review), record

    return annotate


def write_atomic(path: str, text: str) -> None:
    """``text`` to ``path`` through a temporary file in the same folder and a rename
    (flushed and fsynced first): a kill leaves the old file or the new one."""
    import os
    import tempfile
    from pathlib import Path

    target = Path(path).expanduser()
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


async def export_text(db: Any, store_key: str, fmt: str) -> tuple[str, int]:
    """Every review of ``store_key`` that says something (not unreviewed and empty), as
    ``review export`` writes it: ``fmt`` ``"csv"`` or ``"json"`` (with histories); the
    text and the number of reviews."""
    from .model import ReviewFilter

    rubric = await db.rubric()
    cursor: tuple[Any, ...] | None = None
    reviews: list[Review] = []
    while True:
        ids, cursor = await db.matching(store_key, ReviewFilter(), limit=500, cursor=cursor)
        found = await db.reviews(store_key, ids)
        reviews.extend(found[sid] for sid in ids)
        if cursor is None:
            break
    reviews = [r for r in reviews if r.state != UNREVIEWED or r.scores or r.notes or r.tags]
    if fmt == "csv":
        return csv_text(reviews, rubric), len(reviews)
    histories = await db.histories(store_key, [r.session_id for r in reviews])
    return json_text(store_key, reviews, rubric, histories), len(reviews)

