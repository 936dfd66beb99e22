"""A session holding huge single items (issue 34.3): a 12.8M-character tool output and a
50 MB message among ordinary ones — the window's first screen and longest stall, and the
peak memory of the command line on it, each next to its target.

    .venv/bin/python benchmarks/bench_huge_items.py                 # both formats
    .venv/bin/python benchmarks/bench_huge_items.py --formats agents --trace-stalls 30
    .venv/bin/python benchmarks/bench_huge_items.py --regen         # build the stores again

Stores (``benchmarks/data/huge-agents.db``, ``huge-flux.db``, built once) are written by
the real libraries: ``agents.SQLiteSession.add_items`` (the output a
``function_call_output`` item, the 50 MB message a user message) and
``flux.sessions.SQLiteSession.add_messages`` (a ``tool`` message and a user message): 20
ordinary sessions of 30 messages, and session ``huge`` — 10 ordinary messages, the tool
output, 6 more, the 50 MB message, 6 more — written first, so that it is not the session
the window opens by itself.

1. **Window** (a process of its own, offscreen, started as the app starts: ``warm_start``
   and the collector's freeze): open the store, show an ordinary session, then session
   ``huge``: the time until its first screen is painted (target ≤ 1 s), and the longest
   stall of the event loop (the longest gap between ticks of a 1 ms timer, as
   ``bench_ui.py``) from then until the window has been idle for 2 s — the background
   checks of the session included (target ≤ 50 ms). Then Open in Viewer on the 50 MB
   message: the time until its text is all in the viewer and the longest stall meanwhile
   (no target). The process's peak RSS is printed with the session shown, and after.
2. **Command line** (each ``python -m fluxgui …`` a process of its own, forked from a small
   launcher: peak RSS is that child's ``ru_maxrss`` from ``os.wait4``, as
   ``bench_memory.py``): ``ls``, ``show huge --limit 10`` (the 50 MB message among them),
   ``check``, ``search`` for a word inside the 50 MB message (no index: the scan), and
   ``index`` — next to the target: twice the largest item plus 100 MB.

``--trace-stalls MS`` prints where the window's thread was in each stall over MS
(``stalltrace.py``). The script exits 0 and prints plain text only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
for p in (str(HERE), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

TOOL_CHARS = 12_800_000
BIG_CHARS = 50_000_000
FIRST_SCREEN_S = 1.0
STALL_MS = 50.0
#: a word of the 50 MB message (a line number of its text) that nothing else holds
NEEDLE = "000300017"


# =========================================================================== the stores


def _ordinary(kind: str, s: int, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n // 2):
        q = f"Question {s}.{i}: what is 2*3?"
        a = f"Answer {s}.{i}: **6**, see [docs](https://example.com/{i})."
        out.append({"role": "user", "content": q})
        if kind == "agents":
            out.append({"type": "message", "role": "assistant", "status": "completed",
                        "id": f"msg_{s}_{i}",
                        "content": [{"type": "output_text", "text": a, "annotations": []}]})
        else:
            out.append({"role": "assistant", "content": a})
    return out


def build(kind: str, path: Path) -> None:
    from bench_memory import huge_text, write_batches

    big = huge_text(BIG_CHARS)
    tool = huge_text(TOOL_CHARS)
    if kind == "agents":
        output: list[dict[str, Any]] = [
            {"type": "function_call", "call_id": "c1", "name": "dump_logs", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": tool}]
    else:
        output = [{"role": "tool", "content": tool}]
    batches = [_ordinary(kind, 99, 10), output, _ordinary(kind, 98, 6),
               [{"role": "user", "content": big}], _ordinary(kind, 97, 6)]
    sessions = [("huge", b) for b in batches] + [(f"s{s:02d}", _ordinary(kind, s, 30)) for s in range(20)]
    asyncio.run(write_batches(kind, str(path), sessions))


def ensure_store(kind: str, regen: bool) -> Path:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"huge-{kind}.db"
    if path.exists() and not regen:
        return path
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    tmp = DATA / f"huge-{kind}.db.part"
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    t = time.perf_counter()
    # in a process of its own: the builder's memory is no part of what is measured
    subprocess.run([sys.executable, __file__, "--build", kind, str(tmp)], check=True, cwd=ROOT)
    import sqlite3

    conn = sqlite3.connect(str(tmp))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    os.replace(tmp, path)
    for suffix in ("-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    print(f"  built {path.name} with the library in {time.perf_counter() - t:.1f} s "
          f"({path.stat().st_size / 1e6:,.0f} MB)", flush=True)
    return path


# =========================================================================== the window


async def window_run(path: Path, trace: float | None) -> dict[str, Any]:
    import resource

    import stalltrace
    from bench_ui import StallProbe, until

    from fluxgui.qt.launch import first_paint
    from fluxgui.qt.window import MainWindow

    window = MainWindow()
    window.resize(1200, 800)
    window.show()
    await first_paint(window)
    probe = StallProbe()
    if trace:
        probe.tracer = stalltrace.StallTracer(trace)
    pane = window.conversation
    window.stores.open_target(str(path))
    await until(lambda: window.stores.store is not None and window.sessions.rowCount() > 0 and not window.bridge.busy)
    window.show_session("s19")
    await until(lambda: pane.session_id == "s19" and pane.loaded_count > 0 and not window.bridge.busy)
    await asyncio.sleep(1.0)
    out: dict[str, Any] = {}
    start(probe)
    t0 = time.perf_counter()
    window.show_session("huge")
    await until(lambda: pane.session_id == "huge" and pane.loaded_count > 0)
    await first_paint(pane.view.viewport())
    out["first_cards"] = time.perf_counter() - t0  # (the background checks may still run)
    await until(lambda: not window.bridge.busy)
    await first_paint(pane.view.viewport())
    out["first_screen"] = time.perf_counter() - t0

    async def idle_for(seconds: float) -> None:
        quiet_since = time.perf_counter()
        while time.perf_counter() - quiet_since < seconds:
            await asyncio.sleep(0.02)
            if window.bridge.busy or window.bridge.busy:
                quiet_since = time.perf_counter()

    await idle_for(2.0)
    out["stall"] = probe.stop()
    out["over_frame"] = probe.over_frame
    if probe.tracer is not None:
        out["trace"] = _trace_lines(probe.tracer.take())
    out["rss_shown_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = [r for r in range(pane.model.rowCount()) if pane.model.message(r).partial]
    out["partial"] = [pane.model.message(r).partial for r in rows]
    big_row = max(rows, key=lambda r: pane.model.message(r).partial or 0, default=None)
    if big_row is not None:
        start(probe)
        t0 = time.perf_counter()
        viewer = pane.menus.open_viewer(pane.model.index(big_row, 0))
        await until(lambda: viewer.filled)
        out["viewer"] = time.perf_counter() - t0
        out["viewer_stall"] = probe.stop()
        out["viewer_chars"] = len(viewer.edit.document().toPlainText())
        if probe.tracer is not None:
            out["viewer_trace"] = _trace_lines(probe.tracer.take())
        viewer.close()
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    await window.aclose()
    window.close()
    return out


def start(probe: Any) -> None:
    """Start the stall probe; with a tracer, forget what it saw before (its watch goes on
    while the probe's timer is stopped: the pause would count as a stall)."""
    probe.start()
    if probe.tracer is not None:
        probe.tracer.tick()
        probe.tracer.take()


def _trace_lines(stalls: Any) -> list[str]:
    import contextlib
    import io

    import stalltrace

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        stalltrace.print_stalls(stalls)
    return buf.getvalue().splitlines()


def window_child(path: Path, trace: float | None) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import qasync
    from PySide6.QtWidgets import QApplication

    from fluxgui.qt.launch import _drop_offscreen_noise, warm_start

    _drop_offscreen_noise()
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    warm_start()
    from fluxgui.qt.collector import MainThreadCollector

    collector = MainThreadCollector(app)
    out = loop.run_until_complete(window_run(path, trace))
    collector.stop()
    print("RESULT " + json.dumps(out), flush=True)
    os._exit(0)  # (qasync's loop threads: the result is out)


# =========================================================================== the command line


def commands(path: Path, work: Path) -> list[tuple[str, dict[str, Any]]]:
    from bench_memory import fluxgui, measure

    cache = Path(tempfile.mkdtemp(prefix="huge-cache-", dir=work))
    os.environ["FLUXGUI_CACHE_DIR"] = str(cache)  # no index: search scans; index builds afresh
    runs = [
        ("ls", fluxgui("ls", str(path))),
        ("show huge --limit 10", fluxgui("show", str(path), "huge", "--limit", "10")),
        ("check", fluxgui("check", str(path))),
        (f"search {NEEDLE} (no index)", fluxgui("search", str(path), NEEDLE)),
        ("index", fluxgui("index", str(path))),
    ]
    return [(name, measure(cmd, work)) for name, cmd in runs]


# =========================================================================== main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--build"]:
        build(argv[1], Path(argv[2]))
        return 0
    if argv[:1] == ["--window"]:
        window_child(Path(argv[1]), float(argv[2]) if len(argv) > 2 else None)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--formats", default="agents,flux")
    ap.add_argument("--regen", action="store_true", help="build the stores again")
    ap.add_argument("--trace-stalls", type=float, metavar="MS")
    ap.add_argument("--no-window", action="store_true")
    ap.add_argument("--no-cli", action="store_true")
    args = ap.parse_args(argv)
    largest_mb = BIG_CHARS / 1e6
    rss_target = 2 * largest_mb + 100
    print(f"huge single items: a {TOOL_CHARS / 1e6:g}M-character tool output and a "
          f"{largest_mb:g} MB message in one session ({os.cpu_count()} CPUs)")
    work = Path(tempfile.mkdtemp(prefix="bench-huge-", dir=DATA if DATA.exists() else None))
    verdicts: list[str] = []
    for kind in args.formats.split(","):
        path = ensure_store(kind, args.regen)
        print(f"\n== {kind}: {path.name} ({path.stat().st_size / 1e6:,.0f} MB) ==", flush=True)
        if not args.no_window:
            cmd = [sys.executable, __file__, "--window", str(path)]
            if args.trace_stalls:
                cmd.append(str(args.trace_stalls))
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                               env={**os.environ, "QT_QPA_PLATFORM": "offscreen",
                                    "FLUXGUI_CACHE_DIR": str(work / f"window-cache-{kind}"),
                                    "FLUXGUI_DATA_DIR": str(work / f"window-data-{kind}")})
            line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
            if line is None:
                print(f"  the window failed: {p.stderr.strip()[-2000:]}")
            else:
                r = json.loads(line[7:])
                ok1, ok2 = r["first_screen"] <= FIRST_SCREEN_S, r["stall"] <= STALL_MS
                print(f"  {'window: first screen of session huge':<44} {r['first_screen'] * 1000:>8.0f} ms"
                      f"   target ≤ {FIRST_SCREEN_S * 1000:.0f} ms → {'OK' if ok1 else 'OVER'}")
                print(f"  {'window: its first cards painted':<44} {r['first_cards'] * 1000:>8.0f} ms"
                      "   (the figure above waits for every background task too)")
                print(f"  {'window: longest stall (until idle 2 s)':<44} {r['stall']:>8.1f} ms"
                      f"   target ≤ {STALL_MS:.0f} ms → {'OK' if ok2 else 'OVER'}"
                      f" ({r['over_frame']} stalls > 16 ms)")
                print(f"  {'window: items read as their start':<44} "
                      f"{', '.join(f'{n / 1e6:.1f} MB' for n in r['partial']) or 'none':>11}")
                if "viewer" in r:
                    print(f"  {'Open in Viewer (50 MB), until all in it':<44} {r['viewer']:>8.1f} s"
                          f"   longest stall {r['viewer_stall']:.1f} ms; {r['viewer_chars']:,} characters")
                print(f"  {'window process: peak RSS, session shown':<44} {r['rss_shown_mb']:>8.0f} MB"
                      f"   (after Open in Viewer: {r['rss_mb']:.0f} MB)")
                for t in r.get("trace", []) + (["  (viewer)"] if r.get("viewer_trace") else []) + r.get("viewer_trace", []):
                    print("    " + t)
                verdicts += [f"{kind} first screen: {'OK' if ok1 else 'OVER'}",
                             f"{kind} longest stall: {'OK' if ok2 else 'OVER'}"]
        if not args.no_cli:
            print(f"  {'command (own process)':<44} {'peak RSS':>11}   target ≤ {rss_target:.0f} MB "
                  f"(2 × {largest_mb:g} MB + 100 MB)")
            for name, r in commands(path, work):
                ok = r["rss_mb"] <= rss_target
                failed = "" if r["rc"] in (0, 1) else f"  exit {r['rc']}: {r['stderr'].strip()[-200:]}"
                print(f"  {name:<44} {r['rss_mb']:>8.0f} MB   {'OK' if ok else 'OVER'}"
                      f"   ({r['wall']:.1f} s){failed}", flush=True)
                verdicts.append(f"{kind} {name}: {'OK' if ok else 'OVER'}")
    over = [v for v in verdicts if v.endswith("OVER")]
    print(f"\n{len(verdicts) - len(over)} of {len(verdicts)} figures within their targets"
          + (": over — " + "; ".join(over) if over else ""))
    import shutil

    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
