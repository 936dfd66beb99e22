"""The chat panel: send a message to an agent in the open session, see its reply stream.

The message goes through :func:`fluxgui.services.chat.chat` on the bridge under the key
``"chat"``; Stop cancels it (the service then writes nothing). Tool calls the agent makes
and their outputs appear as the conversation shows stored ones: the same message cards,
built from Agents SDK ``function_call``/``function_call_output`` items, paired by call
id. The reply and the error line are plain text: nothing here becomes markup.
"New Session…" chats into a session that does not exist yet.
The agent's settings (name, instructions, model, temperature, provider, base URL) are
remembered per store (:class:`fluxgui.qt.settings.AgentSettings`); an API key never is:
it comes from ``OPENAI_API_KEY`` or the keyring (:mod:`fluxgui.qt.secrets`).
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent, QPalette, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from fluxgui.core.model import Message, from_item
from fluxgui.core.pairing import ToolPairs

from . import secrets
from .conversation import MessageDelegate, MessageListModel, MessageListView

if TYPE_CHECKING:
    from fluxgui.services.chat import AgentConfig, ChatEvent, ChatResult

    from .window import MainWindow

#: the bridge key chats run under
CHAT_KEY = "chat"

#: (provider value, label) in the settings form
PROVIDERS = (
    ("offline", "Offline (built-in, deterministic)"),
    ("openai", "OpenAI-compatible"),
    ("ollama", "Ollama"),
)
_PROVIDER_LABELS = {"offline": "offline", "openai": "OpenAI-compatible", "ollama": "Ollama"}
#: the keyring entry an OpenAI-compatible key may be filed under (service "fluxgui")
API_KEY_KEYRING = "api-key:openai"


def api_key_for(provider: str) -> str | None:
    """The API key to use: ``OPENAI_API_KEY``, else the keyring; ``None`` for the offline
    provider and Ollama (which needs none) or when there is none."""
    if provider != "openai":
        return None
    return os.environ.get("OPENAI_API_KEY") or secrets.get_password(API_KEY_KEYRING)


def event_message(event: ChatEvent, number: int) -> Message | None:
    """A tool call or a tool output as the :class:`Message` a stored Agents SDK item of
    that kind becomes (``None`` for other events), so it is drawn like a stored one."""
    data = event.data or {}
    when = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if event.kind == "tool_call":
        args = data.get("arguments", "")
        if not isinstance(args, str):
            args = json.dumps(args, ensure_ascii=False)
        item = {
            "type": "function_call",
            "call_id": str(data.get("id") or ""),
            "name": str(data.get("name") or event.text or "tool"),
            "arguments": args,
        }
    elif event.kind == "tool_output":
        output = data.get("output", event.text)
        if not isinstance(output, str):
            output = json.dumps(output, ensure_ascii=False)
        item = {"type": "function_call_output", "call_id": str(data.get("id") or ""), "output": output}
    else:
        return None
    return from_item(number, item, when)


class _LiveTurn:
    """What a :class:`MessageDelegate` asks of its pane, for the running chat's tool
    cards: their pairs, and no turn numbers, token counts or store."""

    #: no store: the live turn's items are not stored ones (no encryption badges)
    store = None

    def __init__(self) -> None:
        self.pairs = ToolPairs()
        self.turn_tokens: dict[int, int] = {}

    def turn_of(self, _message: Message) -> int | None:
        return None


def new_session_id() -> str:
    """A fresh id for a chat in a new session: ``chat-<UTC time>``."""
    return "chat-" + datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")


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
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.setMinimumWidth(440)
        self._on_provider()

    def _on_provider(self) -> None:
        provider = self.provider.currentData()
        defaults = _default_models()
        previous = getattr(self, "_provider", None)
        # The model still the previous provider's default: the new provider's default.
        if previous is not None and self.model.text().strip() in ("", defaults.get(previous)):
            self.model.setText(defaults.get(provider, ""))
        self._provider = provider
        self.base_url.setEnabled(provider != "offline")
        placeholders = {
            "offline": "(not used)",
            "openai": "https://api.openai.com/v1",
            "ollama": "http://localhost:11434",
        }
        self.base_url.setPlaceholderText(placeholders.get(provider, ""))
        if provider == "openai":
            have = bool(api_key_for("openai"))
            self.key_note.setText(
                "API key: from OPENAI_API_KEY or the keyring"
                + (" (found)." if have else " (none found).")
                + " It is never saved in the settings."
            )
        elif provider == "ollama":
            self.key_note.setText("Ollama needs no API key.")
        else:
            self.key_note.setText("The offline agent answers deterministically, without a network.")

    def result_config(self) -> AgentConfig:
        from dataclasses import replace

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


class _SendKeys(QObject):
    """Ctrl+Return (or Ctrl+Enter) in the message box sends (not the window's action)."""

    def __init__(self, panel: ChatPanel) -> None:
        super().__init__(panel)
        self._panel = panel

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and isinstance(
            event, QKeyEvent
        ):
            mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and (
                mods == Qt.KeyboardModifier.ControlModifier
            ):
                if kind == QEvent.Type.ShortcutOverride:
                    event.accept()
                else:
                    self._panel.send()
                return True
        return False


class ChatPanel(QWidget):
    """Message box, Send/Stop, "Try on a copy", the streamed reply and an error line.

    Signals: ``delta(str)`` for each piece of reply text, ``finished(object)`` with the
    ``ChatResult``, ``failed(str)`` with the one-line error, ``stopped()`` after Stop,
    ``runningChanged(bool)``.
    """

    delta = Signal(str)
    finished = Signal(object)
    failed = Signal(str)
    stopped = Signal()
    runningChanged = Signal(bool)

    def __init__(self, window: MainWindow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from .settings import AgentSettings

        self._window = window
        self._bridge = window.bridge
        self._settings = AgentSettings(getattr(window.recent, "_settings", None))
        self._config: AgentConfig | None = None
        self._target: str | None = None  # the store the config belongs to
        self._running = False
        self._generation = 0
        self._streamed = ""
        self._origin: str | None = None  # the session the running chat was sent to
        self._copy = False
        #: a session to create with the next message ("New Session…"), else None
        self.new_session: str | None = None
        #: the last ChatResult (tests)
        self.last_result: Any = None

        # header: the agent, and its settings button
        self.agent_label = QLabel(self)
        self.agent_label.setTextFormat(Qt.TextFormat.PlainText)
        bold = self.agent_label.font()
        bold.setBold(True)
        self.agent_label.setFont(bold)
        self.agent_button = QPushButton("Agent…", self)
        self.agent_button.setToolTip("The agent's name, instructions, model and provider")
        self.agent_button.clicked.connect(self.edit_agent)
        head = QHBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.agent_label, 1)
        head.addWidget(self.agent_button, 0)

        # read-only notice
        self.readonly_bar = QFrame(self)
        self.readonly_bar.setObjectName("chatReadOnly")
        self.readonly_bar.setStyleSheet(
            "#chatReadOnly { background: #fff3cd; border: 1px solid #ffe69c; border-radius: 4px; }"
            "#chatReadOnly QLabel { color: #664d03; }"
        )
        self.readonly_label = QLabel(
            "The store is open read-only: chatting writes to it.", self.readonly_bar
        )
        self.readonly_label.setTextFormat(Qt.TextFormat.PlainText)
        self.readonly_label.setWordWrap(True)
        self.allow_button = QPushButton("Allow Editing", self.readonly_bar)
        self.allow_button.clicked.connect(lambda: self._window.set_editing(True))
        ro = QHBoxLayout(self.readonly_bar)
        ro.setContentsMargins(8, 6, 6, 6)
        ro.addWidget(self.readonly_label, 1)
        ro.addWidget(self.allow_button, 0)

        # the running chat's tool calls and outputs, drawn as the conversation draws them
        self._live = _LiveTurn()
        self.tool_model = MessageListModel(self)
        self.tool_view = MessageListView(self)
        self.tool_view.setObjectName("chatTools")
        self.tool_view.setModel(self.tool_model)
        self.tool_view.setItemDelegate(MessageDelegate(self.tool_view, self._live))  # type: ignore[arg-type]
        self.tool_view.setToolTip("Tools the agent called in this reply, and what they gave back")
        self.tool_view.hide()

        # the streamed reply
        self.reply = QPlainTextEdit(self)
        self.reply.setReadOnly(True)
        self.reply.setPlaceholderText("The agent's reply appears here as it is written.")
        self.reply.setObjectName("chatReply")

        self.status = QLabel(self)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.status.setWordWrap(True)

        self.error_label = QLabel(self)
        self.error_label.setObjectName("chatError")
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setWordWrap(True)
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.setStyleSheet("#chatError { color: #b02a37; }")
        self.error_label.hide()

        # the message box and its buttons
        self.message = QPlainTextEdit(self)
        self.message.setPlaceholderText("Message the agent… (Ctrl+Return sends)")
        self.message.setTabChangesFocus(True)
        self.message.setFixedHeight(self.fontMetrics().lineSpacing() * 4 + 14)
        self._keys = _SendKeys(self)
        self.message.installEventFilter(self._keys)
        self.new_button = QPushButton("New Session…", self)
        self.new_button.setToolTip("Chat in a new session of this store (its id is asked)")
        self.new_button.clicked.connect(self.ask_new_session)
        self.copy_box = QCheckBox("Try on a copy", self)
        self.copy_box.setToolTip(
            "Fork the session first and chat in the fork: the original is left unchanged"
        )
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setToolTip("Stop the reply: nothing is saved")
        self.stop_button.clicked.connect(self.stop)
        self.send_button = QPushButton("Send", self)
        self.send_button.setToolTip("Send the message (Ctrl+Return)")
        self.send_button.setDefault(True)
        self.send_button.clicked.connect(self.send)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.copy_box, 0)
        buttons.addWidget(self.new_button, 0)
        buttons.addStretch(1)
        buttons.addWidget(self.stop_button, 0)
        buttons.addWidget(self.send_button, 0)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(6)
        layout.addLayout(head)
        layout.addWidget(self.readonly_bar)
        layout.addWidget(self.tool_view, 1)
        layout.addWidget(self.reply, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.error_label)
        layout.addWidget(self.message)
        layout.addLayout(buttons)

        self.message.textChanged.connect(self._update_buttons)
        self.store_changed()

    # -- public API ----------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running

    @property
    def config(self) -> AgentConfig:
        """The agent's settings for the open store (defaults when none were saved)."""
        if self._config is None:
            from fluxgui.services.chat import AgentConfig

            self._config = AgentConfig()
        return self._config

    def set_config(self, config: AgentConfig) -> None:
        """Use ``config`` and remember it for the open store (never its API key)."""
        self._config = config
        if self._target is not None:
            self._settings.save(self._target, config.to_settings())
        self._update_header()

    def streamed_text(self) -> str:
        """The reply text received so far (the deltas, joined)."""
        return self._streamed

    def error_text(self) -> str:
        return self.error_label.text() if self.error_label.isVisible() else ""

    def store_changed(self) -> None:
        """The window opened (or reopened) a store: its agent settings, read-only notice."""
        target = self._window.store_target if self._window.store is not None else None
        if target != self._target:
            self._target = target
            self._config = None
            values = self._settings.load(target) if target is not None else None
            if values is not None:
                from fluxgui.services.chat import AgentConfig

                try:
                    self._config = AgentConfig.from_settings(values)
                except Exception:  # noqa: BLE001 - bad saved settings: the defaults
                    self._config = None
        self._update_header()
        self._update_buttons()

    def edit_agent(self) -> bool:
        """Open the agent's settings form; ``True`` when they were changed."""
        dialog = AgentDialog(self.config, self)
        try:
            if dialog.exec():
                self.set_config(dialog.result_config())
                return True
            return False
        finally:
            dialog.deleteLater()

    def send(self) -> bool:
        """Send the typed message to the agent in the open session (or a copy of it)."""
        if self._running:
            return False
        text = self.message.toPlainText().strip()
        if not text:
            return False
        store = self._window.store
        sid = self.new_session or self._window.current_session_id
        if store is None:
            self._show_error("No store is open.")
            return False
        if not store.can_write:
            self._update_buttons()
            self._show_error("The store is open read-only: allow editing to chat.")
            return False
        if sid is None:
            self._show_error("Select a session to chat in.")
            return False
        from dataclasses import replace

        from fluxgui.services.chat import chat

        config = replace(self.config, api_key=api_key_for(self.config.provider))
        self._generation += 1
        generation = self._generation
        self._streamed = ""
        self._origin = sid
        self._copy = self.copy_box.isChecked() and self.new_session is None
        self.error_label.clear()
        self.error_label.hide()
        self.reply.clear()
        self.clear_tools()
        self._set_status(
            f"Sending to {config.name} ({config.model}) in a copy of {sid}…"
            if self._copy
            else f"Sending to {config.name} ({config.model})…"
        )
        self._set_running(True)
        self._bridge.start(
            CHAT_KEY,
            chat(
                store,
                sid,
                text,
                config,
                on_event=lambda event, g=generation: self._on_event(g, event),
                copy=self._copy,
                branch=(
                    self._window.conversation.branch
                    if sid == self._window.current_session_id else None
                ),
            ),
            self._on_chat_done,
            self._on_chat_failed,
        )
        return True

    def stop(self) -> None:
        """Cancel the running chat: nothing it did is kept in the store."""
        if not self._running:
            return
        self._generation += 1
        self._bridge.cancel(CHAT_KEY)
        self._set_running(False)
        self._set_status("Stopped: nothing was saved.")
        self.stopped.emit()

    # -- internals -----------------------------------------------------------------

    def _on_event(self, generation: int, event: ChatEvent) -> None:
        if generation != self._generation:
            return
        kind = event.kind
        if kind == "text" and event.text:
            self._streamed += event.text
            cursor = self.reply.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(event.text)  # plain text: never markup
            self.reply.setTextCursor(cursor)
            self.reply.ensureCursorVisible()
            self.delta.emit(event.text)
        elif kind in ("tool_call", "tool_output"):
            m = event_message(event, self.tool_model.rowCount() + 1)
            if m is not None:
                self._live.pairs.add([m])
                self.tool_model.append([m])
                self.tool_view.show()
                self.tool_view.viewport().update()  # the call's header names its output
                self.tool_view.scrollToBottom()

    def tool_messages(self) -> tuple[Message, ...]:
        """The tool calls and outputs of the last chat, as shown."""
        return self.tool_model.messages

    def clear_tools(self) -> None:
        self.tool_model.clear()
        self._live.pairs.clear()
        self.tool_view.hide()

    def ask_new_session(self) -> bool:
        """Ask for a new session's id; the next message starts it."""
        sid, ok = QInputDialog.getText(
            self, "New Session", "The new session's id:", QLineEdit.EchoMode.Normal,
            self.new_session or new_session_id(),
        )
        if not ok or not sid.strip():
            return False
        self.start_new_session(sid.strip())
        return True

    def start_new_session(self, session_id: str | None) -> None:
        """Send the next message to a new session ``session_id`` (``None``: back to the
        open session)."""
        self.new_session = session_id
        self._update_header()
        self._update_buttons()
        if session_id is not None:
            self.message.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_chat_done(self, result: ChatResult) -> None:
        if not self._running:
            return
        self._set_running(False)
        self.last_result = result
        reply = result.reply
        if not self._streamed and reply:  # a provider that does not stream
            self._on_event(self._generation, _TextEvent(reply))
        self.message.clear()
        added = result.added
        sid = result.session_id
        started = self.new_session is not None and sid == self.new_session
        where = f" to the copy {sid}" if self._copy else (f" to the new session {sid}" if started else "")
        self._set_status(f"Added {added} message{'' if added == 1 else 's'}{where}.")
        if started:  # it exists now: go on in it as in any open session
            self.new_session = None
            self._update_header()
        # A copy or a new session: the window switches to it.
        self._window.chat_finished(sid, copied=self._copy or started)
        self.finished.emit(result)

    def _on_chat_failed(self, error: Exception) -> None:
        if not self._running:
            return
        self._set_running(False)
        from .window import describe_error

        self._set_status("")
        self._show_error(describe_error(error))  # the typed message stays for a retry
        self.failed.emit(self.error_label.text())

    def _show_error(self, text: str) -> None:
        self.error_label.setText(" ".join(text.split()))
        self.error_label.show()

    def _set_status(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def _set_running(self, running: bool) -> None:
        if running == self._running:
            return
        self._running = running
        self._update_buttons()
        self.runningChanged.emit(running)

    def _update_header(self) -> None:
        try:
            c = self.config
        except ImportError:  # the chat service is not installed
            self.agent_label.setText("Chat is not available")
            return
        if c.provider == "offline":
            text = f"{c.name} · offline model"
        else:
            provider = _PROVIDER_LABELS.get(c.provider, c.provider)
            text = f"{c.name} · {c.model} · {provider}"
        if self.new_session is not None:
            text += f" · new session {self.new_session}"
        self.agent_label.setText(text)
        self.agent_label.setToolTip(
            f"Temperature {c.temperature}" + (f"\nBase URL: {c.base_url}" if c.base_url else "")
        )

    def _update_buttons(self) -> None:
        store = self._window.store
        writable = store is not None and store.can_write
        self.readonly_bar.setVisible(store is not None and not writable)
        has_text = bool(self.message.toPlainText().strip())
        self.send_button.setEnabled(writable and has_text and not self._running)
        self.stop_button.setEnabled(self._running)
        self.copy_box.setEnabled(not self._running and self.new_session is None)
        self.new_button.setEnabled(writable and not self._running)
        self.agent_button.setEnabled(not self._running)


class _TextEvent:
    """A stand-in text event for a reply that arrived whole."""

    kind = "text"
    data = None

    def __init__(self, text: str) -> None:
        self.text = text
