"""A search without an index (issue 34.5) against the raw query over the same rows, on the
1,000,000-message stores: SQLite (flux, agents) and Postgres without a trigram index.

    .venv/bin/python benchmarks/bench_scan.py                      # both databases
    .venv/bin/python benchmarks/bench_scan.py --parts sqlite --runs 9
    .venv/bin/python benchmarks/bench_scan.py --before              # also the old path (~10 s a search)

Stores: ``bench_store.py``'s SQLite stores (written by ``flux.sessions.SQLiteSession`` and
``agents.SQLiteSession``) and, on Postgres, database ``fluxgui_bench34``: a copy of
``bench_search.py``'s ``fluxgui_bench19`` (Agents SDK tables written by
``SQLAlchemySession.add_items``, flux's rows as the flux library wrote them) without its
trigram indexes. No local index exists (an empty ``FLUXGUI_CACHE_DIR``): every fluxgui
search takes the scan path, as a first ``fluxgui search`` does.

Per needle (a rare word, a common phrase, a non-ASCII word, and a word no row holds:
every row is read for it, 50 hits or not) it prints, in ms (median over
``--runs`` interleaved rounds; the ratio is the median of each round's ratio):

* raw — connect, then ``SELECT id FROM t WHERE col LIKE '%text%'`` (``ILIKE`` on Postgres),
  every row fetched: the query a person would write;
* fluxgui, 50 hits — ``open_store`` + ``search(store, text, limit=50)`` (what ``fluxgui
  search`` does; the database narrows the rows, each candidate checked in Python), next
  to the target (≤ 1.5× raw);
* fluxgui, all hits — the same without a limit;
* with ``--before``: the old path, every message read and checked (``full_scan``, 50
  hits), once, and whether its hits equal the narrowed search's.

It ends with the stderr of ``fluxgui search STORE zanzibar --json`` (the one line saying it
scanned) and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for p in (str(HERE), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)
os.environ["FLUXGUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-scan-cache-")

NEEDLES = [("zanzibar", "rare word"), ("weather forecast", "common phrase"), ("zürich", "non-ASCII word"),
           ("xylophone", "absent word")]
TARGET = 1.5
PG_DB = "fluxgui_bench34"
COLUMNS = {"flux": ("messages", "content"), "agents": ("agent_messages", "message_data")}


def row(what: str, value: str, baseline: str = "", verdict: str = "") -> None:
    print(f"  {what:<46} {value:>12}   {baseline:<40} {verdict}", flush=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


async def interleaved(raw: Any, ours: dict[str, Any], runs: int) -> tuple[list[float], dict[str, list[float]]]:
    """``runs`` rounds, each running ``raw`` then every one of ``ours`` (after one warm-up
    round): the raw times and each one's times."""
    raw_t: list[float] = []
    ours_t: dict[str, list[float]] = {k: [] for k in ours}
    for round_ in range(runs + 1):
        t = time.perf_counter()
        await raw()
        if round_:
            raw_t.append(time.perf_counter() - t)
        for name, fn in ours.items():
            t = time.perf_counter()
            await fn()
            if round_:
                ours_t[name].append(time.perf_counter() - t)
    return raw_t, ours_t


def fluxgui_runs(target: str, options: dict[str, Any], needle: str, counts: dict[str, str]) -> dict[str, Any]:
    """``open_store`` + ``search`` for 50 hits and for all, as the interleaved runs."""
    from fluxgui.adapters import open_store
    from fluxgui.services.index import search

    def run(limit: int | None, name: str) -> Any:
        async def go() -> None:
            store = await open_store(target, **options)
            result = await search(store, needle, limit=limit)
            assert result.path == "scan", result.path
            counts[name] = f"{len(result.hits):,} hits"
            await store.close()
        return go

    return {"50 hits": run(50, "50 hits"), "all hits": run(None, "all hits")}


def report(what: str, raw_t: list[float], ours_t: dict[str, list[float]], counts: dict[str, str]) -> list[float]:
    ratios = []
    row(f"{what}: raw query", ms(statistics.median(raw_t)), counts["raw"])
    for name, times in ours_t.items():
        ratio = statistics.median(t / r for t, r in zip(times, raw_t))
        limited = name == "50 hits"
        verdict = (f"target ≤ {TARGET}× → {'OK' if ratio <= TARGET else 'OVER'}") if limited else ""
        if limited:
            ratios.append(ratio)
        row(f"{what}: fluxgui, {name}", ms(statistics.median(times)), f"{ratio:.2f}× raw; {counts[name]}", verdict)
    return ratios


async def before(store: Any, needle: str, what: str, narrowed: Any) -> None:
    from fluxgui.services.index import full_scan

    t = time.perf_counter()
    every = await full_scan(store, needle, limit=50)
    row(f"{what}: before, every message read (50 hits)", f"{time.perf_counter() - t:,.1f} s",
        f"same hits as the narrowed search: {every.hits == narrowed.hits}")


# =========================================================================== SQLite


