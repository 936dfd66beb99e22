"""The reading commands: ``ls``, ``show``, ``branches`` and ``diff``.

Each opens the store read-only, asks a service (:mod:`fluxgui.services.browse`,
:mod:`fluxgui.services.compare`) or the store's declared capabilities, and prints text
(terminal-safe, see :mod:`fluxgui.cli.output`) or, with ``--json``, JSON.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO

from fluxgui.core.roles import Store, refuse
from fluxgui.core.ports import MAIN
from fluxgui.core.text import plural
from fluxgui.core.visible import visible

from .errors import Known
from .output import one_line, print_json, print_message, write_json_stream
from .stores import open_target
from .workspace_args import one_target, several

if TYPE_CHECKING:
    from fluxgui.core.branches import UsageTotals


def no_branches(store: Store) -> Known:
    """The error for a branch asked of a store that keeps none."""
    return Known(
        f"{store.target} has no branches: it is not an AdvancedSQLiteSession store "
        f"({store.format} format)"
    )


async def cmd_ls(args: argparse.Namespace, out: TextIO) -> int:
    """``ls``: one page of sessions (``--limit 0``: all), or the ones ``--search`` finds."""
    from fluxgui.services.browse import list_sessions

    if several(args) or getattr(args, "save_workspace", None):
        from .workspace import cmd_ls_several

        return await cmd_ls_several(args, out)
    one_target(args)
    store = await open_target(args)
    try:
        if args.search:
            from fluxgui.services.browse import SessionListing

            from .search import search_sessions

            found = await search_sessions(store, args.search, args.limit or None)
            listing = SessionListing(store.format, found)
        else:
            listing = await list_sessions(store, limit=args.limit or None)
            for advice in await store.index_advice():
                print(f"fluxgui: {one_line(advice, 600)}", file=sys.stderr)
    finally:
        await store.close()
    if store.traits.named_sessions:
        named_sessions_notes(store, listing.sessions)
    if args.json:
        print_json(out, listing.to_dict())
        return 0
    out.write(f"{'MESSAGES':>8}  {'LAST ACTIVE':<25}  SESSION\n")
    out.writelines(
        f"{s.count_text:>8}  {one_line(s.updated_at or '-', 60):<25}  {one_line(s.id, 120)}\n"
        for s in listing.sessions
    )
    out.write(f"({plural(len(listing.sessions), 'session')}, {listing.format} format)\n")
    return 0


def named_sessions_notes(store: Store, listed: list[Any]) -> None:
    """For a store that lists the ids it is given (Conversations): the ids the server
    did not know, or how to name some when none were given."""
    for problem in store.problems:
        print(f"fluxgui: skipped {one_line(str(problem), 400)}", file=sys.stderr)
    if not listed and not store.problems:
        print(
            "fluxgui: the Conversations API cannot list conversations: name them with "
            "--conversation ID or --ids FILE",
            file=sys.stderr,
        )


async def cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    """``show``: one session's messages (of ``--branch``; default main) in stored order."""
    from fluxgui.services.browse import session_messages

    if several(args):
        from .workspace import cmd_show_several

        return await cmd_show_several(args, out)
    one_target(args)
    from .redact_args import redacted_pages, redactor_for, report_left

    redactor = redactor_for(args)
    store = await open_target(args)
    try:
        advanced = store.branches is not None
        branch = args.branch if args.branch is not None else MAIN
        if not advanced and branch != MAIN:
            raise no_branches(store)
        info, pages = await session_messages(
            store, args.session_id, limit=args.limit, branch=branch if advanced else None
        )
        pages = redacted_pages(pages, redactor)
        if redactor is not None:  # (the id as the redacted output shows it)
            info = replace(info, id=redactor.session_id(info.id))
        if args.json:
            head: dict[str, Any] = {"format": store.format, "session": info.to_dict()}
            if advanced:
                head["branch"] = branch
            await write_json_stream(out, head, pages)
        else:
            on = f", branch {branch}" if advanced else ""
            out.write(
                f"session {one_line(info.id, 200)} — "
                f"{plural(info.messages, 'message') if info.count_exact else f'≥ {info.messages:,} messages'} "
                f"({store.format} format{one_line(on)})\n"
            )
            async for page in pages:
                for m in page:
                    print_message(out, m)
    finally:
        await store.close()
    report_left(redactor)
    return 0


async def cmd_branches(args: argparse.Namespace, out: TextIO) -> int:
    """``branches``: a session's branches as the library lists them (``--usage``: with
    token usage per branch and per turn)."""
    store = await open_target(args)
    try:
        if store.branches is None:
            raise no_branches(store)
        sid = args.session_id
        await store.reader.require_session(sid)
        branches = await (store.branches or refuse(store, "branches")).list_branches(sid)
        usage: dict[str, Any] = {}
        turns: dict[str, Any] = {}
        if args.usage:
            for b in branches:
                usage[b.branch_id] = await (store.usage or refuse(store, "usage")).branch_usage(sid, b.branch_id)
                turns[b.branch_id] = await (store.usage or refuse(store, "usage")).turn_usage(sid, b.branch_id)
            total = await (store.usage or refuse(store, "usage")).session_usage(sid)
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
        print_json(out, doc)
        return 0
    out.write(f"  {'MESSAGES':>8}  {'TURNS':>5}  {'CREATED':<19}  BRANCH\n")
    for b in branches:
        mark = "*" if b.is_current else " "
        created = str(b.created_at) if b.created_at is not None else "-"
        out.write(
            f"{mark} {b.message_count:>8}  {b.user_turns:>5}  {created:<19}  "
            f"{one_line(b.branch_id, 120)}\n"
        )
        if args.usage:
            out.write(f"      usage: {_usage_text(usage[b.branch_id])}\n")
            out.writelines(
                f"      turn {t.user_turn_number}: {plural(t.requests or 0, 'request')}, "
                f"{t.input_tokens or 0:,} in, {t.output_tokens or 0:,} out, "
                f"{plural(t.total_tokens or 0, 'total token')}\n"
                for t in turns[b.branch_id]
            )
    out.write(f"({plural(len(branches), 'branch')}; * the current one)\n")
    if args.usage:
        out.write(f"session usage, all branches: {_usage_text(total)}\n")
    return 0


def _usage_text(totals: UsageTotals | None) -> str:
    if totals is None:
        return "none recorded"
    return (
        f"{plural(totals.requests, 'request')}, {totals.input_tokens:,} in, "
        f"{totals.output_tokens:,} out, {plural(totals.total_tokens, 'total token')} over "
        f"{plural(totals.total_turns, 'turn')}"
    )


async def cmd_diff(args: argparse.Namespace, out: TextIO) -> int:
    """``diff``: two sessions (or two branches) turn by turn; exit 1 when they differ."""
    from fluxgui.services.compare import compare_sessions, format_diff_text

    store = await open_target(args)
    try:
        if (args.branch_a or args.branch_b) and store.branches is None:
            raise no_branches(store)
        comparison = await compare_sessions(
            store, args.a, store, args.b, branch_a=args.branch_a, branch_b=args.branch_b
        )
    finally:
        await store.close()
    if args.json:
        print_json(out, comparison.to_dict())
    else:
        text = visible(format_diff_text(comparison))
        out.write(text if text.endswith("\n") else text + "\n")
    return 0 if comparison.identical else 1
