"""The command line over several stores (issue 36): ``ls``/``show``/``check`` with
several targets, ``merge``, ``--store-label``, ``--workspace``; one target reads as
before."""

from __future__ import annotations

import json

import pytest
from helpers import assert_known_error, run_cli, snapshot
from workspace_helpers import PO, agents_items, agents_replicas, user_texts

LABELS = ["a/conversations.db", "b/conversations.db", "c/conversations.db"]


def _json(*args: str) -> dict:
    result = run_cli(*args)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


async def test_ls_names_each_session_once_with_its_stores(tmp_path):
    reps = await agents_replicas(tmp_path, sessions=2)
    targets = [str(p) for p in reps.paths]
    doc = _json("ls", *targets, "--json")
    rows = {r["id"]: r for r in doc["sessions"]}
    assert set(rows) == set(reps.routes)
    assert [s["store"] for s in rows["user_123"]["stores"]] == LABELS
    assert rows["user_123"]["messages"] == 8
    assert [s["store"] for s in rows["copied_9"]["stores"]] == [LABELS[0], LABELS[2]]
    assert rows["copied_9"]["messages"] == 6  # the copy once
    assert [s["store"] for s in rows["sticky_7"]["stores"]] == [LABELS[1]]
    text = run_cli("ls", *targets)
    assert text.returncode == 0 and text.stderr == ""
    assert "STORE" in text.stdout.splitlines()[0]
    assert f"{LABELS[0]}, {LABELS[1]}, {LABELS[2]}  user_123" in text.stdout
    labelled = _json("ls", *targets, "--store-label", "r1", "--store-label", "r2", "--json")
    assert [s["store"] for s in {r["id"]: r for r in labelled["sessions"]}["user_123"]["stores"]] == [
        "r1", "r2", "conversations.db"]  # no other is alike now
    one = run_cli("ls", targets[0])  # one target: as before
    assert one.returncode == 0 and "STORE" not in one.stdout and "agents format" in one.stdout
    too_many = run_cli("ls", targets[0], "--store-label", "x", "--store-label", "y")
    assert too_many.returncode == 0  # one target reads as before: no label needed
    bad = run_cli("ls", *targets[:2], "--store-label", "x", "--store-label", "y", "--store-label", "z")
    assert_known_error(bad, "--store-label", "one per TARGET")


async def test_show_prints_the_merged_timeline_with_store_tags(tmp_path):
    reps = await agents_replicas(tmp_path, sessions=1)
    targets = [str(p) for p in reps.paths]
    doc = _json("show", *targets, "user_123", "--json")
    users = [m for m in doc["messages"] if m["role"] == "user"]
    assert [m["text"] for m in users] == reps.texts("user_123")
    assert [m["store"] for m in users] == [LABELS[0], LABELS[1], LABELS[0], LABELS[2]]
    assert doc["session"]["split"] is True and doc["problems"][0]["code"] == "split_session"
    assert not any("order_uncertain" in m for m in doc["messages"])
    copied = _json("show", *targets, "copied_9", "--json")
    assert copied["messages"][0]["stores"] == [LABELS[0], LABELS[2]]
    assert copied["session"]["folded"] == 4 and copied["session"]["split"] is False
    text = run_cli("show", *targets, "user_123")
    assert text.returncode == 0, text.stderr
    assert f"[{LABELS[1]}] #1" in text.stdout and PO in text.stdout
    assert "split_session: this session is split across 3 stores" in text.stdout
    missing = run_cli("show", *targets, "nobody")
    assert_known_error(missing, "nobody")


async def test_check_finds_split_sessions_exactly(tmp_path):
    reps = await agents_replicas(tmp_path)
    targets = [str(p) for p in reps.paths]
    result = run_cli("check", *targets, "--json")
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    split = {r["session_id"] for r in doc["sessions"]
             if any(p["code"] == "split_session" for p in r["problems"])}
    assert split == reps.split() and "user_123" in split
    [po] = [r for r in doc["sessions"] if r["session_id"] == "user_123"]
    assert all(":" in i and i.split(":")[0] in LABELS for i in po["problems"][0]["message_ids"])
    named = _json("check", *targets, "--session", "sticky_7", "--json")
    assert [r["session_id"] for r in named["sessions"]] == ["sticky_7"]
    assert named["sessions"][0]["problems"] == []
    # one target: the words after it are session ids, as before
    one = run_cli("check", targets[1], "sticky_7")
    assert one.returncode == 0 and "session sticky_7: clean" in one.stdout
    # the text report counts in words that agree with the numbers
    po_text = run_cli("check", *targets, "--session", "user_123")
    assert po_text.stdout.splitlines()[-1] == "(1 problem in 1 of 1 session)"
    assert ": 1 problem\n" in po_text.stdout