async def bench_sqlite(fmt: str, path: Path, runs: int, with_before: bool) -> list[float]:
    import sqlite3

    from fluxgui.adapters import open_store
    from fluxgui.services.index import search

    table, col = COLUMNS[fmt]
    print(f"\n== SQLite, {fmt} ({path.stat().st_size / 1e6:,.0f} MB) ==", flush=True)
    ratios: list[float] = []
    for needle, what in NEEDLES:
        counts: dict[str, str] = {}

        async def raw(n: str = needle) -> None:
            conn = sqlite3.connect(str(path))
            conn.execute("PRAGMA query_only=ON")
            rows = conn.execute(f"SELECT id FROM {table} WHERE {col} LIKE ?", (f"%{n}%",)).fetchall()
            conn.close()
            counts["raw"] = f"{len(rows):,} rows"

        raw_t, ours_t = await interleaved(raw, fluxgui_runs(str(path), {}, needle, counts), runs)
        ratios += report(what, raw_t, ours_t, counts)
        if with_before:
            store = await open_store(str(path))
            narrowed = await search(store, needle, limit=50)
            await before(store, needle, what, narrowed)
            await store.close()
    return ratios


# =========================================================================== Postgres


async def pg_store(base: str, messages: int, sessions: int) -> str:
    """``fluxgui_bench34``: bench_search.py's store without its trigram indexes."""
    import asyncpg

    import bench_search

    admin = await asyncpg.connect(f"{base}/postgres")
    try:
        exists = await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", PG_DB)
    finally:
        await admin.close()
    url = f"{base}/{PG_DB}"
    if exists:
        conn = await asyncpg.connect(url)
        try:
            count = await conn.fetchval("SELECT (SELECT COUNT(*) FROM agent_messages) + (SELECT COUNT(*) FROM messages)")
        finally:
            await conn.close()
        if count == 2 * messages:
            return url
    source = await bench_search.pg_fixture(base, messages, sessions)
    print(f"  copying {source.rsplit('/', 1)[1]} to {PG_DB} without its trigram indexes ...", flush=True)
    admin = await asyncpg.connect(f"{base}/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{PG_DB}"')
        await admin.execute(f'CREATE DATABASE "{PG_DB}" TEMPLATE "{source.rsplit("/", 1)[1]}"')
    finally:
        await admin.close()
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("DROP INDEX IF EXISTS messages_content_trgm, agent_messages_message_data_trgm")
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()
    return url


async def bench_pg(base: str, messages: int, sessions: int, runs: int, with_before: bool) -> list[float]:
    import asyncpg

    from fluxgui.adapters import open_store
    from fluxgui.services.index import search

    url = await pg_store(base, messages, sessions)
    sa_url = url.replace("postgresql://", "postgresql+asyncpg://")
    ratios: list[float] = []
    for fmt in ("flux", "agents"):
        table, col = COLUMNS[fmt]
        print(f"\n== Postgres, {fmt} (no trigram index) ==", flush=True)
        for needle, what in NEEDLES:
            counts: dict[str, str] = {}

            async def raw(n: str = needle, t: str = table, c: str = col) -> None:
                conn = await asyncpg.connect(url)
                rows = await conn.fetch(f"SELECT id FROM {t} WHERE {c} ILIKE $1", f"%{n}%")
                await conn.close()
                counts["raw"] = f"{len(rows):,} rows"

            runs_ = fluxgui_runs(sa_url, {"format": fmt}, needle, counts)
            raw_t, ours_t = await interleaved(raw, runs_, runs)
            ratios += report(what, raw_t, ours_t, counts)
            if with_before:
                store = await open_store(sa_url, format=fmt)
                narrowed = await search(store, needle, limit=50)
                await before(store, needle, what, narrowed)
                await store.close()
    return ratios


def stderr_line(path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "fluxgui", "search", str(path), "zanzibar", "--json"],
                         capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    print(f"\n`fluxgui search {path.name} zanzibar --json` said on stderr "
          f"({len(out.stderr.splitlines())} line): {out.stderr.strip()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--parts", default="sqlite,postgres")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--before", action="store_true", help="also time the old path (every message read)")
    ap.add_argument("--pg", default=os.environ.get("FLUXGUI_BENCH_PG", "postgresql://root@127.0.0.1:5432"))
    args = ap.parse_args()
    from bench_store import ensure_store

    stores = {fmt: Path(ensure_store(fmt, fmt, args.messages, args.sessions, False)["path"])
              for fmt in ("flux", "agents")}
    print(f"search without an index vs the raw query ({os.cpu_count()} CPUs; median of "
          f"{args.runs} interleaved rounds)")
    ratios: list[float] = []
    parts = set(args.parts.split(","))
    if "sqlite" in parts:
        for fmt, path in stores.items():
            ratios += asyncio.run(bench_sqlite(fmt, path, args.runs, args.before))
    if "postgres" in parts:
        ratios += asyncio.run(bench_pg(args.pg, args.messages, args.sessions, args.runs, args.before))
    if ratios:
        worst = max(ratios)
        print(f"\nworst fluxgui/raw ratio (50 hits): {worst:.2f}× "
              f"({'within' if worst <= TARGET else 'OVER'} the {TARGET}× target)")
    stderr_line(stores["flux"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
