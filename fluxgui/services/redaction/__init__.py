"""Redaction: secrets and personal data found in messages and replaced by typed
placeholders (``[EMAIL_1]``, ``[OPENAI_KEY_1]``) in an output, Qt-free.

* :mod:`.rules` — a detector rule, a finding, the masked form of a value;
* :mod:`.secrets`, :mod:`.pii`, :mod:`.custom` — the detectors of each kind;
* :mod:`.detect` — the enabled rules, one pass over a text;
* :mod:`.redactor` — placeholders consistent within one output, messages redacted in
  place, what is left out (sealed, compaction, a detector's failure) counted;
* :mod:`.scan` — the findings per session, masked.

:func:`make_redactor` builds one for a command: the kinds (``secrets,pii,custom`` or
``all``), the custom rules (a file, else the settings' file when it exists), the region
national phone numbers are read in.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .custom import CustomRules, load_rules, make_rules, settings_rules_path
from .detect import GROUPS, Detectors, parse_kinds
from .pii import DEFAULT_REGION
from .redactor import Redactor
from .rules import Finding, mask

__all__ = [
    "DEFAULT_REGION", "GROUPS", "CustomRules", "Detectors", "Finding", "Redactor", "load_rules",
    "make_redactor", "make_rules", "mask", "parse_kinds",
]


def make_redactor(
    kinds: Sequence[str] = GROUPS, *, rules: str | Path | None = None, region: str = DEFAULT_REGION,
) -> Redactor:
    """A Redactor for one output (see the module's docstring)."""
    custom: CustomRules | None = None
    if "custom" in kinds:
        if rules is not None:
            custom = load_rules(rules)
        elif settings_rules_path().is_file():
            custom = load_rules(settings_rules_path())
    return Redactor(Detectors(kinds, region=region, custom=custom))
