"""``--screenshot`` never runs a nested event loop inside a task (issue 13 point 7).

A nested ``processEvents()`` inside the screenshot task let qasync step another task
inside it: "Cannot enter into task … while another task … is being executed", or a hang
(seen with the store watcher of a Redis store). Here a task that is always ready to run
(it loops on ``sleep(0)``) stands in for the watcher: with a nested loop it is stepped
inside the screenshot task every time; without one the screenshot finishes cleanly.
"""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO, cli_env

SCRIPT = r'''
import asyncio, sys
from pathlib import Path
sys.path[:0] = [sys.argv[2], sys.argv[2] + "/qt"]
from qt_helpers import AGENTS_SESSIONS, write_agents_store
import qasync
from PySide6.QtWidgets import QApplication
from fluxgui.qt import launch

folder = Path(sys.argv[1])
db = write_agents_store(folder / "a.db", AGENTS_SESSIONS)
app = QApplication([])
app.setQuitOnLastWindowClosed(False)
loop = qasync.QEventLoop(app)
asyncio.set_event_loop(loop)
errors = []
loop.set_exception_handler(lambda l, ctx: errors.append(repr(ctx.get("exception") or ctx.get("message"))))

async def always_ready(stop):
    while not stop.is_set():
        await asyncio.sleep(0)

async def main():
    stop = asyncio.Event()
    busy = asyncio.ensure_future(always_ready(stop))
    try:
        request = launch.Launch(str(db), launch.OpenOptions())
        return await launch._screenshot(app, request, str(folder / "s.png"))
    finally:
        stop.set()
        await busy

with loop:
    code = loop.run_until_complete(main())
print("exit", code, "errors", errors)
sys.exit(0 if code == 0 and not errors and (folder / "s.png").stat().st_size > 0 else 1)
'''


def test_screenshot_with_another_task_always_ready(tmp_path):
    script = tmp_path / "busy.py"
    script.write_text(SCRIPT, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path), str(REPO / "tests")],
        capture_output=True, text=True, env=cli_env(), timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Cannot enter into task" not in proc.stderr
    assert "exit 0 errors []" in proc.stdout
