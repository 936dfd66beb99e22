"""The commands over a workspace of several stores (issue 36): ``ls``, ``show`` and
``check`` with several targets (or ``--workspace FILE``), and ``merge``.

With one target those commands read as they always did (:mod:`fluxgui.cli.browse`,
:mod:`fluxgui.cli.doctor`); the work is :mod:`fluxgui.services.workspace`'s.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from fluxgui.core.text import plural

from .errors import Known
from .output import one_line, print_json, print_message
from .stores import open_options, option_values, warn_about
from .workspace_args import need_targets

if TYPE_CHECKING:
    from fluxgui.services.workspace import Workspace


async def open_workspace(args: argparse.Namespace, *, writable: bool = False) -> Workspace:
    """The stores of ``--workspace FILE`` then the targets given, labelled by
    ``--store-label`` (once per target, in order) or their file names."""
    from fluxgui.services.workspace import Entry, Workspace, load_workspace
    from fluxgui.services.workspace.file import KEPT_OPTIONS

    need_targets(args)
    labels = list(getattr(args, "store_labels", None) or [])
    if len(labels) > len(args.targets):
        raise Known(
            f"{args.command}: {plural(len(labels), '--store-label')} for "
            f"{plural(len(args.targets), 'TARGET')}: give one per TARGET, in order"
        )
    options = open_options(args, writable=writable, format=args.format)
    kept = {k: v for k, v in option_values(options).items() if k in KEPT_OPTIONS}
    kept["format"] = args.format
    entries = load_workspace(Path(args.workspace)) if args.workspace else []
    entries += [
        Entry(t, labels[i] if i < len(labels) else None, dict(kept))
        for i, t in enumerate(args.targets)
    ]
    if not entries:
        raise Known(f"workspace {args.workspace} names no store")
    workspace = await Workspace.open(entries, options)
    for m in workspace.members:
        warn_about(m.store)
    return workspace


def _stores_text(labels: list[str]) -> str:
    return ", ".join(labels)


async def cmd_ls_several(args: argparse.Namespace, out: TextIO) -> int:
    """``ls`` over a workspace: one row per session id, with the stores holding it."""
    from fluxgui.services.workspace.listing import session_rows

    workspace = await open_workspace(args)
    try:
        if args.search:
            rows = await _found_rows(workspace, args.search, args.limit or None)
        else:
            rows = await session_rows(workspace, limit=args.limit or None)
        if getattr(args, "save_workspace", None):
            workspace.save(Path(args.save_workspace))
        labels = workspace.labels
    finally:
        await workspace.close()
    if args.json:
        print_json(out, {"sessions": [r.to_dict() for r in rows]})
        return 0
    shown = [one_line(_stores_text(r.labels), 60) for r in rows]
    width = max([len("STORE"), *(len(s) for s in shown)])
    out.write(f"{'MESSAGES':>8}  {'LAST ACTIVE':<25}  {'STORE':<{width}}  SESSION\n")
    for r, stores in zip(rows, shown):
        out.write(
            f"{r.messages:>8}  {one_line(r.updated_at or '-', 60):<25}  {stores:<{width}}  "
            f"{one_line(r.id, 120)}\n"
        )
    out.write(f"({plural(len(rows), 'session')} in {plural(len(labels), 'store')})\n")
    return 0


async def _found_rows(workspace: Workspace, text: str, limit: int | None) -> list[Any]:
    """``ls --search`` over a workspace: the sessions any store finds ``text`` in (each
    store searched as ``ls --search`` searches one), with every store holding them, most
    recently active first."""
    from fluxgui.core.times import unix_time
    from fluxgui.services.workspace.listing import rows_for

    from .search import search_sessions

    ids: list[str] = []
    for m in workspace.members:
        ids += [info.id for info in await search_sessions(m.store, text, None)]
    rows = await rows_for(workspace, list(dict.fromkeys(ids)))
    rows.sort(key=lambda r: unix_time(r.updated_at) or float("-inf"), reverse=True)
    return rows[:limit] if limit is not None else rows


async def cmd_show_several(args: argparse.Namespace, out: TextIO) -> int:
    """``show`` over a workspace: one session's merged timeline, each message with its
    store."""
    from fluxgui.services.workspace.timeline import timeline

    if args.branch is not None:
        raise Known("show: --branch reads one TARGET at a time")
    workspace = await open_workspace(args)
    try:
        line = await timeline(workspace, args.session_id)
    finally:
        await workspace.close()
    placed = line.placed()
    if args.limit is not None:
        placed = placed[-args.limit:] if args.limit else []
    finding = line.split_finding()
    from .redact_args import redacted_placed, redactor_for, report_left

    redactor = redactor_for(args)
    placed = redacted_placed(placed, redactor)
    shown_id = redactor.session_id(line.session_id) if redactor is not None else line.session_id
    if args.json:
        head: dict[str, Any] = {
            "session": {"id": shown_id, "messages": line.total, "folded": line.folded,
                        "split": line.split, "order_uncertain": line.uncertain},
            "stores": [{"store": s, "messages": line.counts[s]} for s in line.stores],
        }
        if finding:
            head["problems"] = [finding]
        head["messages"] = [p.to_dict() for p in placed]
        print_json(out, head)
        report_left(redactor)
        return 0
    counts = ", ".join(f"{s}: {line.counts[s]}" for s in line.stores)
    out.write(
        f"session {one_line(shown_id, 200)} — {plural(line.total, 'message')} from "
        f"{plural(len(line.stores), 'store')} ({one_line(counts, 400)}; "
        f"{line.folded} folded)\n"
    )
    if finding:
        out.write(f"split_session: {one_line(finding['detail'], 600)}\n")
    for p in placed:
        mark = " (order uncertain)" if p.order_uncertain else ""
        out.write(f"[{one_line(' + '.join(p.stores), 120)}]{mark} ")
        print_message(out, p.message)
    report_left(redactor)
    return 0


def _problem(label: str, p: Any) -> dict[str, Any]:
    doc: dict[str, Any] = p.to_dict()
    doc["message_ids"] = [f"{label}:{i}" for i in p.message_ids]
    doc["store"] = label
    return doc


async def cmd_check_several(args: argparse.Namespace, out: TextIO) -> int:
    """``check`` over a workspace: every store's checks of each session it holds, and
    ``split_session`` for a session whose turns are in several stores."""
    from fluxgui.services.doctor import check_session
    from fluxgui.services.workspace.listing import session_rows
    from fluxgui.services.workspace.timeline import timeline

    workspace = await open_workspace(args)
    reports: list[dict[str, Any]] = []
    try:
        if args.session_ids:
            for sid in args.session_ids:
                if not await workspace.holders(sid):
                    await workspace.members[0].store.reader.require_session(sid)
        rows = await session_rows(workspace, args.session_ids or None, exact=False)
        for row in rows:
            problems: list[dict[str, Any]] = []
            if row.several:
                finding = (await timeline(workspace, row.id, read=False)).split_finding()
                if finding:
                    problems.append(finding)
            for label in row.labels:
                report = await check_session(workspace.member(label).store, row.id, limit=args.limit)
                problems += [_problem(label, p) for p in report.problems]
            doc = {"session_id": row.id, "stores": row.labels, "problems": problems}
            reports.append(doc)
            if not args.json:
                _report_text(out, doc)
    finally:
        await workspace.close()
    found = sum(len(r["problems"]) for r in reports)
    if args.json:
        print_json(out, {"sessions": reports})
    else:
        broken = sum(1 for r in reports if r["problems"])
        out.write(f"({plural(found, 'problem')} in {broken} of {plural(len(reports), 'session')})\n")
    return 1 if found else 0


def _report_text(out: TextIO, doc: dict[str, Any]) -> None:
    sid = one_line(doc["session_id"], 120)
    where = one_line(_stores_text(doc["stores"]), 200)
    if not doc["problems"]:
        out.write(f"session {sid} ({where}): clean\n")
        return
    out.write(f"session {sid} ({where}): {plural(len(doc['problems']), 'problem')}\n")
    for p in doc["problems"]:
        ids = ",".join(p["message_ids"]) or "-"
        out.write(f"  {p['code']:<18} {one_line(ids, 60):<10} {one_line(p['detail'], 600)}\n")


async def cmd_merge(args: argparse.Namespace, out: TextIO) -> int:
    """``merge``: the workspace's sessions consolidated into DEST, previewed first."""
    from fluxgui.services.workspace.consolidate import plan_merge, write_merge

    from .workspace_merge import dest_for_plan, dest_for_write, print_plan

    from .redact_args import redactor_for, report_left

    redactor = redactor_for(args)
    transform_id = redactor.session_id if redactor is not None else None
    workspace = await open_workspace(args)
    try:
        if args.dry_run:
            async with dest_for_plan(args, workspace) as dest:
                plan = await plan_merge(
                    workspace, dest, args.sessions, on_conflict=args.on_conflict, transform_id=transform_id,
                )
            print_plan(out, args, plan, written=False, shown_id=transform_id)
            return 0
        async with dest_for_write(args, workspace) as dest:
            done = await write_merge(
                workspace, dest, args.sessions, on_conflict=args.on_conflict,
                transform=redactor.page if redactor is not None else None, transform_id=transform_id,
            )
        print_plan(out, args, done, written=True, shown_id=transform_id)
        report_left(redactor)
    finally:
        await workspace.close()
    return 0
