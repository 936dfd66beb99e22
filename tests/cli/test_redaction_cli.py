"""``--redact`` on every output path (export in four formats, show text and JSON, copy,
merge) and ``scan``, over the planted corpus written by the real libraries in each format
(agents SQLite, encrypted with the key, Redis, a JSON session folder, flux): every planted
secret and ≥ 95 % of planted personal data redacted, placeholders consistent, redacted
copies read by the owning library, tool arguments still JSON; encrypted items without
the key left out and counted."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from helpers import REDIS_URL, agents_read, flux_read, snapshot, write_agents, write_flux
from json_helpers import hello_entry, hello_history, hello_load, hello_save
from redaction_corpus import PII, PLACES, PLANTED, RULES, SECRETS, agents_items, flux_messages, needles

from fluxgui.cli.dispatch import main

KEY = "the corpus passphrase"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _hello_items(place: str) -> list[dict]:
    out = []
    for _kind, value, sentence in PLANTED:
        text = sentence.format(value)
        if place == "metadata":
            out.append(hello_entry("user", "hi", metadata={"note": text, "deep": [value]}))
        elif place in ("args", "output"):
            out.append(hello_entry("tool", json.dumps({"q": text, "v": [value]})))
        else:
            out.append(hello_entry(place, text))
    return out


def _make(kind: str, where: Path, redis_prefix: str | None) -> tuple[str, list[str]]:
    """The corpus as ``kind`` writes it: (target, the extra CLI options)."""
    if kind == "agents":
        path = where / "agents.db"
        write_agents(path, {p: agents_items(p) for p in PLACES})
        return str(path), []
    if kind == "flux":
        path = where / "flux.db"
        write_flux(path, {p: flux_messages(p) for p in PLACES})
        return str(path), []
    if kind == "json":
        folder = where / "sessions"
        for p in PLACES:
            hello_save(folder, p, _hello_items(p))
        return str(folder), []
    if kind == "encrypted":
        from agents import SQLiteSession
        from agents.extensions.memory import EncryptedSession

        path = where / "enc.db"

        async def write() -> None:
            for p in PLACES:
                under = SQLiteSession(p, str(path))
                try:
                    await EncryptedSession(p, under, encryption_key=KEY).add_items(agents_items(p))
                finally:
                    under.close()

        asyncio.run(write())
        return str(path), [f"--key={KEY}"]
    assert kind == "redis" and redis_prefix
    from agents.extensions.memory import RedisSession

    async def write_redis() -> None:
        for p in PLACES:
            s = RedisSession.from_url(p, url=REDIS_URL, key_prefix=redis_prefix)
            await s.add_items(agents_items(p))
            await s.close()

    asyncio.run(write_redis())
    return REDIS_URL, ["--key-prefix", redis_prefix]


def check_redacted(text: str, *, custom: bool = True) -> None:
    """No planted secret, ≥ 95 % of planted PII gone, placeholders consistent."""
    leaked = [(k, v) for k, v, _s in SECRETS if any(n in text for n in needles(k, v))]
    assert not leaked, leaked
    pii_left = [(k, v) for k, v, _s in PII if v in text]
    assert len(pii_left) <= 0.05 * len(PII), pii_left
    if custom:
        assert "TCK-48213" not in text and "Acme Rockets" not in text
    # one placeholder per distinct value: as many of a kind as values planted, no more
    for kind in ("EMAIL", "CARD", "IBAN", "PHONE", "OPENAI_KEY", "STRIPE_KEY"):
        planted = {v for k, v, _s in PLANTED if k == kind}
        shown = set(re.findall(rf"\[{kind}_\d+\]", text))
        assert 1 <= len(shown) <= len(planted), (kind, shown)


def _state(target: str) -> object:
    """A local store's files as they are (a server store: nothing to compare)."""
    path = Path(target)
    if path.is_dir():
        return {p.name: p.read_bytes() for p in sorted(path.iterdir())}
    return snapshot(path) if path.is_file() else None


FORMATS = ["agents", "flux", "json", "encrypted", pytest.param("redis", marks=pytest.mark.redis)]


@pytest.fixture
def corpus(request, tmp_path):
    kind = request.param
    prefix = request.getfixturevalue("redis_prefix") if kind == "redis" else None
    target, options = _make(kind, tmp_path, prefix)
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES))
    return kind, target, options, str(rules), tmp_path


