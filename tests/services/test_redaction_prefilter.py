"""Redaction's prefilters (services/redaction/detect.py) find what every rule finds when
run on the whole text: a rule's triggers, a family's shared search, the ASCII-lowered
text of the case-blind triggers and the shape an anchored rule (IBAN) is tried at only
skip texts and places where the rule finds nothing. The reference here runs every rule
on every text, no prefilter."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from redaction_corpus import CLEAN, PLANTED

from fluxgui.services.redaction import Detectors
from fluxgui.services.redaction.detect import _anchored
from fluxgui.services.redaction.rules import shape

SEP = "\n\x00\n"  # what unchanged_rows puts between rows

IBANS = [
    "GB82 WEST 1234 5698 7654 32", "DE89370400440532013000", "FR1420041010050500013M02606",
    "NL91ABNA0417164300", "GB82 WEST 1234 5698 7654 33",  # (the last fails its checksum)
]
EDGES = [
    "İ Authorization: Bearer abc123def456ghi789 and ünïcode",
    "日本語 SECRET_ACCESS_KEY = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Zürich: refund to IBAN GB82 WEST 1234 5698 7654 32 — danke",
    "€€€DE89370400440532013000€€€",
    "XXDE89370400440532013000 glued, ABDE89 3704 0044 0532 0130 00 glued, AB12AB12AB12 CD34",
    "ORD-2024-000123 at 2024-03-15T10:30:00Z, call (415) 555-2671 or +44 20 7946 0958 ☎",
    "sk-ant-api03-" + "x" * 30 + "9 and glpat-" + "a1" * 12 + " and AIza" + "b2" * 17 + "c",
    "AKIA" + "Z" * 15 + "9 with ghp_" + "c3" * 18,
    "DE89 3704 0044 0532 0130 00DE89 3704 0044 0532 0130 00",
    # numbers: where a run starts and ends, glued or not, after a bracket, a plus, a word
    "4155552671 is mine", "(415)555-2671", "( 415) 555-2671", "abc(4155552671 and x+14155552671",
    "+1 415 555 2671.", "(.... 1234567) and (((((4155552671", "2024-03-15 4155552671", "tel:4155552671",
    "phone 4155552671", "☎4155552671 ☎ (415) 555 2671", "ID-4155552671", "1 2 3 4 5 6 7 8 9 0",
    "        4155552671", "4111-1111-1111-1111 and x4111 1111 1111 1111 and 4111 1111 1111 1111",
    "call 415.555.2671 or 415-555-2671", "2024-03-15T10:30:00Z 2024-03-15 2024.03.15 1.2.3.4 10.0.0.1",
    "+44 (0) 20 7946 0958", "((415) 555-2671)", "x (415) 555-2671", "ends with 4155552671",
    "call +14155552671 now", "pay (4111-11-11-1111-1111) now",  # (only the + and the ( start these)
]


def _reference(detectors: Detectors) -> Detectors:
    """``detectors`` with every prefilter off: each rule searches every text with ``re``."""
    ref = Detectors(detectors.groups)
    ref._compiled = [
        (replace(r, triggers=(), digits=False, family="", anchor="", windows=None), regex, None)
        for r, regex, _gate in detectors._compiled
    ]
    return ref


def _texts() -> list[str]:
    planted = [sentence.format(value) for _kind, value, sentence in PLANTED]
    ibans = [f"pay to {v} now" for v in IBANS]
    single = planted + ibans + EDGES + list(CLEAN)
    pages = [SEP.join(single), SEP.join("é " + t for t in single), SEP.join(reversed(single))]
    # (a text from 2,000 characters is searched through its shape: numbers at its start)
    pages += [t + " and more" * 250 for t in ("4155552671 is mine", "(4111-11-11-1111-1111) paid", "+14155552671")]
    return single + pages


@pytest.mark.parametrize("groups", [("secrets",), ("pii",), ("secrets", "pii")])
def test_the_prefilters_find_what_every_rule_finds_on_the_whole_text(groups):
    detectors = Detectors(groups)
    ref = _reference(detectors)
    for text in _texts():
        assert detectors.find(text, disjoint=False) == ref.find(text, disjoint=False), text[:80]
        assert detectors.find(text) == ref.find(text), text[:80]


def test_every_iban_is_found_in_a_page_and_in_non_ascii_text():
    """(What the reference finds is also checked to be the planted values, so the
    comparison above is not between two detectors finding nothing.)"""
    detectors = Detectors(("pii",))
    text = SEP.join(["€€€DE89370400440532013000€€€", "Zürich GB82 WEST 1234 5698 7654 32.", "NL91ABNA0417164300"])
    found = [text[f.start:f.end] for f in detectors.find(text) if f.kind == "IBAN"]
    assert found == ["DE89370400440532013000", "GB82 WEST 1234 5698 7654 32", "NL91ABNA0417164300"]


def test_the_shape_keeps_positions_and_an_anchored_search_equals_finditer():
    text = "ab ÄÖ 12 CD34 €x GB82WEST12345698765432 AB12AB12"
    shaped = shape(text)
    assert len(shaped) == len(text)
    assert shaped[:9] == "aa !! 00 " and shaped[9:13] == "AA00" and shaped[14:16] == "!a"
    regex = re.compile(r"[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{1,4}){0,9}")
    assert [m.span() for m in _anchored(regex, text, shaped, "AA00")] == [m.span() for m in regex.finditer(text)]
    # (an anchor inside a match, AB12 here, is not tried again)
    assert [m.group() for m in regex.finditer(text)] == ["CD34", "GB82WEST12345698765432 AB12AB12"]
