"""``fluxgui branches`` and ``fluxgui show --branch`` on stores the real libraries wrote."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agents import SQLiteSession
from flux.sessions import SQLiteSession as FluxSQLiteSession

from advanced_helpers import OTHER, SID, Library, write_library_store
from helpers import assert_known_error, run_cli, snapshot


@pytest.fixture(scope="module")
def lib_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("branches") / "advanced.db"
    asyncio.run(write_library_store(path))
    return path


def ok_json(*args: str):
    result = run_cli(*args)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stderr == ""
    return json.loads(result.stdout)



def library_view(path: Path, sid: str = SID) -> dict:
    return asyncio.run(Library(path).view(sid))


def test_branches_json_is_what_the_library_lists(lib_db):
    before = snapshot(lib_db)
    got = ok_json("branches", str(lib_db), SID, "--json")
    assert snapshot(lib_db) == before
    expected = library_view(lib_db)
    assert got == {"branches": expected["branches"]}
    assert [b for b in got["branches"] if b["is_current"]][0]["branch_id"] == "main"
    for b in got["branches"]:
        assert set(b) >= {"branch_id", "message_count", "user_turns", "created_at"}
    assert ok_json("branches", str(lib_db), OTHER, "--json") == {
        "branches": library_view(lib_db, OTHER)["branches"]
    }


def test_branches_json_with_usage(lib_db):
    got = ok_json("branches", str(lib_db), SID, "--json", "--usage")
    expected = library_view(lib_db)
    assert got["usage"] == expected["session_usage"]
    for b in got["branches"]:
        per = expected["per_branch"][b["branch_id"]]
        assert b["usage"] == per["usage"]
        assert b["turn_usage"] == per["turn_usage"]


def test_branches_text(lib_db):
    result = run_cli("branches", str(lib_db), SID)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["MESSAGES", "TURNS", "CREATED", "BRANCH"]
    rows = {line.split()[-1]: line for line in lines[1:-1]}
    assert set(rows) == {b["branch_id"] for b in library_view(lib_db)["branches"]}
    assert rows["main"].startswith("*") and not rows["alt"].startswith("*")
    assert lines[-1].startswith("(3 branches")
    usage = run_cli("branches", str(lib_db), SID, "--usage")
    assert usage.returncode == 0 and "turn 1: 2 requests, 100 in, 20 out, 120 total tokens" in usage.stdout


def test_show_branch_shows_what_get_items_gives(lib_db):
    expected = library_view(lib_db)
    for bid, per in expected["per_branch"].items():
        got = ok_json("show", str(lib_db), SID, "--branch", bid, "--json")
        assert got["branch"] == bid
        assert [m["raw"] for m in got["messages"]] == per["items"]
        assert got["session"]["messages"] == len(per["items"])
    default = ok_json("show", str(lib_db), SID, "--json")
    assert default["branch"] == "main"
    assert [m["raw"] for m in default["messages"]] == expected["per_branch"]["main"]["items"]
    last = ok_json("show", str(lib_db), SID, "--branch", "alt", "--limit", "2", "--json")
    assert [m["raw"] for m in last["messages"]] == expected["per_branch"]["alt"]["items"][-2:]
    text = run_cli("show", str(lib_db), SID, "--branch", "alt")
    assert text.returncode == 0 and "branch alt" in text.stdout.splitlines()[0]
    assert "alt three answer" in text.stdout and "fourth" not in text.stdout


def test_unknown_branch_and_session(lib_db):
    before = snapshot(lib_db)
    assert_known_error(run_cli("show", str(lib_db), SID, "--branch", "gone"), "gone", "does not exist")
    assert_known_error(run_cli("show", str(lib_db), "nobody", "--branch", "alt"), "unknown session")
    assert_known_error(run_cli("show", str(lib_db), "nobody"), "unknown session")
    assert_known_error(run_cli("branches", str(lib_db), "nobody"), "unknown session")
    assert_known_error(run_cli("branches", str(lib_db), "nobody", "--json"), "unknown session")
    assert snapshot(lib_db) == before


@pytest.fixture
def plain_stores(tmp_path) -> dict[str, Path]:
    agents_path, flux_path = tmp_path / "agents.db", tmp_path / "flux.db"

    async def write() -> None:
        s = SQLiteSession(SID, str(agents_path))
        try:
            await s.add_items([{"role": "user", "content": "hi"}])
        finally:
            s.close()
        await FluxSQLiteSession(str(flux_path), session_id=SID).add_messages(
            [{"role": "user", "content": "hi"}]
        )

    asyncio.run(write())
    return {"agents": agents_path, "flux": flux_path}


@pytest.mark.parametrize("kind", ["agents", "flux"])
def test_stores_without_branches(plain_stores, kind):
    path = plain_stores[kind]
    assert_known_error(run_cli("show", str(path), SID, "--branch", "alt"), "no branches")
    assert_known_error(run_cli("branches", str(path), SID), "no branches")
    got = ok_json("show", str(path), SID, "--branch", "main", "--json")
    assert [m["text"] for m in got["messages"]] == ["hi"]
    assert "branch" not in got
