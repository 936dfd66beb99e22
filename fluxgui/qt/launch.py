"""Start the window: check for a display, build the app on one qasync loop, run it.

``launch(args)`` is what ``fluxgui [TARGET]`` calls. It never lets Qt abort the process:
when no window can be opened (no display, or Qt's platform plugin cannot load:
:mod:`fluxgui.qt.display`) it prints one line and returns 3 before Qt is asked to start.
``--screenshot FILE.png`` renders the window offscreen once everything has loaded, saves
it and returns 0. ``--redact KINDS`` opens it with View › Redact on (the detectors made
and checked by the command line before Qt starts): a screenshot then shows the
conversation and the session ids redacted.

Without a TARGET the window reopens the last store when it can without asking; a URL's
password for that comes from the keyring, looked up on a worker thread once the window
shows (a keyring may block for seconds). Otherwise it opens the demo store.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxgui.core.ports import OpenOptions
from fluxgui.core.redact import redact_url
from fluxgui.core.text import plural
from fluxgui.services.credentials import is_url
from fluxgui.core.demo import demo_store_path

from .display import display_problem
from .errors import describe_error

if TYPE_CHECKING:
    from collections.abc import Callable

    from fluxgui.services.redaction import Detectors
    from fluxgui.services.workspace import Entry

    from .window import MainWindow

EXIT_OK = 0
EXIT_KNOWN_ERROR = 3
SCREENSHOT_SIZE = (1200, 800)
#: give up on a screenshot whose store does not answer (a server that hangs)
SCREENSHOT_TIMEOUT = 120.0

def program() -> str:
    """How the user can run this program again: ``fluxgui`` when that name on PATH is
    this program, else the path they typed (``.venv/bin/fluxgui``) or ``python -m
    fluxgui``."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else "fluxgui"
    if os.path.basename(argv0) != "fluxgui":
        return "python -m fluxgui"
    found = shutil.which("fluxgui")
    if found and os.path.realpath(found) == os.path.realpath(argv0):
        return "fluxgui"
    return argv0


def hint() -> str:
    """What to do instead when no window can open: a screenshot, or the command line on
    the bundled demo store (so a newcomer has a TARGET to try)."""
    prog = program()
    return (
        f"render the window to a file with '{prog} [TARGET] --screenshot FILE.png', or "
        f"use the command line: '{prog} ls demo' lists the bundled demo store's sessions, "
        f"'{prog} show demo SESSION_ID' shows one ('{prog} --help' for more)"
    )


DEMO_MISSING = (
    "the demo store (resources/demo.db) is missing from this installation; give a TARGET"
)


def _err(text: str) -> None:
    print(f"fluxgui: error: {text}", file=sys.stderr)


# --------------------------------------------------------------------------- launch


@dataclass(frozen=True)
class RecentUrl:
    """The last store, a URL, to reopen at start once the keyring has given its password."""

    stored: str
    label: str
    needs_password: bool


@dataclass(frozen=True)
class Launch:
    """What the window opens at start: a target, how, which session, under what label.

    ``recent``: a recent URL to open instead of ``target`` when the keyring has what it
    needs (see :meth:`resolved`); ``target`` is then the fallback, the demo store (empty
    when that is missing)."""

    target: str = field(repr=False)
    options: OpenOptions
    session_id: str | None = None
    label: str | None = None
    recent: RecentUrl | None = None
    #: ``--reviews URL`` / ``--store-label NAME``: open the review panel so
    reviews: str | None = None
    store_label: str | None = None
    #: several stores (``fluxgui A B C``, ``--workspace FILE``): opened as a workspace
    workspace: tuple[Entry, ...] = ()
    #: ``--redact KINDS``: View › Redact on from the start, with the detectors this makes
    #: (a screenshot then shows the conversation redacted)
    redact: Callable[[], Detectors] | None = None

    async def resolved(self) -> Launch:
        """This launch with the recent URL's password put back (looked up on a worker
        thread), or the fallback when the keyring has none for it."""
        if self.recent is None:
            return self
        from .settings import resolve_target_async

        found = await resolve_target_async(self.recent.stored, self.recent.needs_password)
        if found is None:
            return replace(self, recent=None)
        return replace(self, target=found, label=self.recent.label, recent=None)

    def open_in(self, window: MainWindow) -> None:
        if self.redact is not None:  # (before the store opens: no page is shown unredacted)
            window.redaction.detectors = self.redact
            window.actions_by_name["redact"].setChecked(True)
        if self.workspace:
            window.workspace.open_entries(list(self.workspace), self.options, self.session_id)
            return
        window.stores.open_target(
            self.target, self.options, session_id=self.session_id, label=self.label
        )


def workspace_entries(targets: list[str], file: str | None, labels: list[str] | None = None) -> list[Entry]:
    """The stores to open as a workspace: several targets, or a workspace file's (and
    the targets given with it), labelled by ``labels`` in order (the rest by their file
    names); none for one target."""
    from fluxgui.services.workspace import Entry, load_workspace

    entries = load_workspace(Path(file)) if file else []
    if file or len(targets) > 1:
        names = list(labels or [])
        entries += [Entry(t, names[i] if i < len(names) else None) for i, t in enumerate(targets)]
    return entries


