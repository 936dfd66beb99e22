"""The chat dock: send a message to an agent in the open session, see its reply stream.

:mod:`.panel` (:class:`ChatPanel`: message box, Send/Stop, the streamed reply, the
running chat's tool cards), :mod:`.agent_dialog` (the agent's settings form),
:mod:`.send_keys` (Ctrl+Return sends), :mod:`.live_turn` (what the message delegate asks
of the tool cards' pane). The chat itself is :func:`fluxgui.services.chat.chat`; live
events become messages in :mod:`fluxgui.services.chat_events`; the API key comes from
:func:`fluxgui.services.credentials.api_key_for_async`.
"""

from fluxgui.services.chat_events import event_message, new_session_id
from fluxgui.services.credentials import API_KEY_KEYRING, api_key_for

from .agent_dialog import AgentDialog
from .agent_fields import PROVIDERS
from .panel import CHAT_KEY, ChatPanel

__all__ = [
    "API_KEY_KEYRING",
    "CHAT_KEY",
    "PROVIDERS",
    "AgentDialog",
    "ChatPanel",
    "api_key_for",
    "event_message",
    "new_session_id",
]
