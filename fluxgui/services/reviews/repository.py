"""The review database: reading and changing reviews, every change kept in a history.

:class:`ReviewDB` is the one door to it (SQLAlchemy async; SQLite or PostgreSQL).
Every review is keyed by ``(store_key, session_id)``. A change is one transaction that
writes the review and one history row per field it changed (old and new value, the
reviewer, the time); given ``expected_version`` it refuses to overwrite a review someone
else changed since it was read. Claims are in :mod:`.claims`, filtered lists in
:mod:`.listing`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, delete, exists, func, insert, or_, select, update

from fluxgui.core.errors import show_id
from fluxgui.core.roles import Store

from . import apart
from . import schema as s
from .database import make_engine, resolve, shown, unreachable
from .model import (
    CLAIM_SECONDS,
    DEFAULT_RUBRIC,
    FLAGGED,
    IN_REVIEW,
    UNREVIEWED,
    Change,
    Claimed,
    Note,
    Review,
    ReviewError,
    ReviewFilter,
    Rubric,
    check_state,
    effective_state,
    later,
    stamp,
)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _unjson(text: str | None) -> Any:
    """A stored JSON value (a value no fluxgui wrote, in a shared database: its text)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


@dataclass
class Edit:
    """What one change does to a review (every part optional)."""

    state: str | None = None
    add_tags: Sequence[str] = ()
    remove_tags: Sequence[str] = ()
    scores: dict[str, Any] = field(default_factory=dict)
    clear_scores: Sequence[str] = ()
    note: str | None = None
    message_id: str | None = None
    claim_seconds: float = CLAIM_SECONDS
    #: change it even though another reviewer holds a live claim on it (the claim then
    #: passes to this reviewer, unless the change ends it)
    take_over: bool = False

    @property
    def empty(self) -> bool:
        return not (self.state or self.add_tags or self.remove_tags or self.scores
                    or self.clear_scores or self.note or self.take_over)


