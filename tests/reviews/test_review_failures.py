"""A review database that fails says so in one line (issue 33.6, 33.8): a damaged page
(the header intact), a lock another process holds (a rollback-journal file under
``BEGIN EXCLUSIVE``, a WAL file's writer), a rubric nested too deeply — exit 3, no
traceback, and the review database works again once the lock is gone."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import assert_known_error, run_cli
from stores17 import make_store

from fluxgui.cli import main

HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute(sys.argv[2])
if len(sys.argv) > 3:
    conn.execute(sys.argv[3])
print("held", flush=True)
sys.stdin.readline()  # until the test lets go
conn.execute("ROLLBACK")
"""


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _reviewed(capsys, tmp_path: Path) -> tuple[str, list[str], Path]:
    """A flux store, and a review database (SQLite, WAL as fluxgui makes it) with reviews."""
    target, _, ids = make_store("flux", tmp_path, sessions=3)
    reviews = tmp_path / "reviews.db"
    for sid in ids:
        code, _, err = run(capsys, "review", "set", target, sid, "--state", "flagged", "--tag", "t",
                           "--note", "n" * 3000, "--reviews", str(reviews))
        assert code == 0, err
    return target, ids, reviews


def _hold(path: Path, *statements: str) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), *statements],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def _let_go(holder: subprocess.Popen) -> None:
    holder.communicate("\n", timeout=30)


def test_a_damaged_page_is_one_line_for_every_command(tmp_path, capsys):
    target, ids, reviews = _reviewed(capsys, tmp_path)
    with sqlite3.connect(reviews) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        [root] = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'fluxgui_reviews'").fetchone()
    conn.close()
    with reviews.open("r+b") as fh:  # the reviews table's page, past the intact header
        fh.seek((root - 1) * size)
        fh.write(b"\xff" * size)
    assert reviews.read_bytes().startswith(b"SQLite format 3\x00")
    for argv in (
        ["review", "ls", target],
        ["review", "set", target, ids[0], "--state", "reviewed"],
        ["review", "export", target, "--format", "json"],
        ["review", "next", target],
        ["export", target, "-o", str(tmp_path / "out.md"), "--with-reviews"],
    ):
        code, _, err = run(capsys, *argv, "--reviews", str(reviews))
        assert code == 3, (argv, err)
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert f"the review database {reviews} is damaged" in err, err
    assert not (tmp_path / "out.md").exists()


def test_a_rubric_nested_too_deeply_is_one_line(tmp_path, capsys):
    target, _, _ = make_store("flux", tmp_path)
    rubric = tmp_path / "deep.json"
    rubric.write_text("[" * 100_000 + "]" * 100_000)
    code, _, err = run(capsys, "review", "rubric", "set", target, str(rubric), "--reviews", str(tmp_path / "r.db"))
    assert code == 3 and err.count("\n") == 1 and "nested too deeply" in err, err


def test_a_value_nested_too_deeply_in_a_shared_database_is_shown_as_its_text(tmp_path, capsys):
    target, ids, reviews = _reviewed(capsys, tmp_path)
    deep = "[" * 100_000 + "]" * 100_000
    with sqlite3.connect(reviews) as conn:  # (as another program, or a hostile colleague, wrote it)
        conn.execute("INSERT INTO fluxgui_review_scores VALUES (?, ?, 'tone', ?)",
                     (conn.execute("SELECT store_key FROM fluxgui_reviews").fetchone()[0], ids[0], deep))
    conn.close()
    code, out, err = run(capsys, "review", "ls", target, "--json", "--reviews", str(reviews))
    assert code == 0, err
    [got] = [r for r in json.loads(out)["reviews"] if r["session_id"] == ids[0]]
    assert got["scores"]["tone"] == deep


def test_a_rollback_journal_file_another_process_holds_is_one_line_then_works(tmp_path, capsys):
    target, ids, reviews = _reviewed(capsys, tmp_path)
    with sqlite3.connect(reviews) as conn:
        assert conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0] == "delete"
    conn.close()
    holder = _hold(reviews, "BEGIN EXCLUSIVE")
    try:
        # fluxgui's own defaults, in a process of its own: said well within 30 s
        result = run_cli("review", "set", target, ids[0], "--state", "reviewed", "--reviews", str(reviews),
                         timeout=30)
        assert_known_error(result, f"the review database {reviews} is locked by another process; try again")
    finally:
        _let_go(holder)
    code, out, err = run(capsys, "review", "set", target, ids[0], "--state", "reviewed", "--reviews", str(reviews))
    assert code == 0 and out.startswith("reviewed"), err


def test_a_writer_holding_a_wal_file_makes_a_change_say_so_and_no_read_wait(tmp_path, capsys, monkeypatch):
    from fluxgui.services.reviews import database

    target, ids, reviews = _reviewed(capsys, tmp_path)
    monkeypatch.setattr(database, "BUSY_SECONDS", 0.3)
    holder = _hold(reviews, "BEGIN IMMEDIATE", "DELETE FROM fluxgui_review_tags")
    try:
        code, _, err = run(capsys, "review", "set", target, ids[0], "--state", "reviewed", "--reviews", str(reviews))
        assert code == 3 and err.count("\n") == 1, err
        assert "locked by another process; try again" in err
        code, out, err = run(capsys, "review", "ls", target, "--reviews", str(reviews))  # a read waits for no writer
        assert code == 0 and "#t" in out and "(3 reviews)" in out, err
    finally:
        _let_go(holder)


@pytest.mark.parametrize("reviews", ["sqlite:///{tmp}/r.db", "{tmp}/r.db"])
def test_a_file_review_database_is_shown_as_its_path(tmp_path, capsys, reviews):
    reviews = reviews.format(tmp=tmp_path)
    rubric = tmp_path / "rubric.json"
    rubric.write_text('{"name": "qa", "criteria": [{"name": "ok", "kind": "boolean"}]}')
    target, _, _ = make_store("flux", tmp_path)
    code, out, err = run(capsys, "review", "rubric", "set", target, str(rubric), "--reviews", reviews)
    assert code == 0, err
    assert out == f"rubric qa: 1 criteria set in {tmp_path / 'r.db'}\n"
