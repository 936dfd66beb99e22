"""Keeping the reviewer's claim on the shown session alive while it is being worked on.

A claim lasts :data:`~fluxgui.services.reviews.model.CLAIM_SECONDS` (30 minutes) so that
a session abandoned in a closed or killed window comes back to the queue. A reviewer who
spends longer on one must not lose it to the next "Next unreviewed" of a colleague: while
the window shows a session whose claim is the reviewer's own, the claim is renewed (on
showing it, and every minute, once it is :data:`RENEW_AFTER` old) — one short UPDATE, no
history row. A renewal that fails says so in the error bar, once per session.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer

from fluxgui.services.reviews import claims
from fluxgui.services.reviews.model import CLAIM_SECONDS, now

if TYPE_CHECKING:
    from .host import Reviews

#: how often the shown claim is looked at
TICK_MS = 60_000
#: a claim is renewed once this much of it has passed
RENEW_AFTER = 5 * 60


class ClaimLease(QObject):
    """Renews the shown session's claim when it is the reviewer's own (see the module)."""

    def __init__(self, controller: Reviews, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.c = controller
        self.renewed = 0  # renewals done (for the curious and the tests)
        self._warned: str | None = None  # the session a failure was said for
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self.check)

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def due(self, review: Any) -> bool:
        """Whether ``review`` (the shown one) is the reviewer's claim and old enough to renew."""
        c = self.c
        if review is None or not review.claimed or review.claimed_by != c.reviewer:
            return False
        if review.session_id != c.host.shown() or not review.claimed_until:
            return False
        try:
            until = datetime.fromisoformat(review.claimed_until)
        except ValueError:
            return True  # a time we cannot read: renewing writes one we can
        return (until - now()).total_seconds() < CLAIM_SECONDS - RENEW_AFTER

    def check(self) -> None:
        """Renew the shown claim when :meth:`due` (a worker task; the panel shows the new
        time when it is done)."""
        c, review = self.c, self.c.panel.review
        if c.db is None or c.key is None or review is None or not self.due(review):
            return
        bridge = c.host.bridge
        if bridge.running("reviews:renew"):
            return
        key, sid = c.key, review.session_id
        bridge.start("reviews:renew", claims.renew(c.db, key, sid, c.reviewer),
                     lambda ok: self._done(key, sid, ok), lambda e: self._failed(sid, e))

    def _done(self, key: str, sid: str, ok: bool) -> None:
        if ok:
            self.renewed += 1
            if key == self.c.key and sid == self.c.host.shown():
                self.c.reload_shown()

    def _failed(self, sid: str, error: Exception) -> None:
        if self._warned != sid:  # said once: the next minute's try may well fail alike
            self._warned = sid
            self.c.host.show_error(error)
