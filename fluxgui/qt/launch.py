"""Start the window: check for a display, build the app on one qasync loop, run it.

``launch(args)`` is what ``fluxgui [TARGET]`` calls. It never lets Qt abort the process:
when no window can be opened (no display, or Qt's platform plugin cannot load) it prints
one line and returns 3 before Qt is asked to start. ``--screenshot FILE.png`` renders the
window offscreen once everything has loaded, saves it and returns 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgui.adapters.registry import KEY_ENV
from fluxgui.core.ports import OpenOptions
from fluxgui.core.redact import redact_url

from .demo import demo_store_path

EXIT_OK = 0
EXIT_KNOWN_ERROR = 3
SCREENSHOT_SIZE = (1200, 800)
#: give up on a screenshot whose store does not answer (a server that hangs)
SCREENSHOT_TIMEOUT = 120.0

# Platform plugins that need no display server.
HEADLESS_PLATFORMS = {
    "offscreen",
    "minimal",
    "minimalegl",
    "vnc",
    "eglfs",
    "linuxfb",
    "vkkhrdisplay",
}

HINT = (
    "render the window to a file with 'fluxgui [TARGET] --screenshot FILE.png', "
    "or use the command line: 'fluxgui ls TARGET', 'fluxgui show TARGET SESSION_ID'"
)


def _err(text: str) -> None:
    print(f"fluxgui: error: {text}", file=sys.stderr)


# --------------------------------------------------------------------------- display check


def _socket_answers(address: str | bytes) -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1.0)
    try:
        s.connect(address)
    except OSError:
        return False
    finally:
        s.close()
    return True


def _x11_reachable(display: str) -> bool:
    """Whether an X server answers on ``display``; remote (TCP) displays are trusted."""
    host, sep, rest = display.rpartition(":")
    if not sep:
        return False
    number = rest.split(".", 1)[0]
    if not number.isdigit():
        return False
    if host not in ("", "unix"):
        if host.startswith("/"):  # a socket path (XQuartz style)
            return os.path.exists(host + ":" + rest) or os.path.exists(host)
        return True  # TCP or ssh forwarding: Qt will find out
    path = f"/tmp/.X11-unix/X{number}"
    return _socket_answers(path) or _socket_answers(b"\0" + path.encode())


def _wayland_reachable(env: dict[str, str]) -> bool:
    name = env.get("WAYLAND_DISPLAY") or "wayland-0"
    if os.path.isabs(name):
        return _socket_answers(name)
    runtime = env.get("XDG_RUNTIME_DIR")
    return bool(runtime) and _socket_answers(os.path.join(runtime, name))


def _plugin_problem(name: str) -> str | None:
    """Why Qt's platform plugin ``name`` cannot load (missing system libraries), or None."""
    try:
        from PySide6.QtCore import QLibraryInfo, QPluginLoader
    except ImportError as exc:
        return f"PySide6 cannot be imported ({exc})"
    base = "wayland" if name.startswith("wayland") else name
    folder = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms"
    candidates = list(folder.glob(f"libq{base}.so*")) if folder.is_dir() else []
    if not candidates:
        return None  # not ours to judge: Qt may find it elsewhere (QT_PLUGIN_PATH)
    loader = QPluginLoader(str(candidates[0]))
    if loader.load():
        return None
    reason = loader.errorString()
    reason = reason.split(": ", 1)[-1] if ": " in reason else reason
    return f"Qt's {name} platform plugin cannot load ({reason})"


