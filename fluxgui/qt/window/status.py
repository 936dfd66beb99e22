"""The window's status bar: the session count, the store's label and format, the
read-only/editing switch and a busy indicator."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QStatusBar, QToolButton

from fluxgui.core.roles import Store

from ..shown_ids import ShownIds



def format_text(store: Store) -> str:
    """``agents format`` (``· locked`` / ``· decrypted`` for a store of encrypted items)."""
    text = f"{store.format} format"
    if store.needs_key:
        # No emoji: a status bar font may have no glyph for it.
        text += " · decrypted" if store.has_key else " · locked"
    return text


class ShownStatusBar(QStatusBar):
    """A status bar whose messages (which may name a session: an edit's label, a replay)
    are shown as the window shows session ids: redacted while View › Redact is on."""

    def __init__(self, ids: ShownIds, parent: QMainWindow) -> None:
        super().__init__(parent)
        self._ids = ids

    def showMessage(self, text: str, timeout: int | None = 0) -> None:  # noqa: N802 - Qt's name
        super().showMessage(self._ids.say(text), timeout or 0)


class StatusArea:
    """The status bar's widgets, put into ``window``'s status bar (``ids``: its messages
    shown as the window shows session ids)."""

    def __init__(self, window: QMainWindow, ids: ShownIds | None = None) -> None:
        if ids is not None:
            window.setStatusBar(ShownStatusBar(ids, window))
        self.count_label = self._label(window)
        self.store_label = self._label(window)
        self.format_label = self._label(window)
        # The mode is a button: it shows read-only/editing and switches between them.
        self.mode_label = QToolButton(window)
        self.mode_label.setCheckable(True)
        self.mode_label.setAutoRaise(True)
        self.mode_label.setText("read-only")
        self.mode_label.setEnabled(False)
        # A long path or count must not make the window wider than a small screen (2×):
        # they may be cut (the path keeps its end: the file name).
        for label in (self.count_label, self.store_label):
            label.setMinimumWidth(60)
        self.store_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        bar = window.statusBar()
        bar.addWidget(self.count_label, 1)
        bar.addPermanentWidget(self.store_label)
        bar.addPermanentWidget(self.format_label)
        bar.addPermanentWidget(self.mode_label)

        self.busy_indicator = QProgressBar(window)
        self.busy_indicator.setRange(0, 0)  # indeterminate
        self.busy_indicator.setMaximumWidth(120)
        self.busy_indicator.setMaximumHeight(window.fontMetrics().height())
        self.busy_indicator.setTextVisible(False)
        self.busy_indicator.hide()
        bar.addPermanentWidget(self.busy_indicator)
        # Shown only for work that takes a moment: live refreshes would make it blink.
        self._busy_delay = QTimer(window)
        self._busy_delay.setSingleShot(True)
        self._busy_delay.setInterval(300)
        self._busy_delay.timeout.connect(self.busy_indicator.show)

    @staticmethod
    def _label(window: QMainWindow) -> QLabel:
        label = QLabel(window)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setContentsMargins(6, 0, 6, 0)
        return label

    def set_busy(self, busy: bool) -> None:
        """The bridge started its first task or ended its last one."""
        if busy:
            self._busy_delay.start()
        else:
            self._busy_delay.stop()
            self.busy_indicator.hide()

    def set_store(self, store: Store, label: str, *, keys: int = 0) -> None:
        """Name the open store: its label (elided: a long path or URL must not widen the
        window; the full text is the tooltip), its format and, for an encrypted store,
        how many keys were given."""
        metrics = self.store_label.fontMetrics()
        self.store_label.setText(metrics.elidedText(label, Qt.TextElideMode.ElideMiddle, 480))
        # Escaped: Qt would take a tooltip that looks like HTML for rich text.
        self.store_label.setToolTip(f"<p style='white-space:pre'>{html.escape(label)}</p>")
        text = format_text(store)
        if keys > 1 and store.needs_key:  # a key ring
            text += f" · {keys} keys"
        self.format_label.setText(text)

    def set_mode(self, text: str, tip: str, style: str, *, enabled: bool, checked: bool) -> None:
        """The read-only/editing switch (its tip is rich text, escaped: a reason quotes
        the store's path, which is data)."""
        self.mode_label.setEnabled(enabled)
        self.mode_label.setChecked(checked)
        self.mode_label.setText(text)
        self.mode_label.setStyleSheet(style)
        self.mode_label.setToolTip(f"<p>{html.escape(tip)}</p>")
