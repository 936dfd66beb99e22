"""Benchmark fluxgui's first pages against raw sqlite3 on a large session store.

    .venv/bin/python benchmarks/bench_store.py [--messages 1000000] [--sessions 10000]
                                              [--formats flux,agents] [--regen] [--runs 5]

1. Generation (cached in benchmarks/data/, redone with --regen or when the parameters
   or the generator change). Every store is written by the REAL library, through its
   public API, nothing bulk-inserted behind its back:

   * flux:   ``flux.sessions.SQLiteSession(path, session_id=...).add_messages([...])``
     (one session object per conversation; the library opens, commits and closes a
     connection per call, so every call checkpoints the WAL);
   * agents: ``agents.SQLiteSession(session_id, path).add_items([...])`` (session objects
     kept in a small LRU, closed when evicted, as an app holding its open conversations
     would).

   Each call writes a batch of 10-100 messages cut from a stream of realistic turns
   (flux: user / assistant / tool rows with metadata, sometimes a system row first;
   agents: user messages, assistant ``output_text`` messages, ``function_call`` and
   ``function_call_output`` items). Session sizes are log-normal; one session holds 10%
   of all messages and is active from the first round to the last. Writes go in rounds:
   each session is active over a few consecutive rounds starting at a random round, and
   the calls of one round are shuffled, so the order of activity (ids, ``created_at``,
   ``updated_at``) is what a busy server would leave. A small store (10,000 messages,
   sessions scaled the same way) is generated alongside for the memory comparison.
   Stores are written to ``*.tmp`` and renamed when complete.

2. For each format, timings in ms: the median of --runs runs after one warm-up, each
   run on a fresh open (the OS page cache is warm: these are hot-cache numbers):

   * ``ls`` first page (50 sessions): ``open_store`` + ``list_sessions(limit=50)``
     vs (a) the query a person would script with sqlite3 and (b) the very SQL fluxgui
     ran (recorded from its backend) replayed through sqlite3; rows compared.
   * ``show`` first page of the largest session: ``page_messages(sid, limit=100)`` and
     ``session_info(sid)`` vs raw sqlite3 for the same rows; rows compared.
   * search: ``store.search_sessions(word)`` for a rare and a common word vs a raw LIKE.
   * the real library loading the largest session in full and with limit=100.
   * the ``fluxgui ls/show --json`` CLI as a subprocess (wall time INCLUDING Python
     start-up and imports; the bare start-up is printed for reference) and its peak RSS.
   * peak RSS of a fresh process doing the first-page operations, big vs small store.

   Times exclude closing the connection (for fluxgui and raw alike). The "open only" row
   is the fixed cost of opening (``open_store`` vs ``sqlite3.connect`` + one read).
   The natural Agents SDK query orders by ``updated_at DESC``, then the latest item's id,
   then ``session_id``, as fluxgui does: the column has one-second resolution, so without
   the tie-break the sessions of a busy second come back in an arbitrary order.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
GEN_VERSION = 3  # bump when the generated data changes
SEED = 20240611
SMALL_MESSAGES = 10_000
SEARCH_WORDS = (("zanzibar", "rare word"), ("weather", "common word"))
LS_LIMIT = 50
SHOW_LIMIT = 100

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# =========================================================================== content

_WORDS = """
the a an and or but if then when while because so to of in on at by for with from
about into over after before under between without through during against among
i you we they he she it this that these those my your our their its what which who
is are was were be been being have has had do does did can could will would should
may might must shall need want like know think see look make take give tell ask
use find work call try help show run build deploy check fix update read write send
file files data table query index cache server client request response error errors
timeout retry config value values list string number user users account order orders
invoice payment price report summary result results weather forecast city today
tomorrow week month year time date hour minute second morning evening night
good bad new old big small first last next other same different important possible
please thanks sure okay yes no maybe here there now again also only just very really
python sqlite session sessions message messages agent agents tool tools model output
input text json schema column row rows page pages search memory disk network latency
meeting calendar email draft reply project task tasks ticket bug feature release
branch commit merge review test tests build pipeline log logs metric metrics alert
customer support refund shipping address package delivery status tracking warehouse
café naïve Zürich résumé déjà-vu São-Paulo Kraków 東京 München
""".split()

_CITIES = ["Paris", "Lisbon", "Osaka", "Denver", "Nairobi", "Lima", "Oslo", "Hanoi",
           "Zürich", "Kraków", "Austin", "Perth"]
_TOOLS = ["get_weather", "search_orders", "lookup_invoice", "run_query", "send_email",
          "read_file", "create_ticket", "get_forecast"]
_MODELS = ["gpt-4o-mini", "gpt-4.1", "o4-mini"]
RARE = "zanzibar"


class Texts:
    """Pools of pre-built texts (fast to draw from) with a rare marker word sprinkled in."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

        def text(n_words: int) -> str:
            words = rng.choices(_WORDS, k=n_words)
            s = " ".join(words)
            return s[0].upper() + s[1:] + rng.choice([".", "?", "!", "."])

        self.short = [text(rng.randint(3, 15)) for _ in range(1500)]
        self.long = [text(int(rng.lognormvariate(3.3, 0.8)) + 5) for _ in range(2500)]
        self.rare = []
        for _ in range(300):
            words = rng.choices(_WORDS, k=rng.randint(6, 40))
            words.insert(rng.randrange(len(words)), rng.choice(["Zanzibar", "zanzibar", "ZANZIBAR"]))
            self.rare.append(" ".join(words) + ".")

    def user(self) -> str:
        if self.rng.random() < 0.001:
            return self.rng.choice(self.rare)
        return self.rng.choice(self.short if self.rng.random() < 0.6 else self.long)

    def answer(self) -> str:
        if self.rng.random() < 0.001:
            return self.rng.choice(self.rare)
        return self.rng.choice(self.long)

    def tool_call(self) -> tuple[str, str, str]:
        """(call_id, name, arguments JSON)."""
        rng = self.rng
        name = rng.choice(_TOOLS)
        city = "Zanzibar" if rng.random() < 0.001 else rng.choice(_CITIES)
        if name in ("get_weather", "get_forecast"):
            args = {"city": city, "units": rng.choice(["metric", "imperial"])}
        elif name == "run_query":
            args = {"sql": "SELECT * FROM orders WHERE id = %d" % rng.randint(1, 99999)}
        else:
            args = {"query": rng.choice(self.short)}
        return "call_%024x" % rng.getrandbits(96), name, json.dumps(args)

    def tool_output(self, name: str) -> str:
        rng = self.rng
        if name in ("get_weather", "get_forecast"):
            return json.dumps({"temperature": rng.randint(-10, 38),
                               "conditions": rng.choice(["sunny", "rain", "cloudy", "snow"])})
        return rng.choice(self.long)


