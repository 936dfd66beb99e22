"""The review queue: the next session to review, and claiming it without collisions.

"Next" is the most recently active session of the store (the store is paged, never read
whole) that is unreviewed and unclaimed — or, with a tag, the unreviewed sessions
carrying it. Claiming is one short transaction per candidate: a session with no review
row is claimed by inserting its row (``ON CONFLICT DO NOTHING``: of two reviewers racing
for it, one inserts and the other sees the conflict); one with a row is locked with
``SELECT … FOR UPDATE SKIP LOCKED`` (PostgreSQL; SQLite writes are serialised by
``BEGIN IMMEDIATE``) and taken only if it is unreviewed or its claim has expired. So no
two reviewers are ever handed the same session, and an abandoned claim comes back once
its time is up. A claim being worked on is kept alive with :func:`renew` (the window
renews the one it shows), so only an abandoned one runs out.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from sqlalchemy import and_, insert, or_, select, update

from fluxgui.core.model import SessionInfo
from fluxgui.services.session_list import activity_key
from fluxgui.core.roles import Store

from . import schema as s
from .model import CLAIM_SECONDS, IN_REVIEW, UNREVIEWED, ReviewFilter, later, stamp
from .repository import ReviewDB, insert_ignoring

PAGE = 100


async def candidates(db: ReviewDB, store: Store, store_key: str, *, tag: str | None = None) -> AsyncGenerator[SessionInfo, None]:
    """Unreviewed, unclaimed sessions, most recently active first."""
    flt = ReviewFilter(state=UNREVIEWED, tag=tag)
    if tag:
        # Only sessions with a review row carry tags: the review database answers.
        cursor = None
        infos: list[SessionInfo] = []
        while True:
            ids, cursor = await db.matching(store_key, flt, limit=500, cursor=cursor)
            infos.extend(await store.reader.sessions_by_ids(ids))
            if cursor is None:
                break
        for info in sorted(infos, key=activity_key, reverse=True):
            yield info
        return
    cursor = None
    while True:
        page = await store.reader.list_sessions(limit=PAGE, cursor=cursor)
        kept = await db.keep_matching(store_key, [i.id for i in page.sessions], flt)
        for info in page.sessions:
            if info.id in kept:
                yield info
        cursor = page.cursor
        if cursor is None or not page.sessions:
            return


async def claim(db: ReviewDB, store_key: str, session_id: str, reviewer: str, *, seconds: float = CLAIM_SECONDS) -> bool:
    """Claim one session for ``reviewer`` if nobody holds it; ``True`` when claimed."""
    at, until = stamp(), later(seconds)
    r = s.reviews.c
    async with db.engine.begin() as conn:
        values = dict(store_key=store_key, session_id=session_id, state=IN_REVIEW, reviewer=reviewer,
                      updated_at=at, claimed_by=reviewer, claimed_until=until, version=1)
        made = await conn.execute(insert_ignoring(db.dialect, s.reviews).values(**values).returning(r.session_id))
        if made.first() is None:
            query = select(r.version).where(
                r.store_key == store_key, r.session_id == session_id,
                or_(r.state == UNREVIEWED, and_(r.state == IN_REVIEW, r.claimed_until <= at)),
            ).with_for_update(skip_locked=True)
            row = (await conn.execute(query)).first()
            if row is None:
                return False
            await conn.execute(update(s.reviews).where(
                r.store_key == store_key, r.session_id == session_id).values(
                state=IN_REVIEW, claimed_by=reviewer, claimed_until=until, updated_at=at,
                reviewer=reviewer, version=row.version + 1))
        await conn.execute(insert(s.history).values(
            store_key=store_key, session_id=session_id, field="state", old='"unreviewed"',
            new='"in-review"', reviewer=reviewer, at=at))
    return True


async def renew(db: ReviewDB, store_key: str, session_id: str, reviewer: str, *, seconds: float = CLAIM_SECONDS) -> bool:
    """Make ``reviewer``'s claim on a session last ``seconds`` from now; ``False`` when it
    is not theirs (any more: reviewed, released, or claimed by another after it ran out).
    The review is not changed otherwise (no history row, same version and update time)."""
    r = s.reviews.c
    async with db.engine.begin() as conn:
        done = await conn.execute(update(s.reviews).where(
            r.store_key == store_key, r.session_id == session_id, r.state == IN_REVIEW,
            r.claimed_by == reviewer).values(claimed_until=later(seconds)))
    return bool(done.rowcount)


async def next_session(
    db: ReviewDB, store: Store, store_key: str, *, reviewer: str, take: bool = False,
    tag: str | None = None, seconds: float = CLAIM_SECONDS, skip: set[str] | None = None,
) -> SessionInfo | None:
    """The next session to review (claimed for ``reviewer`` when ``take``); ``None``
    when none is left. ``skip``: ids not to hand out (the one just reviewed)."""
    async for info in candidates(db, store, store_key, tag=tag):
        if skip and info.id in skip:
            continue
        if not take or await claim(db, store_key, info.id, reviewer, seconds=seconds):
            return info
    return None