def display_problem(env: dict[str, str] | None = None, platform: str | None = None) -> str | None:
    """``None`` when a window can be opened here; otherwise one sentence saying why not.

    On Linux and other X11/Wayland systems this checks ``QT_QPA_PLATFORM``, that a
    display server answers, and that Qt's plugin for it loads, because Qt aborts the
    process (``qFatal``) when it cannot. When ``QT_QPA_PLATFORM`` is unset and a usable
    platform is found, it is written to ``env`` so Qt takes exactly that one.
    """
    env = os.environ if env is None else env  # type: ignore[assignment]
    assert env is not None
    platform = platform or sys.platform
    if platform.startswith(("win", "darwin", "cygwin")):
        return None
    requested = [
        p.split(":", 1)[0].strip().lower()
        for p in env.get("QT_QPA_PLATFORM", "").split(";")
        if p.strip()
    ]
    if any(p in HEADLESS_PLATFORMS for p in requested):
        return None
    if requested:
        candidates = requested
    elif env.get("XDG_SESSION_TYPE", "").lower() == "wayland":
        candidates = ["wayland", "xcb"]
    else:
        candidates = ["xcb", "wayland"]
    reasons: list[str] = []
    for name in candidates:
        if name == "xcb":
            display = env.get("DISPLAY", "")
            if not display:
                continue
            if not _x11_reachable(display):
                reasons.append(f"no X server answers on DISPLAY={display}")
                continue
        elif name.startswith("wayland"):
            # Unasked, Wayland is only tried when the session names a compositor.
            if not env.get("WAYLAND_DISPLAY") and not requested:
                continue
            if not _wayland_reachable(env):
                reasons.append(
                    f"no Wayland compositor answers on {env.get('WAYLAND_DISPLAY') or 'wayland-0'}"
                )
                continue
        else:
            return None  # a platform we do not know: let Qt try it
        problem = _plugin_problem(name)
        if problem:
            reasons.append(problem)
            continue
        if not requested:
            env["QT_QPA_PLATFORM"] = name
        return None
    if not reasons:
        return "no display available (DISPLAY and WAYLAND_DISPLAY are not set)"
    return "cannot open a window: " + "; ".join(reasons)


# --------------------------------------------------------------------------- demo store


# --------------------------------------------------------------------------- launch


@dataclass(frozen=True)
class Launch:
    """What the window opens at start: a target, how, which session, under what label."""

    target: str = field(repr=False)
    options: OpenOptions
    session_id: str | None = None
    label: str | None = None

    def open_in(self, window: Any) -> None:
        window.open_target(
            self.target, self.options, session_id=self.session_id, label=self.label
        )


def open_options(args: argparse.Namespace) -> OpenOptions:
    """The window's open options from its command line (as the commands take them:
    ``--key`` falling back to ``$FLUXGUI_KEY``)."""
    return OpenOptions(
        writable=bool(args.writable),
        format=args.format,
        sessions_table=args.sessions_table,
        messages_table=args.messages_table,
        key=args.key or os.environ.get(KEY_ENV) or None,
        ttl=args.ttl,
        key_prefix=args.key_prefix,
    )


def launch(args: argparse.Namespace) -> int:
    """Open the window for ``args`` (the window parser's namespace); return the exit code."""
    screenshot: str | None = getattr(args, "screenshot", None)
    if screenshot:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    else:
        problem = display_problem()
        if problem:
            _err(f"{problem}; {HINT}")
            return EXIT_KNOWN_ERROR

    target: str | None = getattr(args, "target", None)
    label: str | None = None
    if not target and not screenshot:
        # Reopen the last store when it opens without asking (screenshots stay reproducible).
        from .settings import RecentStores, startup_target

        found = startup_target(RecentStores())
        if found is not None:
            target, label = found
    if not target:
        demo = demo_store_path()
        if demo is None:
            _err("the demo store (resources/demo.db) is missing from this installation; "
                 "give a TARGET")
            return EXIT_KNOWN_ERROR
        target, label = str(demo), f"Demo store ({demo.name})"

    import qasync
    from PySide6.QtWidgets import QApplication

    if os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen"):
        _drop_offscreen_noise()

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "fluxgui"])
    assert isinstance(app, QApplication)
    app.setApplicationName("fluxgui")
    app.setApplicationDisplayName("fluxgui")
    app.setQuitOnLastWindowClosed(False)  # we close the store before the loop ends

    request = Launch(target, open_options(args), args.session, label)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    from . import window  # noqa: F401 - import the whole UI before the freeze

    tune_gc()
    try:
        with loop:
            if screenshot:
                return loop.run_until_complete(_screenshot(app, request, screenshot))
            return loop.run_until_complete(_interactive(app, request))
    finally:
        asyncio.set_event_loop(None)


