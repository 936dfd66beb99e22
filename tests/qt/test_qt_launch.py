"""``fluxgui [TARGET]`` as a process: --screenshot, the demo store, no display, errors."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, run_cli
from qt_helpers import AGENTS_SESSIONS, write_agents_store

from fluxgui.qt.display import HEADLESS_PLATFORMS, display_problem
from fluxgui.qt.launch import SCREENSHOT_SIZE
from fluxgui.core.demo import demo_store_path


def _distinct_colours(path: Path) -> int:
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull(), path
    colours = set()
    for y in range(0, image.height(), 7):
        for x in range(0, image.width(), 7):
            colours.add(image.pixel(x, y))
    return len(colours)


def _image_size(path: Path) -> tuple[int, int]:
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    return image.width(), image.height()


def _assert_clean(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Fatal" not in proc.stderr, proc.stderr


# --------------------------------------------------------------------------- --screenshot


def test_screenshot_of_a_store(tmp_path):
    db = write_agents_store(tmp_path / "agents.db", AGENTS_SESSIONS)
    out = tmp_path / "shot.png"
    proc = run_cli(str(db), "--screenshot", str(out), "--session", "refund-1001")
    _assert_clean(proc)
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()
    assert _image_size(out) == SCREENSHOT_SIZE
    assert _distinct_colours(out) > 20


def test_screenshot_of_the_demo_store(tmp_path):
    out = tmp_path / "demo.png"
    env = dict(os.environ)
    env.pop("QT_QPA_PLATFORM", None)  # --screenshot must force offscreen by itself
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "fluxgui", "--screenshot", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    _assert_clean(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # not even Qt's offscreen chatter
    assert _image_size(out) == SCREENSHOT_SIZE
    assert _distinct_colours(out) > 20


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["{tmp}/missing.db"], "no such file"),
        (["{tmp}/junk.db"], "not a SQLite database"),
        (["{demo}", "--session", "no-such-session"], "unknown session id"),
    ],
    ids=["missing", "junk", "unknown-session"],
)
def test_screenshot_known_error_prints_one_line_and_exits_3(tmp_path, args, needle):
    (tmp_path / "junk.db").write_text("not a database\n")
    out = tmp_path / "shot.png"
    demo = demo_store_path()
    argv = [a.format(tmp=tmp_path, demo=demo) for a in args]
    proc = run_cli(*argv, "--screenshot", str(out))
    _assert_clean(proc)
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("fluxgui: error: ")
    assert needle in lines[0]
    assert not out.exists()


# --------------------------------------------------------------------------- no display


def _no_display_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.parametrize("args", [[], ["{demo}"]], ids=["demo", "target"])
def test_no_display_prints_one_line_and_exits_3(args):
    if sys.platform in ("win32", "darwin"):
        pytest.skip("there is always a display here")
    argv = [a.format(demo=demo_store_path()) for a in args]
    proc = subprocess.run(
        [sys.executable, "-m", "fluxgui", *argv],
        capture_output=True,
        text=True,
        env=_no_display_env(),
        timeout=60,
    )
    _assert_clean(proc)
    assert proc.returncode == 3
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "no display" in lines[0]
    assert "--screenshot FILE.png" in lines[0]
    assert "fluxgui ls" in lines[0] and "fluxgui show" in lines[0]
    assert "ls demo" in lines[0]  # a TARGET a newcomer can try at once


def test_display_problem_rules():
    linux = "linux"
    assert display_problem({}, linux) is not None
    assert "no display" in (display_problem({}, linux) or "")
    for name in HEADLESS_PLATFORMS:
        assert display_problem({"QT_QPA_PLATFORM": name}, linux) is None
    assert display_problem({"QT_QPA_PLATFORM": "offscreen:fontengine=freetype"}, linux) is None
    assert display_problem({"QT_QPA_PLATFORM": "xcb;offscreen"}, linux) is None
    assert display_problem({}, "darwin") is None
    assert display_problem({}, "win32") is None
    # A display number where no X server listens.
    problem = display_problem({"DISPLAY": ":987"}, linux)
    assert problem is not None and ":987" in problem
    env: dict[str, str] = {"QT_QPA_PLATFORM": "xcb"}
    assert display_problem(env, linux) is not None


# --------------------------------------------------------------------------- the demo store


def test_demo_store_is_a_single_read_only_file_of_the_agents_format():
    path = demo_store_path()
    assert path is not None and path.is_file()
    assert path.stat().st_size < 200_000
    header = path.read_bytes()[:100]
    assert header[18] == 1 and header[19] == 1  # rollback journal, not WAL
    for suffix in ("-wal", "-shm", "-journal"):
        assert not Path(str(path) + suffix).exists()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        sessions = conn.execute("SELECT count(*) FROM agent_sessions").fetchone()[0]
        kinds = {
            row[0]
            for row in conn.execute(
                "SELECT json_extract(message_data, '$.type') FROM agent_messages"
            )
        }
    finally:
        conn.close()
    assert 3 <= sessions <= 5
    assert {"message", "function_call", "function_call_output", "reasoning"} <= kinds


async def test_demo_store_opens_through_the_adapters():
    from fluxgui.adapters import open_store

    before = demo_store_path().read_bytes()  # type: ignore[union-attr]
    store = await open_store(str(demo_store_path()))
    try:
        assert store.format == "agents"
        assert not store.can_write
        page = await store.reader.list_sessions(limit=10)
        assert len(page.sessions) >= 3
        messages = await store.reader.page_messages(page.sessions[0].id, limit=200)
        assert messages
    finally:
        await store.close()
    assert demo_store_path().read_bytes() == before  # type: ignore[union-attr]


def test_first_paint_waits_for_the_windows_first_paint(qtbot, qloop):
    # The app opens its store after the window's first paint, not in the same turn.
    import time

    from PySide6.QtWidgets import QWidget
    from qt_helpers import run_on

    from fluxgui.qt.launch import first_paint

    class Counting(QWidget):
        paints = 0

        def paintEvent(self, event):  # noqa: N802 - Qt's name
            Counting.paints += 1
            super().paintEvent(event)

    shown = Counting()
    qtbot.addWidget(shown)
    shown.resize(200, 100)

    async def show_and_wait() -> int:
        shown.show()
        before = Counting.paints
        await first_paint(shown, timeout=5.0)
        return before

    assert run_on(qtbot, qloop, show_and_wait()) == 0 and Counting.paints >= 1
    hidden = QWidget()  # never shown, never painted: the wait ends at its timeout
    qtbot.addWidget(hidden)
    started = time.monotonic()
    run_on(qtbot, qloop, first_paint(hidden, timeout=0.2))
    assert 0.15 <= time.monotonic() - started < 5.0  # (Qt's coarse timers end a little early)
