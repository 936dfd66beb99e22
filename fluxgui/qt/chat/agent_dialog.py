"""The agent's settings form: name, instructions, model, temperature, provider, base URL.

An API key is never part of it: the form only says whether one was found (in
``OPENAI_API_KEY`` or the keyring — asked off the UI thread).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from fluxgui.services import credentials

from ..dialogs.buttons import ok_cancel
from ..dialogs.keyring_state import run_for
from ..screen_fit import fit_to_screen
from .agent_fields import AgentFields

if TYPE_CHECKING:
    from fluxgui.services.chat import AgentConfig

#: how the panel's header names a provider
PROVIDER_LABELS = {"offline": "offline", "openai": "OpenAI-compatible", "ollama": "Ollama"}


class AgentDialog(QDialog):
    """The agent's settings: name, instructions, model, temperature, provider, base URL."""

    def __init__(self, config: AgentConfig, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Agent")
        self.name = QLineEdit(config.name, self)
        self.key_note = QLabel(self)
        self.key_note.setTextFormat(Qt.TextFormat.PlainText)
        self.key_note.setWordWrap(True)
        self.fields = AgentFields(
            config, self, lines=5, placeholder="System instructions (optional)",
            on_provider=self._on_provider,
        )
        f = self.fields
        self.provider, self.model, self.base_url = f.provider, f.model, f.base_url
        self.instructions, self.temperature = f.instructions, f.temperature

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
        f.provider_changed()
        fit_to_screen(self)  # never larger than its screen (issue 37)

    def _on_provider(self, provider: str) -> None:
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
        if self.fields.current_provider != "openai":
            return  # the answer came after the provider changed
        state = " (looking…)." if found is None else " (found)." if found else " (none found)."
        self.key_note.setText(
            "API key: from OPENAI_API_KEY or the keyring" + state
            + " It is never saved in the settings."
        )

    def result_config(self) -> AgentConfig:
        return self.fields.config(name=self.name.text().strip() or "assistant")
