"""Where the UI thread is while the event loop stalls.

A watchdog thread samples the main thread's Python stack every millisecond once the
loop's 1 ms timer has not ticked for ``threshold_ms``; each stall's samples are summed by
the innermost fluxgui frames, so a slow handler shows up by name. Used by
``bench_ui.py --trace-stalls MS``; sampling costs a little time on the other core.
"""

from __future__ import annotations

import collections
import gc
import sys
import threading
import time
import traceback
from typing import Any


def _where(frame: Any, depth: int = 6) -> str:
    """The innermost ``depth`` frames of the project (or the innermost at all)."""
    stack = traceback.extract_stack(frame)
    ours = [f for f in stack if "fluxgui" in f.filename or "benchmarks" in f.filename]
    chosen = (ours or stack)[-depth:]
    inner = stack[-1]
    parts = [f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}" for f in chosen]
    if chosen and inner is not chosen[-1]:
        parts.append(f"... {inner.filename.rsplit('/', 1)[-1]}:{inner.lineno} {inner.name}")
    return " <- ".join(reversed(parts))


class StallTracer:
    """Call ``tick()`` from the loop's timer; ``report()`` gives the stalls seen."""

    def __init__(self, threshold_ms: float) -> None:
        self.threshold = threshold_ms / 1000
        self._main = threading.main_thread().ident
        self._last = time.perf_counter()
        self._current: collections.Counter[str] | None = None
        self._started = 0.0
        self.stalls: list[tuple[float, collections.Counter[str]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        #: (generation, ms, thread name, objects freed) of every collection over 2 ms
        self.collections: list[tuple[int, float, str, int]] = []
        self._gc_start = 0.0
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
            return
        took = (time.perf_counter() - self._gc_start) * 1000
        if took > 2:
            self.collections.append((info["generation"], took, threading.current_thread().name,
                                     info.get("collected", 0)))

    def tick(self) -> None:
        now = time.perf_counter()
        with self._lock:
            if self._current is not None:
                self.stalls.append(((now - self._started) * 1000, self._current))
                self._current = None
            self._last = now

    def _watch(self) -> None:
        while not self._stop.wait(0.001):
            now = time.perf_counter()
            with self._lock:
                if now - self._last < self.threshold:
                    continue
                frame = sys._current_frames().get(self._main)
                if frame is None:
                    continue
                if self._current is None:
                    self._current, self._started = collections.Counter(), self._last
                self._current[_where(frame)] += 1

    def close(self) -> None:
        gc.callbacks.remove(self._gc)
        self._stop.set()
        self._thread.join()

    def take(self) -> list[tuple[float, collections.Counter[str]]]:
        with self._lock:
            stalls, self.stalls = self.stalls, []
            collected, self.collections = self.collections, []
        for generation, took, thread, freed in collected:
            samples: collections.Counter[str] = collections.Counter()
            what = f"garbage collection of generation {generation} in {thread} ({freed} freed)"
            samples[what] = round(took)
            stalls.append((took, samples))
        return stalls


def print_stalls(stalls: list[tuple[float, collections.Counter[str]]], top: int = 5) -> None:
    for length, samples in sorted(stalls, key=lambda s: -s[0])[:top]:
        print(f"    stall {length:.0f} ms:")
        for where, count in samples.most_common(4):
            print(f"      {count:>4} ms  {where}")