def flux_turns(rng: random.Random, texts: Texts) -> Iterator[dict[str, Any]]:
    """An endless conversation in flux's message dicts (what an app passes to add_messages)."""
    if rng.random() < 0.3:
        yield {"role": "system", "content": "You are a helpful assistant. " + rng.choice(texts.short)}
    while True:
        yield {"role": "user", "content": texts.user()}
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            call_id, name, args = texts.tool_call()
            yield {"role": "assistant", "content": "",
                   "metadata": {"tool_calls": [{"id": call_id, "name": name, "arguments": args}]}}
            yield {"role": "tool", "content": texts.tool_output(name),
                   "metadata": {"tool_call_id": call_id, "name": name}}
        yield {"role": "assistant", "content": texts.answer(),
               "metadata": {"model": rng.choice(_MODELS),
                            "usage": {"input_tokens": rng.randint(50, 4000),
                                      "output_tokens": rng.randint(5, 800)}}}


def agents_turns(rng: random.Random, texts: Texts) -> Iterator[dict[str, Any]]:
    """An endless conversation as Agents SDK input items."""
    while True:
        yield {"role": "user", "content": texts.user()}
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            call_id, name, args = texts.tool_call()
            yield {"arguments": args, "call_id": call_id, "name": name, "type": "function_call",
                   "id": "fc_%032x" % rng.getrandbits(128), "status": "completed"}
            yield {"call_id": call_id, "output": texts.tool_output(name),
                   "type": "function_call_output"}
        yield {"id": "msg_%032x" % rng.getrandbits(128), "type": "message", "role": "assistant",
               "status": "completed",
               "content": [{"type": "output_text", "text": texts.answer(), "annotations": [],
                            "logprobs": []}]}


# =========================================================================== the plan


