""""Replay from here…": how to replay — provider, model, base URL, instructions,
temperature (the test chat's settings as the start), how calls are matched, the text
for an unmatched call (none: the replay stops there), the fork's id."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.errors import show_id

from ..chat.agent_dialog import PROVIDERS
from ..dialogs.buttons import ok_cancel

if TYPE_CHECKING:
    from fluxgui.services.chat import AgentConfig
    from fluxgui.services.replay import ReplayOptions

#: (mode, label) of the match choice
MATCHES = (
    ("strict", "strict — same name and JSON-equal arguments"),
    ("name", "name — the first unused recorded call of that name"),
)
_BASE_URLS = {"offline": "(not used)", "openai": "https://api.openai.com/v1", "ollama": "http://localhost:11434"}


def _default_models() -> dict[str, str]:
    from fluxgui.services.chat_providers import DEFAULT_MODELS

    return dict(DEFAULT_MODELS)


class ReplayDialog(QDialog):
    """The replay's settings; :meth:`options` once accepted."""

    def __init__(self, session_id: str, turn: int, config: AgentConfig, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Replay from turn {turn}")
        self._config = config
        self._provider: str | None = None
        intro = QLabel(
            f"Replay session {show_id(session_id)} from turn {turn} into a new fork (the "
            "session itself is not changed). The recorded user messages are sent in order; "
            "the model's tool calls are answered from the record, never run.", self)
        intro.setTextFormat(Qt.TextFormat.PlainText)
        intro.setWordWrap(True)
        self.provider = QComboBox(self)
        for value, label in PROVIDERS:
            self.provider.addItem(label, value)
        self.provider.setCurrentIndex(max(self.provider.findData(config.provider), 0))
        self.model = QLineEdit(config.model, self)
        self.base_url = QLineEdit(config.base_url or "", self)
        self.instructions = QPlainTextEdit(self)
        self.instructions.setPlainText(config.instructions)
        self.instructions.setPlaceholderText("System instructions (empty: none)")
        self.instructions.setTabChangesFocus(True)
        self.instructions.setFixedHeight(self.fontMetrics().lineSpacing() * 3 + 12)
        self.temperature = QDoubleSpinBox(self)
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(2)
        self.temperature.setValue(float(config.temperature))
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
        self.provider.currentIndexChanged.connect(lambda _i: self._on_provider())
        self._on_provider()
        # Never squeezed below what the form needs: a window is first sized to at most 2/3
        # of a small screen (2× scale), and the form's own minimum forgets the wrapped intro.
        self.setMinimumHeight(self.sizeHint().height())

    def _on_provider(self) -> None:
        provider = str(self.provider.currentData())
        defaults = _default_models()
        previous = self._provider
        if previous is not None and self.model.text().strip() in ("", defaults.get(previous)):
            self.model.setText(defaults.get(provider, ""))
        self._provider = provider
        self.base_url.setEnabled(provider != "offline")
        self.base_url.setPlaceholderText(_BASE_URLS.get(provider, ""))

    def agent(self) -> AgentConfig:
        """The agent as set in the form (never an API key: the provider finds it)."""
        return replace(
            self._config,
            instructions=self.instructions.toPlainText(),
            model=self.model.text().strip() or self._config.model,
            temperature=round(self.temperature.value(), 2),
            provider=str(self.provider.currentData()),
            base_url=self.base_url.text().strip() or None,
            api_key=None,
        )

    def options(self) -> ReplayOptions:
        from fluxgui.services.replay import ReplayOptions

        return ReplayOptions(
            self.agent(), match=str(self.match.currentData()),
            unmatched=self.unmatched.text() if self.use_unmatched.isChecked() else None,
            name=self.fork_name.text().strip() or None,
        )
