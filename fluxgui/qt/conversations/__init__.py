"""OpenAI Conversations stores in the window.

The Conversations API cannot list conversations, so the window lists the ones the user
names: in Open URL (its "OpenAI Conversations" entry), and with the "Add conversation…"
field above the session list, shown while such a store is open
(``traits.named_sessions``). The ids are remembered per server (its base URL,
never the key) in the settings, and listed again whenever that server is opened.

* :mod:`.remembered` — :class:`ConversationIds`, the ids kept in ``QSettings``, and
  :func:`with_remembered`, the open options with them;
* :mod:`.bar` — :class:`ConversationsBar` and :func:`install_conversations_bar`.
"""

from .bar import ConversationsBar, install_conversations_bar
from .remembered import ConversationIds, with_remembered

__all__ = [
    "ConversationIds",
    "ConversationsBar",
    "install_conversations_bar",
    "with_remembered",
]
