"""The chat's reply and tool cards as the window shows them: as the agent sends them,
or, while View › Redact is on, through the window's redaction (the conversation pane's:
its placeholders are the window's, so a customer's address is the same ``[EMAIL_1]`` in
the reply as in the stored conversation). Turning Redact on or off shows them again.

What is kept is what the agent sent (``text``, the tool messages); only the screen
changes. The whole reply is redacted again at each delta, so a value that arrives in two
pieces is found once it is whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QTextCursor

from fluxgui.core.model import Message

if TYPE_CHECKING:
    from PySide6.QtWidgets import QPlainTextEdit

    from fluxgui.core.roles import PageTransform

    from ..conversation import MessageListModel
    from ..shown_ids import FollowedRedaction
    from .live_turn import LiveTurn


class ShownReply:
    """The reply box and the tool cards of a chat panel (see the module)."""

    def __init__(
        self, redaction: FollowedRedaction, reply: QPlainTextEdit, tools: MessageListModel, live: LiveTurn
    ) -> None:
        self._redaction = redaction
        self._reply = reply
        self._tools = tools
        self._live = live
        #: the reply as received (the deltas, joined)
        self.text = ""
        #: the tool calls and outputs as received
        self.tool_messages: list[Message] = []
        redaction.ids.changed.connect(self.again)

    def clear(self) -> None:
        """A new chat: nothing shown."""
        self.text, self.tool_messages = "", []
        self._reply.clear()
        self._tools.clear()
        self._live.pairs.clear()

    def add_text(self, delta: str) -> None:
        """A piece of the reply (plain text: never markup)."""
        self.text += delta
        transform = self._redaction.transform()
        if transform is None:
            cursor = self._reply.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(delta)
            self._reply.setTextCursor(cursor)
        else:
            self._show_text(transform)
        self._reply.ensureCursorVisible()

    def add_tool(self, message: Message) -> None:
        """A tool call or output the agent made."""
        self.tool_messages.append(message)
        transform = self._redaction.transform()
        shown = transform([message]) if transform is not None else [message]
        self._live.pairs.add(shown)
        self._tools.append(shown)

    def again(self) -> None:
        """Show the reply and the tool cards again, as the window shows text now."""
        transform = self._redaction.transform()
        if transform is None:
            self._reply.setPlainText(self.text)
        else:
            self._show_text(transform)
        shown = list(self.tool_messages)
        if transform is not None and shown:
            shown = transform(shown)
        self._live.pairs.clear()
        self._live.pairs.add(shown)
        self._tools.set_messages(shown)

    def _show_text(self, transform: PageTransform) -> None:
        said = Message(id=0, role="assistant", kind="message", text=self.text)
        self._reply.setPlainText(transform([said])[0].text if self.text else "")
        cursor = self._reply.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        self._reply.setTextCursor(cursor)
