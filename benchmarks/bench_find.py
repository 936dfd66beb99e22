"""Benchmark landing on a search hit inside one big session (issue 16, search to the message).

    .venv/bin/python benchmarks/bench_find.py [--messages 100000] [--runs 5] [--regen]

The store is one Agents SDK session written by the real ``agents.SQLiteSession`` through
``add_items`` (batches of 1,000), cached in ``benchmarks/data/``. Three messages mention
the needle: near the start, in the middle, near the end. Timings (ms, median of --runs
after a warm-up, one open store, hot OS cache):

* baseline: the latest page (``page_messages(limit=100)``) — what opening a session cost
  before, landing nowhere near the hit;
* baseline: every hit first (``find_in_session``, the whole session read), then the page
  around the first — landing after a full scan;
* fluxgui: ``first_found`` + ``page_around`` with its anchor (what the pane does: it lands,
  then counts the hits in the background);
* fluxgui: ``page_around`` by message id only (an index hit: the anchor asked of the
  store, ``message_anchor``: one row), for the hit in the middle;
* fluxgui: counting every hit (``find_in_session``, the background part).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fluxgui.adapters import open_store  # noqa: E402
from fluxgui.services.find import (  # noqa: E402
    FIND_BATCH,
    find_in_session,
    first_found,
    message_hit,
    page_around,
)

DATA = ROOT / "benchmarks" / "data"
SID = "big-session"
NEEDLE = "quasar"
VERSION = 1


def hits_at(n: int) -> list[int]:
    return [10, n // 2, n - 10]


async def generate(path: Path, n: int) -> None:
    from agents import SQLiteSession

    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    hits = set(hits_at(n))
    session = SQLiteSession(SID, str(tmp))
    try:
        for start in range(0, n, 1000):
            items = []
            for i in range(start, min(n, start + 1000)):
                text = f"message {i} about nothing in particular, order {i * 7 % 1000}"
                if i in hits:
                    text += f" — the {NEEDLE.upper()} appears"
                if i % 2:
                    items.append({"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": text}]})
                else:
                    items.append({"role": "user", "content": text})
            await session.add_items(items)  # type: ignore[arg-type]
    finally:
        session.close()
    tmp.rename(path)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def timed(runs: int, make) -> float:
    await make()  # warm-up
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await make()
        samples.append(time.perf_counter() - started)
    return median_ms(samples)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--regen", action="store_true")
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"find-{args.messages}.db"
    meta = path.with_suffix(".json")
    want = {"messages": args.messages, "version": VERSION}
    if args.regen or not path.exists() or not meta.exists() or json.loads(meta.read_text()) != want:
        path.unlink(missing_ok=True)
        started = time.perf_counter()
        await generate(path, args.messages)
        meta.write_text(json.dumps(want))
        print(f"generated {args.messages:,} messages in {time.perf_counter() - started:.1f} s")
    store = await open_store(str(path))
    try:
        all_hits = await find_in_session(store, SID, NEEDLE)
        assert len(all_hits) == 3, all_hits
        middle = all_hits[1]

        async def latest() -> None:
            await store.reader.page_messages(SID, limit=100)

        async def scan_then_land() -> None:
            hits = await find_in_session(store, SID, NEEDLE)
            await page_around(store, SID, hits[0].message_id, anchor=hits[0].anchor, limit=100)

        async def stream_then_land() -> None:
            first = await first_found(store, SID, NEEDLE)
            assert first is not None
            around = await page_around(store, SID, first.message_id, anchor=first.anchor, limit=100)
            assert around is not None and NEEDLE.upper() in around.messages[around.index].text

        async def by_id() -> None:
            around = await page_around(store, SID, middle.message_id, limit=100)
            assert around is not None

        async def count_all() -> None:
            await find_in_session(store, SID, NEEDLE)

        async def longest_page() -> float:
            """The longest stretch one page of the count holds the event loop (the UI)."""
            longest = 0.0
            pages = store.reader.iter_messages(SID, batch=FIND_BATCH)
            last = time.perf_counter()
            async for page in pages:
                for m in page:
                    message_hit(SID, m, NEEDLE)
                now = time.perf_counter()
                longest = max(longest, now - last)
                last = now
            return longest * 1000

        stall = await longest_page()
        rows = [
            ("baseline: latest page (no landing)", await timed(args.runs, latest)),
            ("baseline: find every hit, then land", await timed(args.runs, scan_then_land)),
            ("fluxgui: land on the first hit (streamed)", await timed(args.runs, stream_then_land)),
            ("fluxgui: land by message id (middle hit)", await timed(args.runs, by_id)),
            ("fluxgui: count every hit (background)", await timed(args.runs, count_all)),
        ]
    finally:
        await store.close()
    print(f"longest event-loop hold per page while counting ({FIND_BATCH} messages, read"
          f" + match; includes the query's wait): {stall:.1f} ms")
    print(f"one session of {args.messages:,} messages, hits at {hits_at(args.messages)}; "
          f"median of {args.runs} runs, ms")
    width = max(len(name) for name, _ in rows)
    for name, ms in rows:
        print(f"  {name:<{width}}  {ms:9.1f}")


if __name__ == "__main__":
    asyncio.run(main())
