"""Single items of OpenAI conversations edited, as far as the API allows: it deletes an
item and appends new ones, and can neither change an item nor put one between others.

* **Delete** items (``items.delete`` each), **pop** the last one (the SDK's
  ``pop_item``): the items are read first, for undo (which puts them back only when they
  were the conversation's last ones: see :mod:`.writer`).
* **Add** an item at the end ("Add a message").
* A change of an item, or an insertion between others, is refused with one sentence.
"""

from __future__ import annotations

from typing import Any

from fluxgui.core.changes import Change, Where
from fluxgui.core.errors import Conflict, FluxguiError, InvalidItem, ReadOnlyError, show_id
from fluxgui.core.items import MESSAGE_ROLES, validate_item
from fluxgui.core.model import Message, message_to_item

from .items import for_conversation, message_id
from .writes import ItemWrites, change_rows


class ConversationsEditor:
    """Items removed and appended (see the module text)."""

    #: items are removed and appended, not changed nor put between others
    in_place = False

    def __init__(self, writes: ItemWrites) -> None:
        self.writes = writes
        self.place = writes.place

    def _not_editable(self) -> FluxguiError:
        return ReadOnlyError(
            f"{self.place.target}: the Conversations API cannot change an item or put one "
            "between others (it appends, and deletes items)"
        )

    def check_editable(self) -> None:
        """Writable is enough: items can be deleted and appended (not changed)."""
        self.place.check_writable()

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
        """Refused (the item is checked first, read-only said first)."""
        self.edit_values(spec, original=original)
        self.place.check_writable()
        raise self._not_editable()

    async def rewrite_messages(
        self, session_id: str, *, delete: list[int], insert_after: list[tuple[int, dict[str, Any]]],
        label: str, move_before: list[tuple[int, int]] | None = None,
    ) -> Change:
        """Refused (the items are checked first, read-only said first): items cannot be
        put between others."""
        for _anchor, spec in insert_after:
            self.edit_values(spec)
        self.place.check_writable()
        raise self._not_editable()

    async def insert_message(
        self, session_id: str, spec: dict[str, Any], *, anchor: int | None = None, where: Where = "after"
    ) -> Change:
        """Add an item at the end (``anchor`` ``None``, or after the last item)."""
        item = self.edit_values(spec)["item"]
        self.place.check_writable()
        last = await self.writes.latest(session_id, 1)
        if anchor is not None and (where != "after" or not last or message_id(last[0]["id"]) != anchor):
            raise self._not_editable()
        made = await self.writes.append(session_id, [item])
        after = str(last[0]["id"]) if last else None
        return Change(session_id, "Add a message", added=tuple(change_rows(made, after)))

    async def delete_messages(self, session_id: str, message_ids: list[int]) -> Change:
        """Delete these items (``items.delete`` each). Undoable only when they were the
        conversation's last items."""
        self.place.check_writable()
        wanted = list(dict.fromkeys(int(i) for i in message_ids))
        items = await self.writes.items_of(session_id, wanted)
        latest = await self.writes.latest(session_id, len(items) + 1)
        newest = {message_id(str(i.get("id"))) for i in latest[: len(items)]}
        at_end = newest == set(wanted)
        after = str(latest[len(items)]["id"]) if at_end and len(latest) > len(items) else None
        ordered = [i for i in reversed(latest[: len(items)])] if at_end else items
        await self.writes.delete(session_id, [str(i["id"]) for i in ordered])
        n = len(ordered)
        label = f"Delete message {ordered[0]['id']}" if n == 1 else f"Delete {n} messages"
        return Change(session_id, label, removed=tuple(change_rows(ordered, after, at_end=at_end)))

    async def pop_message(self, session_id: str) -> Change:
        """Delete the last item, as the SDK's ``pop_item`` does."""
        self.place.check_writable()
        latest = await self.writes.latest(session_id, 2)
        if not latest:
            raise Conflict(f"conversation {show_id(session_id)} has no items to remove")
        after = str(latest[1]["id"]) if len(latest) > 1 else None
        await self.writes.delete(session_id, [str(latest[0]["id"])])
        return Change(session_id, "Remove the last message", removed=tuple(change_rows(latest[:1], after)))
