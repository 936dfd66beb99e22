"""``fluxgui review`` (issue 17) on stores of every format: a whole review session leaves
the store byte-identical (files) or unwritten (servers); bad input is one line, exit 3;
``next --claim`` hands 20 racing processes 20 distinct sessions."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from helpers import cli_env
from stores17 import FORMATS, make_store, snapshot

from fluxgui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("kind", FORMATS)
def test_a_review_session_leaves_every_store_unwritten(kind, tmp_path, capsys, request):
    prefix = request.getfixturevalue("redis_prefix") if kind == "redis" else ""
    pg = request.getfixturevalue("pg_url") if kind == "postgres" else ""
    (tmp_path / "store").mkdir()
    target, opts, ids = make_store(kind, tmp_path / "store", redis_prefix=prefix, pg_url=pg)
    before = snapshot(kind, target, redis_prefix=prefix)
    reviews = ["--reviews", str(tmp_path / "elsewhere" / "reviews.db")]
    both = [*opts, *reviews]

    code, out, err = run(capsys, "review", "next", target, "--claim", "--reviewer", "ann", "--json", *both)
    assert code == 0, err
    first = json.loads(out)["session"]["id"]
    assert first in ids
    code, out, _ = run(capsys, "show", target, first, "--json", *opts)
    message_id = str(json.loads(out)["messages"][0]["id"])
    for argv in (
        ["--state", "flagged", "--tag", "refund", "--score", "tone=2", "--score", "resolution=partly", "--note", "slow"],
        ["--message", message_id, "--note", "this answer is wrong"],
        ["--state", "reviewed", "--untag", "refund", "--tag", "billing", "--score", "policy=yes"],
    ):
        code, out, err = run(capsys, "review", "set", target, first, *argv, "--reviewer", "ann", *both)
        assert code == 0, err
    code, out, err = run(capsys, "review", "ls", target, "--json", *both)
    listed = json.loads(out)
    assert listed["store_key"] and listed["reviews"][0]["session_id"] == first
    got = listed["reviews"][0]
    assert (got["state"], got["tags"], got["scores"]) == ("reviewed", ["billing"], {"policy": True, "resolution": "partly", "tone": 2})
    assert {n["message_id"] for n in got["notes"]} == {None, message_id}
    code, out, _ = run(capsys, "review", "ls", target, "--state", "unreviewed", "--json", *both)
    assert {r["session_id"] for r in json.loads(out)["reviews"]} == set(ids) - {first}
    code, out, _ = run(capsys, "review", "export", target, "--format", "csv", *both)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["session_id"], r["state"], r["tone"], r["tags"], r["notes"]) for r in rows] == [(first, "reviewed", "2", "billing", "2")]
    # the rest of the queue, then none left
    for _ in ids[1:]:
        assert run(capsys, "review", "next", target, "--claim", *both)[0] == 0
    code, _, err = run(capsys, "review", "next", target, "--claim", *both)
    assert code == 1 and "no unreviewed session left" in err
    assert snapshot(kind, target, redis_prefix=prefix) == before


def test_bad_input_is_one_line_exit_3(tmp_path, capsys):
    target, _, ids = make_store("flux", tmp_path)
    reviews = ["--reviews", str(tmp_path / "r.db")]
    for argv, words in [
        (["set", target, "nope", "--state", "reviewed"], "unknown session id"),
        (["set", target, ids[0], "--score", "tone=0"], "from 1 to 5"),
        (["set", target, ids[0], "--score", "mood=good"], "no score named"),
        (["set", target, ids[0], "--score", "tone"], "NAME=VALUE"),
        (["set", target, ids[0], "--message", "999999", "--note", "x"], "has no message"),
        (["set", target, ids[0]], "nothing to change"),
        (["set", target, ids[0], "--state", "done"], "unknown review state"),
        (["ls", target, "--state", "done"], "unknown review state"),
    ]:
        code, out, err = run(capsys, "review", *argv, *reviews)
        assert code == 3, (argv, err)
        assert err.count("\n") == 1 and words in err, err


def test_store_label_files_copies_under_one_name(tmp_path, capsys):
    a, _, ids = make_store("flux", tmp_path / "a" if (tmp_path / "a").mkdir() is None else tmp_path)
    b = tmp_path / "copy.db"
    b.write_bytes(open(a, "rb").read())
    reviews = ["--reviews", str(tmp_path / "r.db")]
    assert run(capsys, "review", "set", a, ids[0], "--tag", "x", "--store-label", "team archive", *reviews)[0] == 0
    code, out, _ = run(capsys, "review", "ls", str(b), "--json", "--store-label", "team  archive", *reviews)
    data = json.loads(out)
    assert data["store_key"] == "label:team archive" and data["reviews"][0]["tags"] == ["x"]
    code, out, _ = run(capsys, "review", "ls", str(b), "--json", *reviews)
    assert json.loads(out)["reviews"] == []  # without the label: another store


def test_rubric_show_and_set(tmp_path, capsys):
    reviews = str(tmp_path / "r.db")
    code, out, _ = run(capsys, "review", "rubric", "show", "demo", "--reviews", reviews)
    assert code == 0 and "resolution" in out
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps({"name": "qa", "criteria": [{"name": "helpful", "kind": "boolean"}]}))
    code, out, err = run(capsys, "review", "rubric", "set", reviews, str(rubric))
    assert code == 0, err
    code, out, _ = run(capsys, "review", "rubric", "show", reviews)
    assert json.loads(out) == {"name": "qa", "criteria": [{"name": "helpful", "kind": "boolean"}]}
    rubric.write_text("{")
    code, _, err = run(capsys, "review", "rubric", "set", reviews, str(rubric))
    assert code == 3 and "not valid JSON" in err


def test_export_json_carries_message_notes_and_writes_atomically(tmp_path, capsys):
    target, _, ids = make_store("agents", tmp_path)
    reviews = ["--reviews", str(tmp_path / "r.db")]
    run(capsys, "review", "set", target, ids[1], "--state", "flagged", "--note", "look", *reviews)
    code, out, _ = run(capsys, "show", target, ids[1], "--json")
    mid = str(json.loads(out)["messages"][1]["id"])
    run(capsys, "review", "set", target, ids[1], "--message", mid, "--note", "here", *reviews)
    dest = tmp_path / "out.json"
    code, _, err = run(capsys, "review", "export", target, "--format", "json", "-o", str(dest), *reviews)
    assert code == 0, err
    data = json.loads(dest.read_text())
    assert [n["message_id"] for n in data["reviews"][0]["notes"]] == [None, mid]
    history = data["reviews"][0]["history"]
    assert [(h["field"], h["old"], h["new"]) for h in history] == [
        ("state", "unreviewed", "flagged"), ("note", None, "look"), (f"note:{mid}", None, "here")]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.json")] == []


def test_twenty_processes_claim_twenty_distinct_sessions(tmp_path, review_pg):
    target, _, ids = make_store("flux", tmp_path, sessions=24)
    argv = [sys.executable, "-m", "fluxgui", "review", "next", target, "--claim", "--json", "--reviews", review_pg]
    procs = [subprocess.Popen([*argv, "--reviewer", f"r{i}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=cli_env()) for i in range(20)]
    results = [p.communicate(timeout=240) for p in procs]
    failed = [(p.returncode, err) for p, (_out, err) in zip(procs, results, strict=True) if p.returncode]
    assert not failed, failed
    got = [json.loads(out)["session"]["id"] for out, _ in results]
    assert len(set(got)) == 20 and set(got) <= set(ids)
    reviewers = {json.loads(out)["review"]["claimed_by"] for out, _ in results}
    assert reviewers == {f"r{i}" for i in range(20)}


def test_transcripts_carry_the_review_when_asked(tmp_path, capsys):
    target, _, ids = make_store("flux", tmp_path)
    reviews = ["--reviews", str(tmp_path / "r.db")]
    run(capsys, "review", "set", target, ids[0], "--state", "flagged", "--tag", "<b>x</b>", "--score", "tone=3",
        "--note", "see <script>alert(1)</script>", *reviews)
    for fmt in ("md", "html"):
        dest = tmp_path / f"out.{fmt}"
        code, _, err = run(capsys, "export", target, "-o", str(dest), "--with-reviews", *reviews)
        assert code == 0, err
        text = dest.read_text()
        if fmt == "md":  # Markdown escapes its punctuation
            text = text.replace("\\", "")
        assert "Review: flagged" in text and "tone = 3" in text
        if fmt == "html":
            assert "<script>" not in text and "&lt;script&gt;" in text and "<b>x</b>" not in text
        plain = tmp_path / f"plain.{fmt}"
        run(capsys, "export", target, "-o", str(plain), *reviews)
        assert "Review:" not in plain.read_text()


def test_export_never_writes_onto_the_store(tmp_path, capsys):
    target, _, ids = make_store("flux", tmp_path)
    before = open(target, "rb").read()
    code, _, err = run(capsys, "review", "export", target, "--format", "csv", "-o", target,
                       "--reviews", str(tmp_path / "r" / "r.db"))
    assert code == 3 and err.count("\n") == 1
    assert open(target, "rb").read() == before


def test_an_expired_claim_returns_its_session_to_the_queue(tmp_path, capsys, review_pg):
    target, _, ids = make_store("agents", tmp_path, sessions=4)
    both = ["--reviews", review_pg, "--json"]
    code, out, _ = run(capsys, "review", "next", target, "--claim", "--reviewer", "ann", "--claim-minutes", "0", *both)
    abandoned = json.loads(out)["session"]["id"]
    code, out, _ = run(capsys, "review", "next", target, "--claim", "--reviewer", "bob", *both)
    assert code == 0 and json.loads(out)["session"]["id"] == abandoned  # ann's claim expired
    code, out, _ = run(capsys, "review", "next", target, "--claim", "--reviewer", "carol", *both)
    assert json.loads(out)["session"]["id"] != abandoned  # bob's holds
    code, out, _ = run(capsys, "review", "ls", target, "--state", "in-review", "--json", "--reviews", review_pg)
    assert {r["claimed_by"] for r in json.loads(out)["reviews"]} == {"bob", "carol"}
