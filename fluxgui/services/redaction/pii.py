"""``pii``: email addresses, phone numbers, payment card numbers and IBANs.

* Email: a local part, ``@``, a domain with a top-level name of letters (not a file's
  suffix: ``icon@2x.png`` is not an address).
* Phone: a run of digits in groups (or after ``+``, or after a word such as "phone")
  that ``phonenumbers`` finds valid at its ``STRICT_GROUPING`` leniency, national
  numbers read in the region given (default ``US``). A bare run of digits, a date, a
  time, an IP address or a number glued to letters (``ORD-2024-000123``, ``id-5551234``)
  is not taken; but an international number (``+`` and its digits) after a ``-``,
  ``_`` or ``:`` that ends a word is, when valid (a key such as ``user-+14155550123``).
* Card: 13 to 19 digits (in groups of spaces or dashes) that pass the Luhn check and
  start as a card network's numbers do.
* IBAN: a country code, two check digits and the account, valid by its checksum
  (``python-stdnum``).

A number that fails its checksum is not a card or an IBAN.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .rules import Finding, Rule, starts_token

DEFAULT_REGION = "US"
_FILE_SUFFIXES = frozenset(
    "png jpg jpeg gif svg webp ico bmp js mjs ts tsx jsx css scss py rb go rs java json yaml yml "
    "toml md txt html htm xml pdf zip gz tar lock".split()
)
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4}")
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_LOCAL_CHARS = frozenset(_ALNUM + "._%+-")
_NUMBER_BEFORE = _ALNUM + "_+/.-"
_PHONE_WORDS = ("phone", "tel", "mobile", "cell", "call", "sms", "whatsapp", "fax")
_AFTER_WORD = re.compile(r"\b(?:" + "|".join(_PHONE_WORDS) + r"|telephone)\b[^\d\n]{0,12}\Z")
_SEVEN_DIGITS = re.compile(r"(?:[^\d]{0,4}\d){7}")
_LAST_WORD = re.compile(r"[^\s\"'<>]*\Z")
_GLUED_AFTER = frozenset(_ALNUM + "_/-")
#: a number: an optional country code, an optional area code in brackets, digits in groups
_NUMBER = re.compile(
    r"(?:\+\d{1,3}[ .\-]?(?:\(\d{1,4}\)[ .\-]?)?|\(\d{1,4}\)[ .\-]?)?\d{1,5}"
    r"(?:[ .\-]?\d{1,5}){1,7}(?![0-9A-Za-z_/\-]|[.:]\d)"
)
_CARD_START = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[068]|35|6011|65|64[4-9]|62")


def _email(match: re.Match[str]) -> Iterator[Finding]:
    """The address around an ``@`` and its domain: the local part is the run of the
    characters an address's local part holds before it (at most 64, starting with a
    letter or a digit)."""
    text, at = match.string, match.start()
    start = at
    while start > 0 and at - start <= 64 and text[start - 1] in _LOCAL_CHARS:
        start -= 1
    if start == at or at - start > 64 or not text[start].isalnum() or (start and text[start - 1] == "/"):
        return
    tld = match.group().rsplit(".", 1)[-1].lower()
    if tld in _FILE_SUFFIXES:
        return
    word = _LAST_WORD.search(text, max(0, start - 200), start).group()  # type: ignore[union-attr]
    if "://" not in word:  # (user:password@host in a URL is no address)
        yield Finding(start, match.end(), "")


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = ord(c) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def is_card(candidate: str) -> bool:
    """Whether ``candidate`` (digits, spaces and dashes) is a payment card number."""
    if re.search(r"[^\d -]", candidate):
        return False
    digits = candidate.replace(" ", "").replace("-", "")
    return (
        13 <= len(digits) <= 19 and _CARD_START.match(digits) is not None
        and len(set(digits)) > 1 and luhn_ok(digits)
    )


class Numbers:
    """The check of the digit rule: a card, else phone numbers (read in ``region``)."""

    def __init__(self, region: str = DEFAULT_REGION) -> None:
        self.region = region.upper()
        self._seen: dict[str, list[tuple[int, int]]] = {}

    def __call__(self, region: re.Match[str]) -> Iterator[Finding]:
        """The numbers in a run of digits, spaces, dots, dashes and brackets."""
        whole = region.string
        end = region.end()
        while end > region.start() and whole[end - 1] in " .-(":
            end -= 1
        if 7 <= end - region.start() <= 15 and whole[region.start():end].isdigit():
            yield from self.after_word(whole, region.start(), end)
        if end - region.start() < 7 or _SEVEN_DIGITS.match(whole, region.start(), end) is None:
            return
        if _DATE.fullmatch(whole, region.start(), end):
            return  # (a date: the commonest run of digits in stored items)
        if not starts_token(region, _NUMBER_BEFORE) and " " not in whole[region.start():end]:
            return  # glued to an id (ORD-2024-000123), and nothing after a space
        glued = end < len(whole) and (whole[end] in _GLUED_AFTER or (
            whole[end] in ".:" and end + 1 < len(whole) and whole[end + 1].isdigit()))
        for match in _NUMBER.finditer(whole, region.start(), end):
            if match.end() == end and glued:
                continue
            yield from self._number(match)

    def _number(self, match: re.Match[str]) -> Iterator[Finding]:
        text = match.group()
        digits = sum(map(str.isdigit, text))
        if digits < 7:
            return
        start = match.start()
        if not starts_token(match, _NUMBER_BEFORE):  # glued to an id: what follows may be one
            first, space, rest = text.partition(" ")
            if space and sum(c.isdigit() for c in rest) >= 7:
                yield from self.phones(rest, start + len(first) + 1)
            return
        if 13 <= digits <= 19 and is_card(text.strip()):
            yield Finding(start, match.end(), "CARD")
            return
        if _DATE.search(text) or _IPV4.fullmatch(text):
            return
        if not (text.startswith("+") or re.search(r"\d[ .()\-]+\d|^\(", text)):
            return  # a bare run of digits is an id, not a phone number
        yield from self.phones(text, start)

    def phones(self, text: str, offset: int) -> Iterator[Finding]:
        """The phone numbers in a candidate (its spans remembered: an item is searched
        at several levels, its stored row, its text, its JSON, and the matcher is slow)."""
        spans = self._seen.get(text)
        if spans is None:
            import phonenumbers

            spans = [
                (found.start, found.end) for found in phonenumbers.PhoneNumberMatcher(
                    text, self.region, leniency=phonenumbers.Leniency.STRICT_GROUPING
                )
            ]
            if len(self._seen) > 10_000:
                self._seen.clear()
            self._seen[text] = spans
        for start, end in spans:
            yield Finding(offset + start, offset + end, "PHONE")

    def glued(self, match: re.Match[str]) -> Iterator[Finding]:
        """An international number after ``user-`` (a key made of an id and a number)."""
        yield from self.phones(match.group(), match.start())

    def after_word(self, whole: str, start: int, end: int) -> Iterator[Finding]:
        """A bare number right after "phone", "tel", "call", "mobile", …."""
        import phonenumbers

        if (start and whole[start - 1] in _ALNUM) or (end < len(whole) and whole[end] in _ALNUM):
            return
        if _AFTER_WORD.search(whole[max(0, start - 30):start].lower()) is None:
            return
        try:
            number = phonenumbers.parse(whole[start:end], self.region)
        except phonenumbers.NumberParseException:
            return
        if phonenumbers.is_valid_number(number):
            yield Finding(start, end, "PHONE")


#: in a text's shape (rules.shape), where the region pattern of ``rules()`` may start: a
#: digit, ``+`` or ``(`` after a character no number is glued to (``!``, a space, ``(``),
#: not an ISO date, five characters of a number after it (the pattern's own tests, each
#: with a literal first, which re finds fast)
_REGION_STARTS = (  # (with its first character: a text without it is not searched)
    ("0", re.compile(r"0(?<=[! (]0)(?!000-00-00)[0 (.\-]{5}")),
    ("+", re.compile(r"\+(?<=[! (]\+)[0 (.\-]{5}")),
    ("(", re.compile(r"\((?<=[! (]\()[0 (.\-]{5}")),
)
#: what a number's region holds no character of (in the shape)
_NOT_NUMBER = re.compile(r"[Aa!]")


def number_windows(text: str, shaped: str) -> Iterator[tuple[int, int]]:
    """The runs of number characters (digits, spaces, ``+ ( ) . -``) in which the region
    pattern may match (a start as it needs: :data:`_REGION_STARTS`), in order: a match
    lies in one run, so the pattern searched in these runs finds what it finds in the
    whole text."""
    starts = sorted(
        {m.start() for first, pattern in _REGION_STARTS if first in shaped for m in pattern.finditer(shaped)}
        | ({0} if shaped[:1] in ("0", "+", "(") else set())
    )
    done = 0
    for at in starts:
        if at < done:
            continue
        # (the run's start: after the last character of no number before it; the end of
        # the last run is one, so the searches stop there)
        begin = max(shaped.rfind("!", done, at), shaped.rfind("a", done, at), shaped.rfind("A", done, at)) + 1
        end_match = _NOT_NUMBER.search(shaped, at)
        done = end_match.start() if end_match is not None else len(shaped)
        yield begin, done


def _iban(match: re.Match[str]) -> Iterator[Finding]:
    from stdnum import iban

    if not starts_token(match, _ALNUM):
        return
    text = match.group()
    while len(text.replace(" ", "")) >= 15:
        if iban.is_valid(text):
            yield Finding(match.start(), match.start() + len(text), "")
            return
        if " " not in text:
            return
        text = text.rsplit(" ", 1)[0]  # the last group may be the next word


def rules(region: str = DEFAULT_REGION) -> tuple[Rule, ...]:
    numbers = Numbers(region)
    return (
        Rule(
            "EMAIL", "pii",
            r"@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9\-])",
            _email, triggers=("@",),
        ),
        # ([0-9], not \d: a class re searches several times faster)
        # (tried only where two capitals and two digits start, found by a string search
        # in the text's shape: re's search for a capital is slow)
        Rule(
            "IBAN", "pii", r"[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{1,4}){3,9}(?![A-Za-z0-9])", _iban, digits=True,
            anchor="AA00",
        ),
        # (not glued to an id, not an ISO date: both told by re itself, checked after the
        # first character so that re still skips fast to the next digit)
        Rule(
            "NUMBER", "pii",
            r"[+(0-9](?<![A-Za-z0-9_+/.\-][+(0-9])(?![0-9]{3}-[0-9]{2}-[0-9]{2})[0-9 ().\-]{5,40}",
            numbers, digits=True, windows=number_windows,
        ),
        Rule(
            "PHONE", "pii", r"\+(?<=[A-Za-z0-9][_:\-]\+)[1-9][0-9]{6,14}(?![0-9A-Za-z_/\-]|[.:][0-9])",
            numbers.glued, triggers=("-+", "_+", ":+"),
        ),
    )
