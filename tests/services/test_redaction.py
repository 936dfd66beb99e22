"""Redaction's detectors and redactor (fluxgui.services.redaction): every planted kind
found, nothing in the clean corpus, placeholders consistent, JSON redacted in place,
masks, custom rules, and failing closed."""

from __future__ import annotations

import io
import json

import pytest
from helpers import write_agents
from redaction_corpus import CLEAN, PLANTED, RULES, agents_items

from fluxgui.adapters import open_store
from fluxgui.core.model import Message
from fluxgui.services.export import export_to_stream
from fluxgui.services.redaction import Detectors, Redactor, make_redactor, make_rules, mask, parse_kinds


def _all() -> Detectors:
    return Detectors(custom=make_rules(RULES["patterns"], RULES["terms"]))


@pytest.mark.parametrize(("kind", "value", "sentence"), PLANTED, ids=[p[0] for p in PLANTED])
def test_every_planted_kind_is_found(kind, value, sentence):
    text = sentence.format(value)
    found = [(f.kind, text[f.start:f.end]) for f in _all().find(text)]
    assert (kind, value) in found
    assert all(k in (kind, "AWS_ACCESS_KEY") for k, _v in found), found


@pytest.mark.parametrize("text", CLEAN)
def test_the_clean_corpus_gives_no_finding(text):
    assert _all().find(text) == []


def test_kinds_choose_the_detectors():
    assert parse_kinds("all") == ("secrets", "pii", "custom")
    assert parse_kinds("pii, secrets") == ("pii", "secrets")
    with pytest.raises(ValueError, match="unknown kind"):
        parse_kinds("secrets,names")
    only_secrets = Detectors(["secrets"])
    assert only_secrets.find("jane.doe@example.com") == []
    assert Detectors(["pii"]).find("ghp_" + "a1B2" * 9) == []


def test_phone_numbers_are_read_in_the_region_given():
    us, gb = Detectors(["pii"]), Detectors(["pii"], region="GB")
    assert [f.kind for f in us.find("ring 020 7946 0958")] == []
    assert [f.kind for f in gb.find("ring 020 7946 0958")] == ["PHONE"]


def test_an_international_number_glued_to_a_key_is_a_phone_number():
    """A session keyed ``user-+14155550123``: the number after ``user-`` is found (in an
    id and in text alike); a number glued to an id without ``+``, a short one, or one
    glued on both sides is not."""
    r = Redactor(Detectors(["pii"]))
    assert r.session_id("user-+14155550123") == "user-[PHONE_1]"
    assert r.text("user_+14155550123 wrote from +14155550123") == "user_[PHONE_1] wrote from [PHONE_1]"
    assert r.session_id("tenant:+442071838750") == "tenant:[PHONE_2]"
    for clean in ("ORD-2024-000123", "id-5551234", "user-+12345", "a-+14155550123x", "conv-42"):
        assert r.session_id(clean) == clean


def test_placeholders_are_consistent_within_one_output():
    r = Redactor(_all())
    a = r.text("mail jane.doe@example.com or bob@example.org")
    b = r.text("again: bob@example.org, then jane.doe@example.com")
    assert a == "mail [EMAIL_1] or [EMAIL_2]"
    assert b == "again: [EMAIL_2], then [EMAIL_1]"
    # another output starts again
    assert Redactor(_all()).text("bob@example.org") == "[EMAIL_1]"


def test_json_inside_items_is_redacted_in_place_and_stays_valid():
    r = Redactor(_all())
    key = "sk-proj-" + "Ab3_dE-fGh1jKlMnOpQrSt2uVwXyZ" + "a1f3"
    raw = {"type": "function_call", "call_id": "c", "name": "f",
           "arguments": json.dumps({"to": "jane.doe@example.com", "auth": f"Bearer {key}", "n": 3})}
    m = Message(id=1, role="assistant", kind="tool_call", text=raw["arguments"], raw=raw,
                metadata={"by": "jane.doe@example.com", "k": [key]})
    out = r.message(m)
    assert out is not None
    args = json.loads(out.raw["arguments"])
    assert args == {"to": "[EMAIL_1]", "auth": "Bearer [OPENAI_KEY_1]", "n": 3}
    assert out.metadata == {"by": "[EMAIL_1]", "k": ["[OPENAI_KEY_1]"]}
    assert json.loads(out.text)["to"] == "[EMAIL_1]"
    assert out.raw["call_id"] == "c"
    # an AWS secret key as the value of a key naming it
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    assert r.value({"aws_secret_access_key": aws}) == {"aws_secret_access_key": "[AWS_SECRET_KEY_1]"}


