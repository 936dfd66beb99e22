"""The session doctor's commands: ``check``, ``repair``, ``rewind``, ``preflight`` and
``ledger`` (the work is :mod:`fluxgui.services.doctor`'s).

``check`` and ``preflight`` exit 1 when they find a problem (0 when clean); every command
exits 3 on a known error. ``repair`` and ``rewind`` open the store writable, print the
session before and after, and write in one transaction; without ``--yes`` they ask on a
terminal and refuse elsewhere; ``repair --dry-run`` writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from fluxgui.core.roles import Store, refuse
from fluxgui.core.errors import show_id
from fluxgui.core.text import plural

from .edit import _confirm, _interactive
from .errors import EXIT_DECLINED, EXIT_USAGE
from .output import one_line, print_json
from .stores import on_target, open_target


def _problem_lines(out: TextIO, problems: list, indent: str = "  ") -> None:
    for p in problems:
        ids = ",".join(f"#{i}" for i in p.message_ids) or "-"
        out.write(f"{indent}{p.code:<18} {one_line(ids, 40):<10} {one_line(p.detail, 400)}\n")


async def cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    """``check``: the problems of the sessions named (all, paged, when none is)."""
    from fluxgui.services.doctor import check_sessions

    from .workspace_args import need_targets, several, split_check_positionals

    split_check_positionals(args)
    if several(args):
        from .workspace import cmd_check_several

        return await cmd_check_several(args, out)
    need_targets(args)
    args.target = args.targets[0]
    store = await open_target(args)
    reports = []
    try:
        async for report in check_sessions(store, args.session_ids, limit=args.limit):
            reports.append(report)
            if not args.json:
                _report_text(out, report)
    finally:
        await store.close()
    found = sum(len(r.problems) for r in reports)
    if args.json:
        print_json(out, {"sessions": [r.to_dict() for r in reports]})
    else:
        broken = sum(1 for r in reports if r.problems)
        out.write(f"({plural(found, 'problem')} in {broken} of {plural(len(reports), 'session')})\n")
    return 1 if found else 0


def _report_text(out: TextIO, report) -> None:  # noqa: ANN001 - a SessionReport
    sid = one_line(report.session_id, 120)
    if report.problems:
        out.write(f"session {sid}: {plural(len(report.problems), 'problem')}\n")
        _problem_lines(out, list(report.problems))
    else:
        out.write(f"session {sid}: clean\n")
    if report.unchecked:
        out.write(f"  {len(report.unchecked)} encrypted items not checkable without their key\n")


def _refuse(args: argparse.Namespace, what: str) -> int | None:
    if args.yes or getattr(args, "dry_run", False) or _interactive():
        return None
    print(
        f"fluxgui: error: {args.command}: refusing to {what} session "
        f"{show_id(args.session_id)} without confirmation: pass --yes",
        file=sys.stderr,
    )
    return EXIT_USAGE


def _print_plan(out: TextIO, plan) -> None:  # noqa: ANN001 - a Plan
    from fluxgui.services.doctor.text import describe

    out.write(f"session {one_line(plan.session_id, 120)}: {len(plan.before)} messages before, "
              f"{len(plan.after)} after\n")
    for line in plan.diff():
        if line.mark != " " or len(plan.before) <= 200:
            out.write(f"{line.mark} {one_line(describe(line.message, 160), 200)}\n")
    out.write(plan.summary() + "\n")


async def _write_plan(args: argparse.Namespace, out: TextIO, store: Store, plan) -> int:  # noqa: ANN001
    from fluxgui.services.doctor.repairs import apply_plan

    _print_plan(out, plan)
    if plan.empty or getattr(args, "dry_run", False):
        if getattr(args, "dry_run", False):
            out.write("(dry run: nothing written)\n")
        return 0
    (store.editor or refuse(store, "editor")).check_editable()
    if not args.yes and not _confirm(f"Write this to {store.target}?"):
        print("fluxgui: nothing changed", file=sys.stderr)
        return EXIT_DECLINED
    await apply_plan(store, plan)
    out.write("written (one transaction)\n")
    return 0


async def cmd_repair(args: argparse.Namespace, out: TextIO) -> int:
    """``repair``: fix the chosen problems of one session, previewed, in one write."""
    from fluxgui.services.doctor import read_messages
    from fluxgui.services.doctor.repairs import CANCEL_TEXT, REPAIRABLE, plan_repair

    refused = _refuse(args, "repair")
    if refused is not None:
        return refused
    fixes = REPAIRABLE if args.fix == ["all"] else tuple(args.fix)
    store = await open_target(args, writable=not args.dry_run)
    try:
        messages = await read_messages(store, args.session_id)
        plan = plan_repair(
            args.session_id, messages, fixes, items=store.traits.items,
            cancel_text=args.cancel_text or CANCEL_TEXT, drop_calls=args.drop_calls, keep=args.keep,
        )
        code = await _write_plan(args, out, store, plan)
    finally:
        await store.close()
    if plan.left:
        out.write("left as they are:\n")
        _problem_lines(out, list(plan.left))
    return code


async def cmd_rewind(args: argparse.Namespace, out: TextIO) -> int:
    """``rewind``: remove whole turns at the end of one session."""
    from fluxgui.services.doctor import read_messages
    from fluxgui.services.doctor.repairs import plan_rewind

    refused = _refuse(args, "rewind")
    if refused is not None:
        return refused
    store = await open_target(args, writable=True)
    try:
        messages = await read_messages(store, args.session_id)
        plan = plan_rewind(args.session_id, messages, to_turn=args.to_turn, last=args.last)
        return await _write_plan(args, out, store, plan)
    finally:
        await store.close()


async def cmd_preflight(args: argparse.Namespace, out: TextIO) -> int:
    """``preflight``: what resuming the session would send, with token estimates."""
    from fluxgui.services.doctor.preflight import preflight
    from fluxgui.services.doctor.text import describe_item

    result = await on_target(args, lambda store: preflight(store, args.session_id, limit=args.limit))
    if args.json:
        print_json(out, result.to_dict())
        return 1 if result.problems else 0
    who = "the Agents SDK" if result.source == "agents" else "flux's Runner"
    out.write(f"session {one_line(result.session_id, 120)}: {len(result.input)} items as "
              f"{who} would send them\n")
    for n, (item, count) in enumerate(zip(result.input, result.per_item, strict=True)):
        out.write(f"{n:>4} {count:>7}  {one_line(describe_item(item, 160), 200)}\n")
    out.write(f"≈ {result.total:,} tokens (o200k_base estimate; instructions and tool "
              "schemas are not in the store)\n")
    if result.problems:
        out.write("the request would fail:\n")
        _problem_lines(out, list(result.problems))
    return 1 if result.problems else 0


async def cmd_ledger(args: argparse.Namespace, out: TextIO) -> int:
    """``ledger``: tokens, cost and time per turn."""
    from fluxgui.services.doctor.ledger import ledger
    from fluxgui.services.doctor.text import bar, cost_text, seconds_text, tokens_text

    result = await on_target(args, lambda store: ledger(store, args.session_id, model=args.model))
    if args.json:
        print_json(out, result.to_dict())
        return 0
    model = one_line(result.model, 80) if result.model else "unknown (no prices)"
    out.write(f"session {one_line(result.session_id, 120)} — model {model}\n")
    if result.model and result.price_note:
        out.write(f"(COST —: {one_line(result.price_note, 200)})\n")
    out.write(f"{'TURN':>4} {'ITEMS':>5} {'CALLS':>5} {'REQ':>3} {'IN':>8} {'OUT':>8} "
              f"{'COST':>9} {'TIME':>10}  BAR\n")
    for t in result.turns:
        mark = " " if t.recorded else "~"
        out.write(
            f"{t.number:>4} {t.items:>5} {len(t.tool_calls):>5} {t.requests:>3} "
            f"{mark}{tokens_text(t.input_tokens):>7} {mark}{tokens_text(t.output_tokens):>7} "
            f"{cost_text(t.cost):>9} {seconds_text(t.seconds):>10}  {bar(result.scale(t))}\n"
        )
    window = f"{result.context_window:,}" + ("" if result.window_known else " (assumed)")
    share = result.largest_context / result.context_window if result.context_window else 0
    out.write(f"largest context ≈ {result.largest_context:,} of {window} tokens "
              f"{bar(share)} {share:.0%}\n")
    out.write("(~ estimated with o200k_base; the rest as the store recorded it)\n")
    return 0
