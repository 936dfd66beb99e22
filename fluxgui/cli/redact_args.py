"""``--redact KINDS`` and ``--redact-rules FILE`` (``show``, ``export``, ``copy``,
``merge``, and the window: View › Redact on from the start, a ``--screenshot``
rendered redacted), and the redactor they make for one command's output. A session's id
goes through it too wherever the output writes one (``Redactor.session_id``).

The work is :mod:`fluxgui.services.redaction`'s; what a redacted output left out
(encrypted items no key opened, compaction content, items a detector failed on) is said
on standard error once the command is done.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, TextIO

from .errors import Known

if TYPE_CHECKING:
    from fluxgui.core.model import Message
    from fluxgui.services.redaction import Detectors, Redactor

KINDS_HELP = (
    "replace what is found of these kinds by placeholders ([EMAIL_1], [OPENAI_KEY_1], …), "
    "the same one for the same value throughout: secrets, pii, custom (comma-separated) or all"
)


def add_redact_options(
    parser: argparse.ArgumentParser, *, required: bool = False, window: bool = False
) -> None:
    """The redaction options (``scan`` needs no ``--redact``: it looks for every kind
    unless told; ``window``: the window's, View › Redact on from the start)."""
    kinds_help = (
        "open with View › Redact on for these kinds: secrets, pii, custom (comma-separated) or "
        "all; a --screenshot then renders the conversation redacted"
    ) if window else KINDS_HELP
    parser.add_argument("--redact", metavar="KINDS", required=required, help=kinds_help)
    parser.add_argument(
        "--redact-rules", metavar="FILE",
        help="custom rules: JSON {\"patterns\": [{\"name\", \"regex\"}], \"terms\": […]} "
        "(default: redaction-rules.json in fluxgui's data folder, when it exists)",
    )
    parser.add_argument(
        "--phone-region", metavar="CC", default="US",
        help="the country national phone numbers are read in (default US)",
    )


def redactor_for(args: argparse.Namespace, *, default: str | None = None) -> Redactor | None:
    """The command's redactor (``None``: no ``--redact``); a bad KINDS or rules file
    raises a usage error."""
    kinds_text = getattr(args, "redact", None) or default
    if not kinds_text:
        if getattr(args, "redact_rules", None):
            raise Known("--redact-rules needs --redact custom (or all)")
        return None
    from fluxgui.services.redaction import make_redactor, parse_kinds

    try:
        kinds = parse_kinds(kinds_text)
    except ValueError as exc:
        raise Known(f"--redact: {exc}") from None
    region = str(getattr(args, "phone_region", "US") or "US").upper()
    import phonenumbers

    if region not in phonenumbers.SUPPORTED_REGIONS:
        raise Known(f"--phone-region: unknown region {region!r} (a two-letter country code such as US, GB, DE)")
    redactor = make_redactor(kinds, rules=getattr(args, "redact_rules", None), region=region)
    if "custom" in kinds_text.lower() and redactor.detectors.custom is None:
        from fluxgui.services.redaction.custom import settings_rules_path

        raise Known(
            f"--redact custom: no rules to apply (pass --redact-rules FILE, or keep them in "
            f"{settings_rules_path()})"
        )
    return redactor


def window_detectors(args: argparse.Namespace) -> Callable[[], Detectors] | None:
    """What makes the detectors of the window's View › Redact when ``--redact`` is given
    (``None``: not given); checked now, before a window opens or a screenshot is
    rendered: a bad KINDS, rules file or region is a one-line error, and nothing is
    rendered unredacted."""
    redactor = redactor_for(args)
    if redactor is None:
        return None
    detectors = redactor.detectors
    return lambda: detectors


async def redacted_pages(
    pages: AsyncIterator[list[Message]], redactor: Redactor | None
) -> AsyncIterator[list[Message]]:
    """``pages`` redacted (as they are, without a redactor)."""
    async for page in pages:
        yield page if redactor is None else redactor.page(page)


def redacted_placed(placed: list[Any], redactor: Redactor | None) -> list[Any]:
    """A merged timeline's placed messages redacted (the ones left out dropped)."""
    if redactor is None:
        return placed
    from dataclasses import replace

    out = []
    for p in placed:
        m = redactor.message(p.message)
        if m is not None:
            out.append(replace(p, message=m))
    return out


def report_left(redactor: Redactor | None, err: TextIO | None = None) -> None:
    """What the redacted output left out, on standard error."""
    if redactor is None:
        return
    for note in redactor.notes():
        print(f"fluxgui: {note}", file=err or sys.stderr)


def add_scan(sub: object, name: str, command: object, target_help: str) -> None:
    """``scan``'s parser (``command`` makes a command's parser, see :mod:`.parser`)."""
    from . import arguments

    scan = command(  # type: ignore[operator]
        sub, name,
        "List what redaction would find in a store's sessions (secrets, personal data, your "
        "own rules), their ids too, per session, each value masked (sk-…a1f3, j…@example.com), "
        "never whole, each session named by its redacted id. Exit 0 when nothing is found, 1 when anything is, 3 on an error: usable "
        "as a pre-commit or CI check of exported fixtures.",
        ["fluxgui scan sessions.db", "fluxgui scan exported/ conv-42 --json",
         "fluxgui scan fixtures.db --redact secrets"],
    )
    scan.add_argument("target", type=arguments.target, metavar="TARGET", help=target_help)
    scan.add_argument("session_ids", nargs="*", metavar="SESSION_ID", help="only these sessions (default: all)")
    scan.add_argument("--json", action="store_true", help="print JSON instead of text")
    scan.add_argument(
        "--redact", metavar="KINDS", default="all",
        help="the kinds to look for: secrets, pii, custom (comma-separated) or all (the default)",
    )
    scan.add_argument(
        "--redact-rules", metavar="FILE",
        help="custom rules: JSON {\"patterns\": [{\"name\", \"regex\"}], \"terms\": […]}",
    )
    scan.add_argument("--phone-region", metavar="CC", default="US", help="the country national phone numbers are read in (default US)")
    from .stores import add_store_options

    add_store_options(scan)
