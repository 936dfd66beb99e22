"""``custom``: a user's own regular expressions and literal terms (customer names,
internal hostnames), from a rules file (``--redact-rules FILE``) or the settings:
JSON ``{"patterns": [{"name": "ticket", "regex": "TCK-\\\\d+"}], "terms": ["Acme Corp"]}``.

A pattern's findings are named after it (``ticket`` → ``[TICKET_1]``); terms are found
whole-word and in any case, as ``[TERM_1]``, …
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgui.core.errors import TargetError

from .rules import Finding


@dataclass(frozen=True)
class CustomRules:
    """``patterns``: (kind, compiled regex); ``terms``: literal strings."""

    patterns: tuple[tuple[str, re.Pattern[str]], ...] = ()
    terms: tuple[str, ...] = ()
    _terms_re: re.Pattern[str] | None = field(default=None, compare=False)

    def __bool__(self) -> bool:
        return bool(self.patterns or self.terms)

    def find(self, text: str) -> Iterator[Finding]:
        for kind, regex in self.patterns:
            for m in regex.finditer(text):
                if m.end() > m.start():
                    yield Finding(m.start(), m.end(), kind)
        if self._terms_re is not None:
            for m in self._terms_re.finditer(text):
                yield Finding(m.start(), m.end(), "TERM")


def kind_name(name: str) -> str:
    """A pattern's name as a placeholder's: letters, digits and ``_``, upper case."""
    cleaned = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper()
    return cleaned or "CUSTOM"


def make_rules(patterns: Sequence[dict[str, Any]] = (), terms: Sequence[str] = ()) -> CustomRules:
    """Rules from their JSON form; a bad regular expression raises ``ValueError``."""
    compiled = []
    for n, entry in enumerate(patterns):
        if not isinstance(entry, dict) or not isinstance(entry.get("regex"), str):
            raise ValueError(f"pattern {n + 1} needs a \"regex\" string")
        try:
            regex = re.compile(entry["regex"])
        except re.error as exc:
            raise ValueError(f"pattern {n + 1} ({entry.get('name', '')}): {exc}") from None
        compiled.append((kind_name(str(entry.get("name") or "custom")), regex))
    words = tuple(t for t in terms if isinstance(t, str) and t.strip())
    terms_re = None
    if words:
        alternation = "|".join(re.escape(t.strip()) for t in sorted(words, key=len, reverse=True))
        terms_re = re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.IGNORECASE)
    return CustomRules(tuple(compiled), words, terms_re)


def load_rules(path: str | Path) -> CustomRules:
    """The rules of a JSON file; an unreadable or malformed one raises
    :class:`~fluxgui.core.errors.TargetError` naming it."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise TargetError(f"cannot read the redaction rules {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise TargetError(f"the redaction rules {path} are not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise TargetError(f"the redaction rules {path}: expected an object with \"patterns\" and \"terms\"")
    patterns, terms = doc.get("patterns", []), doc.get("terms", [])
    if not isinstance(patterns, list) or not isinstance(terms, list):
        raise TargetError(f"the redaction rules {path}: \"patterns\" and \"terms\" are lists")
    try:
        return make_rules(patterns, terms)
    except ValueError as exc:
        raise TargetError(f"the redaction rules {path}: {exc}") from None


def settings_rules_path() -> Path:
    """The rules the settings keep (``redaction-rules.json`` in fluxgui's data folder),
    used when no ``--redact-rules`` is given."""
    from fluxgui.core.paths import data_dir

    return data_dir() / "redaction-rules.json"
