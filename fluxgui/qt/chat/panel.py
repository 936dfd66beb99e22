"""The chat panel: send a message to an agent in the open session, see its reply stream.

The message goes through :func:`fluxgui.services.chat.chat` on the bridge under the key
``"chat"``; Stop cancels it (the service then writes nothing). Tool calls the agent makes
and their outputs appear as the conversation shows stored ones: the same message cards,
built from Agents SDK ``function_call``/``function_call_output`` items, paired by call
id. The reply and the error line are plain text: nothing here becomes markup.
"New Session…" chats into a session that does not exist yet.
The agent's settings (:mod:`.agent_dialog`) are remembered per store
(:class:`fluxgui.qt.settings.AgentSettings`); an API key never is: it comes from
``OPENAI_API_KEY`` or the keyring, looked up on a worker thread when the message is sent
(:func:`fluxgui.services.credentials.api_key_for_async`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from fluxgui.core.errors import ProviderKeyRefused
from fluxgui.core.model import Message
from fluxgui.core.text import plural
from fluxgui.services import credentials
from fluxgui.services.chat_events import event_message, new_session_id
from fluxgui.core.roles import Store

from ..conversation import MessageDelegate, MessageListModel, MessageListView
from ..dialogs.passwords import PasswordDialog
from ..errors import describe_error
from ..settings import AgentSettings
from ..flow import flow_row
from ..widgets import ElidedLabel, NoticeBar, stack
from .agent_dialog import PROVIDER_LABELS, AgentDialog
from .live_turn import LiveTurn
from .shown_reply import ShownReply
from .send_keys import SendKeys

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings

    from fluxgui.services.chat import AgentConfig, ChatEvent, ChatResult

    from ..bridge import AsyncBridge
    from ..conversation import ConversationPane
    from ..shell import Stores

#: the bridge key chats run under
CHAT_KEY = "chat"


async def _chat_with_key(
    store: Store,
    session_id: str,
    text: str,
    config: AgentConfig,
    *,
    on_event: Callable[[ChatEvent], None],
    copy: bool,
    branch: str | None,
    new: bool,
    key: str | None = None,
) -> ChatResult:
    """The chat, with the provider's API key looked up first (the keyring on a worker
    thread, never on the UI thread) unless ``key`` (one entered for this run) is given."""
    from fluxgui.services.chat import chat

    key = key or await credentials.api_key_for_async(config.provider)
    return await chat(
        store, session_id, text, replace(config, api_key=key),
        on_event=on_event, copy=copy, branch=branch, new=new,
    )


class ChatPanel(QWidget):
    """Message box, Send/Stop, "Try on a copy", the streamed reply and an error line.

    Signals: ``delta(str)`` for each piece of reply text, ``finished(object)`` with the
    ``ChatResult``, ``failed(str)`` with the one-line error, ``stopped()`` after Stop,
    ``runningChanged(bool)``.

    It is given what it uses: the bridge, the settings (the agent's, per store), the
    open store (``stores``: which, its target, Allow Editing), the conversation pane (its
    branch), the shown session (``shown()``), the doctor's question before a send
    (``confirm_send``) and what the window does once a chat added messages
    (``finished(session_id, copied=…)``).
    """

    delta = Signal(str)
    finished = Signal(object)
    failed = Signal(str)
    stopped = Signal()
    runningChanged = Signal(bool)

    def __init__(
        self, bridge: AsyncBridge, settings: QSettings, stores: Stores, pane: ConversationPane, *,
        shown: Callable[[], str | None], confirm_send: Callable[[str], bool], finished: Callable[..., None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._stores = stores
        self._pane = pane
        self._shown = shown
        self._confirm_send = confirm_send
        self._finished = finished
        self._settings = AgentSettings(settings)
        self._config: AgentConfig | None = None
        self._target: str | None = None  # the store the config belongs to
        self._running = False
        self._generation = 0
        self._origin: str | None = None  # the session the running chat was sent to
        self._copy = False
        #: a session to create with the next message ("New Session…"), else None
        self.new_session: str | None = None
        #: the last ChatResult (tests)
        self.last_result: Any = None

        # header: the agent, and its settings button
        # (elided in a narrow dock; the whole text in the tooltip)
        self.agent_label = ElidedLabel(self)
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

        # read-only notice (shown while the store is read-only: not dismissable)
        self.readonly_bar = NoticeBar("chatReadOnly", self, button="Allow Editing")
        self.readonly_bar.close_button.hide()
        self.readonly_label = self.readonly_bar.label
        self.readonly_label.setText("The store is open read-only: chatting writes to it.")
        assert self.readonly_bar.button is not None
        self.allow_button = self.readonly_bar.button
        self.allow_button.clicked.connect(lambda: self._stores.set_editing(True))

        # the running chat's tool calls and outputs, drawn as the conversation draws them
        self._live = LiveTurn()
        self.tool_model = MessageListModel(self)
        self.tool_view = MessageListView(self)
        self.tool_view.setObjectName("chatTools")
        self.tool_view.setModel(self.tool_model)
        self.tool_view.setItemDelegate(MessageDelegate(self.tool_view, self._live))
        self.tool_view.setToolTip("Tools the agent called in this reply, and what they gave back")
        self.tool_view.hide()

        # the streamed reply
        self.reply = QPlainTextEdit(self)
        self.reply.setReadOnly(True)
        self.reply.setPlaceholderText("The agent's reply appears here as it is written.")
        self.reply.setObjectName("chatReply")
        #: the reply and the tool cards as shown (View › Redact: redacted)
        self.shown_reply = ShownReply(pane.followed_redaction(), self.reply, self.tool_model, self._live)

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
        self._keys = SendKeys(self, self.send)
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
        # shown when the provider refused the API key: ask for another, send again
        self.key_button = QPushButton("Enter Another Key…", self)
        self.key_button.setToolTip("Enter an API key for this run (and, if you like, the keyring) and send again")
        self.key_button.clicked.connect(self.enter_key)
        self.key_button.hide()
        #: a key entered after a refusal (memory only), and whether to file it once it worked
        self._key: str | None = None
        self._remember_key = False
        # in a row that wraps in a narrow dock
        buttons = flow_row(self, [self.key_button, self.copy_box, self.new_button, self.stop_button,
                                  self.send_button])

        stack(
            self, (8, 8, 8, 8), 6, head, self.readonly_bar, (self.tool_view, 1), (self.reply, 1),
            self.status, self.error_label, self.message, buttons,
        )

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
        self._key, self._remember_key = None, False  # (a key entered was for the endpoint before)
        if self._target is not None:
            self._settings.save(self._target, config.to_settings())
        self._update_header()

    def streamed_text(self) -> str:
        """The reply text received so far (the deltas, joined)."""
        return self.shown_reply.text

    def error_text(self) -> str:
        return self.error_label.text() if self.error_label.isVisible() else ""

    def store_changed(self) -> None:
        """The window opened (or reopened) a store: its agent settings, read-only notice."""
        target = self._stores.target if self._stores.store is not None else None
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
        store = self._stores.store
        sid = self.new_session or self._shown()
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
        if not self._confirm_send(sid):  # the doctor found problems: ask
            return False
        config = self.config
        self._generation += 1
        generation = self._generation
        self._origin = sid
        self._copy = self.copy_box.isChecked() and self.new_session is None
        self.error_label.clear()
        self.error_label.hide()
        self.key_button.hide()
        self.clear_tools()
        self._set_status(
            f"Sending to {config.name} ({config.model}) in a copy of {sid}…"
            if self._copy
            else f"Sending to {config.name} ({config.model})…"
        )
        self._set_running(True)
        self._bridge.start(
            CHAT_KEY,
            _chat_with_key(
                store,
                sid,
                text,
                config,
                on_event=lambda event: self._on_event(generation, event),
                copy=self._copy,
                new=self.new_session is not None,
                key=self._key,
                branch=(
                    self._pane.branch
                    if sid == self._shown() else None
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
            self.shown_reply.add_text(event.text)  # plain text: never markup
            self.delta.emit(event.text)
        elif kind in ("tool_call", "tool_output"):
            m = event_message(event, self.tool_model.rowCount() + 1)
            if m is not None:
                self.shown_reply.add_tool(m)
                self.tool_view.show()
                self.tool_view.viewport().update()  # the call's header names its output
                self.tool_view.scrollToBottom()

    def tool_messages(self) -> tuple[Message, ...]:
        """The tool calls and outputs of the last chat, as shown."""
        return self.tool_model.messages

    def clear_tools(self) -> None:
        """A new chat: the reply and the tool cards cleared."""
        self.shown_reply.clear()
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
        if self._remember_key and self._key:  # the key entered worked: file it, as asked
            credentials.api_key_soon(self._key)
            self._remember_key = False
        reply = result.reply
        if not self.shown_reply.text and reply:  # a provider that does not stream
            from fluxgui.services.chat import ChatEvent

            self._on_event(self._generation, ChatEvent("text", reply))
        self.message.clear()
        added = result.added
        sid = result.session_id
        started = self.new_session is not None and sid == self.new_session
        where = f" to the copy {sid}" if self._copy else (f" to the new session {sid}" if started else "")
        self._set_status(f"Added {plural(added, 'message')}{where}.")
        if started:  # it exists now: go on in it as in any open session
            self.new_session = None
            self._update_header()
        # A copy or a new session: the window switches to it.
        self._finished(sid, copied=self._copy or started)
        self.finished.emit(result)

    def _on_chat_failed(self, error: Exception) -> None:
        if not self._running:
            return
        self._set_running(False)
        self._set_status("")
        self._show_error(describe_error(error))  # the typed message stays for a retry
        self.key_button.setVisible(isinstance(error, ProviderKeyRefused))
        self.failed.emit(self.error_label.text())

    def enter_key(self) -> bool:
        """Enter Another Key…: ask for the API key (the password prompt, with the keyring's
        offer) and send the typed message again with it; ``False`` when cancelled. The key
        stays in memory; it goes to the keyring once a chat with it worked, when asked."""
        dialog = PasswordDialog(self, self.config.base_url or "OpenAI", offer_remember=None, secret="API key")
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted or not dialog.password().strip():
                return False
            self._key, self._remember_key = dialog.password().strip(), dialog.remember_password()
        finally:
            dialog.deleteLater()
        return self.send()

    def _show_error(self, text: str) -> None:
        self.error_label.setText(" ".join(text.split()))
        self.error_label.show()

    def _set_status(self, text: str) -> None:
        self.status.setText(self._pane.ids.say(text))  # (View › Redact: a session it names too)
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
            provider = PROVIDER_LABELS.get(c.provider, c.provider)
            text = f"{c.name} · {c.model} · {provider}"
        if self.new_session is not None:
            text += f" · new session {self._pane.ids.text(self.new_session)}"
        self.agent_label.set_full_text(text, tooltip=False)
        self.agent_label.setToolTip(
            f"{text}\nTemperature {c.temperature}" + (f"\nBase URL: {c.base_url}" if c.base_url else "")
        )

    def _update_buttons(self) -> None:
        store = self._stores.store
        writable = store is not None and store.can_write
        self.readonly_bar.setVisible(store is not None and not writable)
        has_text = bool(self.message.toPlainText().strip())
        self.send_button.setEnabled(writable and has_text and not self._running)
        self.stop_button.setEnabled(self._running)
        self.copy_box.setEnabled(not self._running and self.new_session is None)
        self.new_button.setEnabled(writable and not self._running)
        self.agent_button.setEnabled(not self._running)
