"""Opening a Conversations store: the base URL, the ids to list, the key, the client.

Opening sends nothing: the API has no cheap call to check a key with, so a refused key
or an unreachable server shows on the first read (the listing), in one line.
"""

from __future__ import annotations

from fluxgui.core.errors import TargetError
from fluxgui.core.ports import OpenOptions
from fluxgui.core.quiet import quietly

from ..handle import OpenStore
from .client import ConversationsBackend
from .store import conversations_store
from .target import base_url_of, conversation_ids, find_api_key, shown


async def open_conversations(target: str, options: OpenOptions) -> OpenStore:
    """The store ``target`` and ``options`` name (see :mod:`.target`)."""
    if options.create not in (None, "agents"):  # its items are the Agents SDK's
        raise TargetError(
            f"the Conversations API holds Agents SDK items, not the {options.create} format"
        )
    base_url = base_url_of(target, options.base_url)
    timeout = float(options.api_timeout)
    if timeout < 1:
        raise TargetError("--api-timeout must be at least 1 second")
    ids = conversation_ids(options.conversations, options.ids_file)
    # The keyring may block for seconds: never on the caller's (UI) thread.
    key = options.api_key if options.api_key else await quietly(lambda: find_api_key(None))
    backend = ConversationsBackend(key, base_url, writable=options.writable, timeout=timeout)
    return conversations_store(backend, shown(base_url), ids)
