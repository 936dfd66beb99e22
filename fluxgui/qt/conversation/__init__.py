"""The conversation pane: a session's messages as cards, paged, followed live.

One module per part (a newcomer's map):

* :mod:`.pane` — :class:`ConversationPane`, the widget; it holds one object per part:
* :mod:`.loading` (``pane.paging``) — the latest page, earlier pages on scroll, reloads
  that keep the place;
* :mod:`.finding` (``pane.finding``) — landing on a message, find in the conversation;
* :mod:`.live` (``pane.live``) — catching up with another writer (the algorithm is
  :func:`fluxgui.services.live.catch_up`);
* :mod:`.turns` (``pane.turns``) — turn numbers; :mod:`.menu` (``pane.menus``) — the
  context menu and copying;
* :mod:`.state` — what those parts see of the pane (:class:`~.state.PaneState`);
* :mod:`.model` — :class:`MessageListModel`; :mod:`.view` — :class:`MessageListView`;
* :mod:`.delegate` — :class:`MessageDelegate` (cards, bodies, sizes), :mod:`.header` — the
  header line and badges, :mod:`.geometry` — card geometry, :mod:`.icons` — role icons.
"""

from __future__ import annotations

from fluxgui.services.live import CATCH_UP_MAX, PAGE_SIZE, RELOAD_MAX

from .delegate import DOC_CACHE, MessageDelegate
from .header import CardHost
from .icons import role_icon
from .loading import SLICE
from .model import MESSAGE_ROLE, MessageListModel
from .pane import ConversationPane
from .state import GONE_TEXT
from .view import Anchor, MessageListView

__all__ = [
    "CATCH_UP_MAX",
    "DOC_CACHE",
    "GONE_TEXT",
    "MESSAGE_ROLE",
    "PAGE_SIZE",
    "RELOAD_MAX",
    "SLICE",
    "Anchor",
    "CardHost",
    "ConversationPane",
    "MessageDelegate",
    "MessageListModel",
    "MessageListView",
    "role_icon",
]
