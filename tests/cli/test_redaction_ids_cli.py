"""A session id is redacted like any other text in every redacted output: stores keyed
by user (``agents.SQLiteSession("alice@example.com", …)``, ``"user-+14155550123"``),
written by the real libraries, exported in every format, shown, copied and merged into
SQLite (read back by ``agents.SQLiteSession`` under the redacted id), scanned and made
into an eval dataset: the raw values appear nowhere in what is written or printed, an id
gets the placeholder its value gets in message text, a clean id stays as it is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import agents_read, write_agents, write_flux

from fluxgui.cli.dispatch import main

EMAIL = "alice@example.com"
PHONE = "+14155550123"
ALICE, PHONED, CLEAN = EMAIL, f"user-{PHONE}", "conv-clean"
#: what must never be written or printed of them
RAW = (EMAIL, "alice@", "14155550123")


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _answer(text: str, n: int) -> dict:
    return {"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _agents_sessions() -> dict[str, list[dict]]:
    return {
        ALICE: [{"role": "user", "content": "hello there"},  # (no finding: the rows' fast path)
                {"role": "user", "content": f"write to {EMAIL} please"}, _answer("done", 1)],
        PHONED: [{"role": "user", "content": "just a question"},
                 {"role": "user", "content": f"call {PHONE} tomorrow"}, _answer("will do", 2)],
        CLEAN: [{"role": "user", "content": "the weather is nice"}, _answer("it is", 3)],
    }


def _flux_sessions() -> dict[str, list[dict]]:
    return {
        ALICE: [{"role": "user", "content": "hello there"},
                {"role": "user", "content": f"write to {EMAIL} please"},
                {"role": "assistant", "content": "done"}],
        PHONED: [{"role": "user", "content": "just a question"},
                 {"role": "user", "content": f"call {PHONE} tomorrow"}],
        CLEAN: [{"role": "user", "content": "the weather is nice"}],
    }


@pytest.fixture(params=["agents", "flux"])
def keyed(request, tmp_path) -> str:
    """A store of the sessions keyed by user, as each library writes it."""
    if request.param == "agents":
        write_agents(tmp_path / "keyed.db", _agents_sessions())
    else:
        write_flux(tmp_path / "keyed.db", _flux_sessions())
    return str(tmp_path / "keyed.db")


def _no_raw(text: str) -> None:
    leaked = [r for r in RAW if r in text]
    assert not leaked, (leaked, text[:2000])


def _placeholder(text: str, before: str) -> str:
    """The placeholder standing right after ``before`` in ``text``."""
    found = re.search(re.escape(before) + r"(\[[A-Z_]+_\d+\])", text)
    assert found, (before, text[:2000])
    return found.group(1)


def test_every_export_format_writes_the_ids_redacted(keyed, tmp_path, capsys):
    for fmt in ("json", "jsonl", "md", "html"):
        out = tmp_path / f"out.{fmt}"
        code, said, err = _run(capsys, "export", keyed, "-o", str(out), "--redact", "all")
        assert code == 0, err
        data = out.read_bytes()
        _no_raw(data.decode("utf-8") + said + err)
        text = data.decode("utf-8")
        email = _placeholder(text, "write to ")
        phone = _placeholder(text, "call ")
        assert email.startswith("[EMAIL_") and phone.startswith("[PHONE_")
        if fmt == "json":
            doc = json.loads(text)
            ids = {s["id"]: [m["text"] for m in s["messages"]] for s in doc["sessions"]}
            assert set(ids) == {email, f"user-{phone}", CLEAN}
            assert f"write to {email} please" in ids[email] and "hello there" in ids[email]
            assert ids[CLEAN] == ["the weather is nice", "it is"][: len(ids[CLEAN])]
        elif fmt == "jsonl":
            records = [json.loads(line) for line in text.splitlines()]
            by_id: dict[str, list[str]] = {}
            for r in records:
                by_id.setdefault(r["session_id"], []).append(r["text"])
            assert set(by_id) == {email, f"user-{phone}", CLEAN}
            # the row read straight from the store (no finding in it) carries the id redacted too
            assert "hello there" in by_id[email] and "just a question" in by_id[f"user-{phone}"]
        elif fmt == "md":
            heads = re.findall(r"^## Session (.*)$", text, re.M)
            assert len(heads) == 3 and CLEAN in heads[-1] + heads[0] + heads[1]
            assert sum("EMAIL" in h for h in heads) == 1 and sum("PHONE" in h for h in heads) == 1
        else:
            heads = re.findall(r"<h2>Session <bdi>(.*?)</bdi></h2>", text)
            assert sorted(heads) == sorted([email, f"user-{phone}", CLEAN])


def test_export_to_standard_output_and_the_eval_dataset_redact_the_ids(tmp_path, capsys):
    path = tmp_path / "keyed.db"
    write_agents(path, _agents_sessions())
    code, out, err = _run(capsys, "export", str(path), "-o", "-", "--file-format", "jsonl", "--redact", "pii")
    assert code == 0, err
    _no_raw(out + err)
    ids = {json.loads(line)["session_id"] for line in out.splitlines()}
    assert ids == {_placeholder(out, "write to "), f"user-{_placeholder(out, 'call ')}", CLEAN}
    dataset = tmp_path / "evals.jsonl"
    code, said, err = _run(capsys, "export", str(path), "-o", str(dataset), "--eval", "jsonl", "--redact", "pii")
    assert code == 0, err
    text = dataset.read_text(encoding="utf-8")
    _no_raw(text + said + err)
    items = [json.loads(line) for line in text.splitlines()]
    assert len(items) == 3
    assert {json.dumps(i).count("[EMAIL_1]") > 0 for i in items} == {True, False}
    assert CLEAN in text and "user-[PHONE_1]" in text
    # without --redact the ids are as stored (nothing else changed)
    code, _o, err = _run(capsys, "export", str(path), "-o", str(tmp_path / "plain.jsonl"))
    assert code == 0 and EMAIL in (tmp_path / "plain.jsonl").read_text()


def test_show_prints_the_id_redacted(keyed, capsys):
    code, out, err = _run(capsys, "show", keyed, ALICE, "--redact", "pii")
    assert code == 0, err
    _no_raw(out + err)
    email = _placeholder(out, "write to ")
    assert out.startswith(f"session {email} — ")
    code, out, err = _run(capsys, "show", keyed, ALICE, "--redact", "pii", "--json")
    assert code == 0, err
    _no_raw(out + err)
    doc = json.loads(out)
    assert doc["session"]["id"] == email and f"write to {email} please" in [m["text"] for m in doc["messages"]]
    code, out, err = _run(capsys, "show", keyed, PHONED, "--redact", "pii", "--json")
    assert code == 0, err
    _no_raw(out)
    assert json.loads(out)["session"]["id"] == f"user-{_placeholder(out, 'call ')}"
    code, out, err = _run(capsys, "show", keyed, CLEAN, "--redact", "all")
    assert code == 0 and out.startswith(f"session {CLEAN} — ")


def test_copy_writes_each_session_under_its_redacted_id(keyed, tmp_path, capsys):
    dest = tmp_path / "copy.db"
    code, out, err = _run(capsys, "copy", keyed, str(dest), "--redact", "pii", "--dest-store-format", "agents")
    assert code == 0, err
    _no_raw(out + err)
    assert "renamed" not in out
    _no_raw(b"".join(p.read_bytes() for p in tmp_path.glob("copy.db*")).decode("utf-8", "replace"))
    alice = agents_read(dest, "[EMAIL_1]")
    assert [i.get("content") for i in alice][:2] == ["hello there", "write to [EMAIL_1] please"]
    phoned = agents_read(dest, "user-[PHONE_1]")
    assert "call [PHONE_1] tomorrow" in json.dumps(phoned)
    assert agents_read(dest, CLEAN)[0]["content"] == "the weather is nice"
    assert agents_read(dest, ALICE) == [] and agents_read(dest, PHONED) == []
    # again into the same store: the redacted ids are taken there, as any id would be
    code, out, err = _run(capsys, "copy", keyed, str(dest), ALICE, "--redact", "pii")
    assert code == 3 and 'session "[EMAIL_1]" already exists' in err and "--rename" in err
    _no_raw(out + err)
    code, out, err = _run(capsys, "copy", keyed, str(dest), ALICE, "--redact", "pii", "--rename")
    assert code == 0, err
    _no_raw(out + err)
    [(new_id)] = re.findall(r'renamed "\[EMAIL_1\]" to "?([^"\s]+)"?$', out, re.M)
    assert new_id != "[EMAIL_1]" and "write to [EMAIL_1] please" in json.dumps(agents_read(dest, new_id))


def test_two_ids_that_redact_alike_never_overwrite_each_other(tmp_path, capsys):
    source = tmp_path / "alike.db"
    write_agents(source, {"[EMAIL_1]": [{"role": "user", "content": "first"}],
                          ALICE: [{"role": "user", "content": "second"}]})
    dest = tmp_path / "dest.db"
    code, out, err = _run(capsys, "copy", str(source), str(dest), "--redact", "pii")
    assert code == 3 and 'session "[EMAIL_1]" comes twice' in err and "nothing was written" in err
    _no_raw(out + err)
    assert not dest.exists()
    code, out, err = _run(capsys, "copy", str(source), str(dest), "--redact", "pii", "--rename")
    assert code == 0, err
    _no_raw(out + err)
    [(other)] = re.findall(r'renamed "\[EMAIL_1\]" to "?([^"\s]+)"?$', out, re.M)
    texts = {agents_read(dest, "[EMAIL_1]")[0]["content"], agents_read(dest, other)[0]["content"]}
    assert texts == {"first", "second"}


def test_merge_writes_and_plans_under_the_redacted_ids(tmp_path, capsys):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    write_agents(a, {ALICE: [{"role": "user", "content": f"mail {EMAIL}"}]})
    write_agents(b, {ALICE: [{"role": "user", "content": "later"}], CLEAN: [{"role": "user", "content": "hi"}],
                     PHONED: [{"role": "user", "content": "ring me"}]})
    dest = tmp_path / "merged.db"
    for extra in ([], ["--json"]):
        code, out, err = _run(capsys, "merge", str(a), str(b), "--into", str(dest), "--dry-run",
                              "--redact", "pii", *extra)
        assert code == 0, err
        _no_raw(out + err)
        assert "[EMAIL_1]" in out and "user-[PHONE_1]" in out and CLEAN in out
    code, out, err = _run(capsys, "merge", str(a), str(b), "--into", str(dest), "--redact", "pii", "--json")
    assert code == 0, err
    _no_raw(out + err)
    doc = json.loads(out)
    assert {s["id"] for s in doc["sessions"]} == {"[EMAIL_1]", "user-[PHONE_1]", CLEAN}
    assert {s["written_as"] for s in doc["sessions"]} == {"[EMAIL_1]", "user-[PHONE_1]", CLEAN}
    _no_raw(b"".join(p.read_bytes() for p in tmp_path.glob("merged.db*")).decode("utf-8", "replace"))
    merged = agents_read(dest, "[EMAIL_1]")
    assert [i["content"] for i in merged] == ["mail [EMAIL_1]", "later"]
    assert agents_read(dest, "user-[PHONE_1]")[0]["content"] == "ring me"
    assert agents_read(dest, CLEAN)[0]["content"] == "hi"
    assert agents_read(dest, ALICE) == []
    # again: the destination holds them under the redacted ids; one whose content was
    # redacted differs from the timeline read (a conflict: skipped, never overwritten)
    code, out, err = _run(capsys, "merge", str(a), str(b), "--into", str(dest), "--redact", "pii")
    assert code == 0, err
    _no_raw(out + err)
    assert "conflict  [EMAIL_1]:" in out and "same      user-[PHONE_1]:" in out and "merged 0 sessions" in out
    assert [i["content"] for i in agents_read(dest, "[EMAIL_1]")] == ["mail [EMAIL_1]", "later"]


def test_scan_reports_a_finding_in_an_id_and_never_prints_it(keyed, capsys):
    code, out, err = _run(capsys, "scan", keyed, "--json")
    assert code == 1, err
    _no_raw(out + err)
    doc = json.loads(out)
    sessions = {s["session_id"]: s["findings"] for s in doc["sessions"]}
    assert set(sessions) == {"[EMAIL_1]", "user-[PHONE_1]", CLEAN}
    assert sessions[CLEAN] == []
    first = sessions["[EMAIL_1]"][0]
    assert first == {"kind": "EMAIL", "message_id": None, "placeholder": "[EMAIL_1]", "masked": "a…@example.com"}
    # the same value in a message: the same placeholder
    assert [f["placeholder"] for f in sessions["[EMAIL_1]"][1:]] == ["[EMAIL_1]"]
    assert sessions["[EMAIL_1]"][1]["message_id"] is not None
    phone = sessions["user-[PHONE_1]"]
    assert phone[0]["message_id"] is None and phone[0]["kind"] == "PHONE" and phone[0]["masked"] == "…23"
    code, out, err = _run(capsys, "scan", keyed)
    assert code == 1, err
    _no_raw(out + err)
    assert "session [EMAIL_1]: 2 findings" in out and "(session id)" in out
    assert "session user-[PHONE_1]: 2 findings" in out and CLEAN not in out
    # a session named by its raw id is scanned, and still printed redacted
    code, out, err = _run(capsys, "scan", keyed, ALICE, "--json")
    assert code == 1 and [s["session_id"] for s in json.loads(out)["sessions"]] == ["[EMAIL_1]"]
    _no_raw(out + err)
    code, out, err = _run(capsys, "scan", keyed, CLEAN)
    assert code == 0 and "0 findings" in out
