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


class PaneTurns(PaneState):
    """The conversation pane's turn numbering (a part of the pane)."""

    def turn_of(self, m: Message) -> int | None:
        """The turn number a user message opens (``None`` for other messages, or while
        the turns before the loaded ones are being counted)."""
        if self._turn_base is None or not starts_turn(m):
            return None
        if self._turns is None:
            messages = self.model.messages
            numbers = turn_numbers(messages, self._turn_base)
            self._turns = {
                msg.id: n for msg, n in zip(messages, numbers, strict=True) if starts_turn(msg)
            }
        return self._turns.get(m.id)

    def _on_turns_reset(self) -> None:
        self._turns = None
        self._turn_base = None
        self._bridge.cancel(self._turns_key)
        messages = self.model.messages
        if not messages or self._at_start:
            self._turn_base = 0
        elif self._store is not None and self._session_id is not None:
            self._bridge.start(
                self._turns_key,
                self._count_turns(self._generation, self._store, self._session_id, messages[0]),
                self._on_turns_counted,
                # A store that cannot count them (a Conversations API): no numbers until
                # the session's start is loaded.
                lambda _error: None,
            )

    async def _count_turns(
        self, generation: int, store: Store, session_id: str, first: Message
    ) -> tuple[int, int]:
        return generation, await pages.turns_before(store, session_id, first.sort_key, branch=self.branch)

    def _on_rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        if first == 0 and self._turn_base is None and self._at_start:
            self._bridge.cancel(self._turns_key)  # the start is loaded: count from it
            self._turn_base, self._turns = 0, None
            return
        if first == 0 and self._turn_base is not None and self.model.rowCount() > last + 1:
            added = self.model.messages[first : last + 1]  # earlier messages, prepended
            if any(is_compaction(m) for m in added):
                # The count before them starts at an earlier compaction item (or the
                # session's start): ask the store again.
                self._on_turns_reset()
                return
            self._turn_base = max(0, self._turn_base - sum(starts_turn(m) for m in added))
        self._turns = None


    def _on_turns_counted(self, result: tuple[int, int]) -> None:
        generation, base = result
        if generation == self._generation:
            self._turn_base, self._turns = int(base), None
            self.view.viewport().update()

