"""An agent's fields — provider, model, base URL, instructions, temperature — as the
test chat's Agent dialog and "Replay from here…" both ask for them (never an API key:
the provider finds it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QLineEdit, QPlainTextEdit, QWidget

if TYPE_CHECKING:
    from fluxgui.services.chat import AgentConfig

#: (provider value, label) in the settings form
PROVIDERS = (
    ("offline", "Offline (built-in, deterministic)"),
    ("openai", "OpenAI-compatible"),
    ("ollama", "Ollama"),
)
_BASE_URLS = {
    "offline": "(not used)",
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434",
}


def _default_models() -> dict[str, str]:
    from fluxgui.services.chat_providers import DEFAULT_MODELS

    return dict(DEFAULT_MODELS)


class AgentFields:
    """The agent's widgets, made on ``parent`` from ``config``; a change of provider
    swaps a model left at the old provider's default for the new one's and tells
    ``on_provider``."""

    def __init__(
        self, config: AgentConfig, parent: QWidget, *, lines: int, placeholder: str,
        on_provider: Callable[[str], None] | None = None,
    ) -> None:
        self._config = config
        self._provider: str | None = None
        self._on_provider_cb = on_provider
        self.provider = QComboBox(parent)
        for value, label in PROVIDERS:
            self.provider.addItem(label, value)
        self.provider.setCurrentIndex(max(self.provider.findData(config.provider), 0))
        self.model = QLineEdit(config.model, parent)
        self.base_url = QLineEdit(config.base_url or "", parent)
        self.instructions = QPlainTextEdit(parent)
        self.instructions.setPlainText(config.instructions)
        self.instructions.setPlaceholderText(placeholder)
        self.instructions.setTabChangesFocus(True)
        self.instructions.setFixedHeight(parent.fontMetrics().lineSpacing() * lines + 12)
        self.temperature = QDoubleSpinBox(parent)
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(2)
        self.temperature.setValue(float(config.temperature))
        self.provider.currentIndexChanged.connect(lambda _i: self.provider_changed())

    @property
    def current_provider(self) -> str | None:
        return self._provider

    def provider_changed(self) -> None:
        provider = str(self.provider.currentData())
        defaults = _default_models()
        previous = self._provider
        # The model still the previous provider's default: the new provider's default.
        if previous is not None and self.model.text().strip() in ("", defaults.get(previous)):
            self.model.setText(defaults.get(provider, ""))
        self._provider = provider
        self.base_url.setEnabled(provider != "offline")
        self.base_url.setPlaceholderText(_BASE_URLS.get(provider, ""))
        if self._on_provider_cb is not None:
            self._on_provider_cb(provider)

    def config(self, **changes: Any) -> AgentConfig:
        """The agent as set in the fields (and ``changes``), never with an API key."""
        return replace(
            self._config,
            instructions=self.instructions.toPlainText(),
            model=self.model.text().strip() or self._config.model,
            temperature=round(self.temperature.value(), 2),
            provider=str(self.provider.currentData()),
            base_url=self.base_url.text().strip() or None,
            api_key=None,
            **changes,
        )
