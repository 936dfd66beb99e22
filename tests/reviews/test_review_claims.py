"""A colleague's claim holds (issue 33.11): ``review set`` on a session another reviewer
holds is refused in one line naming them, ``--take-over`` passes the claim on; and a
change someone commits while ``review set`` runs is told to it, not overwritten — on
SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from helpers import cli_env
from stores17 import make_store

from fluxgui.cli import main
from fluxgui.services.reviews import Edit, ReviewDB


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _review(capsys, target: str, sid: str, reviews: str) -> dict:
    code, out, err = run(capsys, "review", "ls", target, "--json", "--reviews", reviews)
    assert code == 0, err
    return {r["session_id"]: r for r in json.loads(out)["reviews"]}[sid]


def test_a_session_another_reviewer_holds_is_refused_until_taken_over(tmp_path, capsys, reviews_url):
    target, _, ids = make_store("flux", tmp_path)
    both = ["--reviews", reviews_url]
    code, out, err = run(capsys, "review", "next", target, "--claim", "--reviewer", "alice", "--json", *both)
    assert code == 0, err
    held = json.loads(out)["session"]["id"]
    for change in (["--state", "reviewed"], ["--tag", "mine"], ["--note", "looks fine"], ["--state", "in-review"]):
        code, out, err = run(capsys, "review", "set", target, held, *change, "--reviewer", "bob", *both)
        assert code == 3 and err.count("\n") == 1, (change, err)
        assert 'claimed by "alice"' in err and "--take-over" in err, err
    got = _review(capsys, target, held, reviews_url)
    assert (got["state"], got["claimed_by"], got["tags"], got["notes"]) == ("in-review", "alice", [], [])
    # alice's own changes go through; bob takes it over, and alice is told in her turn
    code, _, err = run(capsys, "review", "set", target, held, "--tag", "alice-tag", "--reviewer", "alice", *both)
    assert code == 0, err
    code, out, err = run(capsys, "review", "set", target, held, "--take-over", "--reviewer", "bob", *both)
    assert code == 0 and "claimed by bob" in out, err
    code, _, err = run(capsys, "review", "set", target, held, "--state", "reviewed", "--reviewer", "alice", *both)
    assert code == 3 and 'claimed by "bob"' in err, err
    code, out, err = run(capsys, "review", "set", target, held, "--state", "reviewed", "--reviewer", "bob", *both)
    assert code == 0, err
    got = _review(capsys, target, held, reviews_url)
    assert (got["state"], got["reviewer"], got["tags"]) == ("reviewed", "bob", ["alice-tag"])

    key = json.loads(run(capsys, "review", "ls", target, "--json", *both)[1])["store_key"]

    async def history() -> list[tuple[str, object, object, str]]:
        db = await ReviewDB.open(reviews_url)
        try:
            return [(c.field, c.old, c.new, c.reviewer) for c in await db.history(key, held)]
        finally:
            await db.close()

    changes = asyncio.run(history())
    assert ("claim", "alice", "bob", "bob") in changes and changes[-1] == ("state", "in-review", "reviewed", "bob")
    # another session, nobody's: bob's --take-over takes nothing from anyone
    code, _, err = run(capsys, "review", "set", target, ids[-1] if ids[-1] != held else ids[0], "--state", "flagged",
                       "--take-over", "--reviewer", "bob", *both)
    assert code == 0, err


async def _waiting_on_a_lock(admin_url: str, database: str) -> bool:
    import asyncpg

    conn = await asyncpg.connect(admin_url)
    try:
        return bool(await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", database))
    finally:
        await conn.close()


def test_a_change_committed_while_review_set_runs_is_told_not_overwritten(tmp_path, capsys, review_pg):
    target, _, ids = make_store("flux", tmp_path)
    sid = ids[0]
    code, out, err = run(capsys, "review", "set", target, sid, "--state", "flagged", "--reviewer", "carol",
                         "--reviews", review_pg)
    assert code == 0, err
    key = json.loads(run(capsys, "review", "ls", target, "--json", "--reviews", review_pg)[1])["store_key"]
    database = review_pg.rsplit("/", 1)[1]

    async def race() -> tuple[int, str, str]:
        db = await ReviewDB.open(review_pg)
        try:
            # alice's change, its transaction held open until bob's `review set` waits for it
            async with db.engine.begin() as conn:
                from fluxgui.services.reviews.model import stamp

                await db._apply(conn, key, sid, Edit(state="reviewed"), [], [], "alice", stamp(), None)
                bob = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "fluxgui", "review", "set", target, sid, "--state", "flagged",
                    "--note", "bob's", "--reviewer", "bob", "--reviews", review_pg,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env())
                for _ in range(3000):
                    if await _waiting_on_a_lock(review_pg, database) or bob.returncode is not None:
                        break
                    await asyncio.sleep(0.01)
                assert await _waiting_on_a_lock(review_pg, database), "bob never waited for alice"
            out, err = await asyncio.wait_for(bob.communicate(), 60)
            return bob.returncode, out.decode(), err.decode()
        finally:
            await db.close()

    code, out, err = asyncio.run(race())
    assert code == 3 and err.count("\n") == 1, (out, err)
    assert "changed by alice" in err and "since it was read" in err, err
    got = _review(capsys, target, sid, review_pg)
    assert (got["state"], got["reviewer"], got["notes"]) == ("reviewed", "alice", [])  # alice's stands, told to bob
