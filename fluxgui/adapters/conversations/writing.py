"""Writing OpenAI conversations, as ``OpenAIConversationsSession`` writes them; the store.

* **Append** (chat, ``add_messages``, "Add a message"): ``items.create`` in requests of at
  most 20 items; a write of several requests turns the client's retries off (a retried
  request whose answer was lost would add its items twice), as the SDK does.
* **Delete** an item (``items.delete``), **pop** the last one (the SDK's ``pop_item``),
  **clear** = delete the conversation (the SDK's ``clear_session``): the items are read
  first, for undo.
* **Undo** where the API allows: it can only append, and it names every item itself. So
  deleted items come back only when they were the conversation's last ones (and nothing
  was added since), appended again — with new ids; a cleared conversation comes back as
  a new conversation, under a new id. A deletion in the middle cannot be undone.
* **Import/copy**: a new conversation (the server names it), its items in requests of
  at most 20; a failure part-way deletes what was made.

Writes go through :func:`fluxgui.core.aio.run_to_end`: a cancelled caller never cuts one
in two. Items cannot be changed or put between others.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

from fluxgui.core.aio import run_to_end
from fluxgui.core.changes import Change, Row, SessionRow
from fluxgui.core.errors import Conflict, FluxguiError, InvalidItem, ReadOnlyError, show_id
from fluxgui.core.items import MESSAGE_ROLES, validate_item
from fluxgui.core.model import Message, message_to_item

from ..base import check_branch
from .items import BATCH, batches, dump, for_conversation, from_flux, from_message, message_id
from .reading import ConversationsReader

#: raw items kept for edits and undo, newest read last
KEEP_ITEMS = 20_000
#: what a Conversations change says about ids, for undo
NEW_IDS = "the Conversations API gives re-added items new ids"


def _label_id(cid: str) -> str:
    text = show_id(cid)
    return text if len(text) <= 40 else text[:38] + '…"'


class ConversationsStore(ConversationsReader):
    """The items of OpenAI conversations: reading (:class:`~.reading.ConversationsReader`)
    and writing (see the module text)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._raw: OrderedDict[int, dict[str, Any]] = OrderedDict()

    def _message(self, item: dict[str, Any]) -> Message:
        m = super()._message(item)
        self._raw[m.id] = item
        self._raw.move_to_end(m.id)
        while len(self._raw) > KEEP_ITEMS:
            self._raw.popitem(last=False)
        return m

    # -- what may be written -------------------------------------------------------

    def _not_editable(self) -> FluxguiError:
        return ReadOnlyError(
            f"{self.target}: the Conversations API cannot change an item or put one "
            "between others (it appends, and deletes items)"
        )

    def check_editable(self) -> None:
        """Writable is enough: items can be deleted and appended (not changed)."""
        self._check_writable()

    def check_importable(self) -> None:
        self._check_writable()

    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> dict[str, Any]:
        """An item (or a flux message dict, mapped), checked, as it would be written."""
        if not isinstance(spec, dict):
            raise InvalidItem(f"an item must be a JSON object, not {type(spec).__name__}")
        item = spec if "type" in spec or spec.get("role") in MESSAGE_ROLES else message_to_item(spec)
        raw = original.raw if original is not None else None
        validate_item(item, original_type=raw.get("type", "message") if isinstance(raw, dict) else None)
        return {"item": for_conversation(item)}

    async def update_message(
        self, session_id: str, message_id: int, spec: dict[str, Any], *, original: Message | None = None
    ) -> Change:
        self.edit_values(spec, original=original)
        self._check_writable()
        raise self._not_editable()

    # -- appending -----------------------------------------------------------------

    async def _append(self, cid: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Write ``items`` at the end; the items as created (with their new ids)."""
        parts = batches(items)

        async def write(client: Any) -> list[dict[str, Any]]:
            if len(parts) > 1:  # no retry that could add a batch twice, as the SDK
                client = client.with_options(max_retries=0)
            made: list[dict[str, Any]] = []
            for part in parts:
                page = await client.conversations.items.create(cid, items=part)
                made.extend(dump(i) for i in page.data)
            return made

        try:
            with self.backend.failing(cid):
                return await run_to_end(self.backend.run(write))
        finally:
            self.forget_listing()

    async def add_messages(
        self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None
    ) -> int:
        """Append flux message dicts (the SDK's item shapes) or items (as the SDK writes
        them). Nothing to add still checks that the conversation exists."""
        check_branch(self, branch)
        self._check_writable()
        items = [from_flux(m) for m in messages]
        if not items:
            await self.require_session(session_id)
            return 0
        for m in await self._append(session_id, items):
            self._message(m)
        return len(items)

    async def insert_message(
        self, session_id: str, spec: dict[str, Any], *, anchor: int | None = None,
        where: Literal["before", "after"] = "after",
    ) -> Change:
        """Add an item at the end (``anchor`` ``None``, or after the last item)."""
        item = self.edit_values(spec)["item"]
        self._check_writable()
        last = await self._latest(session_id, 1)
        if anchor is not None and (where != "after" or not last or message_id(last[0]["id"]) != anchor):
            raise self._not_editable()
        made = await self._append(session_id, [item])
        after = str(last[0]["id"]) if last else None
        return Change(session_id, "Add a message", added=tuple(self._change_rows(made, after)))

    # -- removing ------------------------------------------------------------------

    async def _latest(self, cid: str, n: int) -> list[dict[str, Any]]:
        """The latest ``n`` items, newest first (``SessionNotFound`` when unknown)."""
        items, _more = await self.fetch(cid, order="desc", limit=n)
        return items

    def _change_rows(self, items: list[dict[str, Any]], after: str | None, *, at_end: bool = True) -> list[Row]:
        """Change rows of items in stored order: each item as stored, and (for undo) the
        item the block followed and whether it was the conversation's end."""
        return [
            {"id": message_id(str(i.get("id"))), "item_id": i.get("id"), "item": i,
             "after": after, "at_end": at_end}
            for i in items
        ]

    async def _items_of(self, cid: str, message_ids: list[int]) -> list[dict[str, Any]]:
        """The stored items of these messages (read again when not kept)."""
        missing = [i for i in message_ids if i not in self._raw]
        if missing:
            async for _page in self.iter_messages(cid):
                if all(i in self._raw for i in missing):
                    break
        lost = [i for i in message_ids if i not in self._raw]
        if lost:
            raise Conflict(f"message {lost[0]} is not in conversation {show_id(cid)} any more")
        return [self._raw[i] for i in message_ids]

    async def _delete_items(self, cid: str, item_ids: list[str]) -> None:
        async def delete(client: Any) -> None:
            for item_id in item_ids:
                await client.conversations.items.delete(item_id, conversation_id=cid)

        try:
            with self.backend.failing(cid):
                await run_to_end(self.backend.run(delete))
        finally:
            self.forget_listing()

    async def delete_messages(self, session_id: str, message_ids: list[int]) -> Change:
        """Delete these items (``items.delete`` each). Undoable only when they were the
        conversation's last items."""
        self._check_writable()
        wanted = list(dict.fromkeys(int(i) for i in message_ids))
        items = await self._items_of(session_id, wanted)
        latest = await self._latest(session_id, len(items) + 1)
        newest = {message_id(str(i.get("id"))) for i in latest[: len(items)]}
        at_end = newest == set(wanted)
        after = str(latest[len(items)]["id"]) if at_end and len(latest) > len(items) else None
        ordered = [i for i in reversed(latest[: len(items)])] if at_end else items
        await self._delete_items(session_id, [str(i["id"]) for i in ordered])
        n = len(ordered)
        label = f"Delete message {ordered[0]['id']}" if n == 1 else f"Delete {n} messages"
        return Change(session_id, label, removed=tuple(self._change_rows(ordered, after, at_end=at_end)))

    async def pop_message(self, session_id: str) -> Change:
        """Delete the last item, as the SDK's ``pop_item`` does."""
        self._check_writable()
        latest = await self._latest(session_id, 2)
        if not latest:
            raise Conflict(f"conversation {show_id(session_id)} has no items to remove")
        after = str(latest[1]["id"]) if len(latest) > 1 else None
        await self._delete_items(session_id, [str(latest[0]["id"])])
        return Change(session_id, "Remove the last message", removed=tuple(self._change_rows(latest[:1], after)))

    async def clear_messages(self, session_id: str) -> Change:
        """Delete the conversation, as the SDK's ``clear_session`` does (its items read
        first, for undo): the session goes away."""
        self._check_writable()
        items = [m.raw for page in [p async for p in self.iter_messages(session_id)] for m in page]
        await self.require_session(session_id)

        async def delete(client: Any) -> None:
            await client.conversations.delete(session_id)

        try:
            with self.backend.failing(session_id):
                await run_to_end(self.backend.run(delete))
        finally:
            self.forget_listing()
        self.ids = [i for i in self.ids if i != session_id]
        return Change(
            session_id, f"Delete conversation {_label_id(session_id)}",
            removed=tuple(self._change_rows(items, None)),
            session_before=SessionRow(None, None), session_after=None,
        )

    async def delete_session(self, session_id: str) -> Change:
        """The same as :meth:`clear_messages`: a conversation is its items."""
        return await self.clear_messages(session_id)

    async def clear_session(self, session_id: str) -> int:
        return len((await self.clear_messages(session_id)).removed)

    # -- undo and redo -------------------------------------------------------------

    async def apply_change(self, change: Any) -> Any:
        """Write ``change`` (a redo) or an undo's inverse, where the API allows: see the
        module text. Returns what was written (new item ids, a new conversation id)."""
        self._check_writable()
        if not isinstance(change, Change) or (change.added and change.removed):
            raise Conflict("that change cannot be written to a conversation")
        cid = change.session_id
        if change.removed:  # a redo of a deletion
            if change.session_after is None and change.session_before is not None:
                return await self.clear_messages(cid)
            await self._delete_items(cid, [str(r["item_id"]) for r in change.removed])
            return change
        items = [for_conversation(dict(r["item"])) for r in change.added]
        if change.session_before is None and change.session_after is not None:
            new_id, _n = await self._create(items)
            made = [m.raw for page in [p async for p in self.iter_messages(new_id)] for m in page]
            return Change(
                new_id, f"Put back the conversation as {_label_id(new_id)} ({NEW_IDS}, and it a new conversation id)",
                added=tuple(self._change_rows(made, None)),
                session_before=None, session_after=SessionRow(None, None),
            )
        if not all(r.get("at_end") for r in change.added):
            raise Conflict(
                "this deletion cannot be undone: the Conversations API only appends, so the "
                "items would come back at the end, out of their place"
            )
        latest = await self._latest(cid, 1)
        now_last = str(latest[0]["id"]) if latest else None
        if now_last != change.added[0].get("after"):
            raise Conflict(
                f"conversation {show_id(cid)} changed since: the items cannot be put back "
                "where they were"
            )
        made = await self._append(cid, items)
        for m in made:
            self._message(m)
        n = len(made)
        label = f"Put back {'the message' if n == 1 else f'{n} messages'} at the end ({NEW_IDS})"
        return Change(cid, label, added=tuple(self._change_rows(made, now_last)))

    # -- new conversations ---------------------------------------------------------

    async def _create(self, items: list[dict[str, Any]]) -> tuple[str, int]:
        """A new conversation of ``items`` (the first 20 with it, then appended), listed
        first. A failure part-way deletes it again."""
        first, rest = items[:BATCH], items[BATCH:]

        async def create(client: Any) -> str:
            return str((await client.conversations.create(items=first)).id)

        async def write() -> str:
            with self.backend.failing():
                new_id = await self.backend.run(create)
            try:
                if rest:
                    await self._append(new_id, rest)
            except BaseException:
                with self.backend.failing(new_id):
                    await self.backend.run(lambda client: client.conversations.delete(new_id))
                raise
            return new_id

        try:
            new_id = await run_to_end(write())
        finally:
            self.forget_listing()
        self.ids.insert(0, new_id)  # the most recently made: listed first
        return new_id, len(items)

    async def import_session(
        self,
        session_id: str,
        pages: AsyncIterator[list[Message]] | Iterator[list[Message]],
        *,
        created_at: str | None = None,
        updated_at: str | None = None,
        rename: bool = False,
    ) -> tuple[str, int]:
        """A new conversation holding these messages, in order (the server names it:
        the id written is never ``session_id``; times are not kept, the API has none)."""
        self._check_writable()
        items: list[dict[str, Any]] = []
        if isinstance(pages, AsyncIterator):
            async for page in pages:
                items.extend(from_message(m) for m in page)
        else:
            for page in pages:
                items.extend(from_message(m) for m in page)
        return await self._create(items)