def make_plan(n_messages: int, n_sessions: int, seed: int):
    """Session ids, sizes and the write order: a list of (session index, batch size)."""
    if n_sessions < 2 or n_messages < 4 * n_sessions:
        raise SystemExit("need at least 2 sessions and 4 messages per session")
    rng = random.Random(seed)
    big = n_messages // 10
    rest = n_messages - big
    k = n_sessions - 1
    weights = [rng.lognormvariate(0.0, 1.0) for _ in range(k)]
    total_w = sum(weights)
    sizes = [max(2, int(w / total_w * rest)) for w in weights]
    diff = rest - sum(sizes)
    while diff:
        i = rng.randrange(k)
        if diff > 0:
            sizes[i] += 1
            diff -= 1
        elif sizes[i] > 2:
            sizes[i] -= 1
            diff += 1
    cap = big // 2
    for i, s in enumerate(sizes):  # keep one clearly largest session
        if s > cap:
            sizes[(i + 1) % k] += s - cap
            sizes[i] = cap
    sizes = [big] + sizes  # session 0 is the largest
    ids = ["%016x" % rng.getrandbits(64) for _ in range(n_sessions)]

    rounds = max(10, min(200, n_sessions // 50))
    schedule: list[list[tuple[int, int]]] = [[] for _ in range(rounds)]
    for s, size in enumerate(sizes):
        chunks = []
        left = size
        while left:
            b = min(left, rng.randint(10, 100))
            chunks.append(b)
            left -= b
        nb = len(chunks)
        span = rounds if s == 0 else min(nb, rounds)
        start = 0 if s == 0 else rng.randint(0, rounds - span)
        for j, b in enumerate(chunks):
            schedule[start + j * span // nb].append((s, b))
    order: list[tuple[int, int]] = []
    for r in schedule:
        # a session's chunks within one round stay in order; the round is interleaved
        rng.shuffle(r)
        seen: dict[int, list[int]] = collections.defaultdict(list)
        for s, b in r:
            seen[s].append(b)
        it = {s: iter(bs) for s, bs in seen.items()}
        order.extend((s, next(it[s])) for s, _ in r)
    return ids, sizes, order


# =========================================================================== generation


async def _write_flux(path: Path, ids, order, seed: int) -> int:
    from flux.sessions import SQLiteSession

    rng = random.Random(seed + 1)
    texts = Texts(rng)
    sessions: dict[int, Any] = {}
    streams: dict[int, Iterator[dict[str, Any]]] = {}
    calls = 0
    for s, b in order:
        sess = sessions.get(s)
        if sess is None:
            sess = sessions[s] = SQLiteSession(str(path), session_id=ids[s])
            streams[s] = flux_turns(random.Random(rng.getrandbits(64)), texts)
        stream = streams[s]
        await sess.add_messages([next(stream) for _ in range(b)])
        calls += 1
    return calls


async def _write_agents(path: Path, ids, order, seed: int) -> int:
    from agents import SQLiteSession

    rng = random.Random(seed + 2)
    texts = Texts(rng)
    open_sessions: collections.OrderedDict[int, Any] = collections.OrderedDict()
    streams: dict[int, Iterator[dict[str, Any]]] = {}
    calls = 0
    try:
        for s, b in order:
            sess = open_sessions.get(s)
            if sess is None:
                sess = open_sessions[s] = SQLiteSession(ids[s], str(path))
                if len(open_sessions) > 256:
                    _, old = open_sessions.popitem(last=False)
                    old.close()
            else:
                open_sessions.move_to_end(s)
            if s not in streams:
                streams[s] = agents_turns(random.Random(rng.getrandbits(64)), texts)
            stream = streams[s]
            await sess.add_items([next(stream) for _ in range(b)])
            calls += 1
    finally:
        for sess in open_sessions.values():
            sess.close()
    return calls


def _remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(str(path) + suffix)
        if p.exists():
            p.unlink()


def ensure_store(fmt: str, name: str, n_messages: int, n_sessions: int, regen: bool) -> dict[str, Any]:
    """The store's metadata; (re)generates the store when needed. Benchmarks run at once
    share the folder: one generates while the others wait for it (a lock file)."""
    import fcntl

    DATA.mkdir(parents=True, exist_ok=True)
    with open(DATA / ".generating.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_store(fmt, name, n_messages, n_sessions, regen)


def _ensure_store(fmt: str, name: str, n_messages: int, n_sessions: int, regen: bool) -> dict[str, Any]:
    path = DATA / f"{name}.db"
    meta_path = DATA / f"{name}.json"
    params = {"format": fmt, "messages": n_messages, "sessions": n_sessions, "seed": SEED,
              "gen_version": GEN_VERSION}
    # The metadata is written once the store is complete and in place (a -wal beside it
    # is another benchmark reading it).
    if not regen and path.exists() and meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError:
            meta = {}
        if meta.get("params") == params:
            meta["cached"] = True
            meta["path"] = str(path)
            return meta
    ids, sizes, order = make_plan(n_messages, n_sessions, SEED)
    tmp = DATA / f"{name}.db.tmp"
    _remove_db(tmp)
    _remove_db(path)
    if meta_path.exists():
        meta_path.unlink()
    writer = _write_flux if fmt == "flux" else _write_agents
    print(f"  generating {name}: {n_messages:,} messages in {n_sessions:,} sessions "
          f"with the real {fmt} library ...", flush=True)
    t0 = time.perf_counter()
    calls = asyncio.run(writer(tmp, ids, order, SEED))
    gen = time.perf_counter() - t0
    if Path(str(tmp) + "-wal").exists():
        # every library connection is closed (flux opens one per call); SQLite may still
        # leave the log when its last close could not checkpoint: fold it in, as the
        # next opener would
        conn = sqlite3.connect(tmp)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    if Path(str(tmp) + "-wal").exists():
        raise SystemExit(f"{tmp}-wal left behind by the library: the store is not closed")
    # sanity check of what the library wrote
    conn = sqlite3.connect(f"file:{tmp}?mode=ro", uri=True)
    table = "messages" if fmt == "flux" else "agent_messages"
    (count,) = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
    (nsess,) = conn.execute(f"SELECT COUNT(DISTINCT session_id) FROM {table}").fetchone()
    conn.close()
    for suffix in ("-wal", "-shm"):
        p = Path(str(tmp) + suffix)
        if p.exists():
            p.unlink()
    if count != n_messages or nsess != n_sessions:
        raise SystemExit(f"{tmp}: expected {n_messages} messages / {n_sessions} sessions, "
                         f"found {count} / {nsess}")
    os.replace(tmp, path)
    meta = {"params": params, "largest_session": ids[0], "largest_size": sizes[0],
            "second_largest_size": max(sizes[1:]), "calls": calls, "gen_seconds": gen,
            "generated": time.strftime("%Y-%m-%d %H:%M:%S")}
    meta_path.write_text(json.dumps(meta, indent=2))
    print(f"  generated {name} in {gen:.1f} s ({calls:,} library calls, "
          f"{n_messages / gen:,.0f} messages/s, {path.stat().st_size / 1e6:.0f} MB)", flush=True)
    meta["cached"] = False
    meta["path"] = str(path)
    return meta


# =========================================================================== timing helpers


def median_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


def bench_sync(fn: Callable[[], tuple[float, Any]], runs: int) -> tuple[float, Any]:
    """fn() returns (seconds, result); one warm-up, median of ``runs``."""
    fn()
    times, result = [], None
    for _ in range(runs):
        dt, result = fn()
        times.append(dt)
    return median_ms(times), result


async def bench_async(fn: Callable[[], Awaitable[tuple[float, Any]]], runs: int) -> tuple[float, Any]:
    await fn()
    times, result = [], None
    for _ in range(runs):
        dt, result = await fn()
        times.append(dt)
    return median_ms(times), result


def fg(path: str, body: Callable[[Any], Awaitable[Any]]):
    """A timed fluxgui run: open_store + body(store) on a fresh open (close not timed)."""
    from fluxgui.adapters import open_store

    async def run() -> tuple[float, Any]:
        t0 = time.perf_counter()
        store = await open_store(path)
        try:
            result = await body(store)
            dt = time.perf_counter() - t0
        finally:
            await store.close()
        return dt, result

    return run


def raw(path: str, body: Callable[[sqlite3.Connection], Any]):
    """A timed raw run: sqlite3.connect + body(conn) on a fresh open (close not timed)."""

    def run() -> tuple[float, Any]:
        t0 = time.perf_counter()
        conn = sqlite3.connect(path)
        try:
            result = body(conn)
            dt = time.perf_counter() - t0
        finally:
            conn.close()
        return dt, result

    return run


async def recorded_sql(path: str, body: Callable[[Any], Awaitable[Any]]) -> list[tuple[str, dict, str]]:
    """The SQL fluxgui's backend runs for ``body`` (open not included), as
    (sql, params, "fetchall" | "stream")."""
    from fluxgui.adapters import open_store

    store = await open_store(path)
    log: list[tuple[str, dict, str]] = []
    real_fetchall, real_stream = store.backend.fetchall, store.backend.stream

    async def spy(sql: str, params: dict | None = None):
        log.append((sql, dict(params or {}), "fetchall"))
        return await real_fetchall(sql, params)

    def spy_stream(sql: str, params: dict | None = None, batch: int = 500):
        log.append((sql, dict(params or {}), "stream"))
        return real_stream(sql, params, batch)

    store.backend.fetchall = spy  # type: ignore[method-assign]
    store.backend.stream = spy_stream  # type: ignore[method-assign]
    try:
        await body(store)
    finally:
        await store.close()
    return log


def replay(log: list[tuple[str, dict, str]]) -> Callable[[sqlite3.Connection], Any]:
    def body(conn: sqlite3.Connection) -> list[list[tuple]]:
        return [conn.execute(sql, params).fetchall() for sql, params, _ in log]

    return body


# =========================================================================== raw queries

RAW = {
    "flux": {
        "ls_natural": """SELECT session_id, COUNT(*), MIN(created_at), MAX(created_at)
                         FROM messages GROUP BY session_id ORDER BY MAX(id) DESC LIMIT ?""",
        "show": """SELECT id, role, content, metadata, created_at FROM messages
                   WHERE session_id = ? ORDER BY id DESC LIMIT ?""",
        "info": """SELECT COUNT(*), MIN(created_at), MAX(created_at) FROM messages
                   WHERE session_id = ?""",
        "search": """SELECT session_id, COUNT(*), MIN(created_at), MAX(created_at) FROM messages
                     WHERE session_id IN (SELECT session_id FROM messages WHERE content LIKE ?)
                     GROUP BY session_id ORDER BY MAX(id) DESC""",
        "oldest": "SELECT content FROM messages WHERE session_id = ? ORDER BY id LIMIT ?",
    },
    "agents": {
        "ls_natural": """SELECT s.session_id, COUNT(m.id), s.created_at, s.updated_at
                         FROM agent_sessions s JOIN agent_messages m ON m.session_id = s.session_id
                         GROUP BY s.session_id
                         ORDER BY s.updated_at DESC, MAX(m.id) DESC, s.session_id DESC LIMIT ?""",
        "show": """SELECT id, message_data, created_at FROM agent_messages
                   WHERE session_id = ? ORDER BY id DESC LIMIT ?""",
        "info": """SELECT COUNT(*), MIN(created_at), MAX(created_at) FROM agent_messages
                   WHERE session_id = ?""",
        "search": """SELECT s.session_id,
                            (SELECT COUNT(*) FROM agent_messages c WHERE c.session_id = s.session_id),
                            s.created_at, s.updated_at
                     FROM agent_sessions s
                     WHERE s.session_id IN (SELECT session_id FROM agent_messages
                                            WHERE message_data LIKE ?)
                     ORDER BY s.updated_at DESC,
                              (SELECT MAX(l.id) FROM agent_messages l WHERE l.session_id = s.session_id) DESC,
                              s.session_id DESC""",
        "oldest": """SELECT message_data FROM agent_messages WHERE session_id = ?
                     ORDER BY id LIMIT ?""",
    },
}


def _check(ok: bool) -> str:
    return "OK" if ok else "MISMATCH"


# =========================================================================== output table


class Table:
    def __init__(self, headers: list[str]) -> None:
        self.headers = headers
        self.rows: list[list[str]] = []

    def add(self, *cells: Any) -> None:
        self.rows.append([c if isinstance(c, str) else _fmt(c) for c in cells])

    def print(self) -> None:
        widths = [max(len(r[i]) for r in [self.headers] + self.rows) for i in range(len(self.headers))]
        for n, r in enumerate([self.headers] + self.rows):
            cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:])]
            print("  " + "  ".join(cells).rstrip())
            if n == 0:
                print("  " + "  ".join("-" * w for w in widths))
        sys.stdout.flush()


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}" if v < 100 else f"{v:.0f}"
    return str(v)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    res = fn()
    return time.perf_counter() - t0, res