async def _interactive(app: Any, request: Launch) -> int:
    from .window import MainWindow

    closed = asyncio.Event()
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        interrupted = True
        closed.set()

    app.lastWindowClosed.connect(closed.set)
    try:  # Ctrl+C in the terminal closes the window cleanly
        import signal

        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, on_sigint)
    except (NotImplementedError, RuntimeError, ValueError):
        pass
    window = MainWindow()
    window.show()
    request.open_in(window)
    await closed.wait()
    window.hide()
    await window.aclose()
    window.deleteLater()
    return 130 if interrupted else EXIT_OK


async def _screenshot(app: Any, request: Launch, path: str) -> int:
    from .window import MainWindow

    window = MainWindow()
    window.resize(*SCREENSHOT_SIZE)
    settled = asyncio.get_running_loop().create_future()

    def on_settled() -> None:
        if not settled.done():
            settled.set_result(None)

    window.settled.connect(on_settled)
    window.show()
    try:
        request.open_in(window)
        try:
            await asyncio.wait_for(asyncio.shield(settled), SCREENSHOT_TIMEOUT)
        except asyncio.TimeoutError:
            _err(f"{redact_url(request.target)} did not finish loading in {SCREENSHOT_TIMEOUT:.0f} s")
            return EXIT_KNOWN_ERROR
        if window.open_error is not None:
            _err(_one_line(window.open_error))
            return EXIT_KNOWN_ERROR
        if window.last_error is not None:  # e.g. --session names no session
            _err(_one_line(window.last_error))
            return EXIT_KNOWN_ERROR
        # Let posted layout and paint events run so the grab shows the final state: by
        # giving the loop a few turns, never by a nested processEvents() inside this task
        # (other tasks, the store watcher's poll among them, would run inside it).
        await _qt_turns(3)
        image = window.grab()
        target_path = Path(path).expanduser()
        if not target_path.parent.is_dir():
            _err(f"cannot write {path}: no such folder {target_path.parent}")
            return EXIT_KNOWN_ERROR
        if not image.save(str(target_path), "PNG"):
            _err(f"cannot write {path}")
            return EXIT_KNOWN_ERROR
        return EXIT_OK
    finally:
        window.hide()
        await window.aclose()
        window.deleteLater()


async def _qt_turns(n: int) -> None:
    """Let the Qt event loop go round ``n`` times (posted events, layouts, timers)."""
    from PySide6.QtCore import QTimer

    loop = asyncio.get_running_loop()
    for _ in range(n):
        turn = loop.create_future()
        QTimer.singleShot(0, lambda turn=turn: turn.done() or turn.set_result(None))
        await turn


#: what Qt's offscreen plugin says about every window with a layout: noise for us
OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints()"


def tune_gc() -> None:
    """Move what start-up created (Qt bindings, SQLAlchemy, …) out of the collector's sight
    so that its full collections, which would walk it all, stay short."""
    import gc

    gc.collect()
    gc.freeze()


def _drop_offscreen_noise() -> None:
    """Keep Qt's other messages, drop the offscreen plugin's ``propagateSizeHints`` one."""
    from PySide6.QtCore import qFormatLogMessage, qInstallMessageHandler

    previous: Any = None

    def handler(mode: Any, context: Any, message: str) -> None:
        if message == OFFSCREEN_NOISE:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            sys.stderr.write(qFormatLogMessage(mode, context, message) + "\n")

    previous = qInstallMessageHandler(handler)


def _one_line(exc: BaseException) -> str:
    from .window import describe_error

    return describe_error(exc)
