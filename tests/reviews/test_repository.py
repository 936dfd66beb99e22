"""The review database (issue 17): states, scores checked against the rubric, tags,
notes with author and time, a history that keeps every change, a change refused when it
would overwrite another, claims that never collide and expire — on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import stat
import sqlite3

import pytest

from fluxgui.services.reviews import (
    DEFAULT_RUBRIC,
    Edit,
    ReviewDB,
    ReviewError,
    ReviewFilter,
    Rubric,
)
from fluxgui.services.reviews import claims
from fluxgui.services.reviews.schema import SCHEMA_VERSION

KEY = "sqlite:/srv/agent.db"


async def test_a_review_keeps_state_scores_tags_notes_and_history(reviews_url):
    db = await ReviewDB.open(reviews_url)
    try:
        assert (await db.get(KEY, "s1")).state == "unreviewed"
        r = await db.change(KEY, "s1", Edit(state="flagged", add_tags=["refund", "vip"],
                                            scores={"tone": "4", "resolution": "Partly", "policy": "no"},
                                            note="charged twice"), reviewer="ann")
        assert r.state == "flagged" and r.tags == ["refund", "vip"]
        assert r.scores == {"policy": False, "resolution": "partly", "tone": 4}
        assert [(n.text, n.reviewer, n.message_id) for n in r.notes] == [("charged twice", "ann", None)]
        r = await db.change(KEY, "s1", Edit(state="reviewed", scores={"tone": 5}, remove_tags=["vip"],
                                            note="wrong amount", message_id="17"), reviewer="bob")
        assert r.state == "reviewed" and r.reviewer == "bob" and r.tags == ["refund"]
        assert [n.text for n in r.message_notes(17)] == ["wrong amount"]
        assert [n.text for n in r.session_notes] == ["charged twice"]
        history = await db.history(KEY, "s1")
        # nothing is overwritten silently: the first score and state are in the history
        assert ("score:tone", 4, 5, "bob") in [(h.field, h.old, h.new, h.reviewer) for h in history]
        assert ("state", "unreviewed", "flagged", "ann") in [(h.field, h.old, h.new, h.reviewer) for h in history]
        assert ("tag", "vip", None, "bob") in [(h.field, h.old, h.new, h.reviewer) for h in history]
        # another store's reviews are apart
        assert (await db.get("label:other", "s1")).state == "unreviewed"
        assert await db.tags_used(KEY, "re") == ["refund"]
    finally:
        await db.close()


async def test_bad_scores_states_and_stale_changes_are_one_line(reviews_url):
    db = await ReviewDB.open(reviews_url)
    try:
        for edit, words in [
            (Edit(scores={"tone": "9"}), "from 1 to 5"),
            (Edit(scores={"nope": "1"}), "no score named"),
            (Edit(scores={"resolution": "maybe"}), "one of solved"),
            (Edit(state="done"), "unknown review state"),
        ]:
            with pytest.raises(ReviewError, match=words) as info:
                await db.change(KEY, "s", edit, reviewer="ann")
            assert "\n" not in str(info.value)
        r = await db.change(KEY, "s", Edit(state="reviewed"), reviewer="ann")
        await db.change(KEY, "s", Edit(note="later"), reviewer="bob")
        with pytest.raises(ReviewError, match="changed by bob"):
            await db.change(KEY, "s", Edit(state="flagged"), reviewer="ann", expected_version=r.version)
        assert (await db.get(KEY, "s")).state == "reviewed"
    finally:
        await db.close()


async def test_the_rubric_is_the_teams_once_set(reviews_url):
    db = await ReviewDB.open(reviews_url)
    try:
        assert await db.rubric() == DEFAULT_RUBRIC
        mine = Rubric.from_dict({"name": "qa", "criteria": [
            {"name": "helpful", "kind": "boolean"}, {"name": "speed", "kind": "numeric", "min": 0, "max": 3}]})
        await db.set_rubric(mine, "lead")
        assert await db.rubric() == mine
        r = await db.change(KEY, "s", Edit(scores={"speed": "0", "helpful": "yes"}), reviewer="ann")
        assert r.scores == {"helpful": True, "speed": 0}
        with pytest.raises(ReviewError, match="no score named"):
            await db.change(KEY, "s", Edit(scores={"tone": "3"}), reviewer="ann")
    finally:
        await db.close()
    with pytest.raises(ReviewError, match="options are 1 to 9"):
        Rubric.from_dict({"criteria": [{"name": "x", "kind": "categorical", "options": []}]})


async def test_filters_page_from_the_review_database(reviews_url):
    db = await ReviewDB.open(reviews_url)
    try:
        for i in range(7):
            state = "flagged" if i % 2 else "reviewed"
            await db.change(KEY, f"s{i}", Edit(state=state, add_tags=["t"] if i < 3 else [],
                                               note="n" if i == 6 else None),
                            reviewer="ann" if i < 4 else "bob")
        seen, cursor = [], None
        while True:
            ids, cursor = await db.matching(KEY, ReviewFilter(state="reviewed"), limit=2, cursor=cursor)
            seen += ids
            if cursor is None:
                break
        assert seen == ["s6", "s4", "s2", "s0"]  # most recently changed first
        assert (await db.matching(KEY, ReviewFilter(flagged=True)))[0] == ["s5", "s3", "s1"]
        assert (await db.matching(KEY, ReviewFilter(tag="t", reviewer="ann")))[0] == ["s2", "s1", "s0"]
        assert (await db.matching(KEY, ReviewFilter(has_notes=True)))[0] == ["s6"]
        kept = await db.keep_matching(KEY, ["s0", "s1", "new"], ReviewFilter(state="unreviewed"))
        assert kept == {"new"}
    finally:
        await db.close()


async def test_claims_never_collide_and_expire(reviews_url):
    db = await ReviewDB.open(reviews_url)
    try:
        got = await asyncio.gather(*(claims.claim(db, KEY, "s", f"r{i}") for i in range(6)))
        assert sum(got) == 1
        assert (await db.get(KEY, "s")).state == "in-review"
        assert not await claims.claim(db, KEY, "s", "late")
        # an expired claim comes back to the queue
        assert await claims.claim(db, KEY, "t", "ann", seconds=0.01)
        await asyncio.sleep(0.05)  # the claim's own time runs out (no UI is waited on)
        assert (await db.get(KEY, "t")).state == "unreviewed"
        assert "t" in await db.keep_matching(KEY, ["t"], ReviewFilter(state="unreviewed"))
        assert await claims.claim(db, KEY, "t", "bob")
        assert (await db.get(KEY, "t")).claimed_by == "bob"
        assert await db.release(KEY, "t", "bob")
        assert (await db.get(KEY, "t")).state == "unreviewed"
    finally:
        await db.close()


async def test_a_claim_is_renewed_only_by_its_holder(reviews_url):
    db = await ReviewDB.open(reviews_url)
    try:
        assert await claims.claim(db, KEY, "s", "ann", seconds=60)
        before = await db.get(KEY, "s")
        history = await db.history(KEY, "s")
        assert not await claims.renew(db, KEY, "s", "bob")  # not bob's
        assert (await db.get(KEY, "s")).claimed_until == before.claimed_until
        assert await claims.renew(db, KEY, "s", "ann", seconds=3600)
        after = await db.get(KEY, "s")
        assert after.claimed_until > before.claimed_until and after.claimed_by == "ann"
        # nothing else changes: same version, update time and history
        assert (after.version, after.updated_at, after.state) == (before.version, before.updated_at, "in-review")
        assert await db.history(KEY, "s") == history
        # reviewed (or never claimed): nothing to renew
        await db.change(KEY, "s", Edit(state="reviewed"), reviewer="ann")
        assert not await claims.renew(db, KEY, "s", "ann")
        assert not await claims.renew(db, KEY, "never", "ann")
    finally:
        await db.close()


async def test_default_database_is_a_private_file_in_the_data_folder(tmp_path):
    db = await ReviewDB.open(None)
    try:
        assert await db.schema_version() == SCHEMA_VERSION
    finally:
        await db.close()
    path = tmp_path / "data" / "reviews.db"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


async def test_an_older_schema_is_upgraded_and_a_newer_one_refused(tmp_path):
    from sqlalchemy import create_engine

    from fluxgui.services.reviews.schema import upgrade

    path = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        upgrade(conn, "old.db", to=1)
        conn.exec_driver_sql("INSERT INTO fluxgui_reviews VALUES ('k', 's', 'reviewed', 'ann', '2026-01-01')")
    engine.dispose()
    db = await ReviewDB.open(str(path))
    try:
        assert await db.schema_version() == 2
        r = await db.get("k", "s")
        assert (r.state, r.reviewer, r.version) == ("reviewed", "ann", 1)
    finally:
        await db.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE fluxgui_review_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(ReviewError, match="schema version 99, newer than") as info:
        await ReviewDB.open(str(path))
    assert "\n" not in str(info.value)


async def test_racing_first_changes_all_land(reviews_url):
    db = await ReviewDB.open(reviews_url)
    try:
        await asyncio.gather(*(db.change(KEY, "fresh", Edit(add_tags=[f"t{i}"]), reviewer=f"r{i}") for i in range(5)))
        r = await db.get(KEY, "fresh")
        assert r.tags == [f"t{i}" for i in range(5)] and r.version == 5
        assert len(await db.history(KEY, "fresh")) == 5
    finally:
        await db.close()


async def test_many_openers_of_a_new_database_take_turns_creating_it(reviews_url):
    dbs = await asyncio.gather(*(ReviewDB.open(reviews_url) for _ in range(6)))
    try:
        assert [await db.schema_version() for db in dbs] == [SCHEMA_VERSION] * 6
    finally:
        for db in dbs:
            await db.close()


async def test_openers_of_new_sqlite_files_never_find_them_locked(tmp_path):
    # switching a new file to WAL is not waited for by SQLite's busy handler: six
    # openers at once failed "database is locked" in a few rounds of 60 before
    for n in range(40):
        url = f"sqlite:///{tmp_path / f'new-{n}.db'}"
        dbs = await asyncio.gather(*(ReviewDB.open(url) for _ in range(6)))
        for db in dbs:
            await db.close()
