"""The delegate's layout work off the critical path: a huge body's chunks measured a few
at a time, and after a resize the cards not in view measured in the background.

:class:`BackgroundLayout` is a part of :class:`~.delegate.MessageDelegate` (whose caches
it fills); each slice of work runs for at most :data:`WORK_SLICE` seconds on a 0 ms timer,
so the event loop keeps turning (issue 19: no stall from big content).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, QTimer

from fluxgui.core.model import Message

from .chunks import ChunkedBody
from .model import MessageListModel

if TYPE_CHECKING:
    from PySide6.QtWidgets import QListView

#: how long one slice of background layout work may run (seconds): well under a frame
WORK_SLICE = 0.004
#: how often a huge body being measured re-lays out the list at most (seconds)
RELAYOUT_EVERY = 0.25


class BackgroundLayout:
    """Background measuring for the message delegate (see the module docstring)."""

    _view: QListView
    _docs: OrderedDict[tuple[Any, ...], Any]
    _sizes: dict[int, tuple[int, QSize]]
    _stale: set[int]
    _lazy: set[int] | None
    _on_settled: Any
    _relaid: float
    _work: QTimer

    if TYPE_CHECKING:
        sizeHintChanged: Any

        def is_huge(self, m: Message) -> bool: ...
        def document(self, m: Message) -> Any: ...
        def text_width(self) -> int: ...
        def _key(self, m: Message) -> tuple[Any, ...]: ...
        def _size(self, m: Message, width: int) -> QSize: ...

    def begin_resize(self, seen: set[int], settled: Any = None) -> None:
        """The view's width changes: lay out the rows ``seen`` now and the others in the
        background (their old heights stand in meanwhile); call ``settled()`` when they
        all have their new heights."""
        self._lazy = set(seen)
        self._on_settled = settled

    def settled(self, m: Message) -> bool:
        """Whether ``m``'s body is laid out whole at the current width."""
        if not self.is_huge(m):
            return True
        body = self.document(m)
        return not isinstance(body, ChunkedBody) or not body.pending

    def settled_all(self) -> bool:
        """No background layout left (no row waiting for its height, no chunk)."""
        return not self._stale and not self._work.isActive() and not any(
            isinstance(d, ChunkedBody) and d.pending for d in self._docs.values()
        )

    def _do_work(self) -> None:
        started = time.perf_counter()
        model = self._view.model()
        if not isinstance(model, MessageListModel):
            return
        for key, body in list(self._docs.items()):
            if not isinstance(body, ChunkedBody) or not body.pending:
                continue
            row = model.row_of(key[0])
            m = model.message(row) if row is not None else None
            if row is None or m is None or self._key(m) != key:
                continue
            body.set_width(self.text_width())
            done = body.advance(max(0.001, WORK_SLICE - (time.perf_counter() - started)))
            # The card's height follows its measured pieces: when all are measured, and
            # meanwhile at most every RELAYOUT_EVERY seconds (each costs a layout).
            if body.changed and (done or started - self._relaid > RELAYOUT_EVERY):
                body.changed = False
                self._relaid = started
                self._sizes.pop(m.id, None)
                self.sizeHintChanged.emit(model.index(row, 0))
            if time.perf_counter() - started > WORK_SLICE:
                self._work.start()
                return
        width = self._view.viewport().width()
        while self._stale:
            mid = self._stale.pop()
            row = model.row_of(mid)
            m = model.message(row) if row is not None else None
            if m is not None:
                self._sizes[mid] = (width, self._size(m, width))
            if time.perf_counter() - started > WORK_SLICE:
                self._work.start()
                return
        if self._lazy is not None:
            self._lazy = None
            settled, self._on_settled = self._on_settled, None
            if settled is not None:  # its own turn of the loop: a layout of every row
                # (with the view as context: a view deleted meanwhile drops the call)
                QTimer.singleShot(0, self._view, settled)
