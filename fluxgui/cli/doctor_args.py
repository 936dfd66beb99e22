"""The arguments of the session doctor's commands (issue 18): ``check``, ``repair``,
``rewind``, ``preflight`` and ``ledger`` (see :mod:`fluxgui.cli.parser`, which hands each
adder its ``command`` maker)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from . import arguments
from .stores import add_store_options
from .workspace_args import add_workspace_options

Subparsers = Any
#: ``fluxgui.cli.parser._command``: (subparsers, name, description, examples) → parser
Command = Callable[[Subparsers, str, str, list[str]], argparse.ArgumentParser]
SESSION_HELP = "a session id, as 'ls' prints it"


def _target(parser: argparse.ArgumentParser, text: str = arguments.TARGET_HELP) -> None:
    parser.add_argument("target", type=arguments.target, metavar="TARGET", help=text)


def _session(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", metavar="SESSION_ID", help=SESSION_HELP)


_CODES_HELP = (
    "orphan_call, orphan_output, misordered_reasoning, dangling_reasoning, empty_reasoning, "
    "duplicate_id, duplicate_output, repeated_items, malformed_item (comma-separated), or all"
)


def _fixes(text: str) -> list[str]:
    from fluxgui.services.doctor.repairs import REPAIRABLE

    codes = [c.strip() for c in text.split(",") if c.strip()]
    if codes == ["all"]:
        return codes
    wrong = [c for c in codes if c not in REPAIRABLE]
    if not codes or wrong:
        raise argparse.ArgumentTypeError(f"not a repair: {', '.join(wrong) or text!r} (use {_CODES_HELP})")
    return codes


def add_check(sub: Subparsers, name: str, command: Command) -> None:
    check = command(
        sub, name,
        "Find what breaks resuming sessions: orphan calls and outputs, misordered, dangling "
        "or empty reasoning, duplicate item ids, outputs saved twice, repeated runs of "
        "items, malformed rows, broken AdvancedSQLiteSession structure (exit 0 when clean, "
        "1 when any problem is found, 3 on error). Several stores: also split_session, a "
        "session whose turns are in different stores.",
        ["fluxgui check demo", "fluxgui check sessions.db conv-1 --limit 20 --json",
         "fluxgui check a/conversations.db b/conversations.db --session user_123"],
    )
    check.add_argument("target", nargs="?", type=arguments.target, metavar="TARGET", help=arguments.TARGET_HELP)
    check.add_argument(
        "more", nargs="*", metavar="TARGET|SESSION_ID",
        help="only these sessions (default: all); or more stores, when each names one (a "
        "URL, a path that exists) or --session/--workspace is given",
    )
    check.add_argument("--session", dest="sessions", action="append", metavar="ID",
                       help="only this session (give it again for more; with several stores)")
    check.add_argument(
        "--limit", type=arguments.count, metavar="N",
        help="also check the history SessionSettings(limit=N) keeps (limit_split)",
    )
    check.add_argument("--json", action="store_true", help="print JSON")
    add_workspace_options(check)
    add_store_options(check)


def add_repair(sub: Subparsers, name: str, command: Command) -> None:
    repair = command(
        sub, name,
        "Fix one session's problems in one transaction: prints the session before and "
        "after, then writes (undoable in the window).",
        ["fluxgui repair sessions.db conv-1 --fix all --dry-run",
         "fluxgui repair sessions.db conv-1 --fix orphan_call,dangling_reasoning --yes"],
    )
    _target(repair, arguments.TARGET_HELP + " (opened writable)")
    _session(repair)
    repair.add_argument("--fix", type=_fixes, required=True, metavar="CODE[,CODE…]|all", help=_CODES_HELP)
    repair.add_argument(
        "--cancel-text", metavar="TEXT",
        help="what the output that completes an orphan call says (default: the call was cancelled)",
    )
    repair.add_argument(
        "--drop-calls", action="store_true",
        help="drop orphan calls instead of completing them with a cancelled output",
    )
    repair.add_argument(
        "--keep", choices=("first", "last"), default="last",
        help="of a call's outputs that differ (duplicate_output), the one to keep "
        "(default: last, the one the Agents SDK sends)",
    )
    repair.add_argument("--dry-run", action="store_true", help="print the change and write nothing")
    repair.add_argument("--yes", action="store_true", help="write without asking")
    add_store_options(repair)


def add_rewind(sub: Subparsers, name: str, command: Command) -> None:
    rewind = command(
        sub, name,
        "Remove whole turns at the end of one session (a turn: a user message and "
        "everything up to the next) — never half a turn; one transaction.",
        ["fluxgui rewind sessions.db conv-1 --last --yes",
         "fluxgui rewind sessions.db conv-1 --to-turn 3 --yes"],
    )
    _target(rewind, arguments.TARGET_HELP + " (opened writable)")
    _session(rewind)
    which = rewind.add_mutually_exclusive_group(required=True)
    which.add_argument("--to-turn", type=arguments.count, metavar="N", help="keep turns up to N, remove the rest")
    which.add_argument("--last", action="store_true", help="remove the last turn")
    rewind.add_argument("--yes", action="store_true", help="write without asking")
    add_store_options(rewind)


def add_preflight(sub: Subparsers, name: str, command: Command) -> None:
    pre = command(
        sub, name,
        "Show what resuming a session would send the model: the input the Agents SDK builds "
        "(flux's Runner for flux stores), estimated tokens (o200k_base, offline) and the "
        "problems that would fail the request (exit 1).",
        ["fluxgui preflight sessions.db conv-1",
         "fluxgui preflight sessions.db conv-1 --limit 20 --json"],
    )
    _target(pre)
    _session(pre)
    pre.add_argument("--limit", type=arguments.count, metavar="N", help="as with SessionSettings(limit=N)")
    pre.add_argument("--json", action="store_true", help="print JSON")
    add_store_options(pre)


def add_ledger(sub: Subparsers, name: str, command: Command) -> None:
    led = command(
        sub, name,
        "Tokens, cost and time of one session, turn by turn: recorded usage where the store "
        "has it (turn_usage, metadata.usage), estimates otherwise; prices from an offline "
        "table when the model is known.",
        ["fluxgui ledger sessions.db conv-1", "fluxgui ledger sessions.db conv-1 --model gpt-4o --json"],
    )
    _target(led)
    _session(led)
    led.add_argument("--model", metavar="NAME", help="the model to price with when the messages do not name one")
    led.add_argument("--json", action="store_true", help="print JSON")
    add_store_options(led)
