"""The window's redaction, Qt-free (services/redaction/review.py): kinds left
unredacted, a shown session's findings per message, a failing detector shown as a note."""

from __future__ import annotations

import json

from redaction_corpus import AWS_ID, AWS_SECRET, PLANTED

from fluxgui.core.model import Message
from fluxgui.services.redaction import Detectors
from fluxgui.services.redaction.review import FAILED_TEXT, KindsRedactor, ShownRedaction


def _messages() -> list[Message]:
    return [Message(id=n, role="user", kind="message", text=s.format(v)) for n, (_k, v, s) in enumerate(PLANTED)]


def test_kept_kinds_stay_and_the_others_are_redacted():
    r = KindsRedactor(Detectors(("secrets", "pii")), keep=["EMAIL", "AWS_SECRET_KEY"])
    out = " ".join(m.text for m in r.page(_messages()))
    assert "jane.doe@example.com" in out and "[EMAIL_" not in out
    assert "[OPENAI_KEY_1]" in out and "[PHONE_1]" in out
    # an AWS secret named by its key in a JSON item is kept too, its id not
    raw = {"arguments": json.dumps({"aws_access_key_id": AWS_ID, "aws_secret_access_key": AWS_SECRET})}
    m = r.message(Message(id=99, role="assistant", kind="function_call", text="", raw=raw))
    assert m is not None and AWS_SECRET in m.raw["arguments"] and AWS_ID not in m.raw["arguments"]


class _Failing(Detectors):
    def find(self, text, *, disjoint=True):
        if "BOOM" in text:
            raise RuntimeError("detector broke")
        return super().find(text, disjoint=disjoint)


def test_a_shown_session_keeps_every_message_and_its_findings():
    shown = ShownRedaction(_Failing(("secrets", "pii")))
    page = [*_messages(), Message(id=500, role="user", kind="message", text="BOOM jane.doe@example.com")]
    out = shown.page(page)
    assert [m.id for m in out] == [m.id for m in page]
    assert out[-1].text == FAILED_TEXT and out[-1].raw is None
    assert any("[EMAIL_1]" in m.text for m in out) and not any("jane.doe" in m.text for m in out)
    assert "OpenAI key (sk-…" in shown.tip(0) and PLANTED[0][1] not in shown.tip(0)
    assert shown.tip(500) == ""
    # the same value gets the same placeholder on a later page
    again = shown.page([Message(id=600, role="user", kind="message", text=PLANTED[0][2].format(PLANTED[0][1]))])
    assert again[0].text == out[0].text
