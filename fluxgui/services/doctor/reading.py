"""Reading what the doctor looks at: every message of a session (of a branch), a page
at a time through the store's own paging."""

from __future__ import annotations

from fluxgui.core.model import Message
from fluxgui.core.roles import Store


async def read_messages(
    store: Store, session_id: str, *, branch: str | None = None, batch: int = 1000
) -> list[Message]:
    """All messages of ``session_id`` (``branch``: an Advanced store's; default main) in
    stored order, ``batch`` at a time (the window reads smaller pages: each is turned into
    Messages on its event loop); :class:`~fluxgui.core.errors.SessionNotFound` for an
    unknown session."""
    await store.reader.require_session(session_id)
    out: list[Message] = []
    async for page in store.reader.iter_messages(session_id, batch=batch, branch=branch):
        out.extend(page)
    return out
