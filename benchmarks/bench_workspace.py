"""Benchmark a workspace of several stores (issue 36): the merged session list's first
page and one split session's merged timeline, next to the same reads of one store.

    .venv/bin/python benchmarks/bench_workspace.py [--messages 100000] [--sessions 1000]
        [--split 10000] [--runs 5] [--regen] [--dest URL]

Three replica stores (``benchmarks/data/ws-<n>-{a,b,c}.db``, cached) are written by the
real ``agents.SQLiteSession`` (``add_items`` in batches of 50): ``--messages`` items each,
in ``--sessions`` sticky sessions per store plus one session ``split-big`` whose
``--split`` items are spread over the three (each turn on a random replica). The
library stamps every row with the second it was written; the rows are then given
distinct times (one second apart, the replicas interleaved) with one ``UPDATE`` per
store, as a deployment's traffic would have left them.

Printed (ms, median of ``--runs`` fresh opens; the one-store and merged reads of a line
run by turns, so that the machine's drift lands on both):

* ``ls`` first page (50 rows): one store (the baseline) vs the three merged, with the
  merged counts of rows in several stores read (``exact``) and not, and on stores
  already open (without the cost of opening three);
* ``fluxgui ls`` as a command (its own process, ``--limit 50``): one store vs the three;
* the split session's first screen (its first 100 items): one store's
  ``page_messages(limit=100)`` vs the merged timeline's first turns;
* the split session whole: its three parts read one after another (``iter_messages``)
  vs the merged timeline;
* consolidation of the split session into a new store (``--dest``, default a new SQLite
  file) vs ``copy`` of one store's part of it, in items per second;
* with ``--all-into URL``: consolidation of every session of the three stores (the
  issue's 3 × 100,000 items) into that store vs ``copy`` of every session of the three,
  one store after another, into a second store of the same kind (``URL`` names a
  Postgres server, e.g. ``postgresql://root@127.0.0.1:5432``: databases
  ``fluxgui_bench36_merge`` and ``fluxgui_bench36_copy`` are made afresh each run), in
  items per second.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import aclosing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fluxgui.adapters.registry import open_store  # noqa: E402
from fluxgui.services.transfer import copy_sessions  # noqa: E402
from fluxgui.services.workspace import Entry, Workspace  # noqa: E402
from fluxgui.services.workspace.consolidate import write_merge  # noqa: E402
from fluxgui.services.workspace.listing import merged_sessions  # noqa: E402
from fluxgui.services.workspace.timeline import merged_turns, timeline  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
VERSION = 1
BATCH = 50
SPLIT = "split-big"


def _turn(rng: random.Random, sid: str, n: int) -> list[dict]:
    words = " ".join(rng.choice(["order", "widget", "refund", "ship", "Lyon", "total"]) for _ in range(12))
    return [
        {"role": "user", "content": f"{sid} turn {n}: {words}"},
        {"type": "message", "role": "assistant", "id": f"msg_{sid}_{n}", "status": "completed",
         "content": [{"type": "output_text", "text": f"answer {n}: {words}", "annotations": []}]},
    ]


async def _write(paths: list[Path], messages: int, sessions: int, split: int) -> None:
    from agents import SQLiteSession

    rng = random.Random(36)
    pending: list[list[tuple[str, list[dict]]]] = [[] for _ in paths]
    per_session = max(2, (messages - split // len(paths)) // sessions)
    for i, _p in enumerate(paths):
        for s in range(sessions):
            sid = f"s{i}-{s}"
            items = [it for n in range(per_session // 2) for it in _turn(rng, sid, n)]
            pending[i] += [(sid, items[k:k + BATCH]) for k in range(0, len(items), BATCH)]
    for n in range(split // 2):
        pending[rng.randrange(len(paths))].append((SPLIT, _turn(rng, SPLIT, n)))
    for path, work in zip(paths, pending):
        # one session open at a time (each holds a connection: 10,000 would exhaust the files)
        current: tuple[str, SQLiteSession] | None = None
        for sid, items in work:
            if current is None or current[0] != sid:
                if current is not None:
                    current[1].close()
                current = (sid, SQLiteSession(sid, str(path)))
            await current[1].add_items(items)  # type: ignore[arg-type]
        if current is not None:
            current[1].close()
    # distinct times: the split session's turns in their order across the replicas
    for i, path in enumerate(paths):
        conn = sqlite3.connect(str(path))
        conn.execute(
            "UPDATE agent_messages SET created_at = datetime('2025-01-01', '+' || (id * ? + ?) || ' seconds')",
            (len(paths), i),
        )
        conn.execute(
            "UPDATE agent_sessions SET updated_at = (SELECT max(created_at) FROM agent_messages m "
            "WHERE m.session_id = agent_sessions.session_id)"
        )
        conn.commit()
        conn.close()


def stores(messages: int, sessions: int, split: int, regen: bool) -> list[Path]:
    DATA.mkdir(parents=True, exist_ok=True)
    name = f"ws-{messages}-{sessions}-{split}"
    paths = [DATA / f"{name}-{c}.db" for c in "abc"]
    meta = DATA / f"{name}.json"
    want = {"version": VERSION, "messages": messages, "sessions": sessions, "split": split}
    if not regen and meta.exists() and json.loads(meta.read_text()) == want and all(p.exists() for p in paths):
        return paths
    for p in paths:
        for extra in ("", "-wal", "-shm"):
            Path(str(p) + extra).unlink(missing_ok=True)
    start = time.perf_counter()
    asyncio.run(_write(paths, messages, sessions, split))
    meta.write_text(json.dumps(want))
    print(f"(wrote the stores in {time.perf_counter() - start:.0f} s)")
    return paths


def _commands_ms(runs: int, paths: list[Path]) -> tuple[float, float]:
    """The median wall times of ``fluxgui ls PATH --limit 50`` (the first store) and of
    ``fluxgui ls PATH… --limit 50`` (all of them), each in its own process, run by turns
    (the machine's pace drifts: one after the other, a drift would land on one side)."""
    import subprocess

    def cmd(chosen: list[Path]) -> list[str]:
        return [sys.executable, "-m", "fluxgui", "ls", *map(str, chosen), "--limit", "50"]

    one, merged = [], []
    for _ in range(runs):
        for times, chosen in ((one, paths[:1]), (merged, paths)):
            start = time.perf_counter()
            subprocess.run(cmd(chosen), cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(one), statistics.median(merged)


async def _median(runs: int, fn) -> float:  # noqa: ANN001
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def _paired(runs: int, one, merged) -> tuple[float, float]:  # noqa: ANN001
    """The medians of ``one()`` and ``merged()``, run by turns (see :func:`_commands_ms`)."""
    a, b = [], []
    for _ in range(runs):
        a.append(await _median(1, one))
        b.append(await _median(1, merged))
    return statistics.median(a), statistics.median(b)


async def _first_rows(ws: Workspace, exact: bool) -> None:
    """The merged list's first 50 rows (the generator closed after, as a view would)."""
    n = 0
    async with aclosing(merged_sessions(ws, page=50, exact=exact)) as rows:
        async for _row in rows:
            n += 1
            if n == 50:
                break


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=100_000, help="items per store")
    ap.add_argument("--sessions", type=int, default=1000, help="sticky sessions per store")
    ap.add_argument("--split", type=int, default=10_000, help="items of the split session")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--regen", action="store_true")
    ap.add_argument("--dest", help="the store to consolidate into (default: a new SQLite file)")
    ap.add_argument("--all-into", metavar="URL", help="also consolidate every session into a Postgres server")
    args = ap.parse_args()
    paths = await asyncio.to_thread(stores, args.messages, args.sessions, args.split, args.regen)
    entries = [Entry(str(p)) for p in paths]

    async def one_ls() -> None:
        store = await open_store(str(paths[0]))
        await store.reader.list_sessions(limit=50)
        await store.close()

    def ws_ls(exact: bool):  # noqa: ANN202
        async def run() -> None:
            ws = await Workspace.open(entries, keyring=False)
            await _first_rows(ws, exact)
            await ws.close()
        return run

    async def one_screen() -> None:
        store = await open_store(str(paths[0]))
        await store.reader.page_messages(SPLIT, limit=100)
        await store.close()

    async def ws_screen() -> None:
        ws = await Workspace.open(entries, keyring=False)
        n = 0
        async with aclosing(merged_turns(ws, SPLIT, batch=100)) as turns:
            async for turn in turns:
                n += len(turn.messages)
                if n >= 100:
                    break
        await ws.close()

    async def parts_whole() -> None:
        for path in paths:  # the three parts, one after another: what the merge reads
            store = await open_store(str(path))
            async for _page in store.reader.iter_messages(SPLIT):
                pass
            await store.close()

    opened = await Workspace.open(entries, keyring=False)

    async def one_ls_open() -> None:
        await opened.members[0].store.reader.list_sessions(limit=50)

    async def ws_ls_open() -> None:
        await _first_rows(opened, False)

    async def ws_whole() -> None:
        ws = await Workspace.open(entries, keyring=False)
        await timeline(ws, SPLIT)
        await ws.close()

    print(f"3 stores × {args.messages:,} items ({args.sessions:,} sessions each), "
          f"split session {args.split:,} items; ms, median of {args.runs}")
    rows = [
        ("ls first page (50)", *await _paired(args.runs, one_ls, ws_ls(False))),
        ("ls first page, merged counts", None, await _median(args.runs, ws_ls(True))),
        ("ls first page, stores open", *await _paired(args.runs, one_ls_open, ws_ls_open)),
        ("split session, first 100 items", *await _paired(args.runs, one_screen, ws_screen)),
        ("split session, whole (3 parts read)", *await _paired(args.runs, parts_whole, ws_whole)),
    ]
    await opened.close()
    rows.append(("fluxgui ls (own process)", *_commands_ms(args.runs, paths)))
    print(f"{'':34}{'one store':>12}{'3 merged':>12}{'ratio':>8}")
    for label, one, merged in rows:
        ratio = f"{merged / one:.1f}×" if one else "-"
        print(f"{label:34}{(f'{one:.1f}' if one else '-'):>12}{merged:>12.1f}{ratio:>8}")

    with tempfile.TemporaryDirectory() as tmp:
        target = args.dest or str(Path(tmp) / "merged.db")
        copy_target = str(Path(tmp) / "copied.db")
        ws = await Workspace.open(entries, keyring=False)
        dest = await open_store(target, create="agents")
        start = time.perf_counter()
        done = await write_merge(ws, dest, [SPLIT])
        merge_s = time.perf_counter() - start
        written = sum(s.written for s in done.sessions)
        await dest.close()
        await ws.close()
        source = await open_store(str(paths[0]))
        copy_dest = await open_store(copy_target, create="agents")
        start = time.perf_counter()
        result = await copy_sessions(source, copy_dest, [SPLIT])
        copy_s = time.perf_counter() - start
        await copy_dest.close()
        await source.close()
    print(f"consolidate {written:,} items: {written / merge_s:,.0f} items/s; "
          f"copy of one store's {result.messages:,}: {result.messages / copy_s:,.0f} items/s "
          f"({(written / merge_s) / (result.messages / copy_s):.2f}× copy's speed)")

    if args.all_into:
        await all_into(args.all_into.rstrip("/"), entries, paths)


async def _fresh_database(server: str, name: str) -> str:
    import asyncpg

    admin = await asyncpg.connect(server.replace("postgresql+asyncpg://", "postgresql://") + "/postgres")
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return f"{server}/{name}"


async def all_into(server: str, entries: list[Entry], paths: list[Path]) -> None:
    """Every session of the three stores consolidated into a Postgres database, against
    ``copy`` of every session of each store into another."""
    merge_url = await _fresh_database(server, "fluxgui_bench36_merge")
    copy_url = await _fresh_database(server, "fluxgui_bench36_copy")
    ws = await Workspace.open(entries, keyring=False)
    dest = await open_store(merge_url, create="agents")
    start = time.perf_counter()
    done = await write_merge(ws, dest)
    merge_s = time.perf_counter() - start
    written = sum(s.written for s in done.sessions)
    await dest.close()
    await ws.close()
    copied = 0
    copy_dest = await open_store(copy_url, create="agents")
    start = time.perf_counter()
    for path in paths:
        source = await open_store(str(path))
        copied += (await copy_sessions(source, copy_dest, rename=True)).messages
        await source.close()
    copy_s = time.perf_counter() - start
    await copy_dest.close()
    print(f"consolidate every session into Postgres: {written:,} items in {merge_s:.1f} s, "
          f"{written / merge_s:,.0f} items/s; copy of the three stores' {copied:,}: {copy_s:.1f} s, "
          f"{copied / copy_s:,.0f} items/s ({(written / merge_s) / (copied / copy_s):.2f}× copy's speed)")


if __name__ == "__main__":
    asyncio.run(main())
