"""A corpus for redaction tests: planted secrets and personal data of every kind, in
every place a message holds text (user text, assistant text, tool arguments, tool
outputs, metadata), written by the real libraries in each format; and a clean corpus
that must give no finding."""

from __future__ import annotations

import base64
import json
import random
import string
from typing import Any

_R = random.Random(39)


def _rand(n: int, chars: str = string.ascii_letters + string.digits) -> str:
    while True:
        s = "".join(_R.choice(chars) for _ in range(n))
        wanted = [str.isdigit, str.islower, str.isupper]
        if all(any(w(c) for c in s) for w in wanted if any(w(c) for c in chars)):
            return s


def _b64(doc: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(doc).encode()).decode().rstrip("=")


AWS_ID = "AKIA" + _rand(16, string.ascii_uppercase + string.digits)
AWS_SECRET = _rand(40, string.ascii_letters + string.digits + "/+")
JWT = f"{_b64({'alg': 'HS256', 'typ': 'JWT'})}.{_b64({'sub': '1234567890', 'name': 'Jane'})}.{_rand(43, string.ascii_letters + string.digits + '-_')}"
PEM_BODY = [_rand(64, string.ascii_letters + string.digits + "+/") for _ in range(3)]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY) + "\n-----END RSA PRIVATE KEY-----"

#: (kind, value, the sentence it is planted in); ``{}`` is the value
SECRETS: list[tuple[str, str, str]] = [
    ("OPENAI_KEY", "sk-proj-" + _rand(20) + "-" + _rand(12) + "_" + _rand(10) + "a1f3", "use the key {} for the test"),
    ("OPENAI_KEY", "sk-" + _rand(48), "OPENAI_API_KEY={}"),
    ("ANTHROPIC_KEY", "sk-ant-api03-" + _rand(40, string.ascii_letters + string.digits + "-_") + "AA", "anthropic: {}"),
    ("AWS_ACCESS_KEY", AWS_ID, "aws id {}"),
    ("AWS_SECRET_KEY", AWS_SECRET, AWS_ID + " {} (the pair)"),
    ("GITHUB_TOKEN", "ghp_" + _rand(36), "git push with token {}"),
    ("GITHUB_TOKEN", "github_pat_" + _rand(22) + "_" + _rand(59), "the fine-grained one: {}"),
    ("GITLAB_TOKEN", "glpat-" + _rand(20), "CI_TOKEN: {}"),
    ("SLACK_TOKEN", "xoxb-2048-4096-" + _rand(24), "slack bot {}"),
    ("STRIPE_KEY", "sk_live_" + _rand(24), "stripe {}"),
    ("STRIPE_KEY", "rk_live_" + _rand(24), "restricted {}"),
    ("GOOGLE_API_KEY", "AIza" + _rand(35, string.ascii_letters + string.digits + "_-"), "maps key={}"),
    ("JWT", JWT, "the session cookie was {}"),
    ("PRIVATE_KEY", PEM, "here is the deploy key:\n{}\nkeep it safe"),
    ("BEARER_TOKEN", _rand(32), "curl -H 'Authorization: Bearer {}' https://api.example.com"),
    ("URL_PASSWORD", "Tr0ub4dor-x9q", "DATABASE_URL=postgresql://app:{}@db.internal:5432/prod"),
]

PII: list[tuple[str, str, str]] = [
    ("EMAIL", "jane.doe@example.com", "my email is {}"),
    ("EMAIL", "m.rossi+support@mail.example.it", "write to {} please"),
    ("EMAIL", "ops-team@corp.example.org", "cc {}"),
    ("PHONE", "(415) 555-2671", "call me at {} after five"),
    ("PHONE", "+44 20 7946 0958", "the London office: {}"),
    ("PHONE", "+49 30 901820", "Berlin {}"),
    ("PHONE", "+33 1 42 68 53 00", "Paris: {}."),
    ("PHONE", "+1 202-555-0143", "my cell is {}"),
    ("CARD", "4111 1111 1111 1111", "card number {} exp 12/29"),
    ("CARD", "5555-5555-5555-4444", "the other card {}"),
    ("CARD", "378282246310005", "amex {}"),
    ("IBAN", "GB82 WEST 1234 5698 7654 32", "refund to IBAN {} thanks"),
    ("IBAN", "DE89370400440532013000", "IBAN: {}"),
    ("IBAN", "FR1420041010050500013M02606", "compte {}"),
]

