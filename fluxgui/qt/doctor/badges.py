"""Problem badges in the session list: the number of problems at the right of a
session's id, computed lazily for the rows the view paints, one session at a time
through the bridge, never blocking a paint.

A check runs on the window's event loop (the store's reads in its own thread): the pages
read are turned into Messages and the session is checked in the loop's turns, so each is
kept small (:data:`CHECK_BATCH` messages a page, at most :data:`MAX_MESSAGES` a session:
about 8 ms for the check on a slow 2-core machine). Not in a worker thread: a thread
running Python makes each of the UI's calls into Python wait for the interpreter lock
(a list repaint took 0.5-1.3 s instead of 14 ms beside a busy Python thread).

A row painted for the first time asks for its session's check; the answer is kept until
the store changes (an edit, another writer, another store) and the row is painted again.
Sessions over :data:`MAX_MESSAGES`, and those whose count is only a bound (an OpenAI
conversation's, "≥ 100"), are left to the Doctor panel (no badge).
"""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QRect, Qt, QTimer
from PySide6.QtGui import QColor, QFontMetrics, QHelpEvent, QPainter
from PySide6.QtWidgets import QAbstractItemView, QStyleOptionViewItem, QToolTip, QWidget

from fluxgui.core.display import badge_colours, esc
from fluxgui.core.model import SessionInfo
from fluxgui.services.doctor import SessionReport, check_session
from fluxgui.core.roles import Store

from ..bridge import AsyncBridge
from ..sessions import SessionListModel
from ..sessions.cells import SessionCells
from ..sessions.table import SESSION_ROLE

#: sessions larger than this get no badge (the Doctor panel checks them when open)
MAX_MESSAGES = 1_000
#: messages read (and turned into Messages on the event loop) at a time for a check
CHECK_BATCH = 200
KEY = "doctor:badges"


class SessionBadges(QObject):
    """The badge cache and the queue of sessions to check."""

    def __init__(self, view: QAbstractItemView, model: SessionListModel, bridge: AsyncBridge) -> None:
        super().__init__(view)
        self._view = view
        self._model = model
        self._bridge = bridge
        self._store: Store | None = None
        self._reports: dict[str, SessionReport] = {}
        self._queue: OrderedDict[str, None] = OrderedDict()
        self._running: str | None = None
        self._kick = QTimer(self)
        self._kick.setSingleShot(True)
        self._kick.setInterval(0)
        self._kick.timeout.connect(self._next)
        self.delegate = BadgeDelegate(self, model, view)
        view.setItemDelegateForColumn(SessionListModel.ID, self.delegate)

    # -- the cache ---------------------------------------------------------------------

    def report(self, session_id: str) -> SessionReport | None:
        """The last check of ``session_id`` (``None``: not checked yet)."""
        return self._reports.get(session_id)

    def count(self, session_id: str) -> int | None:
        report = self._reports.get(session_id)
        return len(report.problems) if report is not None else None

    def set_store(self, store: Store | None) -> None:
        """Another store (or none): forget everything."""
        if store is not self._store:
            self._store = store
            self.forget()

    def forget(self, session_ids: list[str] | None = None) -> None:
        """Drop the answers for these sessions (all when ``None``); rows repaint and ask
        again when painted."""
        if session_ids is None:
            self._reports.clear()
            self._queue.clear()
            self._bridge.cancel(KEY)
            self._running = None
        else:
            for sid in session_ids:
                self._reports.pop(sid, None)
        self._view.viewport().update()

    def put(self, report: SessionReport) -> None:
        """A check made elsewhere (the Doctor panel's) for the same store."""
        self._reports[report.session_id] = report
        self._view.viewport().update()

    # -- the queue -----------------------------------------------------------------------

    def seen(self, info: SessionInfo) -> None:
        """A painted row: check its session soon, unless known, queued or too big."""
        sid = info.id
        if self._store is None or sid in self._reports or sid in self._queue or sid == self._running:
            return
        if info.messages > MAX_MESSAGES or not info.count_exact:
            return  # (a count that is only a bound, an OpenAI conversation's, may be any size)
        self._queue[sid] = None
        if self._running is None:
            self._kick.start()

    def _next(self) -> None:
        store = self._store
        if store is None or self._running is not None or not self._queue:
            return
        sid, _ = self._queue.popitem(last=False)
        self._running = sid
        coro = check_session(store, sid, batch=CHECK_BATCH)
        try:
            self._bridge.start(
                KEY, coro,
                lambda r: self._done(store, r), lambda _e: self._failed(store, sid),
            )
        except RuntimeError:  # the window is closing (its bridge closed): stop asking
            self._queue.clear()
            self._running = None

    def _done(self, store: Store, report: SessionReport) -> None:
        self._running = None
        if store is self._store:
            self._reports[report.session_id] = report
            self._repaint(report.session_id)
        self._kick.start()

    def _failed(self, store: Store, sid: str) -> None:
        # A session gone meanwhile, a store closed: no badge, and on to the next one.
        self._running = None
        self._kick.start()

    def _repaint(self, session_id: str) -> None:
        row = self._model.row_of(session_id)
        if row is not None:
            self._view.update(self._model.index(row, SessionListModel.ID))


class BadgeDelegate(SessionCells):
    """The session id cell, with the problem count painted at its right."""

    def __init__(self, badges: SessionBadges, model: SessionListModel, parent: QWidget) -> None:
        super().__init__(model, parent)
        self._badges = badges

    def _info(self, index: QModelIndex | QPersistentModelIndex) -> SessionInfo | None:
        info = index.data(SESSION_ROLE)
        return info if isinstance(info, SessionInfo) else None

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        info = self._table.session_at(index.row())  # (not index.data: a paint is hot)
        count = self._badges.count(info.id) if info is not None else None
        if info is not None and count is None:
            self._badges.seen(info)
        if not count:
            super().paint(painter, option, index)
            return
        text = str(count)
        fm = QFontMetrics(option.font)
        w = fm.horizontalAdvance(text) + 10
        h = min(option.rect.height() - 6, fm.height() + 2)
        cell = QStyleOptionViewItem(option)
        cell.rect = option.rect.adjusted(0, 0, -(w + 6), 0)
        super().paint(painter, cell, index)
        fg, bg = badge_colours("unreadable", dark=option.palette.base().color().lightness() < 128)
        box = QRect(option.rect.right() - w - 3, option.rect.center().y() - h // 2, w, h)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(bg))
        painter.drawRoundedRect(box, h / 2, h / 2)
        painter.setPen(QColor(fg))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

    def helpEvent(self, event: QHelpEvent, view: QAbstractItemView, option: QStyleOptionViewItem,
                  index: QModelIndex | QPersistentModelIndex) -> bool:
        info = self._info(index)
        report = self._badges.report(info.id) if info is not None else None
        if report is None or not report.problems:
            return super().helpEvent(event, view, option, index)
        lines = [f"{len(report.problems)} problems (Doctor panel for details):"]
        lines += [p.code for p in report.problems[:8]]
        QToolTip.showText(event.globalPos(), "<p>" + "<br>".join(esc(t) for t in lines) + "</p>", view)
        return True
