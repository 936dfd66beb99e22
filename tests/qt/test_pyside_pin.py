"""Regression guard for the PySide6 pin (pyproject: ``PySide6>=6.11.3,<6.12`` on CPython 3.11).

PySide6 6.12.0 on CPython 3.11 drops a reference to ``True`` on every ``Signal.emit``.
qasync emits a signal for every cross-thread callback (each aiosqlite call, each
``to_thread``), so after about a thousand of them the interpreter aborts with
``Fatal Python error: bool_dealloc``. The check runs in a subprocess because the failure
is a hard abort that would take the test runner down with it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

MARKER = "PYSIDE-PIN-OK"

SCRIPT = textwrap.dedent(
    f"""
    import asyncio
    import sys

    import qasync
    from PySide6.QtCore import QCoreApplication, QObject, Signal


    class Emitter(QObject):
        ping = Signal(int)
        flag = Signal(bool)


    async def main() -> None:
        emitter = Emitter()
        seen = []
        emitter.ping.connect(seen.append)
        emitter.flag.connect(seen.append)
        for i in range(10_000):
            emitter.ping.emit(i)
        for i in range(1_000):
            emitter.flag.emit(i % 2 == 0)
        assert len(seen) == 11_000, len(seen)

        # Cross-thread callbacks: each completion reaches the loop through a Qt signal.
        total = 0
        for i in range(500):
            total += await asyncio.to_thread(lambda n=i: n * 2)
        loop = asyncio.get_running_loop()
        for i in range(500):
            total += await loop.run_in_executor(None, lambda n=i: n * 2)
        assert total == 2 * 2 * sum(range(500)), total


    app = QCoreApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(main())
    print({MARKER!r}, flush=True)
    """
)


def test_signals_and_cross_thread_callbacks_do_not_abort() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "bool_dealloc" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert MARKER in proc.stdout, (proc.stdout[-500:], proc.stderr[-2000:])
