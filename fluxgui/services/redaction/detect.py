""":class:`Detectors`: the enabled rules, each run on a text where it may find something.

``find(text)`` gives every finding in ``text``, left to right, none overlapping (where
two would, the one starting first, then the longer, is kept). Each rule runs on its own,
and only on a text holding one of its triggers (the rules of a family after one search
for all their triggers; case-blind triggers in the text's ASCII letters lowered); an
anchored rule's pattern is tried only where the text's shape (:func:`.rules.shape`)
holds its anchor, a windowed one only in the windows its shape gives. What the rules find is what each finds searching the whole text
(tests/services/test_redaction_prefilter.py). Kinds chosen: any of :data:`GROUPS`
(``all``: every one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from . import pii, secrets
from .custom import CustomRules
from .rules import Finding, Rule, shape

GROUPS = ("secrets", "pii", "custom")
#: kinds known by what stands before the value, not by its own shape: once found, the
#: same value is a finding wherever else it appears in the output (see Redactor)
CONTEXTUAL = frozenset({"BEARER_TOKEN", "URL_PASSWORD", "URL_SECRET", "AWS_SECRET_KEY"})
_DIGIT = re.compile(r"\d").search
_PLACEHOLDER = re.compile(r"\[[A-Z0-9_]+_\d+\]")
#: a text shorter than this is searched by an anchored or windowed rule's pattern itself
#: (its shape and the searches in it cost more than they save)
_SHAPED = 2000


def parse_kinds(text: str) -> tuple[str, ...]:
    """``secrets,pii`` → ``("secrets", "pii")``; ``all`` → every group. An unknown
    name raises ``ValueError``."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if not names:
        raise ValueError("name at least one of secrets, pii, custom, all")
    out: list[str] = []
    for name in names:
        if name == "all":
            return GROUPS
        if name not in GROUPS:
            raise ValueError(f"unknown kind {name!r} (use secrets, pii, custom or all)")
        if name not in out:
            out.append(name)
    return tuple(out)


class Detectors:
    """The rules of ``groups``, national phone numbers read in ``region``, and the
    ``custom`` rules (used when ``"custom"`` is among the groups)."""

    def __init__(
        self, groups: Sequence[str] = GROUPS, *, region: str = pii.DEFAULT_REGION,
        custom: CustomRules | None = None,
    ) -> None:
        self.groups = tuple(groups)
        rules: list[Rule] = []
        if "secrets" in self.groups:
            rules.extend(secrets.RULES)
        if "pii" in self.groups:
            rules.extend(pii.rules(region))
        self.rules = tuple(rules)
        self.custom = custom if custom and "custom" in self.groups else None
        # A rule runs on a text holding one of its triggers: one substring test, or for
        # several triggers one search of their alternation (re finds a literal prefix
        # fast: AKIA|ASIA|… is one pass, not four); the rules of a family first share
        # one search of all their triggers (one pass for sk- and sk-ant-)
        families: dict[str, list[Rule]] = {}
        for r in self.rules:
            if r.family:
                families.setdefault(r.family, []).append(r)
        self._families = {
            name: _gate(Rule("", "", "", triggers=tuple(t for r in members for t in r.triggers), lower=members[0].lower))
            for name, members in families.items()
        }
        self._compiled = [
            (r, re.compile(r.pattern, r.flags), _own_gate(r, families)) for r in self.rules
        ]
        self._aws = "secrets" in self.groups
        #: no finding is shorter (but a custom one)
        self._shortest = 1 if self.custom is not None else 6

    def find(self, text: str, *, disjoint: bool = True) -> list[Finding]:
        """Every finding in ``text`` (see the module's docstring; without ``disjoint``,
        overlapping ones are all kept)."""
        found: list[Finding] = []
        if len(text) < self._shortest:
            return found
        low: str | None = None
        digit: bool | None = None
        shaped: str | None = None
        families: dict[str, bool] = {}
        for rule, regex, gate in self._compiled:
            if rule.triggers:
                hay = text
                if rule.lower:
                    if low is None:
                        low = _lower(text)
                    hay = low
                if rule.family:
                    present = families.get(rule.family)
                    if present is None:
                        present = families[rule.family] = _holds(hay, self._families[rule.family])
                    if not present:
                        continue
                if gate is not None and not _holds(hay, gate):
                    continue
            if rule.digits:
                if digit is None:
                    digit = _DIGIT(text) is not None
                if not digit:
                    continue
            if len(text) < _SHAPED and (rule.anchor or rule.windows is not None):
                matches: Iterable[re.Match[str]] = regex.finditer(text)  # (a short text: no gain)
            elif rule.anchor:
                if shaped is None:
                    shaped = shape(text)
                matches = _anchored(regex, text, shaped, rule.anchor)
            elif rule.windows is not None:
                if shaped is None:
                    shaped = shape(text)
                matches = (m for a, b in rule.windows(text, shaped) for m in regex.finditer(text, a, b))
            else:
                matches = regex.finditer(text)
            check, kind = rule.check, rule.kind
            for match in matches:
                if check is None:
                    s, e = match.span("v") if "v" in regex.groupindex else match.span()
                    found.append(Finding(s, e, kind))
                else:
                    found.extend(Finding(f.start, f.end, f.kind or kind) for f in check(match))
        if self.custom is not None:
            found.extend(self.custom.find(text))
        if self._aws and any(f.kind == "AWS_ACCESS_KEY" for f in found):
            found.extend(secrets.aws_neighbours(text))
        if found and "[" in text:  # a placeholder already there is not found again
            found = [f for f in found if _PLACEHOLDER.fullmatch(text, f.start, f.end) is None]
        for n, f in enumerate(found):
            if f.kind in CONTEXTUAL:  # a known shape after "Bearer": named by its shape
                inner = self.find(text[f.start:f.end])
                if len(inner) == 1 and inner[0].end - inner[0].start == f.end - f.start:
                    found[n] = f._replace(kind=inner[0].kind)
        return _disjoint(found) if disjoint and len(found) > 1 else found


