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


class PaneLive(PaneState):
    """The conversation pane's live refresh (a part of the pane)."""

    def catch_up(self) -> None:
        """Show what was added to the open session since it was loaded, without reloading.

        Loads the messages after the last loaded one (``page_messages(anchor=…,
        direction="forward")``, a page at a time) and appends them; checks on the way that
        the last loaded message is still there unchanged and that the session's count adds
        up (messages before the loaded ones + loaded + new), else reloads keeping the
        place (:meth:`reload`). A deleted session shows :data:`GONE_TEXT`; if it comes back
        it is loaded again. Never disturbs a running load: a catch-up asked for meanwhile
        runs after it. Errors are logged, not shown (the next change tries again).
        """
        store, sid = self._store, self._session_id
        if store is None or sid is None or self._broken:
            return
        if self._loading is not None or self._catching or not self._at_end:
            # (Landed on a hit: newer messages come as the reader pages down to them.)
            self._catch_queued = True
            return
        self._catch_queued = False
        self._catching = True
        self._bridge.start(
            self._live_key,
            self._catch_up(
                self._generation,
                self._window,
                store,
                sid,
                self.model.messages,
                self._before,
                self._at_start,
                self._gone,
            ),
            self._on_caught_up,
            self._on_catch_up_failed,
        )

    def _stop_live(self) -> None:
        """Forget a running or queued catch-up (a new session, a reload, clear())."""
        self._bridge.cancel(self._live_key)
        self._catching = False
        self._catch_queued = False
        self._gone = False
        self._broken = False
        self._before = 0
        self._window += 1

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
            branch=self.branch,
            before=before,
            at_start=at_start,
            gone=gone,
            page_size=self.page_size,
        )
        if found.kind == "append":
            await self._prepare(generation, found.new)
        return generation, window, found

    def _on_caught_up(self, result: tuple[int, int, CatchUp]) -> None:
        generation, window, found = result
        self._catching = False
        if generation != self._generation or self._session_id is None:
            return
        if window != self._window:  # the loaded messages changed meanwhile: again
            self.catch_up()
            return
        if found.kind == "gone":
            if not self._gone:
                self._show_gone()
        elif found.kind == "reload":
            self.reload(keep_position=True)
            return
        else:
            assert found.info is not None
            self._append(found.info, found.new, found.before)
        if self._catch_queued:
            self.catch_up()

    def _append(self, info: SessionInfo, new: list[Message], before: int | None) -> None:
        self._info = info
        self._before = before
        if before is not None and before > 0 and self._at_start:
            self._at_start = False  # messages appeared before the first loaded one
        if new:
            self._window += 1
            anchor = self.view.anchor()
            self._settling = True
            try:
                self.pairs.add(new)
                was_empty = not self.model.rowCount()
                self.model.append(new)
                self.view.set_placeholder("")
                if was_empty:
                    self.view.doItemsLayout()
                    self.view.scrollToBottom()
                else:
                    self.view.relayout(keep=anchor)
                self.view.viewport().update()  # pairing notes of rows already shown
            finally:
                self._settling = False
        self._update_status()
        self.caughtUp.emit(len(new))

    def _show_gone(self) -> None:
        sid = self._session_id
        self._gone = True
        self._window += 1
        self._info = None
        self._at_start = True
        self._before = 0
        self.pairs.clear()
        self.delegate.reset()
        self.model.clear()
        self._set_current(None)
        self.status.setText("")
        self._show_placeholder(GONE_TEXT)
        if sid is not None:
            self.sessionGone.emit(sid)

    def _on_catch_up_failed(self, error: Exception) -> None:
        log.info("catching up with the open session failed: %s", error)
        self._catching = False
        self._catch_queued = False

