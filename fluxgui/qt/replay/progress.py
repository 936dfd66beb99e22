"""A replay's progress, turn by turn, with Cancel; where it stopped (the unmatched call,
its arguments, the nearest recorded calls); the outcome line and Compare once done.

The dialog only shows: the replay's events (:class:`~fluxgui.services.replay.ReplayEvent`)
come in through :meth:`ReplayProgress.on_event`, the end through :meth:`finish`; its
buttons are wired by the controller (:mod:`.controller`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGroupBox,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.errors import show_id
from fluxgui.core.text import plural

from ..screen_fit import fit_to_screen
from ..widgets import ElidedLabel

#: characters of a call's arguments or an output shown in one log line
_SHORT = 160


def call_text(name: str, arguments: Any, limit: int = _SHORT) -> str:
    """``name({...})`` on one line, cut at ``limit`` characters."""
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    text = " ".join(f"{name}({shown})".split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def usage_line(u: dict[str, int]) -> str:
    """``2 requests, 31 input / 10 output tokens``."""
    return (f"{plural(u.get('requests', 0), 'request')}, {u.get('input_tokens', 0):,} input / "
            f"{u.get('output_tokens', 0):,} output tokens")


class ReplayProgress(QDialog):
    """What a replay is doing: a log line per event, a bar over the turns, Cancel; the
    stop's call; the outcome. ``cancelRequested`` and ``compareRequested`` are the
    buttons."""

    cancelRequested = Signal()
    compareRequested = Signal()

    def __init__(self, session_id: str, from_turn: int, turns: int, parent: QWidget | None = None,
                 *, say: Callable[[str], str] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Replay from turn {from_turn}")
        self.session_id, self.from_turn = session_id, from_turn
        #: what every line shown goes through (View › Redact: the window's redactor)
        self.say: Callable[[str], str] = say if say is not None else str
        self.running = True
        self.headline = QLabel(self.say(f"Replaying {show_id(session_id)} from turn {from_turn}…"), self)
        self.headline.setTextFormat(Qt.TextFormat.PlainText)
        self.headline.setWordWrap(True)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, max(turns, 1))
        self.bar.setValue(0)
        self.bar.setFormat("%v of %m turns")
        self.log = QPlainTextEdit(self)
        self.log.setReadOnly(True)
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.log.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.log.setMinimumHeight(self.fontMetrics().lineSpacing() * 6)

        #: the answer being streamed, its end on one line (cleared when the turn is done)
        self.live = ElidedLabel(self, mode=Qt.TextElideMode.ElideLeft)
        self.live.hide()
        self.stop_box = QGroupBox("Stopped at an unmatched call", self)
        self.stop_reason = QLabel(self.stop_box)
        self.stop_call = QPlainTextEdit(self.stop_box)
        self.stop_call.setReadOnly(True)
        self.stop_call.setFont(self.log.font())
        for label in (self.stop_reason,):
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setWordWrap(True)
        box = QVBoxLayout(self.stop_box)
        box.addWidget(self.stop_reason)
        box.addWidget(self.stop_call)
        self.stop_box.hide()

        self.outcome = QLabel(self)
        self.outcome.setTextFormat(Qt.TextFormat.PlainText)
        self.outcome.setWordWrap(True)
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(self)
        self.cancel_button = QPushButton("Cancel", self)
        self.compare_button = QPushButton("Compare", self)
        self.close_button = QPushButton("Close", self)
        self.buttons.addButton(self.compare_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(self.cancel_button, QDialogButtonBox.ButtonRole.RejectRole)
        self.buttons.addButton(self.close_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.compare_button.hide()
        self.close_button.hide()
        self.cancel_button.clicked.connect(self._cancel)
        self.compare_button.clicked.connect(self.compareRequested)
        self.close_button.clicked.connect(self.accept)

        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(self.bar)
        layout.addWidget(self.log, 1)
        layout.addWidget(self.live)
        layout.addWidget(self.stop_box, 1)
        layout.addWidget(self.outcome)
        layout.addWidget(self.buttons)
        self.resize(640, 420)
        self._answer = ""
        self._done = 0
        self.fork: str | None = None
        fit_to_screen(self)  # never larger than its screen (issue 37)

    # -- events ------------------------------------------------------------------------

    def add_line(self, text: str) -> None:
        self.log.appendPlainText(self.say(text))

    def on_event(self, event: Any) -> None:
        """One replay event (kind, turn, data) as a log line."""
        kind, n, data = event.kind, event.turn, event.data
        if kind == "forked":
            self.fork = str(data["fork"])
            self.headline.setText(self.say(
                f"Replaying {show_id(self.session_id)} from turn {self.from_turn} into the fork "
                f"{show_id(self.fork)}…"))
            self.add_line(f"forked into {show_id(self.fork)}")
        elif kind == "turn":
            self._answer = ""
            self.add_line(f"turn {n}: sent the recorded user message")
        elif kind == "text":
            self._answer += str(data.get("text", data.get("delta", "")))
            self.live.set_full_text(self.say(f"turn {n} answering: {' '.join(self._answer[-400:].split())}"))
            self.live.show()
        elif kind == "tool_call":
            self.add_line(f"  call {call_text(str(data.get('name')), data.get('arguments', ''))}")
        elif kind == "tool_output":
            how = "recorded output" if data.get("matched") else "the fixed text (unmatched)"
            out = " ".join(str(data.get("output", "")).split())
            self.add_line(f"  ← {how}: {out[:_SHORT]}")
        elif kind == "turn_done":
            self.live.hide()
            if self._answer.strip():
                answer = " ".join(self._answer.split())
                self.add_line(f"  answer: {answer[:_SHORT]}{'…' if len(answer) > _SHORT else ''}")
            self.add_line(f"  turn {n} done: {usage_line(data.get('usage') or {})}")
            self._done += 1
            self.bar.setValue(self._done)
        elif kind == "stopped":
            self.show_stop(data)

    def show_stop(self, stop: dict[str, Any]) -> None:
        """The call the record could not answer: name, arguments, why, nearest calls."""
        call = stop.get("call") or {}
        self.add_line(f"turn {stop.get('turn')}: stopped at {call_text(str(call.get('name')), call.get('arguments'))}")
        self.stop_reason.setText(str(stop.get("reason", "")))
        lines = [f"The model called {call.get('name')} in turn {stop.get('turn')} with:",
                 _pretty(call.get("arguments"))]
        nearest = stop.get("nearest") or []
        if nearest:
            lines.append("")
            lines.append("Nearest recorded calls of this turn:")
            for c in nearest:
                used = " (already answered)" if c.get("used") else ""
                lines.append(f"  {call_text(str(c.get('name')), c.get('arguments'), 300)}{used}")
        else:
            lines.append("")
            lines.append("This turn recorded no calls.")
        self.stop_call.setPlainText("\n".join(lines))
        self.stop_box.show()

    # -- the end -------------------------------------------------------------------------

    def finish(self, text: str, *, compare: bool) -> None:
        """The replay ended (done, stopped, cancelled or failed): say how; offer Compare."""
        self.running = False
        self.live.hide()
        self.headline.setText(self.say(f"Replay of {show_id(self.session_id)} from turn {self.from_turn}"
                                       + (f" into {show_id(self.fork)}" if self.fork else "")))
        self.outcome.setText(self.say(text))
        self.cancel_button.hide()
        self.close_button.show()
        self.compare_button.setVisible(compare)
        self.close_button.setDefault(True)

    def _cancel(self) -> None:
        if self.running:
            self.cancel_button.setEnabled(False)
            self.cancel_button.setText("Cancelling…")
            self.cancelRequested.emit()

    def reject(self) -> None:  # Esc or the title bar's close while running: cancel first
        if self.running:
            self._cancel()
            return
        super().reject()


def _pretty(arguments: Any) -> str:
    if isinstance(arguments, str):
        return "  " + arguments
    text = json.dumps(arguments, ensure_ascii=False, indent=2)
    return "\n".join("  " + line for line in text.splitlines())
