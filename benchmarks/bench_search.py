"""Search, the index, Postgres at scale, CLI start-up and export — each figure next to its
baseline and target, in one run (issue 19).

    .venv/bin/python benchmarks/bench_search.py [--messages 1000000] [--sessions 10000]
                                               [--parts sqlite,postgres,cli,export]
                                               [--pg postgresql://root@127.0.0.1:5432]

Fixtures (built once, cached):

* SQLite: ``bench_store.py``'s stores (``benchmarks/data/flux.db``, ``agents.db``),
  written by the real libraries (``flux.sessions.SQLiteSession.add_messages``,
  ``agents.SQLiteSession.add_items``). The index benchmarks work on a copy (the update
  appends to it through the library); the originals stay byte-identical.
* Postgres: database ``fluxgui_bench19`` — the Agents SDK tables written by the real
  ``SQLAlchemySession.add_items`` (one call per session, 8 sessions at a time on one
  engine), and flux's ``messages`` table holding the very rows the flux library wrote to
  ``flux.db`` (flux has no Postgres writer), put there with asyncpg's COPY. A ``pg_trgm``
  GIN index on each text column (the one ``fluxgui search`` advises) is made there too.
  The indexes are fluxgui's search cache: ``benchmarks/data/index-cache``.

Times are medians of warm runs (hot OS cache) in ms unless said otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
for p in (str(HERE), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

os.environ.setdefault("FLUXGUI_CACHE_DIR", str(DATA / "index-cache"))

PG_DB = "fluxgui_bench19"
SRC_SUFFIX = ""
NEEDLES = [("zanzibar", "rare word"), ("weather forecast", "common phrase"), ("zürich", "non-ASCII")]
#: on Postgres also a word in 8% of the rows: the server's planner walks the primary key
#: backwards for a LIMIT (a rare phrase of common trigrams rechecks every candidate)
PG_NEEDLES = NEEDLES[:2] + [("weather", "common word")]
ROWS: list[tuple[str, str, str, str]] = []


def raw_sqlite(path: Path) -> Any:
    """A plain sqlite3 connection for reading (as bench_export.py's): not ``mode=ro``,
    which leaves ``-wal``/``-shm`` behind on these WAL stores (and bench_store.py then
    generates them again); a read-write connection with ``query_only`` removes them."""
    import sqlite3

    conn = sqlite3.connect(str(path))
    conn.execute("PRAGMA query_only=ON")
    return conn


def row(what: str, value: str, baseline: str = "", target: str = "") -> None:
    ROWS.append((what, value, baseline, target))
    print(f"  {what:<52} {value:>14}   {baseline:<34} {target}", flush=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


async def timed(fn: Callable[[], Awaitable[Any]], runs: int = 5) -> tuple[float, Any]:
    result = await fn()  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        result = await fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def timed_sync(fn: Callable[[], Any], runs: int = 5) -> tuple[float, Any]:
    result = fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


# =========================================================================== SQLite


async def bench_sqlite(fmt: str, src: Path) -> None:

    from fluxgui.adapters import open_store
    from fluxgui.services.index import index_path, scan, search, update_index

    work = DATA / f"bench19-{fmt}.db"
    shutil.copyfile(src, work)
    store = await open_store(str(work))
    path = index_path(store.store_key)
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    print(f"\n== SQLite, {fmt} format ({work.stat().st_size / 1e6:,.0f} MB) ==", flush=True)
    t = time.perf_counter()
    report = await update_index(store)
    build = time.perf_counter() - t
    size = sum(Path(str(path) + s).stat().st_size for s in ("", "-wal") if Path(str(path) + s).exists())
    row("index build (whole store)", f"{build:,.1f} s", f"{report.added:,} messages, {size / 1e6:,.0f} MB", "≤ 60 s")
    t = time.perf_counter()
    nothing = await update_index(store)
    row("index update, nothing new", ms(time.perf_counter() - t), f"{nothing.added} added", "")
    await store.close()
    await append_1000(fmt, work)
    store = await open_store(str(work))
    t = time.perf_counter()
    report = await update_index(store)
    row("index update after 1,000 new messages", ms(time.perf_counter() - t),
        f"{report.added} added, {report.reindexed} re-read", "≤ 1 s")
    table, col = ("messages", "content") if fmt == "flux" else ("agent_messages", "message_data")
    raw = raw_sqlite(work)
    for needle, what in NEEDLES:
        t_idx, res = await timed(lambda n=needle: search(store, n, limit=50, use="index", update=False))
        t_all, every = await timed(lambda n=needle: search(store, n, use="index", update=False), runs=3)
        t_like, likes = timed_sync(lambda n=needle: raw.execute(
            f"SELECT id FROM {table} WHERE {col} LIKE ?", (f"%{n}%",)).fetchall(), runs=3)
        row(f"search {what} {needle!r}: index, 50 hits", ms(t_idx), f"raw LIKE {ms(t_like)} ({len(likes):,} rows)", "≤ 100 ms")
        row(f"search {what}: index, all {len(every.hits):,} hits", ms(t_all), "", "")
        t = time.perf_counter()
        sessions = await store.reader.search_sessions(needle, limit=50)
        row(f"search {what}: the store's own search (sessions)", ms(time.perf_counter() - t), f"{len(sessions)} sessions", "")
    t = time.perf_counter()
    scanned = await scan(store, NEEDLES[0][0], limit=50)
    row(f"search {NEEDLES[0][1]}: scan of every message, 50 hits", ms(time.perf_counter() - t),
        f"{len(scanned.hits)} hits (index: same)", "")
    raw.close()
    await store.close()
    work.unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(work) + suffix).unlink(missing_ok=True)


async def append_1000(fmt: str, path: Path) -> None:
    """1,000 new messages in 10 sessions, through the library."""
    for i in range(10):
        rows = [{"role": "user", "content": f"appended message {j} about a zanzibar parcel"} for j in range(100)]
        if fmt == "flux":
            from flux.sessions import SQLiteSession

            await SQLiteSession(str(path), session_id=f"appended-{i}").add_messages(rows)
        else:
            from agents import SQLiteSession as AgentsSession

            s = AgentsSession(f"appended-{i}", str(path))
            await s.add_items(rows)  # type: ignore[arg-type]
            s.close()


# =========================================================================== Postgres


async def pg_fixture(base: str, n_messages: int, n_sessions: int) -> str:
    import asyncpg

    admin = await asyncpg.connect(f"{base}/postgres")
    try:
        exists = await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", PG_DB)
        if not exists:
            await admin.execute(f'CREATE DATABASE "{PG_DB}"')
    finally:
        await admin.close()
    url = f"{base}/{PG_DB}"
    conn = await asyncpg.connect(url)
    try:
        have = await conn.fetchval("SELECT to_regclass('agent_messages') IS NOT NULL AND to_regclass('messages') IS NOT NULL")
        count = await conn.fetchval("SELECT (SELECT COUNT(*) FROM agent_messages) + (SELECT COUNT(*) FROM messages)") if have else 0
    finally:
        await conn.close()
    if count != 2 * n_messages:
        await build_pg(url, n_messages, n_sessions)
    return url


async def build_pg(url: str, n_messages: int, n_sessions: int) -> None:

    import asyncpg
    from agents.extensions.memory.sqlalchemy_session import SQLAlchemySession
    from sqlalchemy.ext.asyncio import create_async_engine

    conn = await asyncpg.connect(url)
    await conn.execute("DROP TABLE IF EXISTS agent_messages, agent_sessions, messages")
    await conn.close()
    print(f"  writing {n_messages:,} Agents SDK items to Postgres with SQLAlchemySession.add_items ...", flush=True)
    t = time.perf_counter()
    src = raw_sqlite(DATA / f"agents{SRC_SUFFIX}.db")
    sessions: dict[str, list[str]] = {}
    for sid, data in src.execute("SELECT session_id, message_data FROM agent_messages ORDER BY id"):
        sessions.setdefault(sid, []).append(data)
    src.close()
    import json

    engine = create_async_engine(url.replace("postgresql://", "postgresql+asyncpg://"), pool_size=8)
    first = SQLAlchemySession("warm-up", engine=engine, create_tables=True)
    await first.clear_session()
    queue = list(sessions.items())

    async def worker() -> None:
        while queue:
            sid, items = queue.pop()
            s = SQLAlchemySession(sid, engine=engine, create_tables=False)
            await s.add_items([json.loads(d) for d in items])

    await asyncio.gather(*(worker() for _ in range(8)))
    await engine.dispose()
    print(f"  ... {time.perf_counter() - t:,.0f} s; copying flux's rows (written by the flux library) ...", flush=True)
    t = time.perf_counter()
    from fluxgui.adapters.sql.flux import GENERIC_DDL

    conn = await asyncpg.connect(url)
    for ddl in GENERIC_DDL:
        await conn.execute(ddl)
    src = raw_sqlite(DATA / f"flux{SRC_SUFFIX}.db")
    rows = src.execute("SELECT id, session_id, role, content, metadata, created_at FROM messages ORDER BY id")
    from datetime import datetime

    records = [(r[0], r[1], r[2], r[3], r[4], datetime.fromisoformat(r[5])) for r in rows]
    src.close()
    await conn.copy_records_to_table("messages", records=records,
                                     columns=["id", "session_id", "role", "content", "metadata", "created_at"])
    await conn.execute("SELECT setval(pg_get_serial_sequence('messages', 'id'), (SELECT MAX(id) FROM messages))")
    print(f"  ... {time.perf_counter() - t:,.0f} s; trigram indexes ...", flush=True)
    await conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    await conn.execute("CREATE INDEX IF NOT EXISTS messages_content_trgm ON messages USING gin (content gin_trgm_ops)")
    await conn.execute("CREATE INDEX IF NOT EXISTS agent_messages_message_data_trgm ON agent_messages USING gin (message_data gin_trgm_ops)")
    await conn.execute("VACUUM ANALYZE")
    await conn.close()


async def bench_pg(base: str, n_messages: int, n_sessions: int) -> None:
    import asyncpg

    from fluxgui.adapters import open_store
    from fluxgui.services.index import index_path, search, update_index

    print("\n== Postgres ==", flush=True)
    url = await pg_fixture(base, n_messages, n_sessions)
    sa_url = url.replace("postgresql://", "postgresql+asyncpg://")
    t_connect, _ = await timed(lambda: _connect_close(url))
    for fmt in ("flux", "agents"):
        opts = {"format": fmt}
        t_open, _ = await timed(lambda: _open_close(sa_url, opts))
        row(f"{fmt}: open_store", ms(t_open), f"asyncpg connect {ms(t_connect)}", f"≤ {ms(t_connect + 0.150)} (connect + 150)")
        store = await open_store(sa_url, **opts)
        t_page, page = await timed(lambda: store.reader.list_sessions(limit=50))
        raw_sql = RAW_FIRST_PAGE[fmt]
        conn = await asyncpg.connect(url)
        t_raw, raw_rows = await timed(lambda: conn.fetch(raw_sql))
        await conn.close()
        same = {s.id for s in page.sessions} == {r[0] for r in raw_rows}
        row(f"{fmt}: first page (50 sessions)", ms(t_page),
            f"raw asyncpg {ms(t_raw)} (same sessions: {same})", "≤ 50 ms")
        for needle, what in PG_NEEDLES:
            t_srv, res = await timed(lambda n=needle: search(store, n, limit=50))
            conn = await asyncpg.connect(url)
            table, col = ("messages", "content") if fmt == "flux" else ("agent_messages", "message_data")
            t_ilike, ilike = await timed(lambda n=needle: conn.fetch(
                f"SELECT id FROM {table} WHERE {col} ILIKE $1 ORDER BY id DESC LIMIT 50", f"%{n}%"))
            await conn.execute("SET enable_bitmapscan = off")
            t_seq, _ = await timed(lambda n=needle: conn.fetch(
                f"SELECT id FROM {table} WHERE {col} ILIKE $1", f"%{n}%"), runs=1)
            await conn.close()
            row(f"{fmt}: search {what} ({res.path}), 50 hits", ms(t_srv),
                f"raw ILIKE {ms(t_ilike)}; without the index {ms(t_seq)}", "≤ 100 ms")
        if fmt == "agents":
            path = index_path(store.store_key)
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
            t = time.perf_counter()
            report = await update_index(store)
            row("agents: local index build over Postgres", f"{time.perf_counter() - t:,.1f} s", f"{report.added:,} messages", "≤ 60 s")
            for needle, what in NEEDLES[:2]:
                t_idx, _ = await timed(lambda n=needle: search(store, n, limit=50, use="index", update=False))
                row(f"agents: search {what} (local index), 50 hits", ms(t_idx), "", "≤ 100 ms")
            t = time.perf_counter()
            await update_index(store)
            row("agents: index update over Postgres, nothing new", ms(time.perf_counter() - t), "", "")
        await store.close()


async def _connect_close(url: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    await conn.close()


async def _open_close(url: str, opts: dict[str, Any]) -> None:
    from fluxgui.adapters import open_store

    store = await open_store(url, **opts)
    await store.close()


#: the query a person would write for the first page, through asyncpg
RAW_FIRST_PAGE = {
    "flux": """SELECT session_id, COUNT(*), MIN(created_at), MAX(created_at), MAX(id) FROM messages
               GROUP BY session_id ORDER BY MAX(id) DESC LIMIT 50""",
    "agents": """SELECT s.session_id, s.created_at, s.updated_at,
                        (SELECT COUNT(*) FROM agent_messages m WHERE m.session_id = s.session_id)
                 FROM agent_sessions s ORDER BY s.updated_at DESC, s.session_id DESC LIMIT 50""",
}


# =========================================================================== CLI, export


def bench_cli(src: Path, rounds: int = 21) -> None:
    """``fluxgui ls`` and ``show`` as processes against the import floor (the interpreter
    with what any command of them needs: asyncio, aiosqlite, sqlite3). The commands run
    in turns, one of each a round, so a machine whose load drifts slows each alike; the
    first round warms the OS cache; a ratio is the median of the rounds' ratios. ``show``
    also on the largest session (its count
    walks 100,000 index entries), for information."""
    print(f"\n== CLI processes (wall time, median of {rounds}, interleaved) ==", flush=True)
    conn = raw_sqlite(src)
    sid = conn.execute("SELECT session_id FROM messages ORDER BY id DESC LIMIT 1").fetchone()[0]
    largest = conn.execute(
        "SELECT session_id FROM messages GROUP BY session_id ORDER BY COUNT(*) DESC LIMIT 1"
    ).fetchone()[0]
    conn.close()
    # As installed: with byte-code caches (an environment that forbids writing them,
    # PYTHONDONTWRITEBYTECODE, would time the compiler instead).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "fluxgui")], env=env,
                   capture_output=True, check=False)
    fluxgui = [sys.executable, "-m", "fluxgui"]
    commands = {
        "floor": [sys.executable, "-c", "import asyncio, aiosqlite, sqlite3"],
        "ls": [*fluxgui, "ls", str(src)],
        "show --limit 100": [*fluxgui, "show", str(src), sid, "--limit", "100"],
        "show --limit 100, largest session": [*fluxgui, "show", str(src), largest, "--limit", "100"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(rounds + 1):
        for name, args in commands.items():
            t = time.perf_counter()
            subprocess.run(args, capture_output=True, env=env, check=True)
            if round_:
                times[name].append(time.perf_counter() - t)
    floors = times.pop("floor")
    floor = statistics.median(floors)
    for name, spent in times.items():
        # the ratio of each round, then their median: what the load did to a round's
        # floor it did to that round's commands too
        ratio = statistics.median(t / f for t, f in zip(spent, floors))
        row(f"fluxgui {name} (flux, 1M)", ms(statistics.median(spent)),
            f"import floor {ms(floor)} → {ratio:.2f}×", "≤ 1.3×" if "largest" not in name else "")


async def bench_export(fmt: str, src: Path) -> None:
    import json

    from fluxgui.adapters import open_store
    from fluxgui.services.export import export_sessions

    print(f"\n== export, {fmt} ==", flush=True)
    out = DATA / f"bench19-export.{os.getpid()}.{fmt}.jsonl"  # (another run may share DATA)
    base_out = DATA / f"bench19-baseline.{os.getpid()}.jsonl"
    table, cols = ("messages", "session_id, id, role, content, metadata, created_at") if fmt == "flux" else (
        "agent_messages", "session_id, id, message_data, created_at")
    t = time.perf_counter()
    conn = raw_sqlite(src)
    with open(base_out, "w", encoding="utf-8") as f:
        # (as bench_export.py's streaming baseline: the text as it is, not \u-escaped)
        for r in conn.execute(f"SELECT {cols} FROM {table} ORDER BY session_id, id"):
            f.write(json.dumps(r, ensure_ascii=False))
            f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    conn.close()
    t_base = time.perf_counter() - t
    mb_base = base_out.stat().st_size / 1e6 / t_base
    t = time.perf_counter()
    store = await open_store(str(src))
    result = await export_sessions(store, out, "jsonl", force=True)
    await store.close()
    t_fg = time.perf_counter() - t
    mb_fg = result.bytes / 1e6 / t_fg
    row(f"export jsonl ({fmt}, 1M)", f"{mb_fg:,.1f} MB/s",
        f"json.dumps per row {mb_base:,.1f} MB/s → {mb_fg / mb_base:.2f}×", "≥ 0.8×")
    row(f"  (time: fluxgui {t_fg:,.1f} s, baseline {t_base:,.1f} s)", f"{t_base / t_fg:.2f}× by time", "", "")
    out.unlink(missing_ok=True)
    base_out.unlink(missing_ok=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--sessions", type=int, default=10_000)
    ap.add_argument("--parts", default="sqlite,postgres,cli,export")
    ap.add_argument("--small", action="store_true", help="use the 10,000-message stores (a quick check of the script)")
    ap.add_argument("--pg", default=os.environ.get("FLUXGUI_BENCH_PG", "postgresql://root@127.0.0.1:5432"))
    args = ap.parse_args()
    from bench_store import ensure_store

    parts = set(args.parts.split(","))
    global PG_DB, SRC_SUFFIX
    if args.small:
        from bench_store import SMALL_MESSAGES

        args.messages, args.sessions = SMALL_MESSAGES, 100
        PG_DB, SRC_SUFFIX = PG_DB + "_small", "-small"
    needed = ("flux",) if parts <= {"cli"} else ("flux", "agents")
    stores = {fmt: Path(ensure_store(fmt, fmt + SRC_SUFFIX, args.messages, args.sessions, False)["path"])
              for fmt in needed}
    print(f"  {'figure':<52} {'value':>14}   {'baseline':<34} target")
    if "sqlite" in parts:
        for fmt in ("flux", "agents"):
            asyncio.run(bench_sqlite(fmt, stores[fmt]))
    if "postgres" in parts:
        asyncio.run(bench_pg(args.pg, args.messages, args.sessions))
    if "cli" in parts:
        bench_cli(stores["flux"])
    if "export" in parts:
        for fmt in ("flux", "agents"):
            asyncio.run(bench_export(fmt, stores[fmt]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
