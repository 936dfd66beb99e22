"""Python's cycle collector, run only on the UI thread.

A Qt object in a reference cycle (a widget whose slots close over itself, a model of a
closed dialog) is freed when the cycle collector runs, by whichever thread happens to
trigger it — aiosqlite's connection thread, a ``to_thread`` worker. Destroying a Qt object
off its own thread crashes the process. So the automatic collector is switched off and
this one runs the same generational collections from a timer on the UI thread, with the
thresholds the interpreter would use; what start-up created is frozen out of its sight
first so that full collections stay short.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

#: how often the counts are looked at; a young collection takes well under a millisecond
INTERVAL_MS = 100


class MainThreadCollector(QObject):
    """Owns the collector while it lives: ``gc`` is disabled and collected from here."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)
        self._timer.start()

    @staticmethod
    def due() -> int | None:
        """The oldest generation whose count passed its threshold (as the interpreter
        decides), or ``None``."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        generation = None
        for gen in range(3):
            if thresholds[gen] and counts[gen] > thresholds[gen]:
                generation = gen
            else:
                break
        return generation

    def collect_due(self) -> int:
        """Run the collection that is due; the number of objects it found unreachable."""
        generation = self.due()
        return 0 if generation is None else gc.collect(generation)

    def stop(self) -> None:
        """Hand collection back to the interpreter (after a last one, on this thread)."""
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()


def freeze_startup() -> None:
    """Move what start-up created (Qt bindings, SQLAlchemy, …) out of the collector's sight
    so that its full collections, which would walk it all, stay short."""
    gc.collect()
    gc.freeze()