#: characters from the rarest in conversations, code and JSON to the commonest (roughly):
#: a gate first looks for the rarest character all its triggers hold, a one-character
#: search many times faster than a search for a word
_RARITY = "`^~|<>=\\QJZXKVYWUGOBFHLNPRMDCTIESA/zqjxkvbpygwfmucldrhsnioate{}[]_-:.,'\"() 0123456789"

#: what a text must hold for a rule to run: that character (``""``: none chosen), then
#: that word or a match of that pattern
Gate = tuple[str, "str | re.Pattern[str]"]


def _gate(rule: Rule) -> Gate | None:
    """What a text must hold for ``rule`` to run: its one trigger, or a pattern of its
    triggers (in lower case for a rule whose triggers are looked for so), after the
    rarest character every trigger holds."""
    triggers = sorted({t.lower() if rule.lower else t for t in rule.triggers}, key=len, reverse=True)
    if not triggers:
        return None
    shared = set(triggers[0]).intersection(*triggers[1:])
    rare = min(shared, key=lambda c: _RARITY.find(c) if c in _RARITY else -1, default="")
    if len(triggers) == 1:
        return rare, triggers[0]
    return rare, re.compile("|".join(map(re.escape, triggers)))


def _own_gate(rule: Rule, families: dict[str, list[Rule]]) -> Gate | None:
    """``rule``'s gate, ``None`` when its family's search already is its own."""
    members = families.get(rule.family, [])
    if len(members) == 1 or (members and {t for r in members for t in r.triggers} == set(rule.triggers)):
        return None
    return _gate(rule)


def _holds(hay: str, gate: Gate | None) -> bool:
    if gate is None:
        return True
    rare, test = gate
    if rare and rare not in hay:
        return False
    if isinstance(test, str):
        return test in hay
    return test.search(hay) is not None


def _lower(text: str) -> str:
    """``text`` in lower case, for the triggers (ASCII words): the ASCII letters lowered
    (other text's ``lower()`` is many times slower, and no trigger needs it)."""
    if text.isascii():
        return text.lower()
    return text.encode("ascii", "replace").lower().decode("ascii")


def _anchored(regex: re.Pattern[str], text: str, shaped: str, anchor: str) -> Iterator[re.Match[str]]:
    """What ``regex.finditer(text)`` gives, for a pattern whose every match starts where
    ``shaped`` (the text's shape) holds ``anchor``: the pattern is tried at those places
    only, in order, each after the last match's end."""
    find = shaped.find
    at = find(anchor)
    while at >= 0:
        match = regex.match(text, at)
        if match is not None:
            yield match
            at = find(anchor, max(match.end(), at + 1))
        else:
            at = find(anchor, at + 1)


def _disjoint(found: list[Finding]) -> list[Finding]:
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    out: list[Finding] = []
    end = -1
    for f in found:
        if f.start >= end and f.end > f.start:
            out.append(f)
            end = f.end
    return out
