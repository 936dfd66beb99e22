"""OpenAI Conversations stores: what opening a long conversation at its end costs, next to
reading it whole, against the loopback Conversations API of the tests.

    .venv/bin/python benchmarks/bench_conversations.py            # 1,000 / 10,000 / 100,000 items
    .venv/bin/python benchmarks/bench_conversations.py --sizes 10000 --runs 5

For each size: the requests and the wall time (median of ``--runs``) of listing the
conversation (its count probe), of its latest page (100 items, what the window shows
first) and of three earlier pages (scrolling up), then — the baseline — of reading every
item from the start (what the SDK's ``get_items()`` does, and what fluxgui never does to
show a conversation). The server runs in this process (a thread), on loopback: the
figures are the client's and fluxgui's own costs, without a network's latency; on the
real API each request adds its round trip, so the request counts are what matters.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from conversations_server import API_KEY, ConversationsServer, texts  # noqa: E402

from fluxgui.adapters import open_store  # noqa: E402


async def measure(server: ConversationsServer, cid: str, runs: int) -> dict[str, tuple[float, int]]:
    """name → (median ms, requests per run)."""
    timings: dict[str, list[float]] = {}
    requests: dict[str, int] = {}

    async def timed(name: str, work) -> None:  # noqa: ANN001 - a coroutine factory
        before = len(server.requests)
        start = time.perf_counter()
        await work()
        timings.setdefault(name, []).append((time.perf_counter() - start) * 1000)
        requests[name] = len(server.requests) - before

    for _ in range(runs):
        store = await open_store(
            "openai-conversations:", base_url=server.base_url, api_key=API_KEY, conversations=(cid,)
        )
        try:
            await timed("list (count probe)", lambda: store.reader.list_sessions())
            page: list = []

            async def latest() -> None:
                page[:] = await store.reader.page_messages(cid, limit=100)

            await timed("latest page (100)", latest)

            async def earlier() -> None:
                anchor = page[0].sort_key
                for _ in range(3):
                    got = await store.reader.page_messages(cid, limit=100, anchor=anchor)
                    anchor = got[0].sort_key

            await timed("3 earlier pages", earlier)

            async def whole() -> None:
                async for _page in store.reader.iter_messages(cid):
                    pass

            await timed("baseline: every item", whole)
        finally:
            await store.close()
    return {name: (statistics.median(ms), requests[name]) for name, ms in timings.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="conversation sizes (items)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per median")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with ConversationsServer() as server:
        print(f"{'items':>8}  {'operation':<22} {'ms (median)':>12} {'requests':>9}")
        for size in sizes:
            cid = f"conv_bench_{size}"
            server.seed(cid, texts(size))
            for name, (ms, n) in asyncio.run(measure(server, cid, args.runs)).items():
                print(f"{size:>8,}  {name:<22} {ms:>12.1f} {n:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