@pytest.mark.parametrize("corpus", FORMATS, indirect=True)
def test_every_output_path_is_redacted(corpus, capsys):
    kind, target, options, rules, tmp = corpus
    redact = ["--redact", "all", "--redact-rules", rules]
    for fmt in ("json", "jsonl", "md", "html"):
        out = tmp / f"out.{fmt}"
        code, _o, err = _run(capsys, "export", target, "-o", str(out), *redact, *options)
        assert code == 0, err
        text = out.read_text(encoding="utf-8")
        check_redacted(text)
        if fmt == "jsonl":
            for line in text.splitlines():
                raw = json.loads(line).get("raw")
                if isinstance(raw, dict) and raw.get("type") == "function_call":
                    json.loads(raw["arguments"])
    code, shown, err = _run(capsys, "show", target, "args", "--json", *redact, *options)
    assert code == 0, err
    json.loads(shown)
    check_redacted(shown)
    whole = ""
    for place in PLACES:
        code, shown, err = _run(capsys, "show", target, place, *redact, *options)
        assert code == 0, err
        whole += shown
    check_redacted(whole)
    # one output: the same value has the same placeholder in every session of it
    code, streamed, _e = _run(capsys, "export", target, "-o", "-", "--file-format", "jsonl", *redact, *options)
    emails: dict[str, set[str]] = {}
    for rec in map(json.loads, streamed.splitlines()):
        emails.setdefault(rec["session_id"], set()).update(re.findall(r"\[EMAIL_\d\]", json.dumps(rec)))
    assert all(found == {"[EMAIL_1]", "[EMAIL_2]", "[EMAIL_3]"} for found in emails.values()), emails


@pytest.mark.parametrize("corpus", FORMATS, indirect=True)
def test_a_redacted_copy_is_read_by_the_owning_library(corpus, capsys):
    kind, target, options, rules, tmp = corpus
    before = _state(target)
    dest = tmp / ("copy" if kind == "json" else "copy.db")
    dest_format = {"json": "json", "flux": "flux"}.get(kind, "agents")
    code, _o, err = _run(capsys, "copy", target, str(dest) + ("/" if kind == "json" else ""),
                         "--redact", "all", "--redact-rules", rules, "--dest-store-format", dest_format, *options)
    assert code == 0, err
    assert _state(target) == before  # the store read is never changed
    texts = []
    for place in PLACES:
        if dest_format == "agents":
            items = agents_read(dest, place)
            for item in items:
                if item.get("type") == "function_call":
                    json.loads(item["arguments"])
            texts.append(json.dumps(items))
        elif dest_format == "flux":
            texts.append(json.dumps(flux_read(dest, place), default=str))
        else:
            [path] = [p for p in dest.glob("*.json") if hello_load(p)["history"] and place in p.name] or [None]
            data = hello_load(path)
            hello_history(data)
            texts.append(json.dumps(data))
    check_redacted("\n".join(texts))
    code, found, err = _run(capsys, "scan", str(dest), "--redact", "all", "--redact-rules", rules)
    assert code == 0, found + err  # nothing left to find


@pytest.mark.parametrize("corpus", ["agents", "encrypted"], indirect=True)
def test_scan_lists_masked_findings(corpus, capsys):
    kind, target, options, rules, tmp = corpus
    code, out, err = _run(capsys, "scan", target, "--json", "--redact-rules", rules, *options)
    assert code == 1, err
    doc = json.loads(out)
    assert [s["session_id"] for s in doc["sessions"]] and all(s["findings"] for s in doc["sessions"])
    kinds = {f["kind"] for s in doc["sessions"] for f in s["findings"]}
    assert {k for k, _v, _s in PLANTED} <= kinds
    for k, v, _s in PLANTED:
        assert not any(n in out for n in needles(k, v)), k
    code, text, _e = _run(capsys, "scan", target, "user", "--redact", "secrets", *options)
    assert code == 1 and "OPENAI_KEY" in text and "EMAIL" not in text


@pytest.mark.parametrize("corpus", ["encrypted"], indirect=True)
def test_encrypted_items_without_the_key_are_left_out_and_counted(corpus, capsys):
    _kind, target, _options, _rules, tmp = corpus
    out = tmp / "nokey.jsonl"
    code, _o, err = _run(capsys, "export", target, "-o", str(out), "--redact", "secrets")
    assert code == 0, err
    assert out.read_text() == "" or all("__enc__" not in line for line in out.read_text().splitlines())
    assert re.search(r"left out [\d,]+ encrypted items no key opened", err), err


@pytest.mark.parametrize("corpus", ["agents"], indirect=True)
def test_merge_writes_redacted_sessions(corpus, capsys):
    _kind, target, _options, rules, tmp = corpus
    other = tmp / "other.db"
    write_agents(other, {"extra": [{"role": "user", "content": "mail jane.doe@example.com"}]})
    dest = tmp / "merged.db"
    code, _o, err = _run(capsys, "merge", target, str(other), "--into", str(dest),
                         "--redact", "all", "--redact-rules", rules)
    assert code == 0, err
    texts = [json.dumps(agents_read(dest, sid)) for sid in (*PLACES, "extra")]
    check_redacted("\n".join(texts))
    assert "[EMAIL_1]" in texts[-1] or "[EMAIL_" in texts[-1]


