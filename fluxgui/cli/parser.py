"""The argument parsers: one subparser per command, and the window's parser.

``build_parser(command)`` builds only that command's subparser (what ``main`` runs), so
that a command's start-up loads nothing another command needs (``ls`` does not load the
export writers for ``export``'s ``--file-format`` choices); ``build_parser()`` builds
them all. The store options come from the adapters' declarations
(:mod:`fluxgui.cli.stores`). Every command has a description, help on each argument and
examples (its epilog); ``tests/cli/test_help.py`` keeps the README's synopses in step.

Flags say what they name: ``--store-format`` is always the format of a store (the one
read, or for ``import`` the one written), ``--file-format`` the format of an export file.
The spellings of the previous release (``--format``, ``copy --source-format``) still
work, hidden from the help, for one release.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from . import arguments
from .arguments import Parser
from .redact_args import add_redact_options
from .stores import READ_FORMATS, STORE_FORMATS, add_store_options
from .workspace_args import add_workspace_options, targets_positional

TARGET_HELP = arguments.TARGET_HELP
WRITE_TARGET_HELP = (
    "a SQLite file (made when it does not exist), a JSON session folder, a SQLAlchemy URL, "
    "redis://… or openai-conversations:"
)
SESSION_HELP = "a session id, as 'ls' prints it"

#: every command, with the line ``fluxgui --help`` shows for it
COMMANDS: dict[str, str] = {
    "ls": "list sessions, most recently active first",
    "show": "show one session's messages in stored order",
    "search": "find the messages holding a text (session, message id, role, snippet)",
    "index": "build or update a store's local search index",
    "branches": "list an AdvancedSQLiteSession session's branches",
    "branch": "fork a session at a message",
    "diff": "compare two sessions turn by turn",
    "clear": "remove every message of one session",
    "rm": "delete one session",
    "export": "write sessions to a JSON, JSONL, Markdown or HTML file, or an eval dataset",
    "import": "import exports and session files as new sessions",
    "copy": "copy sessions into another store, converting the format",
    "chat": "send a message to an agent with a session's history",
    "check": "find what breaks resuming sessions (exit 1 when any problem is found)",
    "merge": "consolidate the sessions of several stores into one (split sessions merged)",
    "repair": "fix one session's problems in one transaction",
    "rewind": "remove whole turns at the end of one session",
    "preflight": "show what resuming a session would send the model",
    "ledger": "tokens, cost and time of one session, turn by turn",
    "review": "review conversations: states, scores, tags, notes, a shared queue",
    "replay": "replay a session from turn N with another model, tools answered from the record",
    "scan": "list the secrets and personal data in sessions, masked (exit 1 when any)",
}

#: a subparsers action (argparse has no public name for its type)
Subparsers = Any


def _command(
    sub: Subparsers, name: str, description: str, examples: list[str]
) -> argparse.ArgumentParser:
    """A command's parser: ``COMMANDS[name]`` is its line in ``fluxgui --help``,
    ``description`` its ``-h`` text, ``examples`` (command lines) its epilog."""
    epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
    return sub.add_parser(
        name, help=COMMANDS[name], description=description, epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _target(parser: argparse.ArgumentParser, text: str = TARGET_HELP) -> None:
    parser.add_argument("target", type=arguments.target, metavar="TARGET", help=text)


def _session(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session_id", metavar="SESSION_ID", help=SESSION_HELP)


def _json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _hidden(parser: argparse.ArgumentParser, flag: str, dest: str, choices: tuple[str, ...]) -> None:
    """An old spelling kept working for one release, left out of the help."""
    parser.add_argument(flag, dest=dest, choices=choices, help=argparse.SUPPRESS)


def _add_ls(sub: Subparsers, name: str) -> None:
    ls = _command(
        sub, name,
        "List the sessions of a store, most recently active first: message count, last "
        "activity and id. Several stores: one row per session id with the stores holding "
        "it (the Store column).",
        ["fluxgui ls demo", "fluxgui ls sessions.db --search refund --json",
         "fluxgui ls postgresql://me@db.example/agents --limit 0",
         "fluxgui ls a/conversations.db b/conversations.db c/conversations.db"],
    )
    targets_positional(ls)
    _json(ls)
    ls.add_argument("--search", metavar="TEXT", help="only sessions whose id or any message contains TEXT (case-insensitive)")
    ls.add_argument("--limit", type=arguments.count, default=50, metavar="N", help="at most N sessions (0: all; default 50)")
    add_workspace_options(ls, save=True)
    add_store_options(ls)


def _add_show(sub: Subparsers, name: str) -> None:
    show = _command(
        sub, name,
        "Show one session's messages in stored order: id, time, role, kind and text "
        "(control characters as visible markers; --json is exact). Several stores: the "
        "merged timeline, each message with its store.",
        ["fluxgui show demo support-48213-double-charge",
         "fluxgui show sessions.db conv-42 --limit 10 --json",
         "fluxgui show a/conversations.db b/conversations.db user_123"],
    )
    targets_positional(show)
    _session(show)
    _json(show)
    show.add_argument("--limit", type=arguments.count, metavar="N", help="only the most recent N messages")
    show.add_argument(
        "--branch", metavar="BRANCH_ID",
        help="the branch to show (AdvancedSQLiteSession stores; default main)",
    )
    add_workspace_options(show)
    add_redact_options(show)
    add_store_options(show)


def _add_branches(sub: Subparsers, name: str) -> None:
    branches = _command(
        sub, name,
        "List the branches of one session of an AdvancedSQLiteSession store, as the "
        "library's list_branches() does.",
        ["fluxgui branches advanced.db conv-7 --usage"],
    )
    _target(branches, "a SQLite file written by AdvancedSQLiteSession")
    _session(branches)
    _json(branches)
    branches.add_argument(
        "--usage", action="store_true",
        help="add token usage per branch and per turn (from turn_usage)",
    )
    add_store_options(branches)


def _add_branch(sub: Subparsers, name: str) -> None:
    branch = _command(
        sub, name,
        "Fork a session: a new session holding its messages up to and including one (the "
        "original is not changed).",
        ["fluxgui branch sessions.db conv-42 --at 17 --name conv-42-retry"],
    )
    _target(branch)
    _session(branch)
    branch.add_argument("--at", type=arguments.message_id, required=True, metavar="MESSAGE_ID",
                        help="the last message the fork includes (its id, as `show` prints)")
    branch.add_argument("--name", metavar="NEW_ID", help="the new session's id (default: SESSION_ID-fork, …)")
    branch.add_argument("--drop-unreadable", action="store_true",
                        help="leave out the encrypted items no key given opens (they would never open in the fork)")
    add_store_options(branch)


def _add_diff(sub: Subparsers, name: str) -> None:
    diff = _command(
        sub, name,
        "Compare two sessions (or two branches of one) turn by turn; exit 0 when they are "
        "the same, 1 when they differ.",
        ["fluxgui diff sessions.db conv-42 conv-42-fork",
         "fluxgui diff advanced.db conv-7 conv-7 --branch-b retry --json"],
    )
    _target(diff)
    diff.add_argument("a", metavar="A", help="a session id")
    diff.add_argument("b", metavar="B", help="another session id (or A again, with branches)")
    _json(diff)
    diff.add_argument("--branch-a", metavar="BRANCH", help="A's branch (AdvancedSQLiteSession stores)")
    diff.add_argument("--branch-b", metavar="BRANCH", help="B's branch (A and B may be one session)")
    add_store_options(diff)


_EDIT_TEXT = {
    "clear": "Remove every message of one session, in one transaction (a JSON session file "
    "is kept with an empty history).",
    "rm": "Delete one session and all its messages, in one transaction.",
}


def _add_edit(sub: Subparsers, name: str) -> None:
    edit = _command(sub, name, _EDIT_TEXT[name], [f"fluxgui {name} sessions.db conv-42 --yes"])
    _target(edit)
    _session(edit)
    edit.add_argument("--yes", action="store_true", help="do it without asking (needed when there is no terminal)")
    add_store_options(edit)


def _add_export(sub: Subparsers, name: str) -> None:
    # Imported here: the writers' module is only for export (``ls`` need not load it).
    from fluxgui.core.export import EXPORT_FORMATS

    from .review_parser import add_export_review_options

    export = _command(
        sub, name,
        "Write sessions (all, or the ones named) to a JSON, JSONL, Markdown or HTML file. "
        "The file appears complete or not at all; the store being read is never written.",
        ["fluxgui export demo -o demo.json",
         "fluxgui export sessions.db conv-42 -o conv-42.html",
         "fluxgui export sessions.db -o - --file-format jsonl | jq .role",
         "fluxgui export sessions.db --eval openai -o ft.jsonl --review-state reviewed --min-score tone=4"],
    )
    _target(export)
    export.add_argument("session_ids", nargs="*", metavar="SESSION_ID", help="only these sessions (default: all)")
    export.add_argument("-o", "--output", required=True, metavar="PATH", help="the file to write ('-': standard output)")
    export.add_argument(
        "--file-format", dest="export_format", choices=EXPORT_FORMATS,
        help="json (round-trips), jsonl (one message a line, round-trips), md (a readable "
        "transcript) or html (one self-contained page); default: from PATH's suffix",
    )
    _hidden(export, "--format", "export_format", EXPORT_FORMATS)
    export.add_argument("--no-metadata", action="store_true", help="leave the messages' metadata out")
    export.add_argument(
        "--force", action="store_true",
        help="replace PATH even when it holds a session store (never the store being read)",
    )
    add_store_options(export, legacy_format=False)
    add_export_review_options(export)
    from .replay_args import add_eval_options

    add_eval_options(export)
    add_redact_options(export)


def _add_import(sub: Subparsers, name: str) -> None:
    imp = _command(
        sub, name,
        "Import fluxgui JSON/JSONL exports and HelloAgent session files as new sessions, "
        "one transaction per session; a corrupt file or a session id the store has already "
        "stops it before anything is written.",
        ["fluxgui import restored.db demo.json",
         "fluxgui import sessions/ exported.jsonl --rename"],
    )
    _target(imp, WRITE_TARGET_HELP)
    imp.add_argument("files", nargs="+", metavar="FILE", help="fluxgui exports (.json, .jsonl) or HelloAgent session files")
    imp.add_argument("--rename", action="store_true", help="import a session whose id is taken as <id>-2, <id>-3, …")
    imp.add_argument("--drop-unreadable", action="store_true",
                     help="leave out encrypted items still sealed in a session imported under a new id (they would never open there)")
    imp.add_argument(
        "--store-format", dest="format", choices=STORE_FORMATS,
        help="the format of a new store (default: agents when the files hold Agents SDK "
        "items, else flux; json: a JSON session folder, also when TARGET ends with '/'), "
        "or which one to write when a database holds both",
    )
    _hidden(imp, "--format", "format", STORE_FORMATS)
    add_store_options(imp, format_flag=None)


def _add_copy(sub: Subparsers, name: str) -> None:
    copy = _command(
        sub, name,
        "Copy sessions (all, or the ones named) into another store, converting the format; "
        "one transaction per session. Options without 'dest-' are SOURCE's.",
        ["fluxgui copy sessions.db postgresql://me@db.example/agents",
         "fluxgui copy demo backup/ --dest-store-format json"],
    )
    copy.add_argument("source", type=arguments.target, metavar="SOURCE", help=TARGET_HELP)
    copy.add_argument("dest", type=arguments.target, metavar="DEST", help=WRITE_TARGET_HELP)
    copy.add_argument("session_ids", nargs="*", metavar="SESSION_ID", help="only these sessions (default: all)")
    copy.add_argument("--rename", action="store_true", help="copy a session whose id is taken in DEST as <id>-2, <id>-3, …")
    copy.add_argument("--drop-unreadable", action="store_true",
                      help="leave out encrypted items no key opens in a session copied under a new id (they would never open there)")
    copy.add_argument(
        "--dest-store-format", dest="dest_format", choices=STORE_FORMATS,
        help="the format of DEST when it is made (default: SOURCE's; json: a JSON session "
        "folder, also when DEST ends with '/'), or which one to write when it holds both",
    )
    _hidden(copy, "--format", "dest_format", STORE_FORMATS)
    _hidden(copy, "--source-format", "format", STORE_FORMATS[:2])
    add_redact_options(copy)
    add_store_options(copy, whose="SOURCE", legacy_format=False)
    add_store_options(copy, prefix="dest-", whose="DEST", format_flag=None)


def _add_chat(sub: Subparsers, name: str) -> None:
    chat = _command(
        sub, name,
        "Send a message to an agent with a session's history and save the turn. The reply "
        "streams to standard output; the user's message and the reply are saved once the "
        "reply is complete (nothing on an error). The openai provider reads its key from "
        "OPENAI_API_KEY.",
        ["fluxgui chat sessions.db conv-42 -m 'Where is my refund?'",
         "fluxgui chat sessions.db new-conv --new -m hello --provider openai "
         "--base-url http://127.0.0.1:8000/v1"],
    )
    _target(chat, TARGET_HELP + " (opened writable)")
    _session(chat)
    chat.add_argument("--message", "-m", required=True, metavar="TEXT", help="what the user says")
    chat.add_argument("--new", action="store_true", help="start SESSION_ID as a new session (without it, an unknown id is an error)")
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
    # --base-url is the provider's here: a Conversations store's is --store-base-url.
    add_store_options(chat, taken=("--base-url",))


# The search's, the doctor's and the review's parsers are in modules of their own, loaded
# for them.
def _search(sub: Subparsers, name: str) -> None:
    from . import search_args

    getattr(search_args, f"add_{name}")(sub, name, _command)


def _doctor(sub: Subparsers, name: str) -> None:
    from . import doctor_args

    getattr(doctor_args, f"add_{name}")(sub, name, _command)


def _merge(sub: Subparsers, name: str) -> None:
    from .workspace_args import add_merge

    add_merge(sub, name, _command)
    add_redact_options(sub.choices[name])


def _review(sub: Subparsers, name: str) -> None:
    from .review_parser import add_review

    add_review(sub, name, _command)


def _replay(sub: Subparsers, name: str) -> None:
    from .replay_args import add_replay

    add_replay(sub, name, _command)


def _scan(sub: Subparsers, name: str) -> None:
    from .redact_args import add_scan

    add_scan(sub, name, _command, TARGET_HELP)


#: each command's subparser, in the order ``--help`` lists them
_ADD: dict[str, Callable[[Subparsers, str], None]] = {
    "ls": _add_ls, "show": _add_show, "search": _search, "index": _search,
    "branches": _add_branches, "branch": _add_branch,
    "diff": _add_diff, "clear": _add_edit, "rm": _add_edit, "export": _add_export,
    "import": _add_import, "copy": _add_copy, "chat": _add_chat,
    "check": _doctor, "merge": _merge, "repair": _doctor, "rewind": _doctor, "preflight": _doctor,
    "ledger": _doctor, "review": _review, "replay": _replay, "scan": _scan,
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The commands' parser: with ``command``, only that command's subparser (its
    ``-h``, usage and errors are the same either way)."""
    parser = Parser(
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
    from .review_parser import add_window_review_options

    parser = Parser(
        prog="fluxgui",
        description="Open the fluxgui window on a session store (the demo store when no "
        "TARGET is given), or run one of the commands below.",
    )
    parser.add_argument("target", nargs="*", type=arguments.target, metavar="TARGET", help=TARGET_HELP + " (default: the last store, else the demo store); several: a workspace of them")
    parser.add_argument("--workspace", metavar="FILE", help="open the stores of this workspace file (File › Save Workspace…)")
    parser.add_argument("--session", metavar="ID", help="open this session")
    parser.add_argument("--writable", action="store_true", help="open the store for editing (default: read-only)")
    parser.add_argument("--screenshot", metavar="FILE.png", help="render the window offscreen to a PNG and exit")
    add_redact_options(parser, window=True)
    add_window_review_options(parser)
    parser.add_argument("-V", "--version", action="store_true", help="print fluxgui's version and exit")
    add_store_options(parser)
    return parser


def overview() -> str:
    """What ``fluxgui --help`` adds after the window's options: the commands, aligned."""
    width = max(len(name) for name in COMMANDS) + 2
    lines = [f"  {name.ljust(width)}{text}" for name, text in COMMANDS.items()]
    return (
        "\ncommands:\n" + "\n".join(lines)
        + "\n\n'fluxgui COMMAND -h' shows a command's options and examples.\n"
    )


def _usage_part(action: argparse.Action) -> str:
    if action.option_strings:
        flag = action.option_strings[0]
        if action.nargs == 0:
            text = flag
        else:
            value = "|".join(action.choices) if action.choices else action.metavar or action.dest.upper()
            text = f"{flag} {value}"
        return text if action.required else f"[{text}]"
    name = str(action.metavar)
    if action.nargs == "*":
        return f"[{name}…]"
    if action.nargs == "+":
        return f"{name}…"
    if action.nargs == "?":
        return f"[{name}]"
    return name


def synopsis(command: str | None) -> str:
    """The command's one-line synopsis as the README writes it: positionals, then the
    command's own options (the store options every command shares left out; ``None``:
    the window)."""
    if command is None:
        parser = build_window_parser()
    else:
        [sub] = [a for a in build_parser(command)._actions if isinstance(a, argparse._SubParsersAction)]
        parser = sub.choices[command]
        if command == "review":  # one line per action
            from .review_parser import nested_synopses

            return "\n".join(nested_synopses(parser, command, _usage_part))
    shared = {"-h", "--help", "-V", "--version"}
    positionals: list[str] = []
    options: list[str] = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or getattr(action, "store_option", False):
            continue
        if shared & set(action.option_strings):
            continue
        if "--store-format" in action.option_strings and tuple(action.choices or ()) == READ_FORMATS:
            continue  # the choice of format to read, shared too
        (options if action.option_strings else positionals).append(_usage_part(action))
    return " ".join(["fluxgui"] + ([command] if command else []) + positionals + options)