def insert_ignoring(dialect: str, table: Any) -> Any:
    """``INSERT … ON CONFLICT DO NOTHING`` on ``table`` (SQLite or PostgreSQL)."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing()
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table).on_conflict_do_nothing()


def clean_tag(tag: str) -> str:
    text = " ".join(str(tag).split())
    if not text:
        raise ReviewError("a tag cannot be empty")
    return text


class ReviewDB:
    """An open review database."""

    def __init__(self, engine: Any, url: str, reader: Any = None) -> None:
        #: the engine of changes (on SQLite: ``BEGIN IMMEDIATE``)
        self.engine = engine
        #: the engine of reads (SQLite: another pool, plain ``BEGIN``; else the same)
        self.reader = reader or engine
        self.url = url
        self.where = shown(url)
        self.dialect = engine.dialect.name

    @classmethod
    async def open(cls, url: str | None = None, *, stores: Iterable[Store | apart.Place] = ()) -> ReviewDB:
        """Open (create, upgrade) the review database ``url`` (see :mod:`.database`),
        refused when it is one of ``stores`` (the stores it keeps reviews of: see
        :mod:`.apart`) before anything is written."""
        places = apart.places(stores)
        real = resolve(url, places)
        engine = make_engine(real)
        db = cls(engine, real, make_engine(real, writer=False) if real.startswith("sqlite") else None)
        try:
            # a look first (a reader waits for no writer), the writer's lock only to
            # create or upgrade the tables
            async with db.reader.connect() as conn:
                if db.dialect == "postgresql":
                    await conn.run_sync(apart.check_schema, real, db.where, places)
                found = await conn.run_sync(s.read_version)
            s.check_version(found, db.where)
            if found < s.SCHEMA_VERSION:
                async with engine.begin() as conn:
                    await conn.run_sync(s.upgrade, db.where)
        except ReviewError:
            await db.close()
            raise
        except Exception as exc:  # noqa: BLE001 - a driver's error: one line
            await db.close()
            raise unreachable(real, exc) from None
        if db.dialect not in ("sqlite", "postgresql"):
            await db.close()
            raise ReviewError(f"the review database must be SQLite or PostgreSQL ({db.where})")
        return db

    async def close(self) -> None:
        await self.engine.dispose()
        if self.reader is not self.engine:
            await self.reader.dispose()

    async def check_apart(self, stores: Iterable[Store | apart.Place]) -> None:
        """Refuse (:class:`ReviewError`) when this review database is one of ``stores``
        (a store opened after it: see :mod:`.apart`)."""
        places = apart.places(stores)
        path = apart.sqlite_file(self.url)
        if path is not None:
            apart.check_file(path, self.where, places)
        elif self.dialect == "postgresql":
            async with self.reader.connect() as conn:
                await conn.run_sync(apart.check_schema, self.url, self.where, places)

    async def schema_version(self) -> int:
        async with self.reader.connect() as conn:
            return int(await conn.run_sync(s.read_version))

    # -- rubric ------------------------------------------------------------------------

    async def rubric(self) -> Rubric:
        """The rubric the team defined (the shipped default until one is set)."""
        async with self.reader.connect() as conn:
            row = (await conn.execute(
                select(s.rubrics.c.definition).order_by(s.rubrics.c.id.desc()).limit(1)
            )).first()
        return Rubric.from_json(row.definition) if row else DEFAULT_RUBRIC

    async def set_rubric(self, rubric: Rubric, reviewer: str) -> None:
        """Define the rubric (the earlier ones stay, as history)."""
        async with self.engine.begin() as conn:
            await conn.execute(insert(s.rubrics).values(
                definition=_json(rubric.to_dict()), reviewer=reviewer, at=stamp()))

    # -- reading -----------------------------------------------------------------------

    async def get(self, store_key: str, session_id: str) -> Review:
        return (await self.reviews(store_key, [session_id]))[session_id]

    async def reviews(self, store_key: str, ids: Iterable[str], *, notes: bool = True) -> dict[str, Review]:
        """The reviews of ``ids`` (each id answered: unreviewed ones empty)."""
        ids = list(dict.fromkeys(ids))
        out = {sid: Review(sid) for sid in ids}
        if not ids:
            return out
        at = stamp()
        async with self.reader.connect() as conn:
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                await self._fill(conn, store_key, chunk, out, at, notes)
        return out

    async def _fill(self, conn: Any, key: str, chunk: list[str], out: dict[str, Review], at: str, notes: bool) -> None:
        r = s.reviews.c
        for row in await conn.execute(select(s.reviews).where(r.store_key == key, r.session_id.in_(chunk))):
            rev = out[row.session_id]
            rev.stored_state = row.state
            rev.state = effective_state(row.state, row.claimed_until, at)
            rev.reviewer, rev.updated_at, rev.version = row.reviewer, row.updated_at, row.version
            if rev.state == IN_REVIEW:
                rev.claimed_by, rev.claimed_until = row.claimed_by, row.claimed_until
        t = s.tags.c
        for row in await conn.execute(
            select(t.session_id, t.tag).where(t.store_key == key, t.session_id.in_(chunk)).order_by(t.tag)
        ):
            out[row.session_id].tags.append(row.tag)
        c = s.scores.c
        for row in await conn.execute(select(c.session_id, c.criterion, c.value).where(
            c.store_key == key, c.session_id.in_(chunk)).order_by(c.criterion)
        ):
            out[row.session_id].scores[row.criterion] = _unjson(row.value)
        n = s.notes.c
        query = select(s.notes).where(n.store_key == key, n.session_id.in_(chunk)).order_by(n.id)
        if not notes:
            query = query.where(n.message_id.is_(None))
        for row in await conn.execute(query):
            out[row.session_id].notes.append(Note(row.id, row.message_id, row.text, row.reviewer, row.at))

    async def history(self, store_key: str, session_id: str) -> list[Change]:
        """Every change of a session's review, oldest first."""
        return (await self.histories(store_key, [session_id]))[session_id]

    async def histories(self, store_key: str, ids: Sequence[str]) -> dict[str, list[Change]]:
        h = s.history.c
        out: dict[str, list[Change]] = {sid: [] for sid in ids}
        async with self.reader.connect() as conn:
            for start in range(0, len(ids), 500):
                rows = await conn.execute(select(s.history).where(
                    h.store_key == store_key, h.session_id.in_(list(ids[start:start + 500]))).order_by(h.id))
                for r in rows:
                    out[r.session_id].append(Change(r.field, _unjson(r.old), _unjson(r.new), r.reviewer, r.at))
        return out

    async def tags_used(self, store_key: str | None = None, prefix: str = "", limit: int = 50) -> list[str]:
        """Tags already used (in this store, or anywhere), most used first: for
        autocompletion."""
        t = s.tags.c
        query = select(t.tag, func.count().label("n")).group_by(t.tag)
        if store_key:
            query = query.where(t.store_key == store_key)
        if prefix:
            query = query.where(func.lower(t.tag).startswith(prefix.lower(), autoescape=True))
        query = query.order_by(func.count().desc(), t.tag).limit(limit)
        async with self.reader.connect() as conn:
            return [row.tag for row in await conn.execute(query)]

    async def reviewers(self, store_key: str) -> list[str]:
        r = s.reviews.c
        async with self.reader.connect() as conn:
            rows = await conn.execute(select(r.reviewer).where(
                r.store_key == store_key, r.reviewer.is_not(None)).distinct().order_by(r.reviewer))
            return [row.reviewer for row in rows]

    async def change_marker(self, store_key: str) -> tuple[Any, ...]:
        """Changes when anyone changes a review of the store (polled by the window)."""
        h, r = s.history.c, s.reviews.c
        async with self.reader.connect() as conn:
            last = (await conn.execute(select(func.max(h.id)).where(h.store_key == store_key))).scalar()
            claims = (await conn.execute(select(func.count(), func.max(r.updated_at)).where(
                r.store_key == store_key))).first()
        return (last, *claims)

    # -- filtered lists ----------------------------------------------------------------

    def _where(self, key: str, flt: ReviewFilter, at: str) -> list[Any]:
        r = s.reviews.c
        cond: list[Any] = [r.store_key == key]
        live_claim = and_(r.state == IN_REVIEW, or_(r.claimed_until.is_(None), r.claimed_until > at))
        if flt.state == UNREVIEWED:
            cond.append(or_(r.state == UNREVIEWED, and_(r.state == IN_REVIEW, r.claimed_until <= at)))
        elif flt.state == IN_REVIEW:
            cond.append(live_claim)
        elif flt.state:
            cond.append(r.state == check_state(flt.state))
        if flt.flagged:
            cond.append(r.state == FLAGGED)
        if flt.reviewer:
            cond.append(or_(r.reviewer == flt.reviewer, and_(live_claim, r.claimed_by == flt.reviewer)))
        if flt.tag:
            t = s.tags.c
            cond.append(exists().where(t.store_key == key, t.session_id == r.session_id, t.tag == flt.tag))
        if flt.has_notes:
            n = s.notes.c
            cond.append(exists().where(n.store_key == key, n.session_id == r.session_id))
        return cond

    async def matching(
        self, store_key: str, flt: ReviewFilter, *, limit: int = 100,
        cursor: tuple[str, str] | None = None,
    ) -> tuple[list[str], tuple[str, str] | None]:
        """A page of the session ids whose stored review matches ``flt``, most recently
        changed first, and the cursor of the next page (``None``: the end)."""
        r = s.reviews.c
        cond = self._where(store_key, flt, stamp())
        if cursor is not None:
            at, sid = cursor
            cond.append(or_(r.updated_at < at, and_(r.updated_at == at, r.session_id < sid)))
        query = (select(r.session_id, r.updated_at).where(*cond)
                 .order_by(r.updated_at.desc(), r.session_id.desc()).limit(limit + 1))
        async with self.reader.connect() as conn:
            rows = list(await conn.execute(query))
        more = len(rows) > limit
        rows = rows[:limit]
        return [row.session_id for row in rows], ((rows[-1].updated_at, rows[-1].session_id) if more and rows else None)

    async def keep_matching(self, store_key: str, ids: Sequence[str], flt: ReviewFilter) -> set[str]:
        """Which of ``ids`` match ``flt`` (an unreviewed filter keeps ids with no review)."""
        if not ids:
            return set()
        r = s.reviews.c
        kept: set[str] = set()
        at = stamp()
        async with self.reader.connect() as conn:
            for start in range(0, len(ids), 500):
                chunk = list(ids[start:start + 500])
                if flt.wants_unreviewed and not (flt.tag or flt.reviewer or flt.has_notes):
                    taken = await conn.execute(select(r.session_id).where(
                        r.store_key == store_key, r.session_id.in_(chunk),
                        or_(r.state.in_(("reviewed", FLAGGED)),
                            and_(r.state == IN_REVIEW, or_(r.claimed_until.is_(None), r.claimed_until > at)))))
                    gone = {row.session_id for row in taken}
                    kept.update(sid for sid in chunk if sid not in gone)
                else:
                    rows = await conn.execute(select(r.session_id).where(
                        *self._where(store_key, flt, at), r.session_id.in_(chunk)))
                    kept.update(row.session_id for row in rows)
        return kept

    # -- changing ----------------------------------------------------------------------

    async def change(
        self, store_key: str, session_id: str, edit: Edit, *, reviewer: str,
        expected_version: int | None = None, rubric: Rubric | None = None,
    ) -> Review:
        """Apply ``edit`` to a session's review in one transaction; returns the review.

        ``expected_version`` (the ``version`` of the review as it was read): refused
        when someone else changed it since. Scores are checked against ``rubric`` (the
        database's when not given)."""
        if edit.state:
            check_state(edit.state)
        if edit.scores:
            rubric = rubric or await self.rubric()
            edit.scores = {name: rubric.criterion(name).parse(v) for name, v in edit.scores.items()}
        add = [clean_tag(t) for t in edit.add_tags]
        remove = [clean_tag(t) for t in edit.remove_tags]
        at = stamp()
        async with self.engine.begin() as conn:
            await self._apply(conn, store_key, session_id, edit, add, remove, reviewer, at, expected_version)
        return await self.get(store_key, session_id)

    async def _apply(
        self, conn: Any, key: str, sid: str, edit: Edit, add: list[str], remove: list[str],
        reviewer: str, at: str, expected: int | None,
    ) -> None:
        r = s.reviews.c
        pk = (r.store_key == key, r.session_id == sid)
        row = (await conn.execute(select(s.reviews).where(*pk).with_for_update())).first()
        if row is None:
            # A first change: the row is made (by us, or by someone racing us, whose
            # commit the insert waits for), then locked like any other.
            await conn.execute(insert_ignoring(self.dialect, s.reviews).values(
                store_key=key, session_id=sid, state=UNREVIEWED, updated_at=at, version=0))
            row = (await conn.execute(select(s.reviews).where(*pk).with_for_update())).first()
        version = row.version
        old_state = effective_state(row.state, row.claimed_until, at)
        held = old_state == IN_REVIEW and row.claimed_by not in (None, reviewer)
        if held and not edit.take_over:
            raise Claimed(
                f"session {show_id(sid)} is claimed by {show_id(row.claimed_by)} until "
                f"{row.claimed_until}: leave it to them, or take it over (--take-over)",
                row.claimed_by,
            )
        if expected is not None and version != expected:
            raise ReviewError(
                f"the review of session {show_id(sid)} was changed by {row.reviewer or 'someone'} at "
                f"{row.updated_at} since it was read: reload it and try again"
            )
        log: list[tuple[str, Any, Any]] = []
        values: dict[str, Any] = {"updated_at": at, "reviewer": reviewer, "version": version + 1}
        if held and edit.state in (None, IN_REVIEW):  # taken over: the claim is the taker's now
            values.update(claimed_by=reviewer, claimed_until=later(edit.claim_seconds))
            log.append(("claim", row.claimed_by, reviewer))
        if edit.state:
            if edit.state == IN_REVIEW:
                values.update(claimed_by=reviewer, claimed_until=later(edit.claim_seconds))
            else:
                values.update(claimed_by=None, claimed_until=None)
            values["state"] = edit.state
            if edit.state != old_state or edit.state == IN_REVIEW:
                log.append(("state", old_state, edit.state))
        await conn.execute(update(s.reviews).where(*pk).values(**values))
        t = s.tags.c
        have = {row.tag for row in await conn.execute(select(t.tag).where(t.store_key == key, t.session_id == sid))}
        for tag in dict.fromkeys(add):
            if tag not in have:
                await conn.execute(insert(s.tags).values(store_key=key, session_id=sid, tag=tag))
                have.add(tag)
                log.append(("tag", None, tag))
        for tag in dict.fromkeys(remove):
            if tag in have:
                await conn.execute(delete(s.tags).where(t.store_key == key, t.session_id == sid, t.tag == tag))
                have.discard(tag)
                log.append(("tag", tag, None))
        c = s.scores.c
        old_scores = {row.criterion: _unjson(row.value) for row in await conn.execute(
            select(c.criterion, c.value).where(c.store_key == key, c.session_id == sid))}
        for name, value in edit.scores.items():
            if name in old_scores:
                if old_scores[name] == value:
                    continue
                await conn.execute(update(s.scores).where(
                    c.store_key == key, c.session_id == sid, c.criterion == name).values(value=_json(value)))
            else:
                await conn.execute(insert(s.scores).values(
                    store_key=key, session_id=sid, criterion=name, value=_json(value)))
            log.append((f"score:{name}", old_scores.get(name), value))
        for name in edit.clear_scores:
            if name in old_scores:
                await conn.execute(delete(s.scores).where(
                    c.store_key == key, c.session_id == sid, c.criterion == name))
                log.append((f"score:{name}", old_scores[name], None))
        if edit.note is not None and edit.note.strip():
            mid = None if edit.message_id is None else str(edit.message_id)
            await conn.execute(insert(s.notes).values(
                store_key=key, session_id=sid, message_id=mid, text=edit.note, reviewer=reviewer, at=at))
            log.append(("note" if mid is None else f"note:{mid}", None, edit.note))
        for name, old, new in log:
            await conn.execute(insert(s.history).values(
                store_key=key, session_id=sid, field=name, old=_json(old), new=_json(new),
                reviewer=reviewer, at=at))

    async def release(self, store_key: str, session_id: str, reviewer: str) -> bool:
        """Give a claim back (only the claimer's own); the session is unreviewed again."""
        r = s.reviews.c
        at = stamp()
        async with self.engine.begin() as conn:
            done = await conn.execute(update(s.reviews).where(
                r.store_key == store_key, r.session_id == session_id, r.state == IN_REVIEW,
                r.claimed_by == reviewer,
            ).values(state=UNREVIEWED, claimed_by=None, claimed_until=None, updated_at=at,
                     version=r.version + 1))
            if done.rowcount:
                await conn.execute(insert(s.history).values(
                    store_key=store_key, session_id=session_id, field="state",
                    old=_json(IN_REVIEW), new=_json(UNREVIEWED), reviewer=reviewer, at=at))
            return bool(done.rowcount)
