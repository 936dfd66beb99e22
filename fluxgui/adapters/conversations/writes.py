"""The API's writes on a conversation's items, which the editor and the writer share.

* **Append**: ``items.create`` in requests of at most 20 items; a write of several
  requests turns the client's retries off (a retried request whose answer was lost would
  add its items twice), as the SDK does.
* **Delete**: ``items.delete``, one item at a time.

Each goes through :func:`fluxgui.core.aio.run_to_end` (a cancelled caller never cuts one
in two) and makes the next listing read the conversations again. A change of this store
(:class:`~fluxgui.core.changes.Change`) holds each item as stored, and for undo the item
its block followed and whether the block was the conversation's end.
"""

from __future__ import annotations

from typing import Any

from fluxgui.core.aio import run_to_end
from fluxgui.core.changes import Row
from fluxgui.core.errors import Conflict, show_id

from .answers import item_page
from .items import batches, message_id
from .reader import ConversationsReader


class ItemWrites:
    """Items of a store's conversations appended and deleted (see the module text)."""

    def __init__(self, reader: ConversationsReader) -> None:
        self.reader = reader
        self.place = reader.place
        self.known = reader.known

    async def append(self, cid: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Write ``items`` at the end; the items as created (with their new ids)."""
        parts = batches(items)

        async def write(client: Any) -> list[dict[str, Any]]:
            if len(parts) > 1:  # no retry that could add a batch twice, as the SDK
                client = client.with_options(max_retries=0)
            made: list[dict[str, Any]] = []
            for part in parts:
                page, _more = item_page(
                    await client.conversations.items.with_raw_response.create(cid, items=part)
                )
                made.extend(page)
            return made

        backend = self.place.backend
        try:
            with backend.failing(cid):
                return await run_to_end(backend.run(write))
        finally:
            self.known.forget()

    async def delete(self, cid: str, item_ids: list[str]) -> None:
        """Delete these items (by item id)."""

        async def delete(client: Any) -> None:
            for item_id in item_ids:
                await client.conversations.items.delete(item_id, conversation_id=cid)

        backend = self.place.backend
        try:
            with backend.failing(cid):
                await run_to_end(backend.run(delete))
        finally:
            self.known.forget()

    async def latest(self, cid: str, n: int) -> list[dict[str, Any]]:
        """The latest ``n`` items, newest first (``SessionNotFound`` when unknown)."""
        items, _more = await self.reader.fetch(cid, order="desc", limit=n)
        return items

    async def items_of(self, cid: str, message_ids: list[int]) -> list[dict[str, Any]]:
        """The stored items of these messages (read again when not kept)."""
        known = self.known
        missing = [i for i in message_ids if known.item(i) is None]
        if missing:
            async for _page in self.reader.iter_messages(cid):
                if all(known.item(i) is not None for i in missing):
                    break
        items = [known.item(i) for i in message_ids]
        lost = [i for i, item in zip(message_ids, items, strict=True) if item is None]
        if lost:
            raise Conflict(f"message {lost[0]} is not in conversation {show_id(cid)} any more")
        return [item for item in items if item is not None]


def change_rows(items: list[dict[str, Any]], after: str | None, *, at_end: bool = True) -> list[Row]:
    """Change rows of items in stored order: each item as stored, and (for undo) the
    item the block followed and whether it was the conversation's end."""
    return [
        {"id": message_id(str(i.get("id"))), "item_id": i.get("id"), "item": i,
         "after": after, "at_end": at_end}
        for i in items
    ]
