"""The arguments of a workspace of several stores (issue 36): ``--store-label``,
``--workspace`` and ``--save-workspace`` for ``ls``, ``show`` and ``check``, and the
``merge`` command's parser. Which targets a command names is decided here
(:func:`targets_of`); the commands are :mod:`fluxgui.cli.workspace`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from . import arguments
from .stores import STORE_FORMATS, add_store_options

Subparsers = Any
Command = Callable[[Subparsers, str, str, list[str]], argparse.ArgumentParser]

WORKSPACE_HELP = (
    "also the stores of this workspace file ({\"stores\": [{\"target\", \"label\", "
    "\"options\"}]}; passwords from the keyring, keys from --key)"
)


def add_workspace_options(parser: argparse.ArgumentParser, *, save: bool = False) -> None:
    """``--store-label`` (once per TARGET, in order) and ``--workspace FILE``;
    ``save``: ``--save-workspace FILE`` too. The command's usage error goes with the
    namespace (``args.usage_error``), for a command that names no store."""
    parser.set_defaults(usage_error=parser.error)
    parser.add_argument(
        "--store-label", dest="store_labels", action="append", metavar="LABEL",
        help="the label of a TARGET, given once per TARGET in order (default: its file "
        "name, with its folder when two are alike)",
    )
    parser.add_argument("--workspace", metavar="FILE", help=WORKSPACE_HELP)
    if save:
        parser.add_argument(
            "--save-workspace", metavar="FILE",
            help="write the stores read to a workspace file (no password or key in it)",
        )


def targets_positional(parser: argparse.ArgumentParser) -> None:
    """``TARGET…``: one store reads as it always did; several make a workspace. Options
    may stand between the targets and the positionals after them."""
    if isinstance(parser, arguments.Parser):
        parser.intermixed = True
    parser.add_argument(
        "targets", nargs="*", type=arguments.target, metavar="TARGET",
        help=arguments.TARGET_HELP + "; several: a workspace of them",
    )


def _names_store(text: str) -> bool:
    return "://" in text or text.startswith("openai-conversations:") or text == arguments.DEMO \
        or os.path.lexists(text)


def split_check_positionals(args: argparse.Namespace) -> None:
    """``check TARGET [TARGET|SESSION_ID…]``: the words after the first are targets when
    ``--session`` or ``--workspace`` is given, or when every one of them names a store
    (a URL, a path that exists); else session ids, as ``check`` always read them. Sets
    ``args.targets`` and ``args.session_ids``."""
    rest = list(args.more or [])
    first = [args.target] if args.target else []
    if args.sessions or args.workspace or (rest and all(_names_store(w) for w in rest)):
        args.targets = first + [arguments.target(w) for w in rest]
        args.session_ids = list(args.sessions or [])
    else:
        args.targets = first
        args.session_ids = rest + list(args.sessions or [])


def several(args: argparse.Namespace) -> bool:
    """Whether the command reads a workspace (several targets, or a workspace file)
    rather than one store as before."""
    return len(args.targets) > 1 or bool(args.workspace)


def one_target(args: argparse.Namespace) -> None:
    """The one target of a command reading one store (``args.target``)."""
    need_targets(args)
    args.target = args.targets[0]


def need_targets(args: argparse.Namespace) -> None:
    """A usage error (exit 2, the command's usage) when no store is named."""
    if args.targets or args.workspace:
        return
    args.usage_error(
        "the following arguments are required: TARGET (one or several), or --workspace FILE"
    )


def add_merge(sub: Subparsers, name: str, command: Command) -> None:
    merge = command(
        sub, name,
        "Consolidate the sessions of several stores into one: each session's merged "
        "timeline (whole turns by time, copies once) written into DEST, one transaction "
        "per session. The stores merged are never changed; a session DEST already holds "
        "with the same content is skipped (a second run writes nothing), one it holds with "
        "other content is a conflict (skipped, or written under a new id). Options "
        "without 'dest-' are the stores merged's.",
        ["fluxgui merge replica-a/conversations.db replica-b/conversations.db --into "
         "postgresql://me@db.example/agents --dry-run",
         "fluxgui merge --workspace replicas.json --into merged.db --session user_123"],
    )
    targets_positional(merge)
    merge.add_argument("--into", dest="dest", required=True, type=arguments.target, metavar="DEST",
                       help="the store to write into (made when it does not exist)")
    merge.add_argument("--session", dest="sessions", action="append", metavar="ID",
                       help="only this session (give it again for more; default: every session)")
    merge.add_argument("--dry-run", action="store_true", help="show the plan, write nothing")
    merge.add_argument(
        "--on-conflict", choices=("skip", "rename"), default="skip",
        help="a session DEST holds with other content: skip it (the default), or write "
        "the merged one as <id>-2, <id>-3, …",
    )
    merge.add_argument(
        "--dest-store-format", dest="dest_format", choices=STORE_FORMATS,
        help="the format of DEST when it is made (default: agents when any store merged "
        "keeps Agents SDK items, else flux), or which one to write when it holds both",
    )
    merge.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_workspace_options(merge)
    add_store_options(merge, whose="the stores merged", legacy_format=False)
    add_store_options(merge, prefix="dest-", whose="DEST", format_flag=None)