async def search_breakdown(fmt: str, path: str, search, word: str) -> dict[str, float]:
    """Time each statement fluxgui runs for a search, on one open sqlite3 connection, and
    two alternatives: the text scan with a single LIKE, and (flux) sessions_by_ids with
    per-session index lookups instead of GROUP BY over the rows."""
    log = await recorded_sql(path, search)
    streams = [e for e in log if e[2] == "stream"]
    fetches = [e for e in log if e[2] == "fetchall"]
    table, col = ("messages", "content") if fmt == "flux" else ("agent_messages", "message_data")
    conn = sqlite3.connect(path)
    out: dict[str, float] = {}
    try:
        def t(entries):
            return bench_sync(lambda: _timed(lambda: [conn.execute(s, p).fetchall() for s, p, _ in entries]), 3)[0]

        n_like = streams[1][0].count(" LIKE ") if len(streams) > 1 else 0
        if streams:
            out["id scan"] = t(streams[:1])
        if len(streams) > 1:
            out[f"text scan ({n_like} LIKE variants)"] = t(streams[1:2])
        out[f"sessions_by_ids ({len(fetches)} queries)"] = t(fetches)
        one = f"SELECT session_id, {col} FROM {table} WHERE {col} LIKE ? ORDER BY id DESC"
        out["[alt] text scan, one LIKE"] = t([(one, (f"%{word}%",), "")])
        if fmt == "flux" and fetches:
            ids = [sid for e in fetches for k, sid in e[1].items()]
            alt = """SELECT j.value,
                       (SELECT COUNT(*) FROM messages c WHERE c.session_id = j.value),
                       (SELECT f.created_at FROM messages f WHERE f.session_id = j.value
                        ORDER BY f.id LIMIT 1),
                       (SELECT l.created_at FROM messages l WHERE l.session_id = j.value
                        ORDER BY l.id DESC LIMIT 1),
                       (SELECT MAX(x.id) FROM messages x WHERE x.session_id = j.value)
                     FROM json_each(?) j"""
            chunks = [(alt, (json.dumps(ids[i:i + 500]),), "") for i in range(0, len(ids), 500)]
            out["[alt] sessions_by_ids, index lookups"] = t(chunks)
    finally:
        conn.close()
    return out


