"""Headless commands over the services, and the window when no command is given.

    fluxgui [TARGET] [--session ID] [--writable] [--screenshot FILE.png]   open the window
    fluxgui ls TARGET [--json] [--search TEXT] [--limit N]      list sessions
    fluxgui show TARGET SESSION_ID [--json] [--limit N] [--branch B]   show one session
    fluxgui branches TARGET SESSION_ID [--json] [--usage]       an AdvancedSQLiteSession's branches
    fluxgui branch TARGET SESSION_ID --at MESSAGE_ID [--name NEW_ID]   fork a session
    fluxgui diff TARGET A B [--json] [--branch-a X] [--branch-b Y]   compare two sessions or branches
    fluxgui clear TARGET SESSION_ID --yes                       remove a session's messages
    fluxgui rm TARGET SESSION_ID --yes                          delete a session
    fluxgui export TARGET [SESSION_ID…] -o PATH [--format json|jsonl|md|html] [--no-metadata] [--force]
    fluxgui import TARGET FILE… [--format flux|agents] [--rename]
    fluxgui copy SOURCE DEST [SESSION_ID…] [--format flux|agents] [--rename]
    fluxgui chat TARGET SESSION_ID --message TEXT [--provider offline|openai|ollama]
                 [--base-url URL] [--model NAME] [--copy]     test-chat with a session

``show`` reads the ``main`` branch of an AdvancedSQLiteSession store unless ``--branch``
names another; ``branches`` lists a session's branches as the library's
``list_branches()`` does (``--usage`` adds token usage per branch and per turn).

``export`` writes one file (format from ``--format`` or PATH's suffix), complete or not
at all; ``-o -`` writes to standard output. ``import`` reads fluxgui's JSON/JSONL exports
and HelloAgent JSON session files; ``import`` and ``copy`` write new sessions, one
transaction each, and make a new SQLite store when the target path does not exist
(``--format`` says which; default: the Agents SDK format for items, else flux).

``chat`` streams the agent's reply to standard output as it arrives and then saves the
user's message and the reply in the session (with ``--copy``: in a fork of it, the
original untouched); on a provider error nothing is saved. The OpenAI provider takes its
key from ``OPENAI_API_KEY``.

``diff`` exits 0 when the sessions are the same and 1 when they differ.
A known error prints one line on stderr and exits 3; a usage error exits 2 (so does
``clear``/``rm`` without ``--yes`` when there is no terminal to ask on).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from fluxgui.core.errors import FluxguiError, show_id
from fluxgui.core.export import EXPORT_FORMATS
from fluxgui.core.model import Message, message_badges
from fluxgui.core.ports import MAIN
from fluxgui.core.redact import install_log_redaction, redact_text
from fluxgui.core.visible import visible

#: where the command line looks for the EncryptedSession key when --key is not given
KEY_ENV = "FLUXGUI_KEY"
#: the Agents SDK EncryptedSession's default TTL (kept here so --help needs no adapters)
DEFAULT_TTL = 600
TARGET_HELP = "a SQLite file, a JSON session folder, a SQLAlchemy URL or redis://…"
EXIT_KNOWN_ERROR = 3
EXIT_USAGE = 2
EXIT_DECLINED = 1
COMMANDS = (
    "ls", "show", "branches", "branch", "diff", "clear", "rm", "export", "import", "copy", "chat",
)


def _store_options(p: argparse.ArgumentParser, *, format_option: str = "--format") -> None:
    p.add_argument("--sessions-table", help="Agents SDK sessions table name (default agent_sessions)")
    p.add_argument("--messages-table", help="Agents SDK messages table name (default agent_messages)")
    p.add_argument(
        format_option, dest="format", choices=("flux", "agents"),
        help="which format to read when a database holds both",
    )
    _key_options(p)


def _key_options(p: argparse.ArgumentParser, *, prefix: str = "", whose: str = "") -> None:
    """--key/--ttl for EncryptedSession items and --key-prefix for Redis (``prefix``
    "dest-" for a copy's destination)."""
    p.add_argument(
        f"--{prefix}key", metavar="KEY", dest=f"{prefix.replace('-', '_')}key",
        help=f"the EncryptedSession master key{whose} (default: the {KEY_ENV} environment "
        "variable; fluxgui never writes it anywhere)",
    )
    p.add_argument(
        f"--{prefix}ttl", type=_positive, default=DEFAULT_TTL, metavar="SECONDS",
        dest=f"{prefix.replace('-', '_')}ttl",
        help=f"encrypted items older than this show as expired (default {DEFAULT_TTL}, as the SDK)",
    )
    p.add_argument(
        f"--{prefix}key-prefix", metavar="PREFIX", dest=f"{prefix.replace('-', '_')}key_prefix",
        help=f"the Redis key prefix{whose} (default agents:session)",
    )


def _key_args(args: argparse.Namespace, prefix: str = "") -> dict[str, Any]:
    """open_store's ``key``/``ttl``/``key_prefix`` from the command line (``prefix``
    "dest_" for a copy's destination); the key falls back to $FLUXGUI_KEY."""
    key = getattr(args, f"{prefix}key", None)
    if key is None:
        key = os.environ.get(KEY_ENV) or None
    return {
        "key": key,
        "ttl": getattr(args, f"{prefix}ttl", DEFAULT_TTL),
        "key_prefix": getattr(args, f"{prefix}key_prefix", None),
    }


#: the largest count a command takes (--limit, --ttl): what a 32-bit signed int holds
MAX_COUNT = 2**31 - 1
#: the largest message id (SQLite's and Postgres' 64-bit integer)
MAX_ID = 2**63 - 1


def _whole(text: str, top: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    if value > top:
        raise argparse.ArgumentTypeError(f"must be at most {top}")
    return value


def _positive(text: str) -> int:
    """A count: a whole number from 0 to :data:`MAX_COUNT`."""
    return _whole(text, MAX_COUNT)


def _message_id(text: str) -> int:
    """A message id: a whole number from 0 to :data:`MAX_ID`."""
    return _whole(text, MAX_ID)


def _finite(text: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not low <= value <= high:  # (NaN fails both)
        raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}")
    return value


def _temperature(text: str) -> float:
    return _finite(text, 0.0, 2.0)


def _seconds(text: str) -> float:
    value = _finite(text, 0.0, 86400.0)
    if value == 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _target(text: str) -> str:
    """A TARGET: anything but the empty string (which would name the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("TARGET is empty: name a SQLite file, a folder or a URL")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fluxgui",
        description="Browse the conversation histories AI agents keep in session stores.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    ls = sub.add_parser("ls", help="list sessions, most recently active first")
    ls.add_argument("target", type=_target, metavar="TARGET", help=TARGET_HELP)
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.add_argument("--search", metavar="TEXT", help="only sessions whose id or any message contains TEXT")
    ls.add_argument("--limit", type=_positive, default=50, metavar="N", help="at most N sessions (0: all; default 50)")
    _store_options(ls)
    show = sub.add_parser("show", help="show one session's messages in stored order")
    show.add_argument("target", type=_target, metavar="TARGET")
    show.add_argument("session_id", metavar="SESSION_ID")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.add_argument("--limit", type=_positive, metavar="N", help="only the most recent N messages")
    show.add_argument(
        "--branch", metavar="BRANCH_ID",
        help="the branch to show (AdvancedSQLiteSession stores; default main)",
    )
    _store_options(show)
    text = "list the branches of one session of an AdvancedSQLiteSession store"
    branches = sub.add_parser("branches", help=text, description=text[:1].upper() + text[1:] + ".")
    branches.add_argument("target", type=_target, metavar="TARGET", help="a SQLite file")
    branches.add_argument("session_id", metavar="SESSION_ID")
    branches.add_argument("--json", action="store_true", help="print JSON")
    branches.add_argument(
        "--usage", action="store_true",
        help="add token usage per branch and per turn (from turn_usage)",
    )
    _store_options(branches)
    text = "fork a session: a new session with its messages up to and including one"
    branch = sub.add_parser("branch", help=text, description=text[:1].upper() + text[1:] + ".")
    branch.add_argument("target", type=_target, metavar="TARGET", help=TARGET_HELP)
    branch.add_argument("session_id", metavar="SESSION_ID")
    branch.add_argument("--at", type=_message_id, required=True, metavar="MESSAGE_ID",
                        help="the last message the fork includes (its id, as `show` prints)")
    branch.add_argument("--name", metavar="NEW_ID", help="the new session's id (default: SESSION_ID-fork, …)")
    _store_options(branch)
    text = "compare two sessions turn by turn"
    diff = sub.add_parser("diff", help=text, description=text[:1].upper() + text[1:] + " (exit 0 when they are the same, 1 when they differ).")
    diff.add_argument("target", type=_target, metavar="TARGET", help=TARGET_HELP)
    diff.add_argument("a", metavar="A", help="a session id")
    diff.add_argument("b", metavar="B", help="another session id")
    diff.add_argument("--json", action="store_true", help="print JSON")
    diff.add_argument("--branch-a", metavar="BRANCH", help="A's branch (AdvancedSQLiteSession stores)")
    diff.add_argument("--branch-b", metavar="BRANCH", help="B's branch (A and B may be one session)")
    _store_options(diff)
    for name, text in (
        ("clear", "remove every message of one session (one transaction)"),
        ("rm", "delete one session and all its messages (one transaction)"),
    ):
        edit = sub.add_parser(name, help=text, description=text[:1].upper() + text[1:] + ".")
        edit.add_argument("target", type=_target, metavar="TARGET", help=TARGET_HELP)
        edit.add_argument("session_id", metavar="SESSION_ID")
        edit.add_argument("--yes", action="store_true", help="do it without asking")
        _store_options(edit)
    _transfer_parsers(sub)
    _chat_parser(sub)
    return parser


def _chat_parser(sub: Any) -> None:
    text = "send a message to an agent with a session's history and save the turn"
    chat = sub.add_parser(
        "chat", help=text,
        description=text[:1].upper() + text[1:] + ". The reply streams to standard output; "
        "the user's message and the reply are saved once the reply is complete (nothing "
        "on an error). The openai provider reads its key from OPENAI_API_KEY.",
    )
    chat.add_argument("target", type=_target, metavar="TARGET", help="a SQLite file, a JSON session folder, a SQLAlchemy URL or redis://… (opened writable)")
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
    chat.add_argument("--temperature", type=_temperature, default=0.7, metavar="T", help="sampling temperature, 0 to 2 (default 0.7)")
    chat.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS", help="how long to wait for the server (default 60)")
    chat.add_argument("--copy", action="store_true", help="chat on a fork of the session (made at its last message); the original stays as it is")
    _store_options(chat)


def _transfer_parsers(sub: Any) -> None:
    text = "write sessions (all, or the ones named) to a JSON, JSONL, Markdown or HTML file"
    export = sub.add_parser(
        "export", help=text,
        description=text[:1].upper() + text[1:] + ". The file appears complete or not at all.",
    )
    export.add_argument("target", type=_target, metavar="TARGET", help=TARGET_HELP)
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
    _store_options(export, format_option="--store-format")

    text = "import JSON/JSONL exports and HelloAgent session files as new sessions"
    imp = sub.add_parser(
        "import", help=text,
        description=text[:1].upper() + text[1:] + " (one transaction per session; a corrupt "
        "file or a session id the store has already stops it before anything is written).",
    )
    imp.add_argument("target", type=_target, metavar="TARGET", help="a SQLite file (made when it does not exist), a JSON session folder, a SQLAlchemy URL or redis://…")
    imp.add_argument("files", nargs="+", metavar="FILE")
    imp.add_argument("--rename", action="store_true", help="import a session whose id is taken as <id>-2, <id>-3, …")
    imp.add_argument(
        "--format", choices=("flux", "agents", "json"),
        help="the format of a new store (default: agents when the files hold Agents SDK "
        "items, else flux; json: a JSON session folder, also when TARGET ends with '/'), "
        "or which one to write when a database holds both",
    )
    imp.add_argument("--sessions-table", help="Agents SDK sessions table name (default agent_sessions)")
    imp.add_argument("--messages-table", help="Agents SDK messages table name (default agent_messages)")
    _key_options(imp)

    text = "copy sessions (all, or the ones named) into another store, converting the format"
    copy = sub.add_parser("copy", help=text, description=text[:1].upper() + text[1:] + " (one transaction per session).")
    copy.add_argument("source", type=_target, metavar="SOURCE", help=TARGET_HELP)
    copy.add_argument("dest", type=_target, metavar="DEST", help="a SQLite file (made when it does not exist), a JSON session folder, a SQLAlchemy URL or redis://…")
    copy.add_argument("session_ids", nargs="*", metavar="SESSION_ID", help="only these sessions (default: all)")
    copy.add_argument("--rename", action="store_true", help="copy a session whose id is taken in DEST as <id>-2, <id>-3, …")
    copy.add_argument(
        "--format", choices=("flux", "agents", "json"),
        help="the format of DEST when it is made (default: SOURCE's; json: a JSON session "
        "folder, also when DEST ends with '/'), or which one to write when it holds both",
    )
    copy.add_argument("--sessions-table", help="Agents SDK sessions table name of SOURCE (default agent_sessions)")
    copy.add_argument("--messages-table", help="Agents SDK messages table name of SOURCE (default agent_messages)")
    copy.add_argument("--source-format", choices=("flux", "agents"), help="which format to read from SOURCE when it holds both")
    copy.add_argument("--dest-sessions-table", help="Agents SDK sessions table name of DEST (default agent_sessions)")
    copy.add_argument("--dest-messages-table", help="Agents SDK messages table name of DEST (default agent_messages)")
    _key_options(copy, whose=" of SOURCE")
    _key_options(copy, prefix="dest-", whose=" of DEST")


def build_window_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fluxgui",
        description="Open the fluxgui window (commands: " + ", ".join(COMMANDS) + "; see 'fluxgui ls -h').",
    )
    parser.add_argument("target", nargs="?", type=_target, metavar="TARGET", help="a SQLite file, a JSON session folder, a SQLAlchemy URL or redis://… (default: the demo store)")
    parser.add_argument("--session", metavar="ID", help="open this session")
    parser.add_argument("--writable", action="store_true", help="open the store for editing (default: read-only)")
    parser.add_argument("--screenshot", metavar="FILE.png", help="render the window offscreen to a PNG and exit")
    _store_options(parser)
    return parser


# --------------------------------------------------------------------------- output


#: characters --json escapes although JSON allows them raw: C1 controls (a terminal may
#: obey U+009B as CSI), DEL, line/paragraph separators and bidi controls. The value the
#: JSON holds is unchanged.
_JSON_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON that is safe to print: exact, non-ASCII kept readable, with
    the characters of :data:`_JSON_ESCAPE` as ``\\uXXXX`` escapes."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _JSON_ESCAPE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def _print_json(out: TextIO, value: Any) -> None:
    out.write(_json_text(value, indent=2))
    out.write("\n")


def _write_json_stream(out: TextIO, head: dict[str, Any], pages: Any) -> Any:
    """Write ``{head…, "messages": [...]}`` while the pages stream in (bounded memory)."""

    async def run() -> None:
        text = _json_text(head)
        out.write(text[:-1] + ', "messages": [')
        first = True
        async for page in pages:
            for m in page:
                out.write(("\n  " if first else ",\n  ") + _json_text(m.to_dict()))
                first = False
        out.write("\n]}\n" if not first else "]}\n")

    return run()


def _one_line(text: str, width: int = 200) -> str:
    """``text`` on one line for a terminal: hidden characters (controls, bidi, zero-width)
    as visible markers, runs of white space as one space, at most ``width`` characters."""
    flat = " ".join(visible(text, keep_layout=False).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _print_message(out: TextIO, m: Message) -> None:
    kind = "" if m.kind == "message" else f" [{_one_line(m.kind, 40)}]"
    badges = "".join(f" [{b}]" for b in message_badges(m))
    out.write(f"#{m.id} {_one_line(m.created_at or '-', 60)} {_one_line(m.role, 60)}{kind}{badges}\n")
    for line in visible(m.text or "").split("\n"):
        out.write(f"    {line}\n")


# --------------------------------------------------------------------------- commands


async def _open(args: argparse.Namespace, *, writable: bool = False) -> Any:
    from fluxgui.adapters import open_store

    store = await open_store(
        args.target,
        writable=writable,
        format=args.format,
        sessions_table=args.sessions_table,
        messages_table=args.messages_table,
        **_key_args(args),
    )
    _warn_about(store)
    return store


def _warn_about(store: Any) -> None:
    """One line on stderr for each file of a folder that could not be read, and when the
    store's items are encrypted but no key was given."""
    for problem in store.problems:
        print(f"fluxgui: skipped {_one_line(str(problem), 400)}", file=sys.stderr)
    if store.needs_key and not store.has_key:
        print(
            f"fluxgui: {store.target} holds encrypted items: give the key with --key or "
            f"{KEY_ENV} to read them",
            file=sys.stderr,
        )


async def cmd_ls(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.browse import list_sessions

    store = await _open(args)
    try:
        listing = await list_sessions(store, limit=args.limit or None, search=args.search)
    finally:
        await store.close()
    if args.json:
        _print_json(out, listing.to_dict())
        return 0
    out.write(f"{'MESSAGES':>8}  {'LAST ACTIVE':<25}  SESSION\n")
    for s in listing.sessions:
        out.write(f"{s.messages:>8}  {_one_line(s.updated_at or '-', 60):<25}  {_one_line(s.id, 120)}\n")
    out.write(f"({len(listing.sessions)} sessions, {listing.format} format)\n")
    return 0


def _no_branches(store: Any) -> _Known:
    return _Known(
        f"{store.target} has no branches: it is not an AdvancedSQLiteSession store "
        f"({store.format} format)"
    )


async def cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.browse import session_messages

    store = await _open(args)
    try:
        advanced = store.capabilities.branches
        branch = args.branch if args.branch is not None else MAIN
        if not advanced and branch != MAIN:
            raise _no_branches(store)
        info, pages = await session_messages(
            store, args.session_id, limit=args.limit, branch=branch if advanced else None
        )
        if args.json:
            head: dict[str, Any] = {"format": store.format, "session": info.to_dict()}
            if advanced:
                head["branch"] = branch
            await _write_json_stream(out, head, pages)
        else:
            on = f", branch {branch}" if advanced else ""
            out.write(
                f"session {_one_line(info.id, 200)} — {_plural(info.messages)} "
                f"({store.format} format{_one_line(on)})\n"
            )
            async for page in pages:
                for m in page:
                    _print_message(out, m)
    finally:
        await store.close()
    return 0


async def cmd_branches(args: argparse.Namespace, out: TextIO) -> int:
    store = await _open(args)
    try:
        if not store.capabilities.branches:
            raise _no_branches(store)
        sid = args.session_id
        await store.require_session(sid)
        branches = await store.list_branches(sid)
        usage: dict[str, Any] = {}
        turns: dict[str, Any] = {}
        if args.usage:
            for b in branches:
                usage[b.branch_id] = await store.branch_usage(sid, b.branch_id)
                turns[b.branch_id] = await store.turn_usage(sid, b.branch_id)
            total = await store.session_usage(sid)
    finally:
        await store.close()
    if args.json:
        rows = []
        for b in branches:
            row = b.to_dict()
            if args.usage:
                totals = usage[b.branch_id]
                row["usage"] = totals.to_dict() if totals is not None else None
                row["turn_usage"] = [t.to_dict() for t in turns[b.branch_id]]
            rows.append(row)
        doc: dict[str, Any] = {"branches": rows}
        if args.usage:
            doc["usage"] = total.to_dict() if total is not None else None
        _print_json(out, doc)
        return 0
    out.write(f"  {'MESSAGES':>8}  {'TURNS':>5}  {'CREATED':<19}  BRANCH\n")
    for b in branches:
        mark = "*" if b.is_current else " "
        created = str(b.created_at) if b.created_at is not None else "-"
        out.write(
            f"{mark} {b.message_count:>8}  {b.user_turns:>5}  {created:<19}  "
            f"{_one_line(b.branch_id, 120)}\n"
        )
        if args.usage:
            totals = usage[b.branch_id]
            out.write(f"      usage: {_usage_text(totals)}\n")
            for t in turns[b.branch_id]:
                out.write(
                    f"      turn {t.user_turn_number}: {t.requests or 0} requests, "
                    f"{t.input_tokens or 0} in, {t.output_tokens or 0} out, "
                    f"{t.total_tokens or 0} total tokens\n"
                )
    count = f"{len(branches)} branch" + ("" if len(branches) == 1 else "es")
    out.write(f"({count}; * the current one)\n")
    if args.usage:
        out.write(f"session usage, all branches: {_usage_text(total)}\n")
    return 0


def _usage_text(totals: Any) -> str:
    if totals is None:
        return "none recorded"
    return (
        f"{totals.requests} requests, {totals.input_tokens} in, {totals.output_tokens} out, "
        f"{totals.total_tokens} total tokens over {_count(totals.total_turns, 'turn')}"
    )


def _plural(n: int) -> str:
    return f"{n} message" if n == 1 else f"{n} messages"


#: command → (what it does, for the question; the store edit it runs)
_EDITS = {
    "clear": ("remove every message of", "clear_messages"),
    "rm": ("delete", "delete_session"),
}


def _refuse_without_yes(args: argparse.Namespace) -> int | None:
    """Without ``--yes`` and no terminal to ask on: one line, exit 2 (before opening)."""
    if args.yes or _interactive():
        return None
    what = _EDITS[args.command][0]
    print(
        f"fluxgui: error: {args.command}: refusing to {what} session "
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


async def cmd_branch(args: argparse.Namespace, out: TextIO) -> int:
    store = await _open(args, writable=True)
    try:
        change = await store.fork_session(args.session_id, args.at, args.name)
    finally:
        await store.close()
    n = len(change.added)
    out.write(
        f"forked session {show_id(args.session_id)} at message {args.at} into "
        f"{show_id(change.session_id)} ({n} message{'' if n == 1 else 's'})\n"
    )
    return 0


async def cmd_diff(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.compare import compare_sessions, format_diff_text

    store = await _open(args)
    try:
        if (args.branch_a or args.branch_b) and not store.capabilities.branches:
            raise _no_branches(store)
        comparison = await compare_sessions(
            store, args.a, store, args.b, branch_a=args.branch_a, branch_b=args.branch_b
        )
    finally:
        await store.close()
    if args.json:
        _print_json(out, comparison.to_dict())
    else:
        text = visible(format_diff_text(comparison))
        out.write(text if text.endswith("\n") else text + "\n")
    return 0 if comparison.identical else 1


async def cmd_edit(args: argparse.Namespace, out: TextIO) -> int:
    """``clear`` / ``rm``: one session, opened writable, changed in one transaction."""
    what, method = _EDITS[args.command]
    sid = args.session_id
    store = await _open(args, writable=True)
    try:
        if not args.yes:
            store.check_editable()
            info = await store.require_session(sid)
            question = f"{what} session {show_id(sid)} ({_plural(info.messages)}) in {store.target}?"
            if not _confirm(question[:1].upper() + question[1:]):
                print("fluxgui: nothing changed", file=sys.stderr)
                return EXIT_DECLINED
        edit = store.clear_messages if method == "clear_messages" else store.delete_session
        change = await edit(sid)
    finally:
        await store.close()
    removed = _plural(len(change.removed))
    if args.command == "clear":
        out.write(f"cleared {removed} from session {show_id(sid)}\n")
    else:
        out.write(f"deleted session {show_id(sid)} ({removed})\n")
    return 0


# --------------------------------------------------------------------------- export / import / copy


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} byte" if n == 1 else f"{n} bytes"
    value = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}" if n == 1 else f"{n:,} {what}s"


def _export_format(args: argparse.Namespace) -> str | None:
    from fluxgui.services.transfer import format_for_path

    if args.export_format:
        return args.export_format
    if args.output == "-":
        return "json"
    return format_for_path(args.output)


async def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from fluxgui.services.transfer import export_sessions, export_to_stream

    fmt = _export_format(args)
    assert fmt is not None  # main() checked
    store = await _open(args)
    try:
        if args.output == "-":
            result = await export_to_stream(
                store, out, fmt, session_ids=args.session_ids or None,
                metadata=not args.no_metadata,
            )
            out.flush()
            where, report = "standard output", sys.stderr
        else:
            result = await export_sessions(
                store, Path(args.output), fmt, session_ids=args.session_ids or None,
                metadata=not args.no_metadata, force=args.force,
            )
            where, report = _one_line(args.output, 400), out
    finally:
        await store.close()
    size = f", {_size(result.bytes)}" if args.output != "-" and result.bytes else ""
    report.write(
        f"exported {_count(result.sessions, 'session')} "
        f"({_count(result.messages, 'message')}{size}) to {where}\n"
    )
    if result.notes:
        for note in result.notes:
            print(f"fluxgui: {note}", file=sys.stderr)
    return 0


def _report_written(out: TextIO, verb: str, result: Any, where: str) -> None:
    out.write(
        f"{verb} {_count(result.sessions, 'session')} "
        f"({_count(result.messages, 'message')}) into {where}\n"
    )
    for old, new in result.renamed:
        out.write(f"renamed {show_id(old)} to {show_id(new)}\n")


def _taken_hint(exc: Exception) -> str:
    return f"{exc} (pass --rename to write it under a new id)"


async def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from fluxgui.services.transfer import IdTaken, import_destination, import_files, scan_files

    files = [Path(f) for f in args.files]
    plan = await asyncio.to_thread(scan_files, files)  # every file checked before the store is touched
    async with import_destination(
        args.target, plan, files, fmt=args.format,
        sessions_table=args.sessions_table, messages_table=args.messages_table,
        **_key_args(args),
    ) as store:
        try:
            result = await import_files(store, files, rename=args.rename, plan=plan)
        except IdTaken as exc:
            raise _Known(_taken_hint(exc)) from None
        where = store.target
    _report_written(out, "imported", result, where)
    return 0


async def cmd_copy(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.adapters import open_store
    from fluxgui.services.transfer import IdTaken, copy_destination, copy_sessions

    source = await open_store(
        args.source, format=args.source_format,
        sessions_table=args.sessions_table, messages_table=args.messages_table,
        **_key_args(args),
    )
    _warn_about(source)
    try:
        if args.session_ids:
            for sid in args.session_ids:  # an unknown id stops it before DEST is made
                await source.require_session(sid)
        async with copy_destination(
            args.dest, source, fmt=args.format,
            source_target=args.source, source_prefix=args.key_prefix,
            sessions_table=args.dest_sessions_table, messages_table=args.dest_messages_table,
            **_key_args(args, "dest_"),
        ) as dest:
            try:
                result = await copy_sessions(
                    source, dest, args.session_ids or None, rename=args.rename
                )
            except IdTaken as exc:
                raise _Known(_taken_hint(exc)) from None
            where = dest.target
    finally:
        await source.close()
    _report_written(out, "copied", result, where)
    return 0


async def cmd_chat(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.chat import AgentConfig, ChatEvent, chat

    config = AgentConfig(
        instructions=args.instructions,
        model=args.model or "",
        temperature=args.temperature,
        provider=args.provider,
        base_url=args.base_url,
        timeout=args.timeout,
    )

    written = [""]  # the last piece written, to end the line properly

    def on_event(event: ChatEvent) -> None:
        if event.kind == "text" and event.text:
            out.write(event.text)
            out.flush()
            written[0] = event.text

    store = await _open(args, writable=True)
    try:
        result = await chat(store, args.session_id, args.message, config, on_event=on_event, copy=args.copy)
    finally:
        await store.close()
        # Also when the stream broke off: the error line then starts on a line of its own.
        if written[0] and not written[0].endswith("\n"):
            out.write("\n")
            out.flush()
    if args.copy:
        print(f"fluxgui: saved in the copy {show_id(result.session_id)}", file=sys.stderr)
    return 0


class _Known(FluxguiError):
    """A known error reworded for the command line."""


def _error_line(exc: BaseException) -> str:
    """A known error as the one line the terminal shows: URLs redacted, hidden characters
    visible."""
    return visible(redact_text(str(exc)), keep_layout=False)


def _run(coro: Any) -> int:
    return asyncio.run(coro)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = sys.stdout
    install_log_redaction()
    # Stored text may hold anything, lone surrogates included: escape what the terminal
    # cannot encode instead of dying (inside a JSON string the escape is valid JSON).
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        if argv and argv[0] in COMMANDS:
            args = build_parser().parse_args(argv)
            if args.command in _EDITS:
                refused = _refuse_without_yes(args)
                if refused is not None:
                    return refused
            if args.command == "export" and _export_format(args) is None:
                print(
                    f"fluxgui: error: export: cannot tell the format from {show_id(args.output)}: "
                    f"pass --format ({'|'.join(EXPORT_FORMATS)})",
                    file=sys.stderr,
                )
                return EXIT_USAGE
            handler = {
                "ls": cmd_ls, "show": cmd_show, "branches": cmd_branches,
                "branch": cmd_branch, "diff": cmd_diff,
                "clear": cmd_edit, "rm": cmd_edit,
                "export": cmd_export, "import": cmd_import, "copy": cmd_copy,
                "chat": cmd_chat,
            }[args.command]
            return _run(handler(args, out))
        if argv and argv[0] in ("-h", "--help"):
            build_window_parser().print_help()
            out.write(
                "\ncommands:\n  ls      list sessions\n  show    show one session\n"
                "  branches  list an AdvancedSQLiteSession session's branches\n"
                "  branch  fork a session at a message\n"
                "  diff    compare two sessions turn by turn\n"
                "  clear   remove every message of one session\n  rm      delete one session\n"
                "  export  write sessions to a JSON, JSONL, Markdown or HTML file\n"
                "  import  import exports and session files as new sessions\n"
                "  copy    copy sessions into another store, converting the format\n"
                "  chat    send a message to an agent with a session's history\n"
                "\n'fluxgui COMMAND -h' shows a command's options.\n"
            )
            return 0
        args = build_window_parser().parse_args(argv)
        from fluxgui.qt.launch import launch

        return launch(args)
    except FluxguiError as exc:
        print(f"fluxgui: error: {_error_line(exc)}", file=sys.stderr)
        return EXIT_KNOWN_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