def test_usage_errors(tmp_path, capsys):
    code, _o, err = _run(capsys, "export", "demo", "-o", "-", "--redact", "names")
    assert code == 3 and "unknown kind 'names'" in err
    code, _o, err = _run(capsys, "scan", "demo", "--redact-rules", str(tmp_path / "missing.json"))
    assert code == 3 and "cannot read the redaction rules" in err
    code, out, _e = _run(capsys, "scan", "demo", "--redact", "secrets")
    assert code == 0 and "0 findings" in out


def test_the_eval_export_is_redacted(tmp_path, capsys):
    """``export --eval``: each turn's input and recorded answer redacted."""
    items = []
    for n, (_kind, value, sentence) in enumerate(PLANTED):
        items.append({"role": "user", "content": sentence.format(value)})
        items.append({"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                      "content": [{"type": "output_text", "text": f"noted: {value}", "annotations": []}]})
    path = tmp_path / "turns.db"
    write_agents(path, {"turns": items})
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES))
    out = tmp_path / "evals.jsonl"
    code, _o, err = _run(capsys, "export", str(path), "-o", str(out), "--eval", "jsonl",
                         "--redact", "all", "--redact-rules", str(rules))
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert text.count("\n") >= 0 and len(text.splitlines()) == len(PLANTED)
    leaked = [(k, v) for k, v, _s in PLANTED if any(n in text for n in needles(k, v))]
    assert not leaked, leaked


def test_custom_rules_come_from_the_settings_file_or_are_asked_for(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FLUXGUI_DATA_DIR", str(tmp_path / "data"))
    path = tmp_path / "s.db"
    write_agents(path, {"s": [{"role": "user", "content": "ticket TCK-48213 for Acme Rockets"}]})
    code, _o, err = _run(capsys, "show", str(path), "s", "--redact", "custom")
    assert code == 3 and "no rules to apply" in err
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "redaction-rules.json").write_text(json.dumps(RULES))
    code, out, err = _run(capsys, "show", str(path), "s", "--redact", "custom")
    assert code == 0, err
    assert "ticket [TICKET_1] for [TERM_1]" in out


def test_a_failing_detector_makes_scan_fail(tmp_path, capsys, monkeypatch):
    from fluxgui.services.redaction import detect

    path = tmp_path / "s.db"
    write_agents(path, {"s": [{"role": "user", "content": "BOOM jane.doe@example.com"}]})
    real = detect.Detectors.find

    def failing(self, text):
        if "BOOM" in text:
            raise RuntimeError("broken detector")
        return real(self, text)

    monkeypatch.setattr(detect.Detectors, "find", failing)
    code, out, err = _run(capsys, "scan", str(path))
    assert code == 3 and "a detector failed on item #1 of session s" in err
    assert "jane" not in out + err
    code, shown, err = _run(capsys, "show", str(path), "s", "--redact", "pii")
    assert code == 0 and "BOOM" not in shown and "a detector failed on (#1)" in err
    for fmt in ("jsonl", "md"):  # (the export's row path: the row is read, then left out)
        out = tmp_path / f"out.{fmt}"
        code, _o, err = _run(capsys, "export", str(path), "-o", str(out), "--redact", "pii")
        assert code == 0 and "a detector failed on (#1)" in err
        assert "BOOM" not in out.read_text() and "jane" not in out.read_text()


def test_compaction_content_is_dropped_with_a_note(tmp_path, capsys):
    path = tmp_path / "c.db"
    write_agents(path, {"s": [
        {"role": "user", "content": "hello jane.doe@example.com"},
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAopaque-summary-of-jane.doe@example.com"},
        {"role": "user", "content": "again"},
    ]})
    for fmt in ("jsonl", "md"):
        out = tmp_path / f"out.{fmt}"
        code, _o, err = _run(capsys, "export", str(path), "-o", str(out), "--redact", "pii")
        assert code == 0, err
        text = out.read_text()
        assert "opaque" not in text and "jane.doe" not in text and "[EMAIL_1]" in text and "again" in text
        assert "left out 1 compaction item (opaque content)" in err


def test_show_over_several_stores_is_redacted(tmp_path, capsys):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    write_agents(a, {"s": [{"role": "user", "content": "mail jane.doe@example.com"}]})
    write_agents(b, {"s": [{"role": "user", "content": "again jane.doe@example.com, card 4111 1111 1111 1111"}]})
    for extra in ([], ["--json"]):
        code, out, err = _run(capsys, "show", str(a), str(b), "s", "--redact", "pii", *extra)
        assert code == 0, err
        assert "jane.doe" not in out and "4111" not in out
        assert set(re.findall(r"\[EMAIL_\d+\]", out)) == {"[EMAIL_1]"} and out.count("[EMAIL_1]") >= 2
        assert "[CARD_1]" in out
