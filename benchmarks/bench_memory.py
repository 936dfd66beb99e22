"""Peak memory of fluxgui's command line on a store holding one huge item, next to the
same store without it.

    .venv/bin/python benchmarks/bench_memory.py                      # 200 MB message, 40 MB metadata
    .venv/bin/python benchmarks/bench_memory.py --mb 20 --meta-mb 4  # quick
    .venv/bin/python benchmarks/bench_memory.py --exports jsonl,html --stores agents

Builds, with the REAL libraries through their public API, small stores of ordinary
sessions (``agents.SQLiteSession.add_items``, ``flux.sessions.SQLiteSession.add_messages``)
and the same stores with one huge item more:

* ``agents``: one user message of ``--mb`` MB (``{"role": "user", "content": …}``);
* ``flux``: one assistant message of ``--mb`` MB (Markdown-ish text: the Markdown
  export sanitises it);
* ``flux-meta``: one assistant message whose metadata holds ``--meta-mb`` MB of JSON
  (retrieved documents, as a RAG app stores them).

The huge item sits in a session of its own between two small messages; the store
"without" it has a small message in its place, so both have the same sessions and
message counts. The text has HTML, Markdown links and images, backticks, ampersands and
line breaks, so every escaping path of the writers runs.

Then it runs ``python -m fluxgui ls STORE``, a child that only reads every message through
fluxgui's store (``read all (no writer)``: the floor under any export), and ``python -m
fluxgui export STORE -o out.FMT`` for each format of ``--exports`` as subprocesses, each
forked from a small launcher process (Linux carries a parent's RSS at fork time into a
child's ``ru_maxrss`` across exec, so the big builder never forks them), and prints each
one's peak RSS (``ru_maxrss`` of that child from ``os.wait4``) next to the same figure
for the store without the huge item, the difference, that difference divided by the
item's size ("copies": how many item-sized buffers the command held at once), the wall
time (including interpreter start-up) and the output size.

Stores and outputs go to a temporary folder in ``benchmarks/data/`` (deleted at the end
unless ``--keep``). The script exits 0 and prints plain text only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
EXPORTS = ("jsonl", "html", "json", "md")
STORES = ("agents", "flux", "flux-meta")
SESSIONS = 20  # ordinary sessions in every store
PER_SESSION = 30  # messages in each

# =========================================================================== building (child)

_LINE = (
    "{n:09d} <b>bold</b> & <script>alert(1)</script> `a<b` [link](javascript:x) "
    "![img](https://example.com/i.png) *emphasis* __init__ # not a heading\n"
)


def huge_text(chars: int) -> str:
    """ASCII text of exactly ``chars`` characters, lines of Markdown and HTML."""
    line_len = len(_LINE.format(n=0))
    n = chars // line_len + 1
    return "".join(_LINE.format(n=i) for i in range(n))[:chars]


def huge_metadata(chars: int) -> dict[str, Any]:
    """About ``chars`` characters of JSON: a list of retrieved documents."""
    doc = "Retrieved passage about <tags> & \"quotes\", " * 4
    docs, size, i = [], 0, 0
    while size < chars:
        d = {"id": f"doc-{i}", "score": round(1 / (i + 1), 6), "text": doc}
        size += len(json.dumps(d)) + 2
        docs.append(d)
        i += 1
    return {"model": "m-1", "documents": docs}


def _ordinary(kind: str, s: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(PER_SESSION // 2):
        q = f"Question {s}.{i}: what is 2*3 in <b>bold</b>?"
        a = f"Answer {s}.{i}: **6**, see [docs](https://example.com/{i})."
        if kind == "agents":
            out.append({"role": "user", "content": q})
            out.append({"type": "message", "role": "assistant", "status": "completed",
                        "id": f"msg_{s}_{i}",
                        "content": [{"type": "output_text", "text": a, "annotations": []}]})
        else:
            out.append({"role": "user", "content": q})
            out.append({"role": "assistant", "content": a, "metadata": {"model": "m-1", "turn": i}})
    return out


def _huge_session(kind: str, mb: float, meta_mb: float, big: bool) -> list[dict[str, Any]]:
    chars = int(mb * 1_000_000)
    if kind == "agents":
        item = {"role": "user", "content": huge_text(chars) if big else "small"}
    elif kind == "flux":
        item = {"role": "assistant", "content": huge_text(chars) if big else "small"}
    else:
        meta = huge_metadata(int(meta_mb * 1_000_000)) if big else {"model": "m-1"}
        item = {"role": "assistant", "content": "with metadata", "metadata": meta}
    return [{"role": "user", "content": "before"}, item, {"role": "user", "content": "after"}]


def build(kind: str, path: str, mb: float, meta_mb: float, big: bool) -> dict[str, Any]:
    import asyncio

    t0 = time.perf_counter()
    sessions = {f"s{s:02d}": _ordinary(kind, s) for s in range(SESSIONS)}
    sessions["huge"] = _huge_session(kind, mb, meta_mb, big)

    asyncio.run(write_batches(kind, path, list(sessions.items())))
    return {"seconds": time.perf_counter() - t0, "bytes": _db_bytes(path),
            "messages": sum(len(v) for v in sessions.values()), "sessions": len(sessions)}


async def write_batches(kind: str, path: str, batches: list[tuple[str, list[dict[str, Any]]]]) -> None:
    """Each (session id, items) written by the real library, in order: one
    ``agents.SQLiteSession.add_items`` (``kind`` "agents") or one
    ``flux.sessions.SQLiteSession.add_messages`` call each."""
    for sid, items in batches:
        if kind == "agents":
            from agents import SQLiteSession

            sess = SQLiteSession(sid, path)
            try:
                await sess.add_items(items)  # type: ignore[arg-type]
            finally:
                sess.close()
        else:
            from flux.sessions import SQLiteSession as FluxSession

            await FluxSession(path, session_id=sid).add_messages(items)


def _db_bytes(path: str) -> int:
    return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))


# =========================================================================== measuring

# A fresh, small launcher forks and execs the command and reports that child's rusage.
_LAUNCHER = textwrap.dedent("""
    import json, os, sys, time
    out, err, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
    fd_out = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    fd_err = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(fd_out, 1)
            os.dup2(fd_err, 2)
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    print(json.dumps({"wall": time.perf_counter() - t0, "maxrss_kb": usage.ru_maxrss,
                      "rc": os.waitstatus_to_exitcode(status)}))
