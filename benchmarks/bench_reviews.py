"""Benchmark the review filter: the first page of the session list filtered by review
state, on the 10,000-session, 1,000,000-message store (issue 17: under 100 ms).

    .venv/bin/python benchmarks/bench_reviews.py [--messages 1000000] [--sessions 10000]
                                                 [--format agents] [--reviewed 2000] [--runs 7]

The store is bench_store.py's (written by the real library, cached in benchmarks/data/).
A review database (a SQLite file in a temporary folder, or ``--reviews URL``) gets
``--reviewed`` reviews — every fifth one flagged, every third tagged — through
``ReviewDB.change``, one transaction each, as the window writes them. Then, each the
median of --runs runs on a fresh ``open_store`` (hot page cache):

* baseline: the unfiltered first page (``list_sessions(limit=100)``, what the window shows);
* the first page (100 rows, the window's page) filtered by state ``reviewed``, by
  ``flagged``, by a tag — the review database answers, then ``sessions_by_ids`` for the
  page — and by ``unreviewed`` (the store pages, reviewed sessions dropped);
* the marks of a page (``ReviewDB.reviews`` for 100 ids).

Each figure is printed next to the target (100 ms) and the unfiltered baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

TARGET_MS = 100.0
PAGE = 100


async def _fill(url: str, store_key: str, ids: list[str], n: int) -> float:
    from fluxgui.services.reviews import Edit, ReviewDB

    db = await ReviewDB.open(url)
    t0 = time.perf_counter()
    try:
        for i, sid in enumerate(ids[:n]):
            state = "flagged" if i % 5 == 0 else "reviewed"
            await db.change(store_key, sid, Edit(state=state, add_tags=["refund"] if i % 3 == 0 else [],
                                                 scores={"tone": 1 + i % 5}), reviewer=f"r{i % 4}")
    finally:
        await db.close()
    return time.perf_counter() - t0


async def _ids(path: str) -> tuple[str, list[str]]:
    from fluxgui.adapters.registry import open_store

    store = await open_store(path)
    try:
        ids, cursor = [], None
        while True:
            page = await store.reader.list_sessions(limit=1000, cursor=cursor)
            ids += [i.id for i in page.sessions]
            cursor = page.cursor
            if cursor is None:
                return store.store_key, ids
    finally:
        await store.close()


async def _time(path: str, url: str, key: str, what: str, runs: int) -> tuple[float, int]:
    from fluxgui.adapters.registry import open_store
    from fluxgui.services.reviews import ReviewDB, ReviewFilter
    from fluxgui.services.reviews.listing import FilteredPages

    filters = {"reviewed": ReviewFilter(state="reviewed"), "flagged": ReviewFilter(flagged=True),
               "tag": ReviewFilter(tag="refund"), "unreviewed": ReviewFilter(state="unreviewed")}
    times, rows = [], 0
    for n in range(runs + 1):
        store = await open_store(path)
        db = await ReviewDB.open(url)
        try:
            t0 = time.perf_counter()
            if what == "baseline":
                page = await store.reader.list_sessions(limit=PAGE)
                rows = len(page.sessions)
            elif what == "marks":
                page = await store.reader.list_sessions(limit=PAGE)
                t0 = time.perf_counter()
                rows = len(await db.reviews(key, [i.id for i in page.sessions]))
            else:
                page = await FilteredPages(db, key, filters[what]).page(store, limit=PAGE, cursor=None)
                rows = len(page.sessions)
            elapsed = (time.perf_counter() - t0) * 1000
        finally:
            await db.close()
            await store.close()
        if n:  # the first run warms up
            times.append(elapsed)
    return statistics.median(times), rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--format", default="agents", choices=("flux", "agents"))
    ap.add_argument("--reviewed", type=int, default=2_000, help="sessions given a review (default 2,000)")
    ap.add_argument("--reviews", metavar="URL", help="the review database (default: a temporary SQLite file)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--regen", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("FLUXGUI_DATA_DIR", tempfile.mkdtemp(prefix="fluxgui-bench-data-"))
    from bench_store import ensure_store

    meta = ensure_store(args.format, args.format, args.messages, args.sessions, args.regen)
    path = meta["path"]
    tmp = tempfile.mkdtemp(prefix="fluxgui-bench-reviews-")
    url = args.reviews or f"sqlite:///{tmp}/reviews.db"
    key, ids = asyncio.run(_ids(path))
    # the reviewed sessions spread over the whole store (every k-th by activity)
    step = max(1, len(ids) // max(1, args.reviewed))
    chosen = ids[::step][: args.reviewed]
    fill = asyncio.run(_fill(url, key, chosen, len(chosen)))
    print(f"store: {args.format}, {args.messages:,} messages in {len(ids):,} sessions ({path})")
    print(f"reviews: {len(chosen):,} written in {fill:.1f} s ({fill / max(1, len(chosen)) * 1000:.1f} ms each) "
          f"to {url.split('://')[0]}")
    base, _ = asyncio.run(_time(path, url, key, "baseline", args.runs))
    print(f"\n{'first page (100 rows)':<44} {'ms':>8}  {'target':>8}  {'unfiltered':>10}  rows")
    print(f"{'unfiltered list (baseline)':<44} {base:8.1f}  {TARGET_MS:8.0f}  {base:10.1f}  {PAGE}")
    worst = 0.0
    for what, label in (("reviewed", "state = reviewed"), ("flagged", "flagged"), ("tag", "tag = refund"),
                        ("unreviewed", "state = unreviewed (store pages)"), ("marks", "marks of a page (100 ids)")):
        ms, rows = asyncio.run(_time(path, url, key, what, args.runs))
        worst = max(worst, ms)
        ok = "ok" if ms < TARGET_MS else "OVER"
        print(f"{label:<44} {ms:8.1f}  {TARGET_MS:8.0f}  {base:10.1f}  {rows:>4}  {ok}")
    print(f"\nworst {worst:.1f} ms against the {TARGET_MS:.0f} ms target: {'met' if worst < TARGET_MS else 'NOT met'}")
    return 0 if worst < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
