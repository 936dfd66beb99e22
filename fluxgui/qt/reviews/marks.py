"""Review marks in the session list: a coloured dot for the state and the tags after
the id, fetched for the rows loaded (a batch per page, never the whole store) and kept
until reviews change."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from fluxgui.core.model import SessionInfo
from fluxgui.services.reviews import Review

from ..sessions.table import RowMark

#: the colour of each state's dot (unreviewed: none)
STATE_COLOURS = {"in-review": "#3b82f6", "reviewed": "#16a34a", "flagged": "#dc2626"}


def dot(colour: str, size: int = 12) -> QIcon:
    pix = QPixmap(size, size)
    pix.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pix)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(colour))
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    return QIcon(pix)


class ReviewMarks(QObject):
    """The reviews of the rows shown (a cache by session id)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.reviews: dict[str, Review] = {}
        self._icons: dict[str, QIcon] = {}
        self.reviewer = ""

    def clear(self) -> None:
        self.reviews.clear()

    def put(self, reviews: dict[str, Review]) -> None:
        self.reviews.update(reviews)

    def missing(self, ids: list[str]) -> list[str]:
        return [sid for sid in ids if sid not in self.reviews]

    def _icon(self, state: str) -> QIcon | None:
        colour = STATE_COLOURS.get(state)
        if colour is None:
            return None
        if state not in self._icons:
            self._icons[state] = dot(colour)
        return self._icons[state]

    def mark(self, info: SessionInfo) -> RowMark | None:
        review = self.reviews.get(info.id)
        if review is None or (review.state == "unreviewed" and not review.tags and not review.notes):
            return None
        tip = f"review: {review.state}"
        if review.claimed:
            who = "you" if review.claimed_by == self.reviewer else review.claimed_by
            tip += f" (claimed by {who})"
        elif review.reviewer:
            tip += f" by {review.reviewer}"
        if review.notes:
            tip += f", {len(review.notes)} notes"
        suffix = " ".join(f"#{t}" for t in review.tags)
        if review.claimed and review.claimed_by != self.reviewer:
            suffix = f"[{review.claimed_by}] " + suffix
        return RowMark(self._icon(review.state), suffix.strip(), tip)