CUSTOM: list[tuple[str, str, str]] = [
    ("TICKET", "TCK-48213", "see ticket {}"),
    ("TERM", "Acme Rockets", "the customer is {} Ltd"),
]
RULES = {"patterns": [{"name": "ticket", "regex": r"TCK-\d{5}"}], "terms": ["Acme Rockets"]}

PLANTED = SECRETS + PII + CUSTOM
PLACES = ("user", "assistant", "args", "output", "metadata")


def needles(kind: str, value: str) -> list[str]:
    """What must not be found in an output for ``value`` (a PEM block: each body line,
    as JSON escapes its newlines)."""
    if kind == "PRIVATE_KEY":
        return list(PEM_BODY)
    return [value]


def agents_items(place: str) -> list[dict[str, Any]]:
    """Agents SDK items with each planted value in ``place`` (metadata: an item's extra
    object, which the SDK keeps as it is)."""
    items: list[dict[str, Any]] = []
    for n, (kind, value, sentence) in enumerate(PLANTED):
        text = sentence.format(value)
        if place == "user":
            items.append({"role": "user", "content": text})
        elif place == "assistant":
            items.append({"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                          "content": [{"type": "output_text", "text": text, "annotations": []}]})
        elif place == "args":
            args = {"query": text, "nested": {"list": [value]}}
            if kind == "AWS_SECRET_KEY":
                args = {"aws_access_key_id": AWS_ID, "aws_secret_access_key": value}
            items.append({"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "lookup",
                          "arguments": json.dumps(args)})
            items.append({"type": "function_call_output", "call_id": f"call_{n}", "output": "done"})
        elif place == "output":
            items.append({"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "lookup", "arguments": "{}"})
            items.append({"type": "function_call_output", "call_id": f"call_{n}",
                          "output": json.dumps({"result": text, "rows": [{"v": value}]})})
        else:
            items.append({"role": "user", "content": "see the metadata", "metadata": {"note": text, "deep": [{"v": value}]}})
    return items


def flux_messages(place: str) -> list[dict[str, Any]]:
    """flux messages with each planted value in ``place`` (tool places: a tool message's
    text and its metadata's call)."""
    out: list[dict[str, Any]] = []
    for kind, value, sentence in PLANTED:
        text = sentence.format(value)
        if place in ("user", "assistant"):
            out.append({"role": place, "content": text})
        elif place == "args":
            out.append({"role": "assistant", "content": "", "metadata": {"tool_call": {"arguments": json.dumps({"q": text})}}})
        elif place == "output":
            out.append({"role": "tool", "content": json.dumps({"result": text})})
        else:
            out.append({"role": "user", "content": "hi", "metadata": {"note": text, "deep": [value]}})
    return out


#: ordinary text, code, UUIDs, hashes, timestamps, order numbers and phone-like ids that
#: fail validation: no finding in any of them
CLEAN = [
    "Hi, I was charged twice for my March invoice (INV-2025-0317). Could you refund one?",
    "Your order ORD-2024-000123 shipped on 2024-03-15 and arrives Monday.",
    "Order number 2024000123, customer id 5551234567890, account 000123456789.",
    "ticket #48213 was merged into #48377 at 2025-03-10T09:12:04+00:00",
    "uuid 123e4567-e89b-12d3-a456-426614174000 and request id req_9f86d081884c7d65",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "git commit 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
    "epoch 1700000000 and 1700000000123 ms; version 1.2.3; port 8080; pid 12345",
    "def main(argv):\n    return sum(range(100)) * 3.14159 / 2\n",
    "The quick brown fox jumps over the lazy dog. Price: $1,299.99 on 12/31/2024 at 10:30.",
    "IP 192.168.100.200, mask 255.255.255.0, gateway 10.0.0.1",
    "a card-like number that fails Luhn: 4111 1111 1111 1112; an IBAN that fails: GB82 WEST 1234 5698 7654 33",
    "phone-like ids: 555-0000-12345, 1-800-000-0000-00, 000-000-0000, 123-456",
    "the key sk-not-a-real-key-for-anyone and the word Bearer authentication",
    "decorators @property and @staticmethod; icon@2x.png; npm i left-pad@1.3.0",
    "base64 of hello: aGVsbG8gd29ybGQ=; the token_count is 1234",
    "Call the function with timeout=30 and retries=5 (see RFC 7231 section 6.5.1)",
    "Postgres at postgresql://app@db.internal:5432/prod without a password",
    "coordinates 52.5200, 13.4050; temperature 21.5 C; 3 x 4 = 12",
    "AKIA is the prefix of AWS key ids, ghp_ of GitHub tokens, xoxb- of Slack's.",
]
