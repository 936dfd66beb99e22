"""A layout that puts its widgets side by side and starts a new row when the next one
does not fit (Qt's flow layout example): a row of buttons in a narrow side panel wraps
instead of widening the panel or scrolling sideways (issue 37).

Its height follows its width (``heightForWidth``), so a scroll area or a box layout
around it gives it the rows it needs. Items are left-aligned; a hidden widget takes no
place. Its minimum width is the widest single item's, never the row's.
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QSizePolicy, QStyle, QWidget, QWidgetItem


class FlowLayout(QLayout):
    """Widgets left to right, wrapping to as many rows as the width needs."""

    def __init__(self, parent: QWidget | None = None, *, spacing: int = 4,
                 margins: tuple[int, int, int, int] = (0, 0, 0, 0)) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(QMargins(*margins))

    # -- QLayout's item list -------------------------------------------------------

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt's name
        self._items.append(item)

    def insertWidget(self, index: int, widget: QWidget) -> None:  # noqa: N802 - like QBoxLayout's
        """Put ``widget`` at ``index`` (a negative or too large index: at the end)."""
        self.addChildWidget(widget)
        item = QWidgetItem(widget)
        if 0 <= index < len(self._items):
            self._items.insert(index, item)
        else:
            self._items.append(item)
        self.invalidate()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802 - Qt's name
        if 0 <= index < len(self._items):
            item = self._items.pop(index)
            self.invalidate()
            return item
        return None

    def spacing(self) -> int:
        return self._spacing

    def setSpacing(self, spacing: int) -> None:  # noqa: N802 - Qt's name
        self._spacing = spacing
        self.invalidate()

    # -- geometry ------------------------------------------------------------------

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802 - Qt's name
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt's name
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """All on one row."""
        m = self.contentsMargins()
        shown = [i for i in self._items if not i.isEmpty()]
        width = sum(i.sizeHint().width() for i in shown) + self._spacing * max(0, len(shown) - 1)
        height = max((i.sizeHint().height() for i in shown), default=0)
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt's name
        """The widest single item (each on its own row at the narrowest)."""
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _arrange(self, rect: QRect, *, move: bool) -> int:
        """Lay the items out in ``rect`` (``move``: place them) and return the height used."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, row_height = area.x(), area.y(), 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            # a widget wider than the whole row is given the row (it elides or shrinks)
            width = min(hint.width(), max(area.width(), item.minimumSize().width()))
            gap = self._spacing if x > area.x() else 0
            if x > area.x() and x + gap + width > area.right() + 1:
                x, y, row_height = area.x(), y + row_height + self._spacing, 0
                gap = 0
            if move:
                item.setGeometry(QRect(QPoint(x + gap, y), QSize(width, hint.height())))
            x += gap + width
            row_height = max(row_height, hint.height())
        return y + row_height - rect.y() + m.bottom()


def _style_spacing(widget: QWidget) -> int:
    """The style's horizontal spacing between buttons (a fallback of 4)."""
    value = widget.style().pixelMetric(QStyle.PixelMetric.PM_LayoutHorizontalSpacing, None, widget)
    return value if value >= 0 else 4


def flow_row(parent: QWidget, widgets: list[QWidget], *, spacing: int | None = None) -> QWidget:
    """A widget holding ``widgets`` in a :class:`FlowLayout` (its height follows its width)."""
    row = QWidget(parent)
    policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
    policy.setHeightForWidth(True)
    row.setSizePolicy(policy)
    layout = FlowLayout(row, spacing=_style_spacing(parent) if spacing is None else spacing)
    for w in widgets:
        layout.addWidget(w)
    return row
