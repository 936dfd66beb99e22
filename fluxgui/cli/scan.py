"""``scan``: what redaction would find in a store's sessions (their ids too), masked, per
session, each named by its redacted id; exit 0 when nothing is found, 1 when anything
is, 3 on an error (a detector failing on an item is one: the scan did not see
everything)."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from fluxgui.core.text import plural

from .output import one_line, print_json
from .redact_args import redactor_for
from .stores import open_target

EXIT_FOUND = 1


async def cmd_scan(args: argparse.Namespace, out: TextIO) -> int:
    from fluxgui.services.redaction.scan import scan_store

    redactor = redactor_for(args, default="all")
    assert redactor is not None
    store = await open_target(args)
    sessions = []
    try:
        async for found in scan_store(store, redactor, args.session_ids or None):
            sessions.append(found)
            if not args.json and found.findings:
                out.write(f"session {one_line(found.session_id, 200)}: {plural(len(found.findings), 'finding')}\n")
                for f in found.findings:
                    where = one_line(f.message_id, 40) if f.message_id is not None else "(session id)"
                    out.write(f"  {f.kind:<16} {where:<12} {f.placeholder:<20} {one_line(f.masked, 80)}\n")
    finally:
        await store.close()
    total = sum(len(s.findings) for s in sessions)
    if args.json:
        print_json(out, {"sessions": [s.to_dict() for s in sessions]})
    else:
        held = sum(1 for s in sessions if s.findings)
        out.write(
            f"{plural(total, 'finding')} in {plural(held, 'session')} "
            f"({plural(len(sessions), 'session')} scanned)\n"
        )
    if redactor.left.sealed:
        print(
            f"fluxgui: {plural(redactor.left.sealed, 'encrypted item')} no key opened "
            "could not be scanned (pass the key)", file=sys.stderr,
        )
    return EXIT_FOUND if total else 0
