"""``secrets``: API keys and tokens of a known shape, private keys, credentials in URLs.

Precision first: each pattern is a provider's documented prefix and length (OpenAI
``sk-``/``sk-proj-``, Anthropic ``sk-ant-``, AWS ``AKIA…``, GitHub ``ghp_``/
``github_pat_``, GitLab ``glpat-``, Slack ``xox?-``, Stripe ``sk_live_``/``rk_live_``,
Google ``AIza…``), a JWT's header that decodes to JSON, a PEM private key block, the
value after ``Authorization: Bearer``/``Basic``, and the password or secret query value
of a URL (which names are secret is :func:`fluxgui.core.redact.is_secret_name`'s rule,
the one every URL fluxgui shows goes through). An AWS secret key (40 characters of
base64 with no prefix of its own) is taken after a name saying so, or next to an access
key id (in the same text, quoted or not; or as the value of a JSON key naming it).

Patterns of our own, not a detector library: as issue 39 measured, detect-secrets 1.5
misses ``sk-proj-`` keys holding ``-``/``_`` and unquoted AWS secret keys (each shape
here is tested: tests/services/test_redaction.py).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator

from fluxgui.core.redact import is_secret_name

from .rules import Finding, Rule, starts_token

#: what may not stand before a key (it would be inside a longer token)
_TOKEN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_E = r"(?![A-Za-z0-9_\-])"


def _token(match: re.Match[str]) -> Iterator[Finding]:
    if starts_token(match, _TOKEN):
        yield Finding(match.start(), match.end(), "")


def _mixed(match: re.Match[str]) -> Iterator[Finding]:
    """The match when its body holds a letter and a digit (a random key does; a word
    such as ``sk-not-a-real-key-for-you`` does not)."""
    text = match.group()
    if starts_token(match, _TOKEN) and re.search(r"\d", text) and re.search(r"[A-Za-z]", text[3:]):
        yield Finding(match.start(), match.end(), "")


def _aws_id(match: re.Match[str]) -> Iterator[Finding]:
    if starts_token(match, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"):
        yield Finding(match.start(), match.end(), "")


def _jwt(match: re.Match[str]) -> Iterator[Finding]:
    if not starts_token(match, _TOKEN):
        return
    head = match.group().split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, binascii.Error):
        return
    if isinstance(decoded, dict) and ("alg" in decoded or "typ" in decoded):
        yield Finding(match.start(), match.end(), "")


def _bearer(match: re.Match[str]) -> Iterator[Finding]:
    start, end = match.span("v")
    value = match.group("v")
    if (
        starts_token(match, _TOKEN) and re.search(r"\d", value) and re.search(r"[A-Za-z]", value)
    ):
        yield Finding(start, end, "")


def _aws_named(match: re.Match[str]) -> Iterator[Finding]:
    """A value after a name saying it is an AWS secret key (``aws_secret_access_key``,
    ``AWS_SECRET``, ``SecretAccessKey``)."""
    before = match.string[max(0, match.start() - 25):match.start()].lower()
    name = match.group()[:30].lower()
    if "aws" in before or re.match(r"secret_?access_?key", name):
        yield Finding(*match.span("v"), "")


def _stripe(match: re.Match[str]) -> Iterator[Finding]:
    """``sk_``, ``rk_`` or ``whsec_`` before ``live_``/``test_``, a token of its own."""
    text, at = match.string, match.start()
    for prefix in ("sk", "rk", "whsec"):
        start = at - len(prefix)
        if start >= 0 and text[start:at] == prefix and (start == 0 or text[start - 1] not in _TOKEN):
            yield Finding(start, match.end(), "")
            return


def _query_secret(match: re.Match[str]) -> Iterator[Finding]:
    if is_secret_name(match.group("n")):
        start, end = match.span("v")
        yield Finding(start, end, "")


#: the shape of an AWS secret access key: 40 characters of base64 mixing cases and digits
AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
#: a JSON key (or a variable) naming an AWS secret key
AWS_SECRET_NAME = re.compile(r"(?i)(?:aws.{0,20}secret|secret_?access_?key)")


def looks_like_aws_secret(value: str) -> bool:
    return (
        len(value) == 40 and AWS_SECRET.fullmatch(value) is not None
        and any(c.isdigit() for c in value) and any(c.islower() for c in value)
        and any(c.isupper() for c in value)
    )


def aws_neighbours(text: str) -> Iterator[Finding]:
    """AWS secret keys in a text that holds an access key id (unquoted ones too)."""
    for match in AWS_SECRET.finditer(text):
        if looks_like_aws_secret(match.group()):
            yield Finding(match.start(), match.end(), "AWS_SECRET_KEY")


RULES = (
    Rule("ANTHROPIC_KEY", "secrets", r"sk-ant-[A-Za-z0-9_\-]{20,}" + _E, _token, triggers=("sk-ant-",), family="sk"),
    Rule("OPENAI_KEY", "secrets", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}" + _E, _mixed, triggers=("sk-",), family="sk"),
    Rule(
        "AWS_ACCESS_KEY", "secrets", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])", _aws_id,
        triggers=("AKIA", "ASIA", "ABIA", "ACCA"), family="A",
    ),
    Rule(
        "AWS_SECRET_KEY", "secrets",
        r"[Ss][Ee][Cc][Rr][Ee][Tt][A-Za-z_]{0,20}\\?[\"']?\s*[:=]\s*\\?[\"']?"
        r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        _aws_named, triggers=("secret",), lower=True,
    ),
    Rule(
        "GITHUB_TOKEN", "secrets", r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})" + _E, _token,
        triggers=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), family="g",
    ),
    Rule("GITLAB_TOKEN", "secrets", r"glpat-[A-Za-z0-9_\-]{20,}" + _E, _token, triggers=("glpat-",), family="g"),
    Rule("SLACK_TOKEN", "secrets", r"xox[abposre]-[A-Za-z0-9\-]{10,}" + _E, _token, triggers=("xox",)),
    Rule(
        "STRIPE_KEY", "secrets", r"_(?:live|test)_[A-Za-z0-9]{16,}" + _E, _stripe,
        triggers=("_live_", "_test_"),
    ),
    Rule("GOOGLE_API_KEY", "secrets", r"AIza[0-9A-Za-z_\-]{35}" + _E, _token, triggers=("AIza",), family="A"),
    Rule("JWT", "secrets", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}" + _E, _jwt, triggers=("eyJ",)),
    Rule(
        "PRIVATE_KEY", "secrets",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,\-]*)",
        triggers=("PRIVATE KEY",),
    ),
    Rule(
        "BEARER_TOKEN", "secrets", r"[Bb](?:earer|EARER|asic|ASIC)\s+(?P<v>[A-Za-z0-9._~+/\-]{12,}=*)", _bearer,
        triggers=("bearer", "basic"), lower=True,
    ),
    Rule(
        "URL_PASSWORD", "secrets", r"://[^\s/@:\"'<>`]*:(?P<v>[^\s/@\"'<>`]+)@",
        triggers=("://",),
    ),
    Rule(
        "URL_SECRET", "secrets", r"[?&;](?P<n>[A-Za-z0-9_.\-]{2,40})=(?P<v>[^&;#\s\"'<>`]{4,})", _query_secret,
        triggers=("=",),
    ),
)
