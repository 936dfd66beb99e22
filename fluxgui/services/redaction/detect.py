""":class:`Detectors`: the enabled rules, compiled into one pass over a text.

``find(text)`` gives every finding in ``text``, left to right, none overlapping (where
two would, the one starting first, then the longer, is kept). Kinds chosen: any of
:data:`GROUPS` (``all``: every one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from . import pii, secrets
from .custom import CustomRules
from .rules import Finding, Rule

GROUPS = ("secrets", "pii", "custom")
#: kinds known by what stands before the value, not by its own shape: once found, the
#: same value is a finding wherever else it appears in the output (see Redactor)
CONTEXTUAL = frozenset({"BEARER_TOKEN", "URL_PASSWORD", "URL_SECRET", "AWS_SECRET_KEY"})
_PLACEHOLDER = re.compile(r"\[[A-Z0-9_]+_\d+\]")
_NAMED = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


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
        self._own = [re.compile(r.pattern, r.flags) for r in self.rules]
        alternation = "|".join(f"({_NAMED.sub('(?:', r.pattern)})" for r in self.rules)
        self._all = re.compile(alternation) if rules else None
        self._aws = "secrets" in self.groups

    def find(self, text: str) -> list[Finding]:
        """Every finding in ``text`` (see the module's docstring)."""
        found: list[Finding] = []
        if self._all is not None:
            for match in self._all.finditer(text):
                n = match.lastindex
                assert n is not None
                rule = self.rules[n - 1]
                found.extend(self._read(rule, self._own[n - 1], text, match.start(), match.end()))
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
        return _disjoint(found) if len(found) > 1 else found

    @staticmethod
    def _read(rule: Rule, own: re.Pattern[str], text: str, start: int, end: int) -> Iterable[Finding]:
        if rule.check is None and "(?P<v>" not in rule.pattern:
            return (Finding(start, end, rule.kind),)
        match = own.match(text, start, end)
        if match is None:  # (the alternation's match is this rule's own)
            return ()
        if rule.check is None:
            s, e = match.span("v")
            return (Finding(s, e, rule.kind),)
        return [Finding(f.start, f.end, f.kind or rule.kind) for f in rule.check(match)]


def _disjoint(found: list[Finding]) -> list[Finding]:
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    out: list[Finding] = []
    end = -1
    for f in found:
        if f.start >= end and f.end > f.start:
            out.append(f)
            end = f.end
    return out
