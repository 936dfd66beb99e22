"""The argument parsers: one subparser per command, and the window's parser.

``build_parser(command)`` builds only that command's subparser (what ``main`` runs), so
that a command's start-up loads nothing another command needs (``ls`` does not load the
export writers for ``export``'s ``--format`` choices); ``build_parser()`` builds them all.
The store options come from the adapters' declarations (:mod:`fluxgui.cli.stores`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from . import arguments
from .stores import add_store_options

TARGET_HELP = "a SQLite file, a JSON session folder, a SQLAlchemy URL or redis://…"
WRITE_TARGET_HELP = (
    "a SQLite file (made when it does not exist), a JSON session folder, a SQLAlchemy URL "
    "or redis://…"
)

#: every command, with the line ``fluxgui --help`` shows for it
COMMANDS: dict[str, str] = {
    "ls": "list sessions",
    "show": "show one session",
    "branches": "list an AdvancedSQLiteSession session's branches",
    "branch": "fork a session at a message",
    "diff": "compare two sessions turn by turn",
    "clear": "remove every message of one session",
    "rm": "delete one session",
    "export": "write sessions to a JSON, JSONL, Markdown or HTML file",
    "import": "import exports and session files as new sessions",
    "copy": "copy sessions into another store, converting the format",
    "chat": "send a message to an agent with a session's history",
    "check": "find what breaks resuming sessions (exit 1 when any problem is found)",
    "repair": "fix one session's problems in one transaction",
    "rewind": "remove whole turns at the end of one session",
    "preflight": "show what resuming a session would send the model",
    "ledger": "tokens, cost and time of one session, turn by turn",
}

#: a subparsers action (argparse has no public name for its type)
Subparsers = Any


def _command(sub: Subparsers, name: str, text: str, more: str = ".") -> argparse.ArgumentParser:
    """A command's parser: ``text`` is its ``-h`` line; its description is ``text`` as a
    sentence, ended by ``more``."""
    return sub.add_parser(name, help=text, description=text[:1].upper() + text[1:] + more)


def _add_ls(sub: Subparsers, name: str) -> None:
    ls = sub.add_parser(name, help="list sessions, most recently active first")
    ls.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP)
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.add_argument("--search", metavar="TEXT", help="only sessions whose id or any message contains TEXT")
    ls.add_argument("--limit", type=arguments.count, default=50, metavar="N", help="at most N sessions (0: all; default 50)")
    add_store_options(ls)


def _add_show(sub: Subparsers, name: str) -> None:
    show = sub.add_parser(name, help="show one session's messages in stored order")
    show.add_argument("target", type=arguments.target, metavar="TARGET")
    show.add_argument("session_id", metavar="SESSION_ID")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.add_argument("--limit", type=arguments.count, metavar="N", help="only the most recent N messages")
    show.add_argument(
        "--branch", metavar="BRANCH_ID",
        help="the branch to show (AdvancedSQLiteSession stores; default main)",
    )
    add_store_options(show)


def _add_branches(sub: Subparsers, name: str) -> None:
    branches = _command(sub, name, "list the branches of one session of an AdvancedSQLiteSession store")
    branches.add_argument("target", type=arguments.target, metavar="TARGET", help="a SQLite file")
    branches.add_argument("session_id", metavar="SESSION_ID")
    branches.add_argument("--json", action="store_true", help="print JSON")
    branches.add_argument(
        "--usage", action="store_true",
        help="add token usage per branch and per turn (from turn_usage)",
    )
    add_store_options(branches)


def _add_branch(sub: Subparsers, name: str) -> None:
    branch = _command(sub, name, "fork a session: a new session with its messages up to and including one")
    branch.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP)
    branch.add_argument("session_id", metavar="SESSION_ID")
    branch.add_argument("--at", type=arguments.message_id, required=True, metavar="MESSAGE_ID",
                        help="the last message the fork includes (its id, as `show` prints)")
    branch.add_argument("--name", metavar="NEW_ID", help="the new session's id (default: SESSION_ID-fork, …)")
    add_store_options(branch)


def _add_diff(sub: Subparsers, name: str) -> None:
    diff = _command(
        sub, name, "compare two sessions turn by turn",
        " (exit 0 when they are the same, 1 when they differ).",
    )
    diff.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP)
    diff.add_argument("a", metavar="A", help="a session id")
    diff.add_argument("b", metavar="B", help="another session id")
    diff.add_argument("--json", action="store_true", help="print JSON")
    diff.add_argument("--branch-a", metavar="BRANCH", help="A's branch (AdvancedSQLiteSession stores)")
    diff.add_argument("--branch-b", metavar="BRANCH", help="B's branch (A and B may be one session)")
    add_store_options(diff)


_EDIT_HELP = {
    "clear": "remove every message of one session (one transaction)",
    "rm": "delete one session and all its messages (one transaction)",
}


def _add_edit(sub: Subparsers, name: str) -> None:
    edit = _command(sub, name, _EDIT_HELP[name])
    edit.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP)
    edit.add_argument("session_id", metavar="SESSION_ID")
    edit.add_argument("--yes", action="store_true", help="do it without asking")
    add_store_options(edit)


def _add_export(sub: Subparsers, name: str) -> None:
    # Imported here: the writers' module is only for export (``ls`` need not load it).
    from fluxgui.core.export import EXPORT_FORMATS

    text = "write sessions (all, or the ones named) to a JSON, JSONL, Markdown or HTML file"
    export = _command(sub, name, text, ". The file appears complete or not at all.")
    export.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP)
    export.add_argument("session_ids", nargs="*", metavar="SESSION_ID", help="only these sessions (default: all)")
    export.add_argument("-o", "--output", required=True, metavar="PATH", help="the file to write ('-': standard output)")
    export.add_argument(
        "--format", dest="export_format", choices=EXPORT_FORMATS,
        help="json (round-trips), jsonl (one message a line, round-trips), md (a readable "
        "transcript) or html (one self-contained page); default: from PATH's suffix",
    )
    export.add_argument("--no-metadata", action="store_true", help="leave the messages' metadata out")
    export.add_argument(
        "--force", action="store_true",
        help="replace PATH even when it holds a session store (never the store being read)",
    )
    add_store_options(export, format_flag="--store-format")


def _add_import(sub: Subparsers, name: str) -> None:
    text = "import JSON/JSONL exports and HelloAgent session files as new sessions"
    imp = _command(
        sub, name, text,
        " (one transaction per session; a corrupt file or a session id the store has "
        "already stops it before anything is written).",
    )
    imp.add_argument("target", type=arguments.target, metavar="TARGET", help=WRITE_TARGET_HELP)
    imp.add_argument("files", nargs="+", metavar="FILE")
    imp.add_argument("--rename", action="store_true", help="import a session whose id is taken as <id>-2, <id>-3, …")
    imp.add_argument(
        "--format", choices=("flux", "agents", "json"),
        help="the format of a new store (default: agents when the files hold Agents SDK "
        "items, else flux; json: a JSON session folder, also when TARGET ends with '/'), "
        "or which one to write when a database holds both",
    )
    add_store_options(imp, format_flag=None)


def _add_copy(sub: Subparsers, name: str) -> None:
    text = "copy sessions (all, or the ones named) into another store, converting the format"
    copy = _command(sub, name, text, " (one transaction per session).")
    copy.add_argument("source", type=arguments.target, metavar="SOURCE", help=TARGET_HELP)
    copy.add_argument("dest", type=arguments.target, metavar="DEST", help=WRITE_TARGET_HELP)
    copy.add_argument("session_ids", nargs="*", metavar="SESSION_ID", help="only these sessions (default: all)")
    copy.add_argument("--rename", action="store_true", help="copy a session whose id is taken in DEST as <id>-2, <id>-3, …")
    copy.add_argument(
        "--format", choices=("flux", "agents", "json"),
        help="the format of DEST when it is made (default: SOURCE's; json: a JSON session "
        "folder, also when DEST ends with '/'), or which one to write when it holds both",
    )
    copy.add_argument(
        "--source-format", choices=("flux", "agents"),
        help="which format to read from SOURCE when it holds both",
    )
    add_store_options(copy, whose="SOURCE", format_flag=None)
    add_store_options(copy, prefix="dest-", whose="DEST", format_flag=None)


def _add_chat(sub: Subparsers, name: str) -> None:
    chat = _command(
        sub, name, "send a message to an agent with a session's history and save the turn",
        ". The reply streams to standard output; the user's message and the reply are "
        "saved once the reply is complete (nothing on an error). The openai provider reads "
        "its key from OPENAI_API_KEY.",
    )
    chat.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP + " (opened writable)")
    chat.add_argument("session_id", metavar="SESSION_ID")
    chat.add_argument("--message", "-m", required=True, metavar="TEXT", help="what the user says")
    chat.add_argument(
        "--provider", choices=("offline", "openai", "ollama"), default="offline",
        help="offline (built in, no network; the default), openai (any OpenAI-compatible "
        "endpoint) or ollama",
    )
    chat.add_argument("--base-url", metavar="URL", help="the endpoint: …/v1 for openai, http://HOST:11434 for ollama")
    chat.add_argument("--model", metavar="NAME", help="the model name (default: gpt-4o-mini for openai, llama3.2 for ollama)")
    chat.add_argument("--instructions", metavar="TEXT", default="", help="the agent's system prompt")
    chat.add_argument("--temperature", type=arguments.temperature, default=0.7, metavar="T", help="sampling temperature, 0 to 2 (default 0.7)")
    chat.add_argument("--timeout", type=arguments.seconds, default=60.0, metavar="SECONDS", help="how long to wait for the server (default 60)")
    chat.add_argument("--copy", action="store_true", help="chat on a fork of the session (made at its last message); the original stays as it is")
    add_store_options(chat)


# -- the session doctor (issue 18): check, repair, rewind, preflight, ledger ---------

_CODES_HELP = (
    "orphan_call, orphan_output, dangling_reasoning, empty_reasoning, duplicate_id, "
    "malformed_item (comma-separated), or all"
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


def _add_check(sub: Subparsers, name: str) -> None:
    check = _command(
        sub, name, "find what breaks resuming sessions: orphan calls and outputs, dangling or "
        "empty reasoning, duplicate ids, malformed rows, broken AdvancedSQLiteSession structure",
        " (exit 0 when clean, 1 when any problem is found, 3 on error).",
    )
    check.epilog = "examples:\n  fluxgui check sessions.db\n  fluxgui check sessions.db conv-1 --limit 20 --json"
    check.formatter_class = argparse.RawDescriptionHelpFormatter
    check.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP)
    check.add_argument("session_ids", nargs="*", metavar="SESSION_ID", help="only these sessions (default: all)")
    check.add_argument(
        "--limit", type=arguments.count, metavar="N",
        help="also check the history SessionSettings(limit=N) keeps (limit_split)",
    )
    check.add_argument("--json", action="store_true", help="print JSON")
    add_store_options(check)


def _add_repair(sub: Subparsers, name: str) -> None:
    repair = _command(
        sub, name, "fix one session's problems in one transaction",
        ": prints the session before and after, then writes (undoable in the window).",
    )
    repair.epilog = (
        "examples:\n  fluxgui repair sessions.db conv-1 --fix all --dry-run\n"
        "  fluxgui repair sessions.db conv-1 --fix orphan_call,dangling_reasoning --yes"
    )
    repair.formatter_class = argparse.RawDescriptionHelpFormatter
    repair.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP + " (opened writable)")
    repair.add_argument("session_id", metavar="SESSION_ID")
    repair.add_argument("--fix", type=_fixes, required=True, metavar="CODE[,CODE…]|all", help=_CODES_HELP)
    repair.add_argument(
        "--cancel-text", metavar="TEXT",
        help="what the output that completes an orphan call says (default: the call was cancelled)",
    )
    repair.add_argument(
        "--drop-calls", action="store_true",
        help="drop orphan calls instead of completing them with a cancelled output",
    )
    repair.add_argument("--dry-run", action="store_true", help="print the change and write nothing")
    repair.add_argument("--yes", action="store_true", help="write without asking")
    add_store_options(repair)


def _add_rewind(sub: Subparsers, name: str) -> None:
    rewind = _command(
        sub, name, "remove whole turns at the end of one session (a turn: a user message and "
        "everything up to the next)", " — never half a turn; one transaction.",
    )
    rewind.epilog = "examples:\n  fluxgui rewind sessions.db conv-1 --last --yes\n  fluxgui rewind sessions.db conv-1 --to-turn 3 --yes"
    rewind.formatter_class = argparse.RawDescriptionHelpFormatter
    rewind.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP + " (opened writable)")
    rewind.add_argument("session_id", metavar="SESSION_ID")
    which = rewind.add_mutually_exclusive_group(required=True)
    which.add_argument("--to-turn", type=arguments.count, metavar="N", help="keep turns up to N, remove the rest")
    which.add_argument("--last", action="store_true", help="remove the last turn")
    rewind.add_argument("--yes", action="store_true", help="write without asking")
    add_store_options(rewind)


def _add_preflight(sub: Subparsers, name: str) -> None:
    pre = _command(
        sub, name, "show what resuming a session would send the model",
        ": the input the Agents SDK builds (flux's Runner for flux stores), estimated tokens "
        "(o200k_base, offline) and the problems that would fail the request (exit 1).",
    )
    pre.epilog = "examples:\n  fluxgui preflight sessions.db conv-1\n  fluxgui preflight sessions.db conv-1 --limit 20 --json"
    pre.formatter_class = argparse.RawDescriptionHelpFormatter
    pre.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP)
    pre.add_argument("session_id", metavar="SESSION_ID")
    pre.add_argument("--limit", type=arguments.count, metavar="N", help="as with SessionSettings(limit=N)")
    pre.add_argument("--json", action="store_true", help="print JSON")
    add_store_options(pre)


def _add_ledger(sub: Subparsers, name: str) -> None:
    led = _command(
        sub, name, "tokens, cost and time of one session, turn by turn",
        ": recorded usage where the store has it (turn_usage, metadata.usage), estimates "
        "otherwise; prices from an offline table when the model is known.",
    )
    led.epilog = "examples:\n  fluxgui ledger sessions.db conv-1\n  fluxgui ledger sessions.db conv-1 --model gpt-4o --json"
    led.formatter_class = argparse.RawDescriptionHelpFormatter
    led.add_argument("target", type=arguments.target, metavar="TARGET", help=TARGET_HELP)
    led.add_argument("session_id", metavar="SESSION_ID")
    led.add_argument("--model", metavar="NAME", help="the model to price with when the messages do not name one")
    led.add_argument("--json", action="store_true", help="print JSON")
    add_store_options(led)


#: each command's subparser, in the order ``--help`` lists them
_ADD: dict[str, Callable[[Subparsers, str], None]] = {
    "ls": _add_ls, "show": _add_show, "branches": _add_branches, "branch": _add_branch,
    "diff": _add_diff, "clear": _add_edit, "rm": _add_edit, "export": _add_export,
    "import": _add_import, "copy": _add_copy, "chat": _add_chat,
    "check": _add_check, "repair": _add_repair, "rewind": _add_rewind,
    "preflight": _add_preflight, "ledger": _add_ledger,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The commands' parser: with ``command``, only that command's subparser (its
    ``-h``, usage and errors are the same either way)."""
    parser = argparse.ArgumentParser(
        prog="fluxgui",
        description="Browse the conversation histories AI agents keep in session stores.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in _ADD.items():
        if command is None or name == command:
            add(sub, name)
    return parser


def build_window_parser() -> argparse.ArgumentParser:
    """The parser of ``fluxgui [TARGET] …`` (no command: open the window)."""
    parser = argparse.ArgumentParser(
        prog="fluxgui",
        description="Open the fluxgui window (commands: " + ", ".join(COMMANDS) + "; see 'fluxgui ls -h').",
    )
    parser.add_argument("target", nargs="?", type=arguments.target, metavar="TARGET", help=TARGET_HELP + " (default: the demo store)")
    parser.add_argument("--session", metavar="ID", help="open this session")
    parser.add_argument("--writable", action="store_true", help="open the store for editing (default: read-only)")
    parser.add_argument("--screenshot", metavar="FILE.png", help="render the window offscreen to a PNG and exit")
    add_store_options(parser)
    return parser


def overview() -> str:
    """What ``fluxgui --help`` adds after the window's options: the commands."""
    lines = [f"  {name}{' ' * max(2, 8 - len(name))}{text}" for name, text in COMMANDS.items()]
    return "\ncommands:\n" + "\n".join(lines) + "\n\n'fluxgui COMMAND -h' shows a command's options.\n"
