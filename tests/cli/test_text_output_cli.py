"""What the command line prints of hostile stored values (issue 33): numbers JSON cannot
hold (33.15) and bidi controls in session ids (33.16). Stores written by the real
libraries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ok_lines, run_cli, write_agents, write_flux


def strict(text: str) -> object:
    """``text`` parsed as JSON, refusing ``NaN``/``Infinity`` (not JSON)."""

    def refuse(name: str) -> object:
        raise AssertionError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def nonfinite_db(tmp_path: Path) -> Path:
    # json.dumps (the Agents SDK's defaults) stores NaN and the infinities as they are
    path = tmp_path / "agents.db"
    write_agents(path, {"n": [
        {"role": "user", "content": "x", "score": float("nan")},
        {"role": "user", "content": "y", "scores": [float("-inf"), float("inf"), 1.5]},
    ]})
    return path


def test_show_json_is_strict_json(nonfinite_db: Path) -> None:
    done = run_cli("show", "--json", str(nonfinite_db), "n")
    assert done.returncode == 0, done.stderr
    shown = strict(done.stdout)["messages"]
    assert shown[0]["raw"]["score"] == "NaN"
    assert shown[1]["raw"]["scores"] == ["-Infinity", "Infinity", 1.5]
    # as the export writes them
    exported = run_cli("export", str(nonfinite_db), "-o", "-", "--file-format", "json")
    assert exported.returncode == 0, exported.stderr
    (session,) = strict(exported.stdout)["sessions"]
    assert [m["raw"] for m in session["messages"]] == [m["raw"] for m in shown]


BIDI_IDS = {"h2\u202eevil": "h2⟨U+202E⟩evil", "a\u2067b\u2069c": "a⟨U+2067⟩b⟨U+2069⟩c"}


def test_bidi_controls_in_ids_are_markers_in_ls_and_in_a_markdown_export(tmp_path: Path) -> None:
    db = tmp_path / "flux.db"
    write_flux(db, {sid: [{"role": "user", "content": "hi"}] for sid in BIDI_IDS})
    listed = ok_lines(run_cli("ls", str(db)))
    assert sorted(line.split()[-1] for line in listed[1:-1]) == sorted(BIDI_IDS.values())
    found = run_cli("ls", str(db), "--search", "evil")
    assert found.returncode == 0 and found.stdout.splitlines()[1].split()[-1] == "h2⟨U+202E⟩evil"
    md = tmp_path / "all.md"
    assert run_cli("export", str(db), "-o", str(md)).returncode == 0
    headings = sorted(line for line in md.read_text().splitlines() if line.startswith("## Session"))
    assert headings == sorted(f"## Session {shown}" for shown in BIDI_IDS.values())
    # --json keeps the ids exact (escaped)
    ids = sorted(s["id"] for s in strict(run_cli("ls", "--json", str(db)).stdout)["sessions"])
    assert ids == sorted(BIDI_IDS)


def test_show_prints_every_line_of_a_message_as_split_would(tmp_path: Path) -> None:
    """``show`` writes a message's lines one at a time (a huge one is not held again as a
    list of lines): the printed body is the text's lines, empty ones and the last kept."""
    from fluxgui.cli.output import lines

    for text in ["", "a", "a\n", "\n", "a\nb", "a\n\nb\n", "\n\n", "x" * 10 + "\n" * 3]:
        assert list(lines(text)) == text.split("\n"), text
    path = tmp_path / "agents.db"
    body = "first\n\nthird\n"
    write_agents(path, {"s": [{"role": "user", "content": body}]})
    out = ok_lines(run_cli("show", str(path), "s"))
    assert out[-4:] == ["    first", "    ", "    third", "    "] and out[-5].startswith("#1 ")
