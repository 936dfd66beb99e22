"""``show`` prints what was stored (issue 16): flux metadata that is valid JSON but not an
object comes out as that value with the kind of its role, a flux ``tool`` row is a
``tool_output``, calls kept in an assistant row's metadata are printed with it, user text
keeps every line, hidden characters are markers in text output and exact in ``--json``
and in JSON/JSONL exports (which round-trip)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_cli, write_flux


MESSAGES = [
    {"role": "user", "content": "2*3*4 = 24\n__init__\n# heading\nAda\n12 Row\nLondon\nUK"},
    {"role": "assistant", "content": "Checking.", "metadata": {"tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}},
    {"role": "tool", "content": "18 C", "metadata": {"tool_call_id": "call_1", "name": "get_weather"}},
    {"role": "assistant", "content": "evil \u202eoverride\u202c \x1b[2J", "metadata": ["a", "list", 3]},
    {"role": "user", "content": "quoted", "metadata": "just a string"},
]


def test_show_json_gives_metadata_as_flux_returns_it_and_kinds_from_roles(tmp_path: Path) -> None:
    db = tmp_path / "flux.db"
    write_flux(db, {"s": MESSAGES})
    result = run_cli("show", str(db), "s", "--json")
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)["messages"]
    assert [(m["role"], m["kind"]) for m in shown] == [
        ("user", "message"), ("assistant", "message"), ("tool", "tool_output"),
        ("assistant", "message"), ("user", "message"),
    ]
    assert shown[3]["metadata"] == ["a", "list", 3]
    assert shown[4]["metadata"] == "just a string"
    assert shown[1]["text"] == "Checking."  # the calling row stays one message, as stored
    assert shown[3]["text"] == MESSAGES[3]["content"]  # exact in JSON
    # The metadata is what flux's own get_messages() returns.
    from helpers import flux_read

    assert [m.get("metadata") for m in flux_read(db, "s")] == [m["metadata"] for m in shown]


def test_show_text_keeps_lines_prints_calls_and_never_writes_raw_controls(tmp_path: Path) -> None:
    db = tmp_path / "flux.db"
    write_flux(db, {"s": MESSAGES})
    result = run_cli("show", str(db), "s")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")
    start = lines.index("    2*3*4 = 24")
    assert lines[start : start + 7] == [f"    {x}" for x in MESSAGES[0]["content"].split("\n")]
    assert "    [tool call get_weather call_1]" in lines
    assert '      {"city": "Paris"}' in lines
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "    evil ⟨U+202E⟩override⟨U+202C⟩ ␛[2J" in lines


def test_exports_show_markers_in_transcripts_and_keep_json_exact(tmp_path: Path) -> None:
    db = tmp_path / "flux.db"
    write_flux(db, {"s": MESSAGES})
    hostile = MESSAGES[3]["content"]
    for fmt in ("json", "jsonl", "md", "html"):
        out = tmp_path / f"out.{fmt}"
        result = run_cli("export", str(db), "--file-format", fmt, "-o", str(out))
        assert result.returncode == 0, result.stderr
        text = out.read_text(encoding="utf-8")
        if fmt in ("md", "html"):
            assert "\u202e" not in text and "\x1b" not in text
            assert "evil ⟨U+202E⟩override⟨U+202C⟩" in text
        elif fmt == "json":
            record = json.loads(text)["sessions"][0]["messages"][3]
            assert (record["text"], record["metadata"]) == (hostile, ["a", "list", 3])
        else:
            record = json.loads(text.splitlines()[3])
            assert (record["text"], record["metadata"]) == (hostile, ["a", "list", 3])
    # JSON round-trips: imported into a new flux store, the rows are as they were.
    copy = tmp_path / "copy.db"
    result = run_cli("import", str(copy), str(tmp_path / "out.json"), "--store-format", "flux")
    assert result.returncode == 0, result.stderr
    again = json.loads(run_cli("show", str(copy), "s", "--json").stdout)["messages"]
    assert [(m["role"], m["text"], m["metadata"]) for m in again] == [
        (m["role"], m["content"], m.get("metadata")) for m in MESSAGES
    ]
