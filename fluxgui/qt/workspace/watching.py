"""Live refresh across a workspace: while the all-stores list is shown, every store of
the workspace is watched (issue 36: live refresh works per store, as with one store).

The window's own :class:`~fluxgui.qt.watch.StoreWatcher` watches the current store;
:class:`MemberWatchers` keeps one more watcher for each other store of the workspace and
says :attr:`~MemberWatchers.changed` (the store's label) when another process wrote to
one of them. Changes close together are told once (:data:`SETTLE_MS`): an agent's turn
is several writes. Nothing is watched while one store's own list is shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal

from fluxgui.core.roles import Store

from ..watch import StoreWatcher

if TYPE_CHECKING:
    from .members import WindowMember

#: changes within this many milliseconds of the first are told once
SETTLE_MS = 150


class MemberWatchers(QObject):
    """A :class:`StoreWatcher` per watched store (see the module text)."""

    #: a watched store changed (the labels of those that did, since the last time)
    changed = Signal(list)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watchers: dict[int, tuple[str, StoreWatcher]] = {}
        self._changed: list[str] = []
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._tell)

    @property
    def watched(self) -> list[str]:
        """The labels of the stores watched now."""
        return [label for label, _w in self._watchers.values()]

    def watch(self, stores: Sequence[tuple[str, Store]]) -> None:
        """Watch exactly these stores (label, store) from now on; ``[]`` stops."""
        wanted = {id(store): (label, store) for label, store in stores}
        for key in [k for k in self._watchers if k not in wanted]:
            _label, watcher = self._watchers.pop(key)
            watcher.set_store(None)
            watcher.deleteLater()
        for key, (label, store) in wanted.items():
            held = self._watchers.get(key)
            if held is not None:
                self._watchers[key] = (label, held[1])  # (renamed)
                continue
            watcher = StoreWatcher(parent=self)
            watcher.changed.connect(lambda key=key: self._on_changed(key))
            self._watchers[key] = (label, watcher)
            watcher.set_store(store)

    def follow(self, members: Sequence[WindowMember], current: Store | None, *, every: bool) -> None:
        """Watch the ``members`` (``label``, ``store``) but the ``current`` store while
        ``every`` store's sessions are listed (and more than one is open); else none."""
        shown = every and len(members) > 1
        self.watch([(m.label, m.store) for m in members if shown and m.store is not current])

    def _on_changed(self, key: int) -> None:
        held = self._watchers.get(key)
        if held is None:
            return
        if held[0] not in self._changed:
            self._changed.append(held[0])
        if not self._settle.isActive():
            self._settle.start()

    def _tell(self) -> None:
        labels, self._changed = self._changed, []
        if labels:
            self.changed.emit(labels)

    async def aclose(self) -> None:
        """Stop every watcher and wait for polls in flight (before the stores close)."""
        self._settle.stop()
        watchers = [w for _label, w in self._watchers.values()]
        self._watchers.clear()
        await asyncio.gather(*(w.aclose() for w in watchers), return_exceptions=True)