# =========================================================================== benchmarks


async def bench_format(fmt: str, meta: dict[str, Any], small: dict[str, Any], runs: int) -> list[str]:
    """Print the tables for one format; return the list of ratios > 1.5 found."""
    path = meta["path"]
    sid = meta["largest_session"]
    q = RAW[fmt]
    warnings: list[str] = []
    size_mb = Path(path).stat().st_size / 1e6
    n = meta["params"]["messages"]
    print(f"\n== {fmt}: {os.path.relpath(path, ROOT)} ({n:,} messages, "
          f"{meta['params']['sessions']:,} sessions, {size_mb:.0f} MB; "
          f"largest session {sid}: {meta['largest_size']:,} messages, next largest "
          f"{meta['second_largest_size']:,}) ==")

    t = Table(["operation (ms, median)", "fluxgui", "raw:natural", "raw:same-SQL",
               "fg/natural", "fg/same-SQL", "rows"])

    def note(label: str, fg_ms: float, ref_ms: float | None) -> None:
        if ref_ms and fg_ms / ref_ms > 1.5:
            warnings.append(f"{fmt}: {label}: fluxgui {fg_ms:.2f} ms vs raw {ref_ms:.2f} ms "
                            f"({fg_ms / ref_ms:.1f}x)")

    # -- open only
    async def nothing(store):
        return None

    fg_open, _ = await bench_async(fg(path, nothing), runs)
    raw_open, _ = bench_sync(raw(path, lambda c: c.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()), runs)
    t.add("open only (open_store | connect)", fg_open, raw_open, None, ratio(fg_open, raw_open), None, None)

    # -- ls first page
    async def ls(store):
        return (await store.reader.list_sessions(limit=LS_LIMIT)).sessions

    fg_ls, fg_rows = await bench_async(fg(path, ls), runs)
    nat_ls, nat_rows = bench_sync(raw(path, lambda c: c.execute(q["ls_natural"], (LS_LIMIT,)).fetchall()), runs)
    ls_log = await recorded_sql(path, ls)
    same_ls, same_rows = bench_sync(raw(path, replay(ls_log)), runs)
    fg_key = [(s.id, s.messages) for s in fg_rows]
    if fmt == "flux":
        nat_key = [(r[0], r[1]) for r in nat_rows]
        same_key = [(r[0], r[1]) for r in same_rows[-1]]
    else:
        nat_key = [(r[0], r[1]) for r in nat_rows]
        same_key = [(r[0], r[4]) for r in same_rows[-1]]
    ok = fg_key == nat_key == same_key and len(fg_key) == LS_LIMIT
    t.add(f"ls first page ({LS_LIMIT} sessions)", fg_ls, nat_ls, same_ls, ratio(fg_ls, nat_ls),
          ratio(fg_ls, same_ls), _check(ok))
    note("ls first page", fg_ls, min(nat_ls, same_ls))
    if not ok:
        print(f"  ls mismatch: fluxgui {fg_key[:3]}... natural {nat_key[:3]}... same {same_key[:3]}...")

    # -- every session (what `fluxgui ls --limit 0` does: pages of 200 by keyset)
    from fluxgui.services.browse import iter_session_pages

    async def ls_all(store):
        out = []
        async for pg in iter_session_pages(store):
            out.extend(pg)
        return out

    all_runs = max(3, runs // 2)
    fg_all, fg_all_rows = await bench_async(fg(path, ls_all), all_runs)
    nat_all, nat_all_rows = bench_sync(raw(path, lambda c: c.execute(q["ls_natural"], (-1,)).fetchall()), all_runs)
    ok = [(x.id, x.messages) for x in fg_all_rows] == [(r[0], r[1]) for r in nat_all_rows]
    ok = ok and len(fg_all_rows) == meta["params"]["sessions"]
    t.add(f"ls all {len(fg_all_rows):,} sessions (pages of 200)", fg_all, nat_all, None,
          ratio(fg_all, nat_all), None, _check(ok))
    note("ls all sessions", fg_all, nat_all)

    # -- show first page of the largest session
    async def page(store):
        return await store.reader.page_messages(sid, limit=SHOW_LIMIT)

    fg_pg, fg_msgs = await bench_async(fg(path, page), runs)
    nat_pg, nat_msgs = bench_sync(raw(path, lambda c: c.execute(q["show"], (sid, SHOW_LIMIT)).fetchall()[::-1]), runs)
    pg_log = await recorded_sql(path, page)
    same_pg, _ = bench_sync(raw(path, replay(pg_log)), runs)
    if fmt == "flux":
        ok = [(m.id, m.role, m.text) for m in fg_msgs] == [(r[0], r[1], r[2]) for r in nat_msgs]
    else:
        ok = [(m.id, m.raw) for m in fg_msgs] == [(r[0], json.loads(r[1])) for r in nat_msgs]
    ok = ok and len(fg_msgs) == SHOW_LIMIT
    t.add(f"show: page_messages({SHOW_LIMIT}) largest", fg_pg, nat_pg, same_pg, ratio(fg_pg, nat_pg),
          ratio(fg_pg, same_pg), _check(ok))
    note("show page_messages", fg_pg, min(nat_pg, same_pg))

    async def info(store):
        return await store.reader.session_info(sid)

    fg_inf, fg_info = await bench_async(fg(path, info), runs)
    nat_inf, nat_info = bench_sync(raw(path, lambda c: c.execute(q["info"], (sid,)).fetchone()), runs)
    inf_log = await recorded_sql(path, info)
    same_inf, _ = bench_sync(raw(path, replay(inf_log)), runs)
    ok = fg_info is not None and fg_info.messages == nat_info[0] == meta["largest_size"]
    t.add("show: session_info largest", fg_inf, nat_inf, same_inf, ratio(fg_inf, nat_inf),
          ratio(fg_inf, same_inf), _check(ok))
    note("show session_info", fg_inf, min(nat_inf, same_inf))

    async def both(store):
        i = await store.reader.session_info(sid)
        return i, await store.reader.page_messages(sid, limit=SHOW_LIMIT)

    def raw_both(c):
        return c.execute(q["info"], (sid,)).fetchone(), c.execute(q["show"], (sid, SHOW_LIMIT)).fetchall()

    fg_b, _ = await bench_async(fg(path, both), runs)
    nat_b, _ = bench_sync(raw(path, raw_both), runs)
    both_log = await recorded_sql(path, both)
    same_b, _ = bench_sync(raw(path, replay(both_log)), runs)
    t.add("show: info + page together", fg_b, nat_b, same_b, ratio(fg_b, nat_b), ratio(fg_b, same_b), None)

    # -- search
    search_runs = max(3, runs // 2)
    breakdowns: list[tuple[str, dict[str, float]]] = []
    for word, what in SEARCH_WORDS:
        async def search(store, word=word):
            return await store.reader.search_sessions(word)

        fg_s, fg_found = await bench_async(fg(path, search), search_runs)
        nat_s, nat_found = bench_sync(raw(path, lambda c, w=word: c.execute(q["search"], (f"%{w}%",)).fetchall()), search_runs)
        if fmt == "flux":
            nat_key = [(r[0], r[1]) for r in nat_found]
        else:
            nat_key = [(r[0], r[1]) for r in nat_found]
        fg_key = [(s.id, s.messages) for s in fg_found]
        ok = fg_key == nat_key
        t.add(f'search "{word}" ({what}, {len(fg_found):,} sessions)', fg_s, nat_s, None,
              ratio(fg_s, nat_s), None, _check(ok))
        note(f'search "{word}"', fg_s, nat_s)
        if not ok:
            print(f"  search mismatch: fluxgui {len(fg_key)} rows {fg_key[:3]}; raw {len(nat_key)} rows {nat_key[:3]}")
        breakdowns.append((word, await search_breakdown(fmt, path, search, word)))
    t.print()

    # -- where the time goes: the same calls on an already-open store / connection
    print("\n  Per call on an already-open store vs the same SQL on an open sqlite3 connection "
          "(no open cost):")
    pt = Table(["call", "fluxgui ms", "sqlite3 ms", "ratio"])
    from fluxgui.adapters import open_store

    store = await open_store(path)
    conn = sqlite3.connect(path)
    try:
        for label, body, log in (
            ("round trip: SELECT 1", lambda st: st.backend.fetchall("SELECT 1"),
             [("SELECT 1", {}, "fetchall")]),
            (f"list_sessions(limit={LS_LIMIT})", ls, ls_log),
            (f"page_messages(largest, limit={SHOW_LIMIT})", page, pg_log),
            ("session_info(largest)", info, inf_log),
        ):
            async def call(body=body):
                t0 = time.perf_counter()
                res = await body(store)
                return time.perf_counter() - t0, res

            def rcall(log=log):
                t0 = time.perf_counter()
                res = replay(log)(conn)
                return time.perf_counter() - t0, res

            a, _ = await bench_async(call, runs)
            b, _ = bench_sync(rcall, runs)
            pt.add(label, a, b, ratio(a, b))
        rows = conn.execute(pg_log[0][0], pg_log[0][1]).fetchall()
        read = store.reader.message if fmt == "flux" else functools.partial(store.reader.message, session_id=sid)
        conv, _ = bench_sync(lambda: _timed(lambda: [read(r) for r in rows]), runs)
        pt.add(f"  of which: {len(rows)} rows -> Message objects (Python)", conv, None, None)
    finally:
        conn.close()
        await store.close()
    pt.print()

    print("\n  Search breakdown: fluxgui's own statements replayed through sqlite3 (ms):")
    for word, parts in breakdowns:
        print(f'    search "{word}":')
        for k, v in parts.items():
            print(f"      {k:<42} {v:8.1f}")

    # -- whole largest session: the library vs fluxgui
    print(f"\n  Loading the largest session ({meta['largest_size']:,} messages), "
          "fresh session object / store each run:")
    lt = Table(["operation", "ms (median)", "items", "note"])
    lib_runs = max(3, runs // 2)
    oldest = sqlite3.connect(path)
    oldest_100 = [r[0] for r in oldest.execute(q["oldest"], (sid, SHOW_LIMIT))]
    newest_100 = [r[2] if fmt == "flux" else r[1] for r in oldest.execute(q["show"], (sid, SHOW_LIMIT))][::-1]
    oldest.close()
    if fmt == "flux":
        from flux.sessions import SQLiteSession as FluxSession

        async def lib_all():
            t0 = time.perf_counter()
            items = await FluxSession(path, session_id=sid).get_messages()
            return time.perf_counter() - t0, items

        async def lib_100():
            t0 = time.perf_counter()
            items = await FluxSession(path, session_id=sid).get_messages(limit=SHOW_LIMIT)
            return time.perf_counter() - t0, items

        names = ("flux SQLiteSession.get_messages()", f"flux SQLiteSession.get_messages(limit={SHOW_LIMIT})")
        content = lambda items: [m["content"] for m in items]  # noqa: E731
    else:
        from agents import SQLiteSession as AgentsSession

        def agents_run(limit):
            async def run():
                t0 = time.perf_counter()
                s = AgentsSession(sid, path)
                try:
                    items = await s.get_items(limit=limit)
                    dt = time.perf_counter() - t0
                finally:
                    s.close()
                return dt, items
            return run

        lib_all, lib_100 = agents_run(None), agents_run(SHOW_LIMIT)
        names = ("agents SQLiteSession.get_items()", f"agents SQLiteSession.get_items(limit={SHOW_LIMIT})")
        content = lambda items: [json.dumps(i) for i in items]  # noqa: E731
    ms, items = await bench_async(lib_all, lib_runs)
    lt.add(names[0], ms, f"{len(items):,}", "")
    ms, items = await bench_async(lib_100, lib_runs)
    got = content(items)
    which = "the newest 100" if got == newest_100 else "the OLDEST 100" if got == oldest_100 else "?"
    lt.add(names[1], ms, f"{len(items):,}", f"returns {which}")

    async def fg_all(store):
        return await store.reader.latest_messages(sid, None)

    ms, msgs = await bench_async(fg(path, fg_all), lib_runs)
    lt.add("fluxgui latest_messages(sid, None) (pages of 500)", ms, f"{len(msgs):,}", "Message objects")

    async def fg_flux(store):
        return await store.session(sid).get_messages(limit=SHOW_LIMIT)

    ms, items = await bench_async(fg(path, fg_flux), lib_runs)
    lt.add(f"fluxgui StoreSession.get_messages({SHOW_LIMIT})", ms, f"{len(items):,}", "")
    lt.print()

    # -- CLI subprocesses
    print("\n  CLI as a subprocess (wall time INCLUDES interpreter start-up and imports):")
    ct = Table(["command", "ms (median)", "peak RSS MB", "output"])
    cli_runs = max(3, runs // 2)
    base_ms, base_rss, _ = run_cmd([sys.executable, "-c", "import fluxgui.cli, fluxgui.adapters, aiosqlite"], cli_runs)
    ct.add("python -c 'import fluxgui.cli, ...' (start-up only)", base_ms, base_rss, "")
    ms, rss, out = run_cmd(cli_cmd("ls", path, "--json"), cli_runs)
    try:
        got = len(json.loads(out)["sessions"])
        desc = f"{got} sessions " + _check(got == LS_LIMIT)
    except (ValueError, KeyError):
        desc = "bad output"
    ct.add("fluxgui ls PATH --json", ms, rss, desc)
    ms, rss, out = run_cmd(cli_cmd("show", path, sid, "--json", "--limit", str(SHOW_LIMIT)), cli_runs)
    try:
        doc = json.loads(out)
        got = len(doc["messages"])
        desc = f"{got} messages " + _check(got == SHOW_LIMIT and doc["session"]["messages"] == meta["largest_size"])
    except (ValueError, KeyError):
        desc = "bad output"
    ct.add(f"fluxgui show PATH SID --json --limit {SHOW_LIMIT}", ms, rss, desc)
    ct.print()

    # -- memory
    print("\n  Peak RSS of a fresh process doing the first-page operations "
          "(open_store, list_sessions(50), session_info + page_messages(100) of the largest session):")
    mt = Table(["store", "messages", "DB MB", "peak RSS MB"])
    rss_big = peak_rss_first_pages(path, sid)
    rss_small = peak_rss_first_pages(small["path"], small["largest_session"])
    base = peak_rss_first_pages(None, None)
    mt.add("(imports only, no store)", "-", "-", base)
    mt.add(os.path.relpath(small["path"], ROOT), f"{small['params']['messages']:,}",
           Path(small["path"]).stat().st_size / 1e6, rss_small)
    mt.add(os.path.relpath(path, ROOT), f"{n:,}", size_mb, rss_big)
    mt.print()
    growth = rss_big - rss_small
    print(f"  growth from the small to the big store: {growth:+.1f} MB "
          f"({'OK: flat' if growth < 10 else 'GROWS with store size'})")
    if growth >= 10:
        warnings.append(f"{fmt}: first-page peak RSS grows {growth:.1f} MB from "
                        f"{small['params']['messages']:,} to {n:,} messages")
    return warnings


def cli_cmd(*args: str) -> list[str]:
    exe = Path(sys.executable).parent / "fluxgui"
    if exe.exists():
        return [str(exe), *args]
    return [sys.executable, "-m", "fluxgui", *args]


# A fresh, small launcher process forks and execs the command and reports its rusage.
# Measuring from this (big) process would be wrong: Linux carries the parent's RSS at
# fork time into the child's ru_maxrss across exec.
_LAUNCHER = textwrap.dedent("""
    import json, os, sys, time
    out, cmd = sys.argv[1], sys.argv[2:]
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(fd, 1)
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    print(json.dumps({"wall": wall, "maxrss_kb": usage.ru_maxrss,
                      "rc": os.waitstatus_to_exitcode(status)}))
""")


def clean_run(cmd: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB from ru_maxrss, stdout) of ``cmd`` in a clean process."""
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "out")
        p = subprocess.run([sys.executable, "-c", _LAUNCHER, out_path, *cmd],
                           capture_output=True, text=True, cwd=ROOT)
        if p.returncode != 0:
            raise SystemExit(f"launcher failed: {p.stderr.strip()}")
        res = json.loads(p.stdout)
        out = Path(out_path).read_text()
    if res["rc"] != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {res['rc']}: {p.stderr.strip()}")
    return res["wall"], res["maxrss_kb"] / 1024, out


def run_cmd(cmd: list[str], runs: int) -> tuple[float, float, str]:
    """Median wall ms, max peak RSS (MB) and the stdout of the last run (one warm-up)."""
    times, rss, out = [], 0.0, ""
    for i in range(runs + 1):
        dt, mb, out = clean_run(cmd)
        if i:
            times.append(dt)
            rss = max(rss, mb)
    return median_ms(times), rss, out


_RSS_SNIPPET = textwrap.dedent("""
    import asyncio, resource, sys
    from fluxgui.adapters import open_store
    import aiosqlite
    path, sid = sys.argv[1], sys.argv[2]
    async def main():
        if path == "-":
            return
        store = await open_store(path)
        try:
            page = await store.reader.list_sessions(limit=50)
            assert len(page.sessions) == 50, len(page.sessions)
            info = await store.reader.session_info(sid)
            msgs = await store.reader.page_messages(sid, limit=100)
            assert info is not None and len(msgs) == 100
        finally:
            await store.close()
    asyncio.run(main())
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def peak_rss_first_pages(path: str | None, sid: str | None) -> float:
    """Peak RSS (MB, the process's own ru_maxrss) of a fresh process doing the first pages."""
    _, _, out = clean_run([sys.executable, "-c", _RSS_SNIPPET, path or "-", sid or "-"])
    return int(out.strip()) / 1024


# =========================================================================== main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=1_000_000, help="messages per store (default 1,000,000)")
    ap.add_argument("--sessions", type=int, default=10_000, help="sessions per store (default 10,000)")
    ap.add_argument("--formats", default="flux,agents", help="comma-separated: flux,agents")
    ap.add_argument("--regen", action="store_true", help="regenerate the stores even if cached")
    ap.add_argument("--runs", type=int, default=7, help="timed runs per measurement (median; default 7)")
    args = ap.parse_args(argv)
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    for f in formats:
        if f not in ("flux", "agents"):
            ap.error(f"unknown format {f!r} (use flux, agents)")
    if args.runs < 1:
        ap.error("--runs must be at least 1")

    from importlib.metadata import version

    t_start = time.perf_counter()
    print(f"fluxgui store benchmark — Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}, "
          f"aiosqlite {version('aiosqlite')}, flux-agents {version('flux-agents')}, "
          f"openai-agents {version('openai-agents')}, {os.cpu_count()} CPUs")
    print(f"timings: median of {args.runs} runs after 1 warm-up (searches, library loads and CLI: "
          f"max(3, runs/2)); every run opens the store afresh; OS page cache warm")

    print("\nStores (written by the real libraries through their public API):")
    small_sessions = max(10, round(args.sessions * SMALL_MESSAGES / args.messages))
    metas, smalls = {}, {}
    for fmt in formats:
        metas[fmt] = ensure_store(fmt, fmt, args.messages, args.sessions, args.regen)
        smalls[fmt] = ensure_store(fmt, f"{fmt}-small", SMALL_MESSAGES, small_sessions, args.regen)
        for m in (metas[fmt], smalls[fmt]):
            if m["cached"]:
                p = m["params"]
                print(f"  {os.path.relpath(m['path'], ROOT)}: cached ({p['messages']:,} messages, "
                      f"{p['sessions']:,} sessions; generated {m['generated']} in {m['gen_seconds']:.1f} s, "
                      f"{m['calls']:,} library calls)")

    warnings: list[str] = []
    for fmt in formats:
        warnings += asyncio.run(bench_format(fmt, metas[fmt], smalls[fmt], args.runs))

    print("\nfluxgui/raw ratios above 1.5 (fluxgui vs the faster raw query):" if warnings else "\nno fluxgui/raw ratio above 1.5")
    for w in warnings:
        print("  - " + w)
    print(f"\ntotal benchmark time {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
