"""The search commands: ``index`` (build or update a store's local search index, with a
progress bar on a terminal) and ``search`` (message hits: session, message id, role and
a snippet). ``ls --search`` goes through :func:`search_sessions` here too.

Which path a search took (the local index, the server's trigram index, a scan) is in
``search --json`` (``"path"``); when a search falls back to a scan, or cannot look into
encrypted items, stderr says so in one line.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from fluxgui.core.model import SessionInfo
from fluxgui.core.text import plural
from fluxgui.core.roles import Store

from .output import one_line, print_json
from .stores import open_target

BAR = 30


class ProgressBar:
    """``[#####.....] 12,345 / 1,000,000 messages`` redrawn on a terminal at most ten
    times a second; nothing when stderr is not a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self.shown_at = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int | None) -> None:
        if not self.live:
            return
        now = time.monotonic()
        if now - self.shown_at < 0.1 and done != total:
            return
        self.shown_at = now
        if total:
            filled = min(BAR, BAR * done // total)
            line = f"\r[{'#' * filled}{'.' * (BAR - filled)}] {done:,} / {total:,} messages"
        else:
            line = f"\r{done:,} messages"
        self.stream.write(line)
        self.stream.flush()
        self.drawn = True

    def end(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def note(text: str) -> None:
    print(f"fluxgui: {one_line(text, 600)}", file=sys.stderr)


async def cmd_index(args: argparse.Namespace, out: TextIO) -> int:
    """``index``: build the store's search index, or bring it up to date."""
    import asyncio

    from fluxgui.services.index import index_path, update_index
    from fluxgui.services.index.failures import damaged_note, remove

    store = await open_target(args)
    try:
        if args.rebuild:
            await asyncio.to_thread(remove, index_path(store.store_key))
        bar = ProgressBar(sys.stderr)
        try:
            report = await update_index(store, progress=bar)
        finally:
            bar.end()
        if report.set_aside:
            note(damaged_note(report.set_aside))
        if store.needs_key:
            note("encrypted items are not written to the index: with the key they are "
                 "searched by scanning their sessions")
    finally:
        await store.close()
    what = "built" if report.built else "updated"
    out.write(
        f"index {what}: {plural(report.added, 'message')} added, "
        f"{plural(report.reindexed, 'session')} read again, "
        f"{plural(report.dropped, 'session')} dropped in {report.seconds:.2f} s "
        f"({index_path(store.store_key)})\n"
    )
    return 0


async def cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    """``search``: the messages holding TEXT (session ids first, then newest first)."""
    from fluxgui.services.index import search

    store = await open_target(args)
    try:
        result = await search(store, args.text, limit=args.limit or None)
    finally:
        await store.close()
    for line in result.notes:  # (with --json too: they are in its "notes" as well)
        note(line)
    if args.json:
        print_json(out, result.to_dict())
        return 0
    out.write(f"{'SESSION':<24}  {'MESSAGE':>8}  {'ROLE':<10}  SNIPPET\n")
    for h in result.hits:
        mid = "-" if h.message_id is None else str(h.message_id)
        out.write(
            f"{one_line(h.session_id, 120):<24}  {mid:>8}  {one_line(h.role or '-', 30):<10}  "
            f"{one_line(h.snippet, 400)}\n"
        )
    more = " (more not shown: --limit)" if result.truncated else ""
    out.write(f"({plural(len(result.hits), 'hit')} by {result.path}{more})\n")
    return 0


async def search_sessions(store: Store, text: str, limit: int | None) -> list[SessionInfo]:
    """``ls --search``: the sessions whose id or any message holds ``text``, most recently
    active first — through the store's index when it has one (updated first), or the
    server's trigram index (Postgres with ``pg_trgm``), else the store's own search,
    saying so on stderr."""
    from fluxgui.services.index import found_session_ids, has_index, indexable, search

    ids: list[str] | None = None
    if indexable(text) and has_index(store):
        result = await search(store, text, use="index")
        for line in result.notes:
            note(line)
        ids = result.session_ids()
    elif indexable(text) and store.server_index is not None and await store.server_index.server_text_index():
        # the server's trigram index, as the window's search uses it (no local copy)
        ids = [sid async for sid in found_session_ids(store, text)]
    if ids is not None:
        found: list[SessionInfo] = []
        for start in range(0, len(ids), 500):
            found.extend(await store.reader.sessions_by_ids(ids[start : start + 500]))
        found.sort(key=lambda s: s.sort_key, reverse=True)
        return found[:limit] if limit is not None else found
    why = "no search index (fluxgui index TARGET builds one)" if indexable(text) else (
        "the index needs 3 characters or more")
    note(f"searched by scanning: {why}")
    return await store.reader.search_sessions(text, limit=limit)
