"""Whole OpenAI conversations written, as ``OpenAIConversationsSession`` writes them.

* **Append** (chat, ``add_messages``): the items at the end (:mod:`.writes`).
* **Clear** = delete the conversation (the SDK's ``clear_session``): its items are read
  first, for undo; the session goes away.
* **Undo** where the API allows: it can only append, and it names every item itself. So
  deleted items come back only when they were the conversation's last ones (and nothing
  was added since), appended again — with new ids; a cleared conversation comes back as
  a new conversation, under a new id. A deletion in the middle cannot be undone.
* **Import/copy**: a new conversation (the server names it), its items in requests of
  at most 20; a failure part-way deletes what was made.

Writes go through :func:`fluxgui.core.aio.run_to_end`: a cancelled caller never cuts one
in two.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fluxgui.core.aio import run_to_end
from fluxgui.core.changes import Change, SessionRow
from fluxgui.core.errors import Conflict, show_id
from fluxgui.core.model import Message
from fluxgui.core.roles import Pages

from .answers import conversation_id
from .items import BATCH, for_conversation, from_flux, from_message
from .writes import ItemWrites, change_rows

#: what a Conversations change says about ids, for undo
NEW_IDS = "the Conversations API gives re-added items new ids"


def _label_id(cid: str) -> str:
    text = show_id(cid)
    return text if len(text) <= 40 else text[:38] + '…"'


class ConversationsWriter:
    """Whole conversations appended to, deleted, made and put back (see the module
    text)."""

    def __init__(self, writes: ItemWrites) -> None:
        self.writes = writes
        self.place = writes.place
        self.backend = writes.place.backend
        self.reader = writes.reader
        self.known = writes.known

    def check_importable(self) -> None:
        """A new conversation needs only a store opened writable."""
        self.place.check_writable()

    async def _all_items(self, cid: str) -> list[dict[str, Any]]:
        """Every item of ``cid`` as stored (none when the server does not know it)."""
        return [m.raw for page in [p async for p in self.reader.iter_messages(cid)] for m in page]

    async def add_messages(
        self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None
    ) -> int:
        """Append flux message dicts (the SDK's item shapes) or items (as the SDK writes
        them). Nothing to add still checks that the conversation exists."""
        self.place.check_branch(branch)
        self.place.check_writable()
        items = [from_flux(m) for m in messages]
        if not items:
            await self.reader.require_session(session_id)
            return 0
        for m in await self.writes.append(session_id, items):
            self.known.message(m)
        return len(items)

    async def clear_messages(self, session_id: str) -> Change:
        """Delete the conversation, as the SDK's ``clear_session`` does (its items read
        first, for undo): the session goes away."""
        self.place.check_writable()
        items = await self._all_items(session_id)
        await self.reader.require_session(session_id)

        async def delete(client: Any) -> None:
            await client.conversations.delete(session_id)

        try:
            with self.backend.failing(session_id):
                await run_to_end(self.backend.run(delete))
        finally:
            self.known.forget()
        self.known.unlisted(session_id)
        return Change(
            session_id, f"Delete conversation {_label_id(session_id)}",
            removed=tuple(change_rows(items, None)),
            session_before=SessionRow(None, None), session_after=None,
        )

    async def delete_session(self, session_id: str) -> Change:
        """The same as :meth:`clear_messages`: a conversation is its items."""
        return await self.clear_messages(session_id)

    async def clear_session(self, session_id: str) -> int:
        return len((await self.clear_messages(session_id)).removed)

    async def created_change(self, session_id: str) -> Change:
        """The conversation as the change that made it (undone: deleted), read."""
        self.place.check_writable()
        await self.reader.require_session(session_id)
        items = await self._all_items(session_id)
        return Change(
            session_id, f"Write conversation {_label_id(session_id)}",
            added=tuple(change_rows(items, None)),
            session_before=None, session_after=SessionRow(None, None),
        )

    # -- undo and redo -------------------------------------------------------------

    async def apply_change(self, change: Any) -> Any:
        """Write ``change`` (a redo) or an undo's inverse, where the API allows: see the
        module text. Returns what was written (new item ids, a new conversation id)."""
        self.place.check_writable()
        if not isinstance(change, Change) or (change.added and change.removed):
            raise Conflict("that change cannot be written to a conversation")
        cid = change.session_id
        if change.removed:  # a redo of a deletion
            if change.session_after is None and change.session_before is not None:
                return await self.clear_messages(cid)
            await self.writes.delete(cid, [str(r["item_id"]) for r in change.removed])
            return change
        items = [for_conversation(dict(r["item"])) for r in change.added]
        if change.session_before is None and change.session_after is not None:
            new_id, _n = await self._create(items)
            made = await self._all_items(new_id)
            return Change(
                new_id, f"Put back the conversation as {_label_id(new_id)} ({NEW_IDS}, and it a new conversation id)",
                added=tuple(change_rows(made, None)),
                session_before=None, session_after=SessionRow(None, None),
            )
        if not all(r.get("at_end") for r in change.added):
            raise Conflict(
                "this deletion cannot be undone: the Conversations API only appends, so the "
                "items would come back at the end, out of their place"
            )
        latest = await self.writes.latest(cid, 1)
        now_last = str(latest[0]["id"]) if latest else None
        if now_last != change.added[0].get("after"):
            raise Conflict(
                f"conversation {show_id(cid)} changed since: the items cannot be put back "
                "where they were"
            )
        made = await self.writes.append(cid, items)
        for m in made:
            self.known.message(m)
        n = len(made)
        label = f"Put back {'the message' if n == 1 else f'{n} messages'} at the end ({NEW_IDS})"
        return Change(cid, label, added=tuple(change_rows(made, now_last)))

    # -- new conversations ---------------------------------------------------------

    async def _create(self, items: list[dict[str, Any]]) -> tuple[str, int]:
        """A new conversation of ``items`` (the first 20 with it, then appended), listed
        first. A failure part-way deletes it again."""
        first, rest = items[:BATCH], items[BATCH:]

        async def create(client: Any) -> str:
            return conversation_id(await client.conversations.with_raw_response.create(items=first))

        async def write() -> str:
            with self.backend.failing():
                new_id = await self.backend.run(create)
            try:
                if rest:
                    await self.writes.append(new_id, rest)
            except BaseException:
                with self.backend.failing(new_id):
                    await self.backend.run(lambda client: client.conversations.delete(new_id))
                raise
            return new_id

        try:
            new_id = await run_to_end(write())
        finally:
            self.known.forget()
        self.known.listed_first(new_id)  # the most recently made: listed first
        return new_id, len(items)

    async def import_session(
        self, session_id: str, pages: Pages, *, created_at: str | None = None,
        updated_at: str | None = None, rename: bool = False,
    ) -> tuple[str, int]:
        """A new conversation holding these messages, in order (the server names it:
        the id written is never ``session_id``; times are not kept, the API has none)."""
        self.place.check_writable()
        items: list[dict[str, Any]] = []
        if isinstance(pages, AsyncIterator):
            async for page in pages:
                items.extend(from_message(m) for m in page)
        else:
            for page in pages:
                items.extend(from_message(m) for m in page)
        return await self._create(items)
