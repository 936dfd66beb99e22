"""The conversation pane's live catch-up: showing what another process added to the open
session without reloading it.

What changed is worked out by :func:`fluxgui.services.live.catch_up` (Qt-free); this part
runs it through the bridge, never beside a running load, and applies its answer: append
the new messages keeping the reader's place, reload keeping the place, or say that the
session is gone.
"""

from __future__ import annotations

import logging

from fluxgui.core.model import Message, SessionInfo
from fluxgui.services import live as live_service
from fluxgui.services.live import CatchUp
from fluxgui.core.roles import Store

from .state import GONE_TEXT, PaneState

log = logging.getLogger(__name__)


class PaneLive:
    """The conversation pane's live refresh (a part of the pane)."""

    def __init__(self, pane: PaneState) -> None:
        self.pane = pane

    def catch_up(self) -> None:
        """Show what was added to the open session since it was loaded, without reloading.

        Loads the messages after the last loaded one (``page_messages(anchor=…,
        direction="forward")``, a page at a time) and appends them; checks on the way that
        the last loaded message is still there unchanged and that the session's count adds
        up (messages before the loaded ones + loaded + new), else reloads keeping the
        place (:meth:`~.loading.PaneLoading.reload`). A deleted session shows :data:`GONE_TEXT`; if it comes back
        it is loaded again. Never disturbs a running load: a catch-up asked for meanwhile
        runs after it. Errors are logged, not shown (the next change tries again).
        """
        store, sid = self.pane._store, self.pane._session_id
        if store is None or sid is None or self.pane._broken:
            return
        if self.pane._loading is not None or self.pane._catching or not self.pane._at_end:
            # (Landed on a hit: newer messages come as the reader pages down to them.)
            self.pane._catch_queued = True
            return
        self.pane._catch_queued = False
        self.pane._catching = True
        self.pane._bridge.start(
            self.pane._live_key,
            self._catch_up(
                self.pane._generation,
                self.pane._window,
                store,
                sid,
                self.pane.model.messages,
                self.pane._before,
                self.pane._at_start,
                self.pane._gone,
            ),
            self._on_caught_up,
            self._on_catch_up_failed,
        )

    def stop(self) -> None:
        """Forget a running or queued catch-up (a new session, a reload, clear())."""
        self.pane._bridge.cancel(self.pane._live_key)
        self.pane._catching = False
        self.pane._catch_queued = False
        self.pane._gone = False
        self.pane._broken = False
        self.pane._before = 0
        self.pane._window += 1

    async def _catch_up(
        self,
        generation: int,
        window: int,
        store: Store,
        session_id: str,
        loaded: tuple[Message, ...],
        before: int | None,
        at_start: bool,
        gone: bool,
    ) -> tuple[int, int, CatchUp]:
        """What changed in the session since ``loaded`` (the loaded messages) was read,
        with the new messages' documents built when they are to be appended."""
        found = await live_service.catch_up(
            store,
            session_id,
            loaded,
            branch=self.pane.branch,
            before=before,
            at_start=at_start,
            gone=gone,
            page_size=self.pane.page_size,
        )
        if found.kind == "append":
            await self.pane.paging.prepare(generation, found.new)
        return generation, window, found

    def _on_caught_up(self, result: tuple[int, int, CatchUp]) -> None:
        generation, window, found = result
        self.pane._catching = False
        if generation != self.pane._generation or self.pane._session_id is None:
            return
        if window != self.pane._window:  # the loaded messages changed meanwhile: again
            self.catch_up()
            return
        if found.kind == "gone":
            if not self.pane._gone:
                self.show_gone()
        elif found.kind == "reload":
            self.pane.paging.reload(keep_position=True)
            return
        else:
            assert found.info is not None
            self._append(found.info, found.new, found.before)
        if self.pane._catch_queued:
            self.catch_up()

    def _append(self, info: SessionInfo, new: list[Message], before: int | None) -> None:
        self.pane._info = info
        self.pane._before = before
        if before is not None and before > 0 and self.pane._at_start:
            self.pane._at_start = False  # messages appeared before the first loaded one
        if new:
            self.pane._window += 1
            anchor = self.pane.view.anchor()
            self.pane._settling = True
            try:
                self.pane.pairs.add(new)
                was_empty = not self.pane.model.rowCount()
                self.pane.model.append(new)
                self.pane.view.set_placeholder("")
                if was_empty:
                    self.pane.view.doItemsLayout()
                    self.pane.view.scrollToBottom()
                else:
                    self.pane.view.relayout(keep=anchor)
                self.pane.view.viewport().update()  # pairing notes of rows already shown
            finally:
                self.pane._settling = False
        self.pane._update_status()
        self.pane.caughtUp.emit(len(new))

    def show_gone(self) -> None:
        sid = self.pane._session_id
        self.pane._gone = True
        self.pane._window += 1
        self.pane._info = None
        self.pane._at_start = True
        self.pane._before = 0
        self.pane.pairs.clear()
        self.pane.delegate.reset()
        self.pane.model.clear()
        self.pane._set_current(None)
        self.pane.status.setText("")
        self.pane._show_placeholder(GONE_TEXT)
        if sid is not None:
            self.pane.sessionGone.emit(sid)

    def _on_catch_up_failed(self, error: Exception) -> None:
        log.info("catching up with the open session failed: %s", error)
        self.pane._catching = False
        self.pane._catch_queued = False

