"""``redact_text`` hides what a server may echo of a key: OpenAI keys (whole, or the start
a server shows), ``Bearer`` values and the secrets it is given, besides URL secrets."""

from __future__ import annotations

import logging

import pytest

from fluxgui.core.redact import install_log_redaction, redact_text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("bad auth header Bearer sk-test-0123456789abcdef", "bad auth header Bearer ***"),
        ("Incorrect API key provided: sk-tes*****. See docs", "Incorrect API key provided: sk-***. See docs"),
        ("key sk-proj-AbC_12-xyZ rejected", "key sk-*** rejected"),
        ("svc sk-svcacct-Q9_w", "svc sk-***"),
        ("authorization: bearer abc.def/ghi=, then", "authorization: bearer ***, then"),
        ("Bearer c3VwZXI6c2VjcmV0", "Bearer ***"),
        ("AUTHORIZATION: BEARER xyz123", "AUTHORIZATION: BEARER ***"),
        # not keys: a word that ends in "sk-", "sk-" with too little after it, a short word
        ("task-1234 and disk-io", "task-1234 and disk-io"),
        ("sk-a is short", "sk-a is short"),
        ("a bearer of news", "a bearer of news"),
    ],
)
def test_keys_in_text_are_masked(text, shown):
    assert redact_text(text) == shown


def test_given_secrets_are_masked_wherever_they_appear():
    key = "gateway-token-98765"
    text = f"denied for {key} (token {key}); see https://u:pw@example.com/x?api_key=abc"
    assert redact_text(text, (key, None, "")) == (
        "denied for *** (token ***); see https://u:***@example.com/x?api_key=***"
    )
    # Too short to look for without masking ordinary words.
    assert redact_text("a b c abc", ("abc",)) == "a b c abc"


def test_a_logged_key_is_masked(caplog):
    install_log_redaction()
    caplog.set_level(logging.INFO)
    logging.getLogger("fluxgui.test").info("sending %s", "Authorization: Bearer sk-live-123456")
    assert "sk-live" not in caplog.text and "Bearer ***" in caplog.text
