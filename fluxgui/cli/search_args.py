"""The arguments of ``search`` and ``index`` (see :mod:`fluxgui.cli.parser`, which hands
each adder its ``command`` maker, and holds their lines in ``fluxgui --help``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from . import arguments
from .stores import add_store_options

Subparsers = Any
#: ``fluxgui.cli.parser._command``: (subparsers, name, description, examples) → parser
Command = Callable[[Subparsers, str, str, list[str]], argparse.ArgumentParser]
TARGET_HELP = arguments.TARGET_HELP


def target(parser: Any) -> None:
    parser.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP)


def json_flag(parser: Any) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def add_search(sub: Subparsers, name: str, command: Command) -> None:
    search = command(
        sub, name,
        "Find the messages whose text holds TEXT (case-insensitive, Unicode case folding), "
        "newest first: session id, message id, role and a snippet (control characters as "
        "visible markers). Uses the store's local index when there is one (brought up to "
        "date first), the server's trigram index on Postgres, else a scan (stderr says so).",
        ["fluxgui search sessions.db A-1234", "fluxgui search sessions.db refund --json --limit 10"],
    )
    target(search)
    search.add_argument("text", metavar="TEXT", type=arguments.needle, help="the text to find (3 characters or more use the index)")
    json_flag(search)
    search.add_argument("--limit", type=arguments.count, default=50, metavar="N", help="at most N hits (0: all; default 50)")
    add_store_options(search)


def add_index(sub: Subparsers, name: str, command: Command) -> None:
    index = command(
        sub, name,
        "Build the store's search index in fluxgui's cache folder (never in the store), or "
        "bring it up to date: new messages, and sessions changed or deleted since. A "
        "progress bar shows on a terminal. Encrypted items are never written to it.",
        ["fluxgui index sessions.db", "fluxgui index postgresql://me@db.example/agents --rebuild"],
    )
    target(index)
    index.add_argument("--rebuild", action="store_true", help="throw the index away and build it again")
    add_store_options(index)
