"""A huge body shown whole (a 2 MB log, 30,000 lines) without freezing the window.

One QTextDocument of 2 MB takes seconds to lay out and each paint walks all of it.
:class:`ChunkedBody` holds the text as pieces of about
:data:`~fluxgui.core.bodies.CHUNK_CHARS` characters (whole lines), each its own small
plain-text document, built and laid out only when asked — a few at a time by the
delegate's background work (:meth:`ChunkedBody.advance`), or at once when one is
painted. Until a piece is laid out its height is estimated from its line lengths, so
the card has about its final height from the start and grows or shrinks a little as
the pieces are measured. Painting draws only the pieces that intersect what is seen.
A card shows the first :data:`INLINE_LINES` lines (a list row is at most 32,767 px
tall); the whole text opens in a viewer that lays out only what it shows
(:class:`~.viewer.TextViewer`).
"""

from __future__ import annotations

import time

from PySide6.QtCore import QRectF
from PySide6.QtGui import QAbstractTextDocumentLayout, QFontMetricsF, QPainter, QPalette

from fluxgui.core.bodies import split_chunks
from fluxgui.core.display import size_label
from fluxgui.core.visible import visible

from ..markdown import DocTheme, SafeDocument, plain_document

#: the lines of a huge body shown in its card (a list row holds at most 32,767 px); the
#: whole text is in the viewer (:mod:`.viewer`)
INLINE_LINES = 1_500
#: the tallest a card's body may be (Qt's list rows are limited to 32,767 px)
MAX_HEIGHT = 30_000.0


class ChunkedBody:
    """A huge text as lazily laid-out pieces (see the module docstring)."""

    def __init__(self, text: str, theme: DocTheme, *, mono: bool, size: int,
                 partial: bool = False) -> None:
        self._theme = theme
        self._mono = mono
        #: the text (what the viewer shows, unless ``partial``: then its start)
        self.text = text
        self.total_lines = text.count("\n") + 1
        pieces, lines = [], 0
        for piece in split_chunks(text):
            if lines >= INLINE_LINES:
                break
            pieces.append(piece)
            lines += piece.count("\n")
        #: whether only the start is in the card (the rest: Open in Viewer)
        self.cut = partial or len("".join(pieces)) < len(text)
        note = f"Shown as plain text ({size_label(size)}, {self.total_lines:,} lines)"
        if partial:  # only the start was read from the store (Message.partial)
            note = (f"The start of a {size_label(size)} message, as plain text: its first "
                    f"{lines:,} lines are here, the whole text in the viewer (double-click, "
                    "or Open in Viewer in the context menu).")
        elif self.cut:
            note += (f"; the first {lines:,} lines are here, the whole text in the viewer "
                     "(double-click, or Open in Viewer in the context menu).")
        else:
            note += ": too long to lay out as Markdown or code."
        self.pieces = [note + "\n", *pieces]
        self._docs: list[SafeDocument | None] = [None] * len(self.pieces)
        self._heights: list[float | None] = [None] * len(self.pieces)
        # (lines, characters) of each piece: enough to estimate its height cheaply
        self._counts = [(piece.count("\n") + (0 if piece.endswith("\n") else 1), len(piece))
                        for piece in self.pieces]
        metrics = QFontMetricsF(theme.mono if mono else theme.font)
        self._line_h = metrics.lineSpacing()
        self._char_w = max(1.0, metrics.averageCharWidth())
        self._width = 0
        self._estimates: list[float] = []  # each piece's estimated height at _width
        self._next = 0  # the next piece the background work lays out
        #: set when a piece's measured height differs from its estimate (a re-layout is due)
        self.changed = False

    # -- sizes -------------------------------------------------------------------------

    def set_width(self, width: int) -> None:
        if width != self._width or not self._estimates:
            self._width = width
            self._heights = [None] * len(self.pieces)
            self._next = 0
            per_line = max(1, int(width / self._char_w)) if width > 0 else 80
            self._estimates = [self._line_h * max(lines, chars / per_line, 1)
                               for lines, chars in self._counts]

    def height(self) -> float:
        if not self._estimates:
            self.set_width(self._width)
        return min(MAX_HEIGHT, sum(h if h is not None else e
                                   for h, e in zip(self._heights, self._estimates, strict=True)))

    @property
    def done(self) -> bool:
        """Every piece laid out at the current width."""
        return all(h is not None for h in self._heights)

    @property
    def pending(self) -> bool:
        """Pieces are left to lay out, or heights changed since :meth:`take_changed`."""
        return not self.done or self.changed

    def _doc(self, i: int) -> SafeDocument:
        doc = self._docs[i]
        if doc is None:
            text = self.pieces[i]
            text = text[:-1] if text.endswith("\n") else text
            # hidden characters as markers, a piece at a time (as the cards show them)
            text = visible(text, pictures=False)
            doc = plain_document(text, self._theme, mono=self._mono and i > 0, muted=i == 0)
            self._docs[i] = doc
        return doc

    def _lay_out(self, i: int) -> float:
        height = self._heights[i]
        if height is None:
            doc = self._doc(i)
            doc.setTextWidth(self._width)
            height = doc.size().height()
            if abs(height - self._estimates[i]) >= 0.5:
                self.changed = True
            self._heights[i] = height
        return height

    def advance(self, budget: float) -> bool:
        """Lay out pieces for about ``budget`` seconds; ``True`` once all are done."""
        started = time.perf_counter()
        n = len(self.pieces)
        while self._next < n:
            self._lay_out(self._next)
            self._next += 1
            if time.perf_counter() - started > budget:
                break
        return self._next >= n and self.done

    # -- painting and text -------------------------------------------------------------

    def draw(self, painter: QPainter, palette: QPalette, top: float, bottom: float) -> None:
        """Paint the pieces between ``top`` and ``bottom`` (body coordinates)."""
        y = 0.0
        for i in range(len(self.pieces)):
            known = self._heights[i]
            height = known if known is not None else self._estimates[i]
            if y > bottom:
                break
            if y + height >= top:
                height = self._lay_out(i)  # what is seen is laid out now
                painter.save()
                painter.translate(0, y)
                ctx = QAbstractTextDocumentLayout.PaintContext()
                ctx.palette = palette
                ctx.clip = QRectF(0, max(0.0, top - y), self._width + 1, bottom - max(top, y) + 1)
                self._doc(i).documentLayout().draw(painter, ctx)
                painter.restore()
            y += height

    def toPlainText(self) -> str:  # noqa: N802 - the name QTextDocument uses
        return visible("".join(self.pieces), pictures=False)

    def textWidth(self) -> float:  # noqa: N802 - the name QTextDocument uses
        return float(self._width)

    def setTextWidth(self, width: float) -> None:  # noqa: N802
        self.set_width(int(width))