def open_options(args: argparse.Namespace) -> OpenOptions:
    """The window's open options from its command line (as the commands take them:
    ``--key`` falling back to ``$FLUXGUI_KEY``, the API key to ``$OPENAI_API_KEY``)."""
    from fluxgui.adapters.registry import options_from

    return options_from(
        lambda spec: getattr(args, spec.name, spec.default),
        writable=bool(args.writable), format=args.format,
    )


def launch(args: argparse.Namespace, *, redact: Callable[[], Detectors] | None = None) -> int:
    """Open the window for ``args`` (the window parser's namespace); return the exit code.
    ``redact``: View › Redact on from the start, with these detectors (``--redact``)."""
    given = getattr(args, "target", None)
    targets = [given] if isinstance(given, str) else list(given or [])
    labels = list(getattr(args, "store_label", None) or [])
    if len(labels) > max(1, len(targets)):
        _err(f"{plural(len(labels), '--store-label')} for {plural(len(targets), 'TARGET')}: "
             "give one per TARGET, in order")
        return EXIT_KNOWN_ERROR
    screenshot: str | None = getattr(args, "screenshot", None)
    if screenshot:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    else:
        problem = display_problem()
        if problem:
            _err(f"{problem}; {hint()}")
            return EXIT_KNOWN_ERROR

    target: str | None = targets[0] if targets else None
    workspace = workspace_entries(targets, getattr(args, "workspace", None), labels)
    if workspace:
        target = workspace[0].target
    # one store: its reviews filed under the label (as ever); a workspace: each store's label
    store_label = labels[0] if labels and not workspace else None
    label: str | None = None
    recent: RecentUrl | None = None
    if not target and not screenshot:
        # Reopen the last store when it opens without asking (screenshots stay reproducible).
        from .settings import RecentStores, startup_candidate

        found = startup_candidate(RecentStores())
        if found is not None and is_url(found[0]):
            recent = RecentUrl(*found)  # its password: from the keyring, off the UI thread
        elif found is not None:
            target, label = found[0], found[1]
    if not target:
        demo = demo_store_path()
        if demo is None and recent is None:
            _err(DEMO_MISSING)
            return EXIT_KNOWN_ERROR
        if demo is not None:
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

    request = Launch(target or "", open_options(args), args.session, label, recent,
                     getattr(args, "reviews", None), store_label,
                     tuple(workspace), redact)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    from .collector import MainThreadCollector

    warm_start()
    collector = MainThreadCollector(app)
    try:
        with loop:
            if screenshot:
                return loop.run_until_complete(_screenshot(app, request, screenshot))
            return loop.run_until_complete(_interactive(app, request))
    finally:
        collector.stop()
        asyncio.set_event_loop(None)


def warm_start() -> None:
    """Import the whole UI and the SQLite stores' code (an import on the UI thread is a
    stall), then freeze what start-up made out of the collector's sight."""
    from fluxgui.adapters.registry import preload_files

    from . import window  # noqa: F401
    from .collector import freeze_startup

    preload_files()
    freeze_startup()


def _settle(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


async def first_paint(widget: Any, timeout: float = 0.25) -> None:
    """Until ``widget`` (just shown) has been painted once, or ``timeout`` seconds (a
    window that is not exposed is not painted). The first paint of a whole window takes
    10-15 ms: the store opens after it, not in the same turn of the loop."""
    from PySide6.QtCore import QEvent, QObject

    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    class Watch(QObject):
        def eventFilter(self, watched: Any, event: Any) -> bool:  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Paint and not done.done():
                loop.call_soon(_settle, done)  # after it
            return False

    watch = Watch()
    widget.installEventFilter(watch)
    try:
        await asyncio.wait_for(done, timeout)
    except TimeoutError:
        pass
    finally:
        widget.removeEventFilter(watch)


async def _interactive(app: Any, request: Launch) -> int:
    from fluxgui.services.workspace import Entry

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
    await first_paint(window)  # the window appears, then the store opens
    request = await request.resolved()
    if not request.target:  # the recent URL's password is not known, and no demo store
        _err(DEMO_MISSING)
        window.hide()
        await window.aclose()
        window.deleteLater()
        return EXIT_KNOWN_ERROR
    request.open_in(window)
    _reviews(window, request)  # (after: the review database is checked against the store)
    await closed.wait()
    window.hide()
    await window.aclose()
    window.deleteLater()
    return 130 if interrupted else EXIT_OK


async def _screenshot(app: Any, request: Launch, path: str) -> int:
    from fluxgui.services.workspace import Entry

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
        _reviews(window, request)
        try:
            await asyncio.wait_for(asyncio.shield(settled), SCREENSHOT_TIMEOUT)
        except TimeoutError:
            _err(f"{redact_url(request.target)} did not finish loading in {SCREENSHOT_TIMEOUT:.0f} s")
            return EXIT_KNOWN_ERROR
        if window.stores.open_error is not None:
            _err(describe_error(window.stores.open_error))
            return EXIT_KNOWN_ERROR
        if window.last_error is not None:  # e.g. --session names no session
            _err(describe_error(window.last_error))
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


def _reviews(window: MainWindow, request: Launch) -> None:
    if request.reviews or request.store_label:
        window.reviews.use(request.reviews, request.store_label)


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