async def test_merge_previews_writes_once_and_never_changes_the_replicas(tmp_path):
    reps = await agents_replicas(tmp_path, sessions=2)
    targets = [str(p) for p in reps.paths]
    before = [snapshot(p) for p in reps.paths]
    dest = tmp_path / "merged.db"
    dry = run_cli("merge", *targets, "--into", str(dest), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "(dry run: nothing written)" in dry.stdout and not dest.exists()
    assert f"write     user_123: 8 messages from {LABELS[0]} 4, {LABELS[1]} 2, {LABELS[2]} 2, split" in dry.stdout
    done = run_cli("merge", *targets, "--into", str(dest))
    assert done.returncode == 0, done.stderr
    assert f"merged {len(reps.routes)} sessions" in done.stdout
    for sid in reps.routes:
        assert user_texts(await agents_items(dest, sid)) == reps.texts(sid), sid
    written = snapshot(dest)
    again = run_cli("merge", *targets, "--into", str(dest), "--json")
    doc = json.loads(again.stdout)
    assert {s["action"] for s in doc["sessions"]} == {"same"}
    assert snapshot(dest) == written
    assert [snapshot(p) for p in reps.paths] == before
    into_replica = run_cli("merge", *targets, "--into", targets[0])
    assert_known_error(into_replica, "one of the stores merged")
    assert [snapshot(p) for p in reps.paths] == before


async def test_merge_reports_a_conflict_and_renames_on_request(tmp_path):
    from workspace_helpers import agents_add, minute

    reps = await agents_replicas(tmp_path, sessions=0)
    targets = [str(p) for p in reps.paths]
    dest = tmp_path / "merged.db"
    await agents_add(dest, "user_123", [{"role": "user", "content": "other"}], minute(500))
    skipped = run_cli("merge", *targets, "--into", str(dest), "--session", "user_123")
    assert skipped.returncode == 0, skipped.stderr
    assert "conflict  user_123" in skipped.stdout and "1 conflict skipped" in skipped.stdout
    assert user_texts(await agents_items(dest, "user_123")) == ["other"]
    renamed = run_cli("merge", *targets, "--into", str(dest), "--session", "user_123", "--on-conflict", "rename")
    assert "rename    user_123 as user_123-2" in renamed.stdout
    assert user_texts(await agents_items(dest, "user_123-2")) == reps.texts("user_123")


@pytest.mark.postgres
async def test_a_workspace_file_keeps_no_password_and_reopens(tmp_path, pg_url):
    reps = await agents_replicas(tmp_path, sessions=0)
    # the test server trusts local connections: the password is given, and not needed
    secret = pg_url.replace("@", ":pg-hunter2@", 1)
    created = run_cli("merge", str(reps.paths[1]), "--into", secret, "--session", "sticky_7",
                      "--dest-store-format", "agents")
    assert created.returncode == 0, created.stderr
    file = tmp_path / "w.json"
    saved = run_cli("ls", str(reps.paths[0]), str(reps.paths[1]), secret, "--store-label", "ra",
                    "--store-label", "rb", "--store-label", "pg", "--save-workspace", str(file))
    assert saved.returncode == 0, saved.stderr
    assert "pg-hunter2" not in file.read_text() and "pg-hunter2" not in saved.stdout
    doc = _json("ls", "--workspace", str(file), "--json")
    rows = {r["id"]: r for r in doc["sessions"]}
    assert [s["store"] for s in rows["sticky_7"]["stores"]] == ["rb", "pg"]
    assert [s["store"] for s in rows["user_123"]["stores"]] == ["ra", "rb"]


async def test_ls_search_looks_in_every_store(tmp_path):
    reps = await agents_replicas(tmp_path, sessions=0)
    targets = [str(p) for p in reps.paths]
    result = run_cli("ls", *targets, "--search", PO.lower(), "--json")
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)["sessions"]
    assert row["id"] == "user_123" and [s["store"] for s in row["stores"]] == LABELS
    found = _json("ls", *targets, "--search", "sticky_7 question 3", "--json")
    assert [r["id"] for r in found["sessions"]] == ["sticky_7"]
