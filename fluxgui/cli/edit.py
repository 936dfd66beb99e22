"""The editing commands: ``clear`` and ``rm`` (asking first unless ``--yes``) and
``branch`` (fork a session at a message).

Each opens the store writable and runs one transaction through the store's edit
commands (:mod:`fluxgui.services.edits` for ``clear``/``rm``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from fluxgui.core.roles import refuse
from fluxgui.core.errors import UnreadableItems, show_id
from fluxgui.core.text import plural

from .errors import EXIT_DECLINED, EXIT_USAGE, drop_hint
from .stores import open_target

#: what ``clear`` and ``rm`` do, as the question and the refusal say it
_WHAT = {
    "clear": "remove every message of",
    "rm": "delete",
}


def refuse_without_yes(args: argparse.Namespace) -> int | None:
    """Without ``--yes`` and no terminal to ask on: one line, exit 2 (before opening)."""
    if args.yes or _interactive():
        return None
    print(
        f"fluxgui: error: {args.command}: refusing to {_WHAT[args.command]} session "
        f"{show_id(args.session_id)} without confirmation: pass --yes",
        file=sys.stderr,
    )
    return EXIT_USAGE


def _interactive() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def _confirm(question: str) -> bool:
    sys.stderr.write(question + " [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


async def cmd_edit(args: argparse.Namespace, out: TextIO) -> int:
    """``clear`` / ``rm``: one session, opened writable, changed in one transaction."""
    refused = refuse_without_yes(args)
    if refused is not None:
        return refused
    from fluxgui.services.edits import check_writable, clear_session, delete_session

    sid = args.session_id
    store = await open_target(args, writable=True)
    try:
        check_writable(store, need="clear")
        if not args.yes:
            info = await store.reader.require_session(sid)
            question = (
                f"{_WHAT[args.command]} session {show_id(sid)} "
                f"({plural(info.messages, 'message')}) in {store.target}?"
            )
            if not _confirm(question[:1].upper() + question[1:]):
                print("fluxgui: nothing changed", file=sys.stderr)
                return EXIT_DECLINED
        edit = clear_session if args.command == "clear" else delete_session
        change = await edit(store, sid)
    finally:
        await store.close()
    removed = plural(len(change.removed), "message")
    if args.command == "clear":
        out.write(f"cleared {removed} from session {show_id(sid)}\n")
    else:
        out.write(f"deleted session {show_id(sid)} ({removed})\n")
    return 0


async def cmd_branch(args: argparse.Namespace, out: TextIO) -> int:
    """``branch``: a new session with the messages up to and including ``--at``."""
    store = await open_target(args, writable=True)
    try:
        # The store's own call, not services.edits.fork_session: that one trims the name
        # the user typed (a window field); here --name is taken exactly as given.
        try:
            change = await (store.forks or refuse(store, "forks")).fork_session(
                args.session_id, args.at, args.name, drop_unreadable=args.drop_unreadable
            )
        except UnreadableItems as exc:
            raise drop_hint(exc, "fork") from None
    finally:
        await store.close()
    out.write(
        f"forked session {show_id(args.session_id)} at message {args.at} into "
        f"{show_id(change.session_id)} ({plural(len(change.added), 'message')})\n"
    )
    return 0