def test_masks_never_show_the_value():
    assert mask("OPENAI_KEY", "sk-proj-abcdefghijklmnopa1f3") == "sk-…a1f3"
    assert mask("EMAIL", "jane@example.com") == "j…@example.com"
    assert mask("CARD", "4111 1111 1111 1111") == "…1111"
    assert mask("IBAN", "GB82 WEST 1234 5698 7654 32") == "GB…32"
    for kind, value, _s in PLANTED:
        assert value not in mask(kind, value)


def test_custom_rules_from_a_file(tmp_path):
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(RULES))
    r = make_redactor(["custom"], rules=path)
    assert r.text("ticket TCK-12345 for ACME ROCKETS, not acmerockets") == "ticket [TICKET_1] for [TERM_1], not acmerockets"
    path.write_text(json.dumps({"patterns": [{"name": "x", "regex": "("}]}))
    from fluxgui.core.errors import TargetError

    with pytest.raises(TargetError, match="pattern 1"):
        make_redactor(["custom"], rules=path)


def test_sealed_and_compaction_items_are_left_out_and_counted():
    r = Redactor(_all())
    sealed = Message(id=1, role="user", kind="other", text="", raw={"__enc__": 1, "v": 1, "kid": "hkdf-v1", "payload": "gAAAA"})
    compaction = Message(id=2, role="compaction", kind="compaction", text="", raw={"type": "compaction", "encrypted_content": "x"})
    plain = Message(id=3, role="user", kind="message", text="hello")
    from fluxgui.adapters.encryption import is_envelope

    assert is_envelope(sealed.raw)
    assert r.page([sealed, compaction, plain]) == [plain]
    assert r.left.sealed == 1 and r.left.compaction == 1
    assert any("encrypted item" in n for n in r.notes())


class _Failing(Detectors):
    def find(self, text):
        if "BOOM" in text:
            raise RuntimeError("detector broke")
        return super().find(text)


async def test_a_failing_detector_leaves_the_item_out_and_says_so(tmp_path):
    path = tmp_path / "a.db"
    await _write(path, {"s": [{"role": "user", "content": "BOOM jane.doe@example.com"},
                              {"role": "user", "content": "fine, bob@example.org"}]})
    r = Redactor(_Failing())
    async with await open_store(str(path)) as store:
        out = io.StringIO()
        await export_to_stream(store, out, "jsonl", transform=r.page)
    text = out.getvalue()
    assert "BOOM" not in text and "jane.doe" not in text and "bob@" not in text
    assert "[EMAIL_1]" in text
    assert r.left.failed == ["#1"]
    assert "a detector failed on (#1)" in " ".join(r.notes())


async def _write(path, data):
    import asyncio

    await asyncio.to_thread(write_agents, path, data)


async def test_export_with_redaction_reads_rows_pages_as_messages(tmp_path):
    path = tmp_path / "a.db"
    await _write(path, {"s": agents_items("args")})
    r = Redactor(_all())
    async with await open_store(str(path)) as store:
        assert store.rows is not None  # (the export's row path)
        out = io.StringIO()
        await export_to_stream(store, out, "jsonl", transform=r.page)
    for line in out.getvalue().splitlines():
        rec = json.loads(line)
        raw = rec.get("raw") or {}
        if isinstance(raw, dict) and raw.get("type") == "function_call":
            json.loads(raw["arguments"])
    for kind, value, _s in PLANTED:
        if kind not in ("TICKET", "TERM", "PRIVATE_KEY"):
            assert value not in out.getvalue(), kind


