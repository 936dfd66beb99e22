"""Switching a SQLite file of fluxgui's own (review database, search index) to WAL mode.

Several processes may open a new file at once (the window and a command, two
reviewers' windows on a shared disk). Switching a file to WAL takes a lock that SQLite
does not wait for with its busy handler: while another connection is switching the same
new file, ``PRAGMA journal_mode=WAL`` answers "database is locked" at once (measured: 3
to 5 of 60 rounds of six openers of a new review database failed). Once the file is in
WAL mode the pragma is free, so the switch is simply tried again for a while.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

#: tries, and the wait after the n-th (seconds): about 3 s in all
ATTEMPTS = 40
STEP = 0.005
MAX_WAIT = 0.1


def use_wal(execute: Callable[[str], Any]) -> None:
    """Run ``PRAGMA journal_mode=WAL`` through ``execute`` (a connection's or a cursor's,
    in the thread that owns it), again while the file is locked by another switch."""
    for attempt in range(ATTEMPTS):
        try:
            execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == ATTEMPTS - 1:
                raise
        time.sleep(min(STEP * (attempt + 1), MAX_WAIT))
