"""``fluxgui replay`` (a session from turn N into a fork, tools answered from the record)
and ``fluxgui export --eval`` (eval datasets); other exports are :mod:`.transfer`'s."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, TextIO

from fluxgui.core.errors import show_id
from fluxgui.core.text import plural

from .errors import EXIT_DECLINED, EXIT_USAGE
from .output import one_line, print_json, size
from .stores import open_target


def _call(name: str, arguments: Any) -> str:
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return one_line(f"{name}({shown})", 300)


def _text_report(report: Any, session_id: str, out: TextIO) -> None:
    counts = f"tool calls: {report.matched} matched, {report.unmatched} unmatched"
    out.write(
        f"replayed {plural(report.replayed_turns, 'turn')} of {show_id(session_id)} from turn "
        f"{report.from_turn} into {show_id(report.fork)} ({counts})\n"
    )
    for u in report.usage:
        out.write(
            f"turn {u['turn']}: {plural(u['requests'], 'request')}, {u['input_tokens']} input / "
            f"{u['output_tokens']} output tokens\n"
        )
    stop = report.stopped
    if stop is not None:
        out.write(f"stopped at turn {stop.turn}: the model called {_call(stop.name, stop.arguments)}: "
                  f"{one_line(stop.reason, 300)}\n")
        if stop.nearest:
            near = ", ".join(_call(c["name"], c["arguments"]) for c in stop.nearest)
            out.write(f"nearest recorded calls: {near}\n")


async def cmd_replay(args: argparse.Namespace, out: TextIO) -> int:
    """``replay``: exit 0 when every turn was replayed, 1 when it stopped at an unmatched
    call (3, through the dispatcher, on a known error)."""
    from fluxgui.services.chat import AgentConfig
    from fluxgui.services.replay import ReplayOptions, replay

    options = ReplayOptions(
        AgentConfig(instructions=args.instructions, model=args.model or "", temperature=args.temperature,
                    provider=args.provider, base_url=args.base_url, timeout=args.timeout),
        match=args.match, unmatched=args.unmatched, name=args.name,
    )
    store = await open_target(args, writable=True)
    try:
        report = await replay(store, args.session_id, args.from_turn, options)
    finally:
        await store.close()
    if args.json:
        print_json(out, report.to_json())
    else:
        _text_report(report, args.session_id, out)
    return EXIT_DECLINED if report.stopped is not None else 0


async def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    """``export``: an eval dataset with ``--eval``, else :func:`.transfer.cmd_export`."""
    if not args.eval:
        if args.review_state or args.tag or args.min_score:
            print("fluxgui: error: export: --review-state, --tag and --min-score choose the "
                  "sessions of an eval dataset: add --eval FORMAT", file=sys.stderr)
            return EXIT_USAGE
        from .transfer import cmd_export as export_files

        return await export_files(args, out)
    if args.export_format or args.output == "-":
        what = "--file-format" if args.export_format else "-o -"
        print(f"fluxgui: error: export: {what} is for session exports; --eval writes a file of "
              "its own format (-o PATH)", file=sys.stderr)
        return EXIT_USAGE
    return await _export_eval(args, out)


async def _export_eval(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    from fluxgui.services.evals import EvalFilter, export_eval

    from .redact_args import redactor_for, report_left

    flt = EvalFilter(state=args.review_state, tag=args.tag, min_scores=dict(args.min_score))
    redactor = redactor_for(args)
    store = await open_target(args)
    reviews = None
    try:
        key = ""
        if flt.active or args.reviews or os.environ.get("FLUXGUI_REVIEWS") or args.with_reviews:
            from fluxgui.services.reviews import ReviewDB, review_key

            reviews = await ReviewDB.open(args.reviews, stores=[store])
            key = review_key(store.store_key, args.store_label)
        result = await export_eval(
            store, Path(args.output), args.eval, args.session_ids, flt=flt, reviews=reviews, key=key,
            label=args.store_label, force=args.force,
            transform=redactor.page if redactor is not None else None,
            transform_id=redactor.session_id if redactor is not None else None,
        )
    finally:
        if reviews is not None:
            await reviews.close()
        await store.close()
    out.write(
        f"wrote {plural(result.items, 'eval item')} ({args.eval}, {size(result.bytes)}) from "
        f"{plural(result.sessions, 'session')} to {one_line(args.output, 400)}\n"
    )
    left = sum(result.left_out.values())
    if left:
        why = ", ".join(f"{reason}: {n}" for reason, n in sorted(result.left_out.items()))
        out.write(f"left out {plural(left, 'turn')} of {result.assistant_turns} ({why})\n")
    report_left(redactor)
    return 0