""")


def measure(cmd: list[str], work: Path) -> dict[str, Any]:
    """Wall seconds, peak RSS (MB), exit code and output of ``cmd`` in a clean process."""
    out, err = work / "stdout", work / "stderr"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    p = subprocess.run([sys.executable, "-c", _LAUNCHER, str(out), str(err), *cmd],
                       capture_output=True, text=True, cwd=ROOT, env=env)
    if p.returncode != 0:
        raise SystemExit(f"launcher failed: {p.stderr.strip()}")
    res = json.loads(p.stdout)
    res["rss_mb"] = res.pop("maxrss_kb") / 1024
    res["stdout"] = out.read_text(errors="replace")
    res["stderr"] = err.read_text(errors="replace")
    return res


def fluxgui(*args: str) -> list[str]:
    return [sys.executable, "-m", "fluxgui", *args]


# The reading floor: every message read through fluxgui's store, page by page, as the
# export reads them, and nothing written.
_READ_ALL = textwrap.dedent("""
    import asyncio, sys
    from fluxgui.adapters import open_store
    async def main():
        chars = 0
        async with await open_store(sys.argv[1]) as store:
            cursor = None
            while True:
                page = await store.reader.list_sessions(limit=200, cursor=cursor)
                for info in page.sessions:
                    async for msgs in store.reader.iter_messages(info.id):
                        chars += sum(len(m.text) for m in msgs)
                if page.cursor is None:
                    break
                cursor = page.cursor
        print(chars)
    asyncio.run(main())
