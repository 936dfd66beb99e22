"""``fluxgui import`` at its limits, run as subprocesses: a JSONL line longer than the
longest one fluxgui reads is refused in one line and bounded memory, and an error while a
new store is being written names the target, not the temporary it is built in."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import cli_env

from fluxgui.core.imports import MAX_LINE

MB = 1024 * 1024

#: runs ``python -m fluxgui ARGS`` and prints its exit code, output and peak RSS as JSON.
#: (A small process of its own forks the import: Linux carries a parent's RSS at fork
#: into the child's ru_maxrss, and the test process may be big.)
MEASURED = textwrap.dedent(
    """
    import json, resource, subprocess, sys
    done = subprocess.run([sys.executable, "-m", "fluxgui", *sys.argv[1:]],
                          capture_output=True, text=True)
    print(json.dumps({"code": done.returncode, "out": done.stdout, "err": done.stderr,
                      "peak_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
    """
)

#: runs ``python -m fluxgui ARGS`` with files limited to 512 KiB (writing past that fails
#: with EFBIG, as a full disk fails a write)
SMALL_FILES = textwrap.dedent(
    """
    import os, resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (512 * 1024, 512 * 1024))
    os.execv(sys.executable, [sys.executable, "-m", "fluxgui", *sys.argv[1:]])
    """
)


def test_a_line_over_the_limit_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:  # one message of 300 MB, on one line
        fh.write(b'{"session_id": "s", "role": "user", "kind": "message", "text": "')
        chunk = b"a" * MB
        for _ in range(300):
            fh.write(chunk)
        fh.write(b'"}\n')
    assert path.stat().st_size > MAX_LINE
    target = tmp_path / "new.db"
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, "import", str(target), str(path)],
        capture_output=True, text=True, env=cli_env(), timeout=600,
    )
    report = json.loads(done.stdout)
    assert report["code"] == 3 and report["out"] == ""
    assert report["err"] == (
        f"fluxgui: error: {path}, line 1: longer than 256 MiB, the longest line fluxgui imports\n"
    )
    # about 0.55 GB here (the line read up to the limit); read whole and imported, it
    # took 1.2 GB, and a 1 GB line 4.1 GB
    assert report["peak_kb"] < 1024 * 1024, report["peak_kb"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["huge.jsonl"]


def test_an_error_writing_a_new_store_names_it_not_its_temporary(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as fh:  # 2 MB: more than a file may hold here
        for n in range(40):
            fh.write(json.dumps({"session_id": "s", "role": "user", "text": f"{n} " + "x" * 50_000}) + "\n")
    target = tmp_path / "new.db"
    done = subprocess.run(
        [sys.executable, "-c", SMALL_FILES, "import", str(target), str(path)],
        capture_output=True, text=True, env=cli_env(), timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr == f"fluxgui: error: {target}: disk I/O error\n"
    assert ".part" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl"]  # nothing left
