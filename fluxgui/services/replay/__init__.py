"""Replay a recorded session from turn N with another model or prompt, its tools
answered from the record (:mod:`.run`), never executed (:mod:`.tools`).

* :mod:`.chatform` — a session's messages as chat messages, calls paired with outputs;
* :mod:`.record` — the recorded turns, calls and the tools they imply;
* :mod:`.tools` — matching a replayed call to a recorded one;
* :mod:`.model` — the provider's model as the replay's ``Runner`` uses it;
* :mod:`.run` — the replay into a fork, its report, undo.
"""

from __future__ import annotations

from .run import ReplayEvent, ReplayOptions, ReplayReport, replay, turn_at, undo_replay
from .tools import MATCH_MODES, StopCall

__all__ = [
    "MATCH_MODES", "ReplayEvent", "ReplayOptions", "ReplayReport", "StopCall", "replay", "turn_at",
    "undo_replay",
]