def test_a_stored_row_is_unchanged_only_when_nothing_in_it_would_be():
    """The export's fast path keeps a row whose stored text the redactor says it leaves as
    it is: never one holding a planted value, in any place, as the SDK stores it (JSON
    text, arguments as JSON inside JSON); the clean corpus keeps the fast path."""
    r = Redactor(_all())
    for place in ("user", "assistant", "args", "output", "metadata"):
        for item in agents_items(place):
            stored = json.dumps(item, separators=(",", ":"))
            message = Message(id=1, role="user", kind="message", text="", raw=item)
            if r.message(message) != message:
                assert not r.unchanged([stored]), stored
    aws = {"aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}
    assert not r.unchanged([json.dumps({"arguments": json.dumps(aws)})])
    assert not r.unchanged([json.dumps({"content": "x\\nsk-proj-" + "Ab3dE1fGh1jKlMnOpQrSt2uVw"})])
    assert not r.unchanged([json.dumps({"__enc__": 1, "v": 1, "kid": "k", "payload": "p"})])
    for text in CLEAN:
        if "\n" not in text:
            assert r.unchanged([json.dumps({"role": "user", "content": text})]), text


async def test_the_eval_export_takes_the_redaction(tmp_path):
    """services/evals: each session's messages redacted before its items are made."""
    from fluxgui.services.evals import export_eval

    key = "sk-proj-" + "Ab3dE1fGh1jKlMnOpQrSt2uVw"
    items = [
        {"role": "user", "content": "my key is " + key + ", mail jane.doe@example.com"},
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": json.dumps({"email": "jane.doe@example.com"})},
        {"type": "function_call_output", "call_id": "c1", "output": "found jane.doe@example.com"},
        {"type": "message", "role": "assistant", "status": "completed", "id": "m1",
         "content": [{"type": "output_text", "text": "Done, jane.doe@example.com.", "annotations": []}]},
    ]
    path = tmp_path / "e.db"
    await _write(path, {"s": items})
    out = tmp_path / "out.jsonl"
    r = make_redactor(["secrets", "pii"])
    async with await open_store(str(path)) as store:
        result = await export_eval(store, out, "openai", transform=r.page)
    text = out.read_text()
    assert result.items == 1
    assert key not in text and "jane.doe" not in text
    assert "[EMAIL_1]" in text and "[OPENAI_KEY_1]" in text


def test_rows_searched_together_are_told_apart():
    """unchanged_rows searches a page's rows as one text: a finding marks its own row
    only, a private key block spanning rows marks each, and a word of one row does not
    change what is found in the next."""
    r = Redactor(_all())
    rows = [["plain text"], ["mail jane.doe@example.com"], ["postgres://a"], ["jane.doe@example.com"],
            ["-----BEGIN RSA PRIVATE KEY-----\nMIIE"], ["abc\n-----END RSA PRIVATE KEY-----"], ["ok"],
            ["phone"], ["4155552671"], [None, "x"], [b"bytes"]]
    assert r.unchanged_rows(rows) == [True, False, True, False, False, False, True, True, True, True, False]
    assert r.unchanged_rows([]) == []


def test_values_after_an_escape_in_json_text_are_found():
    """A call's arguments hold their strings JSON-escaped: a key after a line break is
    ``\\nsk-…`` there, in the item and in the message's text."""
    r = Redactor(_all())
    key = "sk-proj-" + "Ab3dE1fGh1jKlMnOpQrSt2uVw"
    args = json.dumps({"q": f"line one\n{key}\tjane.doe@example.com\u00e9"}, ensure_ascii=True)
    raw = {"type": "function_call", "call_id": "c", "name": "f", "arguments": args}
    m = Message(id=1, role="assistant", kind="tool_call", text=f"f({args})", raw=raw)
    out = r.message(m)
    assert out is not None
    assert key not in out.text and key not in json.dumps(out.raw)
    assert "jane.doe" not in out.text and "jane.doe" not in json.dumps(out.raw)
    assert json.loads(out.raw["arguments"])["q"] == "line one\n[OPENAI_KEY_1]\t[EMAIL_1]\u00e9"
    path = json.dumps("C:\\Users\\jane.doe@example.com")  # (a path in JSON text)
    assert r.text(path) == '"C:\\\\Users\\\\[EMAIL_1]"'
