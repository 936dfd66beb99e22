"""Benchmark redaction (issue 39): a redacted JSONL export against the unredacted one,
and ``scan`` against a full read of every message.

    .venv/bin/python benchmarks/bench_redaction.py [--sessions 1000] [--messages 100000]
                                                  [--runs 3] [--regen] [--parts export,scan]

The store (Agents SDK SQLite, ``benchmarks/data/redaction-<messages>.db``) is written by
``agents.SQLiteSession.add_items`` (user and assistant messages of ordinary text, tool
calls with JSON arguments, tool outputs holding JSON), one message in 50 holding a planted
email, phone number, card number or API key; it is cached and rebuilt with ``--regen``.

Each figure is the median of ``--runs`` runs in this process, the store opened fresh,
each redacted run right after its baseline (the ratios are the medians of the pairs'):

* export JSONL, unredacted: ``export_sessions(store, path, "jsonl")``;
* export JSONL, redacted: the same with ``transform=Redactor.page`` (every kind);
* full read: every session's ``reader.iter_messages`` (what ``scan`` reads);
* scan: ``scan_store`` over every session.

Targets: redacted export at ≥ 0.5× the unredacted one's speed; scan within a full read
plus 2× (≤ 3× the full read's time). Exits 0, plain text.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WORDS = (
    "the order refund invoice payment account customer shipping delivery status update "
    "please thanks issue ticket support agent tool call result error retry schedule "
    "meeting report summary analysis data model session context token budget limit "
    "database query index latency request response timeout configuration deploy"
).split()
PLANTS = [
    "reach me at jane.doe{n}@example.com",
    "my phone is (415) 555-{n:04d}",
    "card 4111 1111 1111 1111 expires soon",
    "key sk-proj-Ab3dE{n:06d}fGh1jKlMnOpQrSt2uVw",
]
VERSION = 1


def _sentence(r: random.Random, n: int) -> str:
    words = [r.choice(WORDS) for _ in range(r.randint(12, 40))]
    if n % 50 == 0:
        words.insert(r.randint(0, len(words)), PLANTS[(n // 50) % len(PLANTS)].format(n=n % 10000))
    return " ".join(words).capitalize() + "."


def _items(r: random.Random, start: int, count: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    n = start
    while len(items) < count:
        kind = n % 4
        text = _sentence(r, n)
        if kind == 0:
            items.append({"role": "user", "content": text})
        elif kind == 1:
            items.append({"type": "message", "role": "assistant", "id": f"msg_{n}", "status": "completed",
                          "content": [{"type": "output_text", "text": text, "annotations": []}]})
        elif kind == 2:
            items.append({"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "lookup",
                          "arguments": json.dumps({"query": text, "limit": 10, "order": f"ORD-2024-{n:06d}"})})
        else:
            items.append({"type": "function_call_output", "call_id": f"call_{n - 1}",
                          "output": json.dumps({"rows": [{"id": n, "text": text, "at": "2024-03-15T10:30:00Z"}]})})
        n += 1
    return items


def build(path: Path, sessions: int, messages: int) -> None:
    from agents import SQLiteSession

    meta = path.with_suffix(".json")
    want = {"sessions": sessions, "messages": messages, "version": VERSION}
    if path.exists() and meta.exists() and json.loads(meta.read_text()) == want:
        return
    path.unlink(missing_ok=True)
    r = random.Random(39)
    per = messages // sessions
    started = time.perf_counter()

    async def write() -> None:
        n = 0
        for s in range(sessions):
            session = SQLiteSession(f"bench-{s:05d}", str(path))
            try:
                for start in range(0, per, 50):
                    batch = _items(r, n, min(50, per - start))
                    n += len(batch)
                    await session.add_items(batch)  # type: ignore[arg-type]
            finally:
                session.close()

    asyncio.run(write())
    meta.write_text(json.dumps(want))
    print(f"built {path.name}: {messages:,} messages in {sessions:,} sessions ({time.perf_counter() - started:.0f} s)")


async def _export(path: Path, out: Path, redact: bool) -> float:
    from fluxgui.adapters import open_store
    from fluxgui.services.export import export_sessions
    from fluxgui.services.redaction import make_redactor

    started = time.perf_counter()
    async with await open_store(str(path)) as store:
        redactor = make_redactor(("secrets", "pii")) if redact else None
        await export_sessions(
            store, out, "jsonl", force=True, transform=redactor.page if redactor else None,
            unchanged=redactor.unchanged_rows if redactor else None,
        )
    return time.perf_counter() - started


async def _read(path: Path, scan: bool) -> tuple[float, int]:
    from fluxgui.adapters import open_store
    from fluxgui.services.redaction import make_redactor
    from fluxgui.services.redaction.scan import scan_store
    from fluxgui.services.transfer_common import session_infos

    started = time.perf_counter()
    count = 0
    async with await open_store(str(path)) as store:
        if scan:
            async for found in scan_store(store, make_redactor(("secrets", "pii"))):
                count += len(found.findings)
        else:
            async for info in session_infos(store, None):
                async for page in store.reader.iter_messages(info.id):
                    count += len(page)
    return time.perf_counter() - started, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--regen", action="store_true")
    parser.add_argument("--parts", default="export,scan", help="export, scan or both (default)")
    args = parser.parse_args()
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    data = HERE / "data"
    data.mkdir(exist_ok=True)
    path = data / f"redaction-{args.messages}.db"
    if args.regen:
        path.unlink(missing_ok=True)
    build(path, args.sessions, args.messages)

    n = args.messages
    print(f"redaction benchmark: {n:,} messages in {args.sessions:,} sessions (median of {args.runs})")
    # Each pair (baseline, redacted) runs back to back, run after run: a machine whose
    # load changes slows both alike.
    if "export" in parts:
        with tempfile.TemporaryDirectory(dir=data) as tmp:
            out = Path(tmp) / "out.jsonl"
            pairs = []
            for _ in range(args.runs):
                first = asyncio.run(_export(path, out, False))
                size_plain = out.stat().st_size
                pairs.append((first, asyncio.run(_export(path, out, True))))
            text = out.read_text(encoding="utf-8")
        plain = statistics.median(p for p, _r in pairs)
        redacted = statistics.median(r for _p, r in pairs)
        ratio = statistics.median(p / r for p, r in pairs)
        leaks = sum(text.count(p) for p in ("@example.com", "4111 1111", "sk-proj-Ab3dE"))
        print(f"  {'export JSONL, unredacted (baseline)':<42} {plain:7.2f} s  {n / plain:>9,.0f} msg/s  {size_plain / 1e6:.1f} MB")
        print(f"  {'export JSONL, redacted (secrets,pii)':<42} {redacted:7.2f} s  {n / redacted:>9,.0f} msg/s  "
              f"speed {ratio:.2f}x of unredacted (target >= 0.5x); values left: {leaks}")
    if "scan" in parts:
        reads = []
        for _ in range(args.runs):
            full = asyncio.run(_read(path, False))[0]
            t, findings = asyncio.run(_read(path, True))
            reads.append((full, t))
        read = statistics.median(f for f, _s in reads)
        scanned = statistics.median(s for _f, s in reads)
        scan_ratio = statistics.median(s / f for f, s in reads)
        print(f"  {'full read, every message (baseline)':<42} {read:7.2f} s  {n / read:>9,.0f} msg/s")
        print(f"  {'scan (secrets,pii)':<42} {scanned:7.2f} s  {n / scanned:>9,.0f} msg/s  "
              f"{scan_ratio:.2f}x the full read (target <= 3x); {findings:,} findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
