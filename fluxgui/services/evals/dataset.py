"""Eval datasets from sessions: which sessions (named, or all under a review filter:
state, tag, minimum scores), their items (:mod:`.items`) with each session's review as
metadata, written in one of :data:`~.formats.EVAL_FORMATS` to a file that appears
complete or not at all."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgui.core.errors import KeyNeeded, TargetError
from fluxgui.core.files import part_name
from fluxgui.core.roles import IdTransform, PageTransform, Store

from ..doctor.reading import read_messages
from ..outputs import check_output
from .formats import EVAL_FORMATS, render
from .items import EvalItem, session_items


@dataclass
class EvalFilter:
    """Which sessions' turns become items: a review state, a tag, minimum scores
    (rubric name → value; a session without that score, or not a number, is left out)."""

    state: str | None = None
    tag: str | None = None
    min_scores: dict[str, float] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return bool(self.state or self.tag or self.min_scores)


@dataclass
class EvalResult:
    """What was written: items, sessions read, assistant turns, turns left out (reason →
    count), the file's size."""

    items: int = 0
    sessions: int = 0
    assistant_turns: int = 0
    left_out: Counter[str] = field(default_factory=Counter)
    bytes: int = 0


def _score_ok(scores: dict[str, Any], wanted: dict[str, float]) -> bool:
    for name, least in wanted.items():
        try:
            if float(scores[name]) < least:
                return False
        except (KeyError, TypeError, ValueError):
            return False
    return True


async def _all_ids(store: Store) -> list[str]:
    ids: list[str] = []
    cursor = None
    while True:
        page = await store.reader.list_sessions(limit=500, cursor=cursor)
        ids += [s.id for s in page.sessions]
        cursor = page.cursor
        if cursor is None:
            return ids


async def choose_sessions(
    store: Store, session_ids: Sequence[str], flt: EvalFilter, reviews: Any, key: str,
) -> tuple[list[str], dict[str, Any]]:
    """The sessions to read (named ones checked to exist) and their reviews (id →
    :class:`~fluxgui.services.reviews.Review`; empty without a review database)."""
    if session_ids:
        ids = [(await store.reader.require_session(sid)).id for sid in session_ids]
    else:
        ids = await _all_ids(store)
    if reviews is None:
        return ids, {}
    if flt.state or flt.tag:
        from ..reviews import ReviewFilter

        kept = await reviews.keep_matching(key, ids, ReviewFilter(state=flt.state, tag=flt.tag))
        ids = [i for i in ids if i in kept]
    found = await reviews.reviews(key, ids, notes=False)
    if flt.min_scores:
        ids = [i for i in ids if i in found and _score_ok(found[i].scores, flt.min_scores)]
    return ids, found


def _review_meta(review: Any) -> dict[str, Any]:
    if review is None:
        return {"review_state": None, "review_scores": {}, "review_tags": []}
    return {"review_state": review.state, "review_scores": dict(review.scores), "review_tags": list(review.tags)}


async def collect(
    store: Store, session_ids: Sequence[str] = (), *, flt: EvalFilter | None = None,
    reviews: Any = None, key: str = "", label: str | None = None,
    transform: PageTransform | None = None, transform_id: IdTransform | None = None,
) -> tuple[list[EvalItem], EvalResult]:
    """The items of the chosen sessions, and the counts. ``transform`` changes each
    session's messages before their items are made (redaction); ``transform_id`` the
    session id each item carries (its ``session_id`` and its metadata's)."""
    flt = flt or EvalFilter()
    if flt.active and reviews is None:
        raise ValueError("a review filter needs the review database")
    if store.needs_key and not store.has_key:
        raise KeyNeeded(f"{store.target} holds encrypted sessions (EncryptedSession): give its key to export them")
    ids, found = await choose_sessions(store, session_ids, flt, reviews, key)
    result = EvalResult()
    items: list[EvalItem] = []
    for sid in ids:
        messages = await read_messages(store, sid)
        if transform is not None:
            messages = await asyncio.to_thread(transform, list(messages))
        meta = {"store": label or store.target, **_review_meta(found.get(sid))}
        shown = sid if transform_id is None else await asyncio.to_thread(transform_id, sid)
        got = await asyncio.to_thread(session_items, shown, messages, items=store.traits.items, metadata=meta)
        items += got.items
        result.sessions += 1
        result.assistant_turns += got.assistant_turns
        result.left_out.update(got.left_out)
    result.items = len(items)
    return items, result


async def export_eval(
    store: Store, path: Path, fmt: str, session_ids: Sequence[str] = (), *,
    flt: EvalFilter | None = None, reviews: Any = None, key: str = "", label: str | None = None,
    force: bool = False, transform: PageTransform | None = None, transform_id: IdTransform | None = None,
) -> EvalResult:
    """Write the eval dataset of the chosen sessions to ``path`` (see the module);
    ``transform``, ``transform_id``: see :func:`collect`."""
    if fmt not in EVAL_FORMATS:
        raise ValueError(f"unknown eval format {fmt!r} (use {', '.join(EVAL_FORMATS)})")
    output = check_output(path, store.local_paths(), force=force)
    items, result = await collect(
        store, session_ids, flt=flt, reviews=reviews, key=key, label=label, transform=transform,
        transform_id=transform_id,
    )
    text = "".join(render(items, fmt, yaml=not str(path).lower().endswith(".json")))
    result.bytes = await asyncio.to_thread(_write, output.path, text, output.kind == "stream")
    return result


def _write(path: Path, text: str, stream: bool) -> int:
    data = text.encode("utf-8", "backslashreplace")
    if stream:
        with open(path, "wb") as out:
            out.write(data)
        return len(data)
    folder = path.parent
    if not folder.is_dir():
        raise TargetError(f"no such folder: {folder}")
    tmp = folder / part_name(path.name)
    try:
        with open(tmp, "xb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise TargetError(f"cannot write {path}: {exc.strerror or exc}") from None
    return len(data)
