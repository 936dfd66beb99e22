"""Whether a window can be opened here, asked before Qt is: Qt aborts the process
(``qFatal``) when its platform plugin cannot start, so :func:`display_problem` checks
``QT_QPA_PLATFORM``, that a display server answers and that Qt's plugin for it loads.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path

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


def _wayland_reachable(env: Mapping[str, str]) -> bool:
    name = env.get("WAYLAND_DISPLAY") or "wayland-0"
    if os.path.isabs(name):
        return _socket_answers(name)
    runtime = env.get("XDG_RUNTIME_DIR")
    return runtime is not None and bool(runtime) and _socket_answers(os.path.join(runtime, name))


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


def display_problem(
    env: MutableMapping[str, str] | None = None, platform: str | None = None
) -> str | None:
    """``None`` when a window can be opened here; otherwise one sentence saying why not.

    On Linux and other X11/Wayland systems this checks ``QT_QPA_PLATFORM``, that a
    display server answers, and that Qt's plugin for it loads, because Qt aborts the
    process (``qFatal``) when it cannot. When ``QT_QPA_PLATFORM`` is unset and a usable
    platform is found, it is written to ``env`` so Qt takes exactly that one.
    """
    env = os.environ if env is None else env
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
