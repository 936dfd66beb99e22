""""Replay from here…" from the window: a user message's context menu asks how to
replay (:mod:`.settings_dialog`), the replay runs through the bridge with its progress
and Cancel (:mod:`.progress`), and at its end (done, stopped, cancelled, failed with turns
kept) the fork joins the window's undo stack (Undo deletes it) and opens in the Compare
view against the original. The work is :mod:`fluxgui.services.replay`'s."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QMenu, QVBoxLayout

from fluxgui.core.errors import FluxguiError, ReadOnlyError, show_id
from fluxgui.core.model import Message
from fluxgui.core.text import plural
from fluxgui.services import edits

from ..settings import AgentSettings
from .progress import ReplayProgress, usage_line
from .settings_dialog import ReplayDialog

if TYPE_CHECKING:
    from fluxgui.core.roles import Store
    from fluxgui.services.replay import ReplayOptions
    from fluxgui.services.replay.support import ReplayOutcome

    from collections.abc import Callable

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QWidget

    from ..bridge import AsyncBridge
    from ..compare import CompareDialog
    from ..editing import Editor
    from ..shown_ids import FollowedRedaction
    from ..shell import Stores

KEY = "replay"


class ReplayController(QObject):
    """Runs replays for a window (one at a time). ``progressed(event)`` per replay event,
    ``finished(outcome)`` once a replay ended and its fork (if any) is on the undo stack,
    ``compareOpened(dialog)``.

    It is given what it uses: the dialogs' parent, the bridge, the editor (the fork joins
    its undo stack), the open store (``stores``), the settings (the chat's agent), the
    shown session (``shown()``) and where errors are shown."""

    finished = Signal(object)
    compareOpened = Signal(object)
    #: each replay event as it comes (a ReplayEvent), after the progress dialog showed it
    progressed = Signal(object)

    def __init__(
        self,
        parent: QWidget,
        bridge: AsyncBridge,
        editor: Editor,
        stores: Stores,
        settings: QSettings,
        *,
        shown: Callable[[], str | None],
        show_error: Callable[[BaseException], None],
        redaction: FollowedRedaction | None = None,
    ) -> None:
        super().__init__(parent)
        #: View › Redact (the pane's ``shown_anew`` and ids): the comparison follows it
        self._redaction = redaction
        #: how the window shows session ids now (redacted while Redact is on)
        self._show_ids: Callable[[], Callable[[str], str] | None] = (
            redaction.ids.fixed if redaction is not None else lambda: None)
        self._parent = parent
        self._bridge = bridge
        self._editor = editor
        self._stores = stores
        self._settings = settings
        self._shown = shown
        self._show_error = show_error
        self.dialog: ReplayDialog | None = None
        self.progress: ReplayProgress | None = None
        self.compare: CompareDialog | None = None
        self.outcome: ReplayOutcome | None = None
        self._stop: asyncio.Event | None = None
        #: (store, session, from turn) of the replay running or last run
        self._run: tuple[Store, str, int] | None = None
        self._waiting_for: str | None = None  # the fork's change being written
        editor.applied.connect(self._on_applied)
        editor.failed.connect(self._on_keep_failed)

    # -- the menu ------------------------------------------------------------------------

    def conversation_menu(self, menu: QMenu, message: object) -> None:
        """Add "Replay from here…" for a user message."""
        if not isinstance(message, Message) or message.role != "user":
            return
        menu.addSeparator()
        picked: Message = message
        action = menu.addAction("Replay from Here…", lambda: self.replay_from(picked))
        action.setStatusTip("Replay the session from this turn with another model or prompt, "
                            "tools answered from the record")
        action.setEnabled(not self.running)

    def _forget(self, name: str, widget: object) -> None:
        if getattr(self, name) is widget:
            setattr(self, name, None)

    @property
    def running(self) -> bool:
        """A replay runs, or its fork is being put on the undo stack."""
        return self._bridge.running(KEY) or self._waiting_for is not None

    # -- asking ----------------------------------------------------------------------------

    def replay_from(self, message: Message) -> bool:
        """Find the turn of ``message`` (off the UI thread), then ask how to replay it."""
        store, sid = self._stores.store, self._shown()
        reason = edits.blocked_reason(store, need="fork")
        if reason is not None or store is None:
            self._show_error(ReadOnlyError(reason or edits.NO_STORE))
            return False
        if sid is None:
            return False
        if self.running:
            self._show_error(FluxguiError("a replay is running: cancel it or wait for its end first"))
            return False
        from fluxgui.services.replay.support import turns_from

        self._bridge.start("replay:turn", turns_from(store, sid, message.id),
                           lambda found: self._ask(store, sid, message, *found), self._show_error)
        return True

    def _ask(self, store: Store, sid: str, message: Message, turn: int | None, count: int) -> None:
        if turn is None:
            self._show_error(FluxguiError(
                f"message {message.id} opens no turn of {show_id(sid)}: replay from a user message"))
            return
        ids = self._show_ids()  # (View › Redact: the session named redacted)
        dialog = ReplayDialog(sid, turn, self._agent_config(), self._parent, shown_id=ids(sid) if ids else None)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.start(store, sid, turn, dialog.options(), count))
        self.dialog = dialog
        dialog.destroyed.connect(lambda *_, d=dialog: self._forget("dialog", d))
        dialog.open()  # window-modal, without a nested event loop

    def _agent_config(self) -> Any:
        """The test chat's agent for the open store (its saved settings, else defaults)."""
        from fluxgui.services.chat import AgentConfig

        target = self._stores.target
        values = AgentSettings(self._settings).load(target) if target else None
        try:
            return AgentConfig.from_settings(values) if values else AgentConfig()
        except Exception:  # noqa: BLE001 - bad saved settings: the defaults
            return AgentConfig()

    # -- running ---------------------------------------------------------------------------

    def start(self, store: Store, sid: str, turn: int, options: ReplayOptions, count: int = 1) -> ReplayProgress:
        """Replay ``sid`` from ``turn`` with ``options``, its progress in a dialog."""
        from fluxgui.services.replay.support import replay_until

        progress = ReplayProgress(sid, turn, count, self._parent, say=self._show_ids())
        progress.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        progress.destroyed.connect(lambda *_, p=progress: self._forget("progress", p))
        progress.cancelRequested.connect(self.cancel)
        progress.compareRequested.connect(self.open_compare)
        self.progress, self.outcome, self.compare = progress, None, None
        self._run = (store, sid, turn)
        self._stop = asyncio.Event()
        progress.show()
        self._bridge.start(
            KEY, replay_until(self._stop, store, sid, turn, options, self._on_event),
            self._ended, self._failed,
        )
        return progress

    def _on_event(self, event: Any) -> None:
        if self.progress is not None:
            self.progress.on_event(event)
        self.progressed.emit(event)

    def cancel(self) -> None:
        """Stop the replay: the turn being written is written, then it ends (cancelled)."""
        if self._stop is not None:
            self._stop.set()

    def _failed(self, error: Exception) -> None:  # not the replay's: the wrapper's own
        from fluxgui.services.replay.support import ReplayOutcome

        self._ended(ReplayOutcome(error=error))

    def _ended(self, outcome: ReplayOutcome) -> None:
        self.outcome = outcome
        self._stop = None
        assert self._run is not None
        store, sid, turn = self._run
        progress = self.progress
        text = outcome_text(outcome, sid)
        if outcome.fork is None:
            if progress is not None:
                progress.finish(text, compare=False)
            if progress is None and outcome.error is not None:
                self._show_error(outcome.error)
            self.finished.emit(outcome)
            return
        if progress is not None:
            progress.finish(text + " Writing the fork to the undo stack…", compare=False)
        from fluxgui.services.replay.support import fork_as_change, replay_label

        self._waiting_for = outcome.fork
        if not self._editor.run(fork_as_change(store, outcome.fork, replay_label(sid, turn, outcome.fork))):
            self._waiting_for = None  # another edit is being written: no undo entry
            self._kept(text + " (Not on the undo stack: another edit was being written.)")

    def _on_applied(self, change: Any) -> None:
        fork = self._waiting_for
        if fork is None or getattr(change, "session_id", None) != fork or self.outcome is None:
            return
        self._waiting_for = None
        assert self._run is not None
        self._kept(outcome_text(self.outcome, self._run[1]) + " Undo (Ctrl+Z) deletes the fork.")

    def _on_keep_failed(self, error: Exception) -> None:
        if self._waiting_for is None or self.outcome is None:
            return
        self._waiting_for = None
        assert self._run is not None
        self._kept(outcome_text(self.outcome, self._run[1]) + f" (Not on the undo stack: {error})")

    def _kept(self, text: str) -> None:
        if self.progress is not None:
            self.progress.finish(text, compare=True)
        self.finished.emit(self.outcome)
        self.open_compare()

    # -- comparing ---------------------------------------------------------------------------

    def open_compare(self) -> CompareDialog | None:
        """The original against the replay's fork, turn by turn, with the replay's usage."""
        from ..compare import open_compare

        outcome, run = self.outcome, self._run
        if outcome is None or outcome.fork is None or run is None:
            return None
        store, sid, turn = run
        if self.compare is not None:
            self.compare.raise_()
            return self.compare
        ids = self._show_ids()
        dialog = open_compare(self._parent, self._bridge, store, sid, outcome.fork, redaction=self._redaction)
        dialog.setWindowTitle(f"Replay of {show_id(ids(sid) if ids is not None else sid)} from turn {turn}")
        note = QLabel(usage_note(outcome), dialog)
        inner = dialog.view.layout()
        if inner is not None:  # in line with the view's own summary
            m = inner.contentsMargins()
            note.setContentsMargins(m.left(), 0, m.right(), 0)
        dialog.view.compared.connect(lambda c: note.setText(usage_note(outcome, c, turn)))
        note.setObjectName("replayUsage")
        note.setTextFormat(Qt.TextFormat.PlainText)
        note.setWordWrap(True)
        layout = dialog.layout()
        if isinstance(layout, QVBoxLayout):
            layout.insertWidget(0, note)
        self.compare = dialog
        dialog.destroyed.connect(lambda *_, d=dialog: self._forget("compare", d))
        self.compareOpened.emit(dialog)
        return dialog


def outcome_text(outcome: ReplayOutcome, session_id: str) -> str:
    """One line: how the replay ended and what the fork holds."""
    fork = f" into {show_id(outcome.fork)}" if outcome.fork else ""
    report = outcome.report
    if report is not None:
        calls = f"tool calls: {report.matched} matched, {report.unmatched} unmatched"
        done = f"Replayed {plural(report.replayed_turns, 'turn')} of {show_id(session_id)}{fork} ({calls})."
        stop = report.stopped
        if stop is not None:
            return f"{done} Stopped at an unmatched call: {stop.reason}."
        return done
    kept = plural(outcome.replayed_turns, "turn")
    if outcome.cancelled:
        return f"Cancelled: the fork{fork} keeps the {kept} replayed before." if outcome.fork else "Cancelled."
    return f"Failed: {outcome.error}"


def usage_note(outcome: ReplayOutcome, comparison: Any = None, from_turn: int = 1) -> str:
    """Token usage per side over the replayed turns: B's from the replay's report, A's
    from the original's stored usage once compared (where its store recorded it)."""
    report = outcome.report
    if report is not None and report.usage:
        parts = [f"turn {u['turn']}: {usage_line(u)}" for u in report.usage]
        total = sum(u.get("total_tokens", 0) for u in report.usage)
        b = f"B (replay): {'; '.join(parts)} — {total:,} tokens in all."
    else:
        b = "B (replay): usage per turn where its store recorded it."
    if report is not None and report.stopped is not None:
        b += f" The replay stopped in turn {report.stopped.turn} at an unmatched call: the turns from there are only in A."
    elif outcome.cancelled:
        b += " The replay was cancelled: the turns after those replayed are only in A."
    if comparison is None:
        return b
    replayed = {u["turn"] for u in report.usage} if report is not None else set()
    known = [(t.number, t.tokens_a) for t in comparison.turns
             if t.number >= from_turn and (not replayed or t.number in replayed) and t.tokens_a is not None]
    if known:
        a = "; ".join(f"turn {n}: {tokens:,} tokens" for n, tokens in known)
        return f"A (recorded): {a} — {sum(k for _n, k in known):,} tokens in all.\n{b}"
    return f"A (recorded): its store recorded no token usage for these turns.\n{b}"
