"""The agent's settings form: name, instructions, model, temperature, provider, base URL.

An API key is never part of it: the form only says whether one was found (in
``OPENAI_API_KEY`` or the keyring — asked off the UI thread).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
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

from fluxgui.services import credentials

from ..dialogs.buttons import ok_cancel
from ..dialogs.keyring_state import run_for

if TYPE_CHECKING:
    from fluxgui.services.chat import AgentConfig

#: (provider value, label) in the settings form
PROVIDERS = (
    ("offline", "Offline (built-in, deterministic)"),
    ("openai", "OpenAI-compatible"),
    ("ollama", "Ollama"),
)
#: how the panel's header names a provider
PROVIDER_LABELS = {"offline": "offline", "openai": "OpenAI-compatible", "ollama": "Ollama"}
_BASE_URLS = {
    "offline": "(not used)",
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434",
}


def _default_models() -> dict[str, str]:
    try:
        from fluxgui.services.chat_providers import DEFAULT_MODELS
    except ImportError:  # pragma: no cover - the service is part of fluxgui
        return {"offline": "offline"}
    return dict(DEFAULT_MODELS)


class AgentDialog(QDialog):
    """The agent's settings: name, instructions, model, temperature, provider, base URL."""

    def __init__(self, config: AgentConfig, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Agent")
        self._config = config
        self._provider: str | None = None
        self.name = QLineEdit(config.name, self)
        self.instructions = QPlainTextEdit(self)
        self.instructions.setPlainText(config.instructions)
        self.instructions.setPlaceholderText("System instructions (optional)")
        self.instructions.setTabChangesFocus(True)
        self.instructions.setFixedHeight(self.fontMetrics().lineSpacing() * 5 + 12)
        self.model = QLineEdit(config.model, self)
        self.temperature = QDoubleSpinBox(self)
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(2)
        self.temperature.setValue(float(config.temperature))
        self.provider = QComboBox(self)
        for value, label in PROVIDERS:
            self.provider.addItem(label, value)
        index = self.provider.findData(config.provider)
        self.provider.setCurrentIndex(max(index, 0))
        self.base_url = QLineEdit(config.base_url or "", self)
        self.key_note = QLabel(self)
        self.key_note.setTextFormat(Qt.TextFormat.PlainText)
        self.key_note.setWordWrap(True)
        self.provider.currentIndexChanged.connect(lambda _i: self._on_provider())

        form = QFormLayout()
        form.addRow("&Name:", self.name)
        form.addRow("&Instructions:", self.instructions)
        form.addRow("&Provider:", self.provider)
        form.addRow("&Model:", self.model)
        form.addRow("&Temperature:", self.temperature)
        form.addRow("&Base URL:", self.base_url)
        form.addRow("", self.key_note)
        buttons = ok_cancel(self)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.setMinimumWidth(440)
        self._on_provider()

    def _on_provider(self) -> None:
        provider = self.provider.currentData()
        defaults = _default_models()
        previous = self._provider
        # The model still the previous provider's default: the new provider's default.
        if previous is not None and self.model.text().strip() in ("", defaults.get(previous)):
            self.model.setText(defaults.get(provider, ""))
        self._provider = provider
        self.base_url.setEnabled(provider != "offline")
        self.base_url.setPlaceholderText(_BASE_URLS.get(provider, ""))
        if provider == "openai":
            self._look_for_key()
        elif provider == "ollama":
            self.key_note.setText("Ollama needs no API key.")
        else:
            self.key_note.setText("The offline agent answers deterministically, without a network.")

    def _look_for_key(self) -> None:
        """Say whether an API key is found: the environment at once, the keyring off the
        UI thread (the note says so meanwhile)."""
        if os.environ.get(credentials.API_KEY_ENV):
            self._show_key(True)
            return
        self._show_key(None)
        lookup = credentials.api_key_for_async("openai")
        if not run_for(self, lookup, lambda key: self._show_key(bool(key))):
            self._show_key(bool(credentials.api_key_for("openai")))  # no event loop: now

    def _show_key(self, found: bool | None) -> None:
        if self._provider != "openai":
            return  # the answer came after the provider changed
        state = " (looking…)." if found is None else " (found)." if found else " (none found)."
        self.key_note.setText(
            "API key: from OPENAI_API_KEY or the keyring" + state
            + " It is never saved in the settings."
        )

    def result_config(self) -> AgentConfig:
        return replace(
            self._config,
            name=self.name.text().strip() or "assistant",
            instructions=self.instructions.toPlainText(),
            model=self.model.text().strip() or self._config.model,
            temperature=round(self.temperature.value(), 2),
            provider=str(self.provider.currentData()),
            base_url=self.base_url.text().strip() or None,
            api_key=None,
        )
