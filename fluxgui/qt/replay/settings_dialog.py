""""Replay from here…": how to replay — provider, model, base URL, instructions,
temperature (the test chat's settings as the start), how calls are matched, the text
for an unmatched call (none: the replay stops there), the fork's id."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.errors import show_id

from ..chat.agent_fields import AgentFields
from ..dialogs.buttons import ok_cancel
from ..screen_fit import fit_to_screen

if TYPE_CHECKING:
    from fluxgui.services.chat import AgentConfig
    from fluxgui.services.replay import ReplayOptions

#: (mode, label) of the match choice
MATCHES = (
    ("strict", "strict — same name and JSON-equal arguments"),
    ("name", "name — the first unused recorded call of that name"),
)


class ReplayDialog(QDialog):
    """The replay's settings; :meth:`options` once accepted."""

    def __init__(self, session_id: str, turn: int, config: AgentConfig, parent: QWidget | None = None,
                 *, shown_id: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Replay from turn {turn}")
        intro = QLabel(
            f"Replay session {show_id(shown_id or session_id)} from turn {turn} into a new fork (the "
            "session itself is not changed). The recorded user messages are sent in order; "
            "the model's tool calls are answered from the record, never run.", self)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        intro.setWordWrap(True)
        self.fields = AgentFields(config, self, lines=3, placeholder="System instructions (empty: none)")
        f = self.fields
        self.provider, self.model, self.base_url = f.provider, f.model, f.base_url
        self.instructions, self.temperature = f.instructions, f.temperature
        self.match = QComboBox(self)
        for value, label in MATCHES:
            self.match.addItem(label, value)
        self.use_unmatched = QCheckBox("Answer an unmatched call with this text (else the replay stops there):", self)
        self.unmatched = QLineEdit(self)
        self.unmatched.setPlaceholderText('e.g. {"error": "not recorded"}')
        self.unmatched.setEnabled(False)
        self.use_unmatched.toggled.connect(self.unmatched.setEnabled)
        self.fork_name = QLineEdit(self)
        self.fork_name.setPlaceholderText("empty: chosen for you")

        form = QFormLayout()
        form.addRow("&Provider:", self.provider)
        form.addRow("&Model:", self.model)
        form.addRow("&Base URL:", self.base_url)
        form.addRow("&Instructions:", self.instructions)
        form.addRow("&Temperature:", self.temperature)
        form.addRow("Match &calls:", self.match)
        form.addRow(self.use_unmatched)
        form.addRow("", self.unmatched)
        form.addRow("&Fork id:", self.fork_name)
        self.buttons = ok_cancel(self, text="Replay")
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(460)
        f.provider_changed()
        # Never squeezed below what the form needs: a window is first sized to at most 2/3
        # of a small screen (2× scale), and the form's own minimum forgets the wrapped intro.
        self.setMinimumHeight(self.sizeHint().height())
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def agent(self) -> AgentConfig:
        """The agent as set in the form (never an API key: the provider finds it)."""
        return self.fields.config()

    def options(self) -> ReplayOptions:
        from fluxgui.services.replay import ReplayOptions

        return ReplayOptions(
            self.agent(), match=str(self.match.currentData()),
            unmatched=self.unmatched.text() if self.use_unmatched.isChecked() else None,
            name=self.fork_name.text().strip() or None,
        )
