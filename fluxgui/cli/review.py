"""``fluxgui review set|ls|next|export|rubric``: reviews kept in the review database
(:mod:`fluxgui.services.reviews`), never in the store, which is opened read-only.

Bad input (an unknown session id, state, score name or value) is one line, exit 3;
``next`` exits 1 when no session is left.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, TextIO

from fluxgui.core.errors import show_id
from fluxgui.core.roles import Store

from .errors import Known
from .output import one_line, print_json
from .stores import open_target


@contextlib.asynccontextmanager
async def _opened(args: argparse.Namespace) -> Any:
    from fluxgui.services.reviews import ReviewDB, review_key

    store = await open_target(args)
    try:
        db = await ReviewDB.open(args.reviews, stores=[store])
        try:
            yield store, db, review_key(store.store_key, args.store_label)
        finally:
            await db.close()
    finally:
        await store.close()


def _reviewer(args: argparse.Namespace) -> str:
    from fluxgui.services.reviews import default_reviewer

    return (args.reviewer or "").strip() or default_reviewer()


def _line(review: Any) -> str:
    parts = [f"{review.state:<10}", one_line(review.session_id, 80)]
    if review.claimed:
        parts.append(f"(claimed by {one_line(review.claimed_by, 40)} until {review.claimed_until})")
    elif review.reviewer:
        parts.append(f"by {one_line(review.reviewer, 40)}")
    if review.scores:
        parts.append(" ".join(f"{one_line(k, 40)}={one_line(str(v), 40)}" for k, v in review.scores.items()))
    if review.tags:
        parts.append("#" + " #".join(one_line(t, 40) for t in review.tags))
    if review.notes:
        parts.append(f"[{len(review.notes)} notes]")
    return " ".join(parts)


async def _message_exists(store: Any, session_id: str, message_id: str) -> bool:
    async for page in store.reader.iter_messages(session_id, batch=500):
        if any(str(m.id) == message_id or m.label == message_id for m in page):
            return True
    return False


async def cmd_set(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.reviews import Edit

    if args.message and not args.note:
        raise Known("review set: --message needs --note (the note on that message)")
    async with _opened(args) as (store, db, key):
        # the review as it is now: a change someone makes before ours is written is
        # refused (told), not overwritten
        seen = await db.get(key, args.session_id)
        await store.reader.require_session(args.session_id)
        if args.message and not await _message_exists(store, args.session_id, args.message):
            raise Known(f"session {show_id(args.session_id)} has no message {show_id(args.message)}")
        rubric = await db.rubric()
        scores = dict(rubric.parse(a) for a in args.score)
        edit = Edit(state=args.state, add_tags=args.tag, remove_tags=args.untag, scores=scores,
                    note=args.note, message_id=args.message, take_over=args.take_over)
        if edit.empty:
            raise Known("review set: nothing to change (give --state, --tag, --untag, --score, --note "
                        "or --take-over)")
        review = await db.change(key, args.session_id, edit, reviewer=_reviewer(args), rubric=rubric,
                                 expected_version=seen.version)
    out.write(_line(review) + "\n")
    return 0


async def cmd_ls(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.reviews import ReviewFilter
    from fluxgui.services.reviews.listing import FilteredPages

    flt = ReviewFilter(state=args.state, tag=args.tag, reviewer=args.reviewer)
    async with _opened(args) as (store, db, key):
        if args.json:
            out.write('{"store_key": ' + _json(key) + ', "reviews": [')
        first = True
        count = 0
        pages = FilteredPages(db, key, flt)
        cursor = None
        while True:
            if pages.by_store or flt.active:
                page = await pages.page(store, limit=200, cursor=cursor)
                ids, cursor = [i.id for i in page.sessions], page.cursor
            else:
                ids, cursor = await db.matching(key, flt, limit=200, cursor=cursor)
            reviews = await db.reviews(key, ids)
            for sid in ids:
                count += 1
                if args.json:
                    out.write(("\n  " if first else ",\n  ") + _json(reviews[sid].to_dict()))
                    first = False
                else:
                    out.write(_line(reviews[sid]) + "\n")
            if cursor is None:
                break
        if args.json:
            out.write("\n]}\n" if not first else "]}\n")
        else:
            out.write(f"({count} {'review' if count == 1 else 'reviews'})\n")
    return 0


def _json(value: Any) -> str:
    from .output import json_text

    return json_text(value)


async def cmd_next(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.reviews.claims import next_session

    reviewer = _reviewer(args)
    async with _opened(args) as (store, db, key):
        info = await next_session(db, store, key, reviewer=reviewer, take=args.claim, tag=args.tag,
                                  seconds=args.claim_minutes * 60)
        review = await db.get(key, info.id) if info else None
    if info is None:
        if args.json:
            print_json(out, {"store_key": key, "session": None})
        else:
            print("fluxgui: no unreviewed session left", file=sys.stderr)
        return 1
    if args.json:
        print_json(out, {"store_key": key, "session": info.to_dict(),
                         "claimed": bool(args.claim), "review": review.to_dict() if review else None})
    else:
        suffix = f" (claimed by {one_line(reviewer, 40)} until {review.claimed_until})" if args.claim and review else ""
        out.write(one_line(info.id, 400) + suffix + "\n")
    return 0


async def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.reviews.results import export_text, write_atomic

    async with _opened(args) as (store, db, key):
        if args.output not in (None, "-"):
            from fluxgui.services.outputs import check_output

            # never onto the store (or another one), never into a JSON folder read
            check_output(Path(args.output), store.local_paths())
        # (the window's Review › Export Results writes the same text)
        text, count = await export_text(db, key, args.review_format)
    if args.output in (None, "-"):
        out.write(text)
    else:
        write_atomic(args.output, text)
        print(f"fluxgui: wrote {count} reviews to {one_line(args.output, 400)}", file=sys.stderr)
    return 0


async def _is_review_db(target: str) -> bool:
    """``target`` holds a review database already (a SQLite file with its tables, or a
    database URL with them)."""
    from fluxgui.services.reviews.schema import meta

    path = Path(target).expanduser()
    if "://" not in target:
        if not path.is_file():
            return False
        import sqlite3

        try:
            with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
                return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (meta.name,)).fetchone())
        except sqlite3.Error:
            return False
    return False


async def cmd_rubric(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.reviews import ReviewDB, Rubric

    from fluxgui.core.errors import NotASessionStore

    # TARGET is a store (it must open: a typo must not pass; its review database is
    # --reviews or the default, never the store itself) — or the review database: a file
    # with its tables, or a database URL holding no store
    if args.rubric_action == "set" and not args.file:
        raise Known("review rubric set: give the rubric's FILE.json")
    url, stores = args.reviews, []
    try:
        stores.append(await open_target(argparse.Namespace(**{**vars(args), "target": _checked(args.target)})))
    except NotASessionStore:
        if url is None:
            if "://" not in args.target and not await _is_review_db(args.target):
                raise
            url = args.target
    try:
        db = await ReviewDB.open(url, stores=stores)
    finally:
        for store in stores:
            await store.close()
    try:
        if args.rubric_action == "show":
            print_json(out, (await db.rubric()).to_dict())
            return 0
        try:
            text = Path(args.file).read_text(encoding="utf-8")
        except OSError as exc:
            raise Known(f"cannot read the rubric {show_id(args.file)}: {exc.strerror or exc}") from None
        rubric = Rubric.from_json(text)
        await db.set_rubric(rubric, _reviewer_default())
        out.write(f"rubric {one_line(rubric.name, 80)}: {len(rubric.criteria)} criteria set in {db.where}\n")
        return 0
    finally:
        await db.close()


def _checked(target: str) -> str:
    from . import arguments

    return arguments.target(target)


def _reviewer_default() -> str:
    from fluxgui.services.reviews import default_reviewer

    return default_reviewer()


HANDLERS = {"set": cmd_set, "ls": cmd_ls, "next": cmd_next, "export": cmd_export, "rubric": cmd_rubric}


async def cmd_review(args: argparse.Namespace, out: TextIO) -> int:
    """``review ACTION``: run the action (an unknown state is refused before anything
    is opened)."""
    from fluxgui.services.reviews.model import check_state

    if vars(args).get("state") is not None:
        check_state(args.state)
    return await HANDLERS[args.review_action](args, out)
