"""Building a store's index in a process of its own (``python -m
fluxgui.services.index.child``), so that the window's UI thread never shares the
interpreter lock with the build: parsing a million rows in a thread of the window's
process delays every paint by the lock's switch interval, many times per frame.

The request is one JSON line on stdin — ``{"target": …, "options": {…}}``, the same
target and store options the window opened (a password in a URL travels here, never in
the command line or the environment); encryption keys are not sent: an encrypted item
is never written to the index in clear text, with or without a key. Then stdout carries
one JSON object per line:

* ``{"store_key": "…"}`` once the store is open (the window checks it names its store);
* ``{"progress": [done, total]}`` at most ten times a second (``total`` may be ``null``);
* ``{"done": {"added": …, "reindexed": …, "dropped": …, "seconds": …, "built": …}}``;
* ``{"error": "one line"}`` (exit status 3) when the store cannot be opened or read.

It runs at a lower priority (``nice`` 10): a build never takes the processor from the
window. When stdin closes (the window quit or was killed) the process ends at once: the index
file is consistent after any transaction (see :mod:`.indexfile`), the next update
continues it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from dataclasses import asdict
from typing import Any, TextIO

from fluxgui.core.ports import OpenOptions

#: the store options a build needs (no keys, never writable)
OPTION_FIELDS = ("format", "sessions_table", "messages_table", "key_prefix")
EXIT_ERROR = 3


def request_line(target: str, options: OpenOptions) -> bytes:
    """The request the window writes to the child's stdin."""
    chosen = {name: getattr(options, name) for name in OPTION_FIELDS}
    return (json.dumps({"target": target, "options": chosen}) + "\n").encode("utf-8")


def command() -> list[str]:
    """The child's command line (this interpreter)."""
    return [sys.executable, "-m", "fluxgui.services.index.child"]


def _emit(out: TextIO, value: dict[str, Any]) -> None:
    out.write(json.dumps(value) + "\n")
    out.flush()


async def _build(request: dict[str, Any], out: TextIO) -> None:
    from fluxgui.adapters.registry import open_store

    from .update import update_index

    options = OpenOptions(**{k: v for k, v in request.get("options", {}).items() if k in OPTION_FIELDS})
    store = await open_store(str(request["target"]), options)
    try:
        _emit(out, {"store_key": store.store_key})
        shown = 0.0

        def progress(done: int, total: int | None) -> None:
            nonlocal shown
            now = time.monotonic()
            if now - shown >= 0.1 or done == total:
                shown = now
                _emit(out, {"progress": [done, total]})

        report = await update_index(store, progress=progress)
        _emit(out, {"done": asdict(report)})
    finally:
        await store.close()


def _exit_when_orphaned(stream: Any) -> None:
    """End the process when the window closes its end of stdin."""
    stream.read()
    os._exit(EXIT_ERROR)


def main(stdin: Any = None, out: TextIO | None = None, *, end_when_orphaned: bool = False) -> int:
    """Read the request from ``stdin``, build, write the lines to ``out``; the exit
    status. ``end_when_orphaned``: end the process when stdin closes (the real child)."""
    from fluxgui.core.redact import redact_text

    stdin = stdin or sys.stdin.buffer
    out = out or sys.stdout
    try:
        request = json.loads(stdin.readline() or b"null")
        if not isinstance(request, dict) or "target" not in request:
            raise ValueError("the request is not a JSON object with a target")
    except ValueError as error:
        _emit(out, {"error": f"bad request: {error}"})
        return EXIT_ERROR
    if end_when_orphaned:
        threading.Thread(target=_exit_when_orphaned, args=(stdin,), daemon=True).start()
    try:
        asyncio.run(_build(request, out))
    except Exception as error:  # every failure is one line for the window's log
        _emit(out, {"error": redact_text(f"{type(error).__name__}: {error}")[:500]})
        return EXIT_ERROR
    return 0


#: the build yields the processor to the window (and everything else the user runs)
NICENESS = 10

if __name__ == "__main__":
    try:
        os.nice(NICENESS)
    except OSError:  # a system that refuses: the build runs at the window's priority
        pass
    status = main(end_when_orphaned=True)
    sys.stdout.flush()
    # not a normal exit: the thread waiting on stdin would hold its lock at shutdown
    os._exit(status)
