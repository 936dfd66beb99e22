"""Turn numbers in the conversation: each user message that opens a turn shows its
number, counted across pages (the turns before the first loaded message are counted by
the store, in the background)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex

from fluxgui.core.model import Message, is_compaction
from fluxgui.core.turns import starts_turn, turn_numbers
from fluxgui.core.roles import Store
from fluxgui.services import pages

from .state import PaneState


class PaneTurns:
    """The conversation pane's turn numbering (a part of the pane)."""

    def __init__(self, pane: PaneState) -> None:
        self.pane = pane

    def turn_of(self, m: Message) -> int | None:
        """The turn number a user message opens (``None`` for other messages, or while
        the turns before the loaded ones are being counted)."""
        if self.pane._turn_base is None or not starts_turn(m):
            return None
        if self.pane._turns is None:
            messages = self.pane.model.messages
            numbers = turn_numbers(messages, self.pane._turn_base)
            self.pane._turns = {
                msg.id: n for msg, n in zip(messages, numbers, strict=True) if starts_turn(msg)
            }
        return self.pane._turns.get(m.id)

    def on_reset(self) -> None:
        self.pane._turns = None
        self.pane._turn_base = None
        self.pane._bridge.cancel(self.pane._turns_key)
        messages = self.pane.model.messages
        if not messages or self.pane._at_start:
            self.pane._turn_base = 0
        elif self.pane._store is not None and self.pane._session_id is not None:
            self.pane._bridge.start(
                self.pane._turns_key,
                self._count_turns(self.pane._generation, self.pane._store, self.pane._session_id, messages[0]),
                self._on_turns_counted,
                # A store that cannot count them (a Conversations API): no numbers until
                # the session's start is loaded.
                lambda _error: None,
            )

    async def _count_turns(
        self, generation: int, store: Store, session_id: str, first: Message
    ) -> tuple[int, int]:
        return generation, await pages.turns_before(store, session_id, first.sort_key, branch=self.pane.branch)

    def on_rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        if first == 0 and self.pane._turn_base is None and self.pane._at_start:
            self.pane._bridge.cancel(self.pane._turns_key)  # the start is loaded: count from it
            self.pane._turn_base, self.pane._turns = 0, None
            return
        if first == 0 and self.pane._turn_base is not None and self.pane.model.rowCount() > last + 1:
            added = self.pane.model.messages[first : last + 1]  # earlier messages, prepended
            if any(is_compaction(m) for m in added):
                # The count before them starts at an earlier compaction item (or the
                # session's start): ask the store again.
                self.on_reset()
                return
            self.pane._turn_base = max(0, self.pane._turn_base - sum(starts_turn(m) for m in added))
        self.pane._turns = None


    def _on_turns_counted(self, result: tuple[int, int]) -> None:
        generation, base = result
        if generation == self.pane._generation:
            self.pane._turn_base, self.pane._turns = int(base), None
            self.pane.view.viewport().update()

