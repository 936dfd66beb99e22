"""The running chat's tool cards: what a :class:`~fluxgui.qt.conversation.MessageDelegate`
asks of its pane, answered for messages that are not stored yet."""

from __future__ import annotations

from fluxgui.core.model import Message
from fluxgui.core.pairing import ToolPairs


class LiveTurn:
    """The pane a chat's tool cards are drawn for: their pairs (a call names its output),
    and no turn numbers, token counts or store."""

    #: no store: the live turn's items are not stored ones (no encryption badges)
    store = None

    def __init__(self) -> None:
        self.pairs = ToolPairs()
        self.turn_tokens: dict[int, int] = {}
        self.markers: dict[int, tuple[str, str]] = {}
        self.note_marks: dict[int, tuple[str, str]] = {}

    def turn_of(self, _message: Message) -> int | None:
        return None