""")


def run_commands(store: Path, exports: list[str], work: Path) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    res = measure(fluxgui("ls", str(store)), work)
    res["out_bytes"] = None
    results["ls"] = res
    res = measure([sys.executable, "-c", _READ_ALL, str(store)], work)
    res["out_bytes"] = None
    results["read all (no writer)"] = res
    for fmt in exports:
        target = work / f"out.{fmt}"
        res = measure(fluxgui("export", str(store), "-o", str(target)), work)
        res["out_bytes"] = target.stat().st_size if target.exists() else None
        if fmt == "jsonl" and target.exists():
            with target.open("rb") as f:
                res["lines"] = sum(1 for _ in f)
        target.unlink(missing_ok=True)
        results[f"export -o out.{fmt}"] = res
    return results


def _mb(n: float | None) -> str:
    return "-" if n is None else f"{n / 1e6:,.1f} MB"


def report(kind: str, item_mb: float, big: dict, small: dict, built: dict) -> list[str]:
    label = {
        "agents": f"agents: one {item_mb:g} MB user message",
        "flux": f"flux: one {item_mb:g} MB assistant message",
        "flux-meta": f"flux: one assistant message with {item_mb:g} MB of metadata",
    }[kind]
    print(f"\n{label} (store {_mb(built['big']['bytes'])}) vs the same store without it "
          f"(store {_mb(built['small']['bytes'])}); {built['big']['messages']} messages, "
          f"{built['big']['sessions']} sessions")
    print(f"  {'command':<22}{'peak RSS':>10}{'without':>10}{'growth':>10}{'copies':>8}"
          f"{'time':>9}{'without':>9}{'output':>12}")
    problems = []
    for name, b in big.items():
        s = small[name]
        growth = b["rss_mb"] - s["rss_mb"]
        copies = growth / item_mb if item_mb else 0.0
        print(f"  {name:<22}{b['rss_mb']:>7.0f} MB{s['rss_mb']:>7.0f} MB{growth:>+7.0f} MB"
              f"{copies:>7.1f}x{b['wall']:>8.1f}s{s['wall']:>8.1f}s{_mb(b['out_bytes']):>12}")
        for r, which in ((b, "with"), (s, "without")):
            if r["rc"] != 0:
                problems.append(f"{kind} {name} ({which} the item) exited {r['rc']}: "
                                f"{r['stderr'].strip().splitlines()[-1:] or ''}")
        if "lines" in b and b["lines"] != built["big"]["messages"]:
            problems.append(f"{kind} {name}: {b['lines']} lines for {built['big']['messages']} messages")
    return problems


# =========================================================================== main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--build"]:
        kind, path, mb, meta_mb, big = argv[1], argv[2], float(argv[3]), float(argv[4]), argv[5] == "1"
        print(json.dumps(build(kind, path, mb, meta_mb, big)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=200, help="size of the huge message in MB (default 200)")
    ap.add_argument("--meta-mb", type=float, default=40, help="size of the huge metadata in MB (default 40)")
    ap.add_argument("--stores", default=",".join(STORES), help="agents,flux,flux-meta")
    ap.add_argument("--exports", default=",".join(EXPORTS), help="export formats: jsonl,html,json,md")
    ap.add_argument("--keep", action="store_true", help="keep the stores (printed) instead of deleting them")
    args = ap.parse_args(argv)
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    exports = [e.strip() for e in args.exports.split(",") if e.strip()]
    for s in stores:
        if s not in STORES:
            ap.error(f"unknown store {s!r} (use {', '.join(STORES)})")
    for e in exports:
        if e not in EXPORTS:
            ap.error(f"unknown export format {e!r} (use {', '.join(EXPORTS)})")

    from importlib.metadata import version

    t_start = time.perf_counter()
    print(f"fluxgui memory benchmark — Python {sys.version.split()[0]}, flux-agents "
          f"{version('flux-agents')}, openai-agents {version('openai-agents')}, {os.cpu_count()} CPUs")
    print("peak RSS: ru_maxrss of each command's own process (python -m fluxgui …, started "
          "from a small launcher); time includes interpreter start-up and imports")
    DATA.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="memory-", dir=DATA))
    problems: list[str] = []
    try:
        for kind in stores:
            item_mb = args.meta_mb if kind == "flux-meta" else args.mb
            built, runs = {}, {}
            for which in ("big", "small"):
                path = folder / f"{kind}-{which}.db"
                p = subprocess.run(
                    [sys.executable, __file__, "--build", kind, str(path), str(args.mb),
                     str(args.meta_mb), "1" if which == "big" else "0"],
                    capture_output=True, text=True, cwd=ROOT,
                )
                if p.returncode != 0:
                    raise SystemExit(f"building {path.name} failed:\n{p.stderr.strip()}")
                built[which] = json.loads(p.stdout)
                work = folder / f"work-{kind}-{which}"
                work.mkdir()
                runs[which] = run_commands(path, exports, work)
            print(f"\n(built with the library in {built['big']['seconds']:.1f} s and "
                  f"{built['small']['seconds']:.1f} s)", end="")
            problems += report(kind, item_mb, runs["big"], runs["small"], built)
    finally:
        if args.keep:
            print(f"\nstores kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    print()
    for p in problems:
        print("PROBLEM: " + p)
    print(f"total benchmark time {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
