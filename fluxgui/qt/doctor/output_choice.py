"""The Doctor panel's choice between a call's outputs that differ (``duplicate_output``).

When a streamed run saved a tool output again and the copies differ, the repair keeps
one: each output is shown in full, one option each, the last (the one the Agents SDK
sends) chosen until the user picks another. The choice is kept per problem while the
report stands.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QButtonGroup, QGroupBox, QPlainTextEdit, QRadioButton, QVBoxLayout, QWidget

from fluxgui.core.model import Message
from fluxgui.core.visible import visible
from fluxgui.services.doctor.problems import Problem
from fluxgui.core.contentkey import content_key

#: how much of an output the option shows (the whole text is in the box below it)
_LABEL_CHARS = 120


def differing(problem: Problem, outputs: Mapping[int, Message]) -> bool:
    """Whether ``problem`` is a ``duplicate_output`` whose outputs (all known) differ."""
    if problem.code != "duplicate_output":
        return False
    found = [outputs.get(i) for i in problem.message_ids]
    if any(m is None for m in found):
        return False
    return len({content_key(m) for m in found if m is not None}) > 1


class OutputChoice(QGroupBox):
    """One option per output of the problem shown (hidden for any other problem).
    ``picked(message_id)`` when the user picks one."""

    picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Keep which output?", parent)
        self.setObjectName("doctorOutputChoice")
        self._group = QButtonGroup(self)
        self._group.idClicked.connect(lambda n: self.picked.emit(self._ids[n]))
        self._layout = QVBoxLayout(self)
        self._ids: list[int] = []
        self.options: list[QRadioButton] = []
        self.texts: list[QPlainTextEdit] = []
        self.hide()

    def show_outputs(self, outputs: list[Message], chosen: int) -> None:
        """Offer ``outputs`` (in stored order), ``chosen`` ticked."""
        self.clear()
        for m in outputs:
            text = m.text or ""
            flat = " ".join(text.split())
            short = flat if len(flat) <= _LABEL_CHARS else flat[: _LABEL_CHARS - 1] + "…"
            option = QRadioButton(visible(f"#{m.id}: {short}"), self)
            option.setChecked(m.id == chosen)
            self._group.addButton(option, len(self._ids))
            self._ids.append(m.id)
            body = QPlainTextEdit(self)
            body.setReadOnly(True)
            body.setPlainText(visible(text, keep_layout=True))
            body.setMaximumHeight(80)
            self._layout.addWidget(option)
            self._layout.addWidget(body)
            self.options.append(option)
            self.texts.append(body)
        self.show()

    def clear(self) -> None:
        for widget in (*self.options, *self.texts):
            if isinstance(widget, QRadioButton):
                self._group.removeButton(widget)
            self._layout.removeWidget(widget)
            widget.deleteLater()
        self._ids = []
        self.options = []
        self.texts = []
        self.hide()
