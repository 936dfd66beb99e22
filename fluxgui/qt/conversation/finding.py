"""Landing on a message and finding text in the conversation (a part of the pane).

:meth:`PaneFinding.open_at` opens a session at a message — the one a search hit names, or
the first one containing the text — loading the page around it
(:func:`fluxgui.services.find.page_around`), scrolled to it, selected, the text
highlighted in the cards. Pages after it load as the reader scrolls down (``load_later``),
pages before it as they scroll up; the live catch-up waits until the newest message is
loaded. :meth:`find` steps through the messages containing a text (found by
:func:`fluxgui.services.find.find_in_session` over the whole session, not only the loaded
pages); a hit outside the loaded messages loads the page around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QAbstractItemView

from fluxgui.core.model import Message, SessionInfo
from fluxgui.services import pages
from fluxgui.services.find import Found, find_in_session, first_found, page_around
from fluxgui.core.roles import Store

from .state import FindState, PaneState


@dataclass(frozen=True)
class Landing:
    """What a load around a message gave: the messages, the row to land on (``None``:
    none found, the latest page), whether they reach the start/end, the hits."""

    messages: list[Message]
    row: int | None
    at_start: bool
    at_end: bool
    hits: list[Found] | None


def _result_text(state: FindState) -> str:
    if state.searching:
        return "finding…"
    if state.hits is None:
        return ""
    if not state.hits:
        return "no match"
    if state.index is None:
        return f"{len(state.hits)} found"
    return f"{state.index + 1} of {len(state.hits)}"


class PaneFinding:
    """The conversation pane's landing and finding (a part of the pane)."""

    def __init__(self, pane: PaneState) -> None:
        self.pane = pane
        #: the text looked for and what was found
        self.found = FindState()
        #: the bridge key of the find (a new one cancels the one running)
        self.key = f"{pane._key}:find"

    # -- landing ---------------------------------------------------------------------

    def open_at(
        self,
        store: Store,
        session_id: str,
        message_id: int | None = None,
        find_text: str | None = None,
        branch: str | None = None,
    ) -> None:
        """Show ``session_id`` at message ``message_id`` (``None``: the first message
        containing ``find_text``), selected and scrolled to, with ``find_text``
        highlighted; Enter/F3 then step through the messages containing it. Without a
        message to land on, the latest page is shown (as :meth:`show_session`)."""
        self.pane._begin(store, session_id, branch)
        self.set_find_text(find_text or "")
        self.found.searching = bool(find_text)
        self.update_find_bar()
        self.pane.paging.start(
            "around",
            self._load_around(self.pane._generation, store, session_id, message_id, None, find_text or ""),
        )

    async def _load_around(
        self,
        generation: int,
        store: Store,
        session_id: str,
        message_id: int | None,
        anchor: tuple[Any, ...] | None,
        text: str,
        hits: list[Found] | None = None,
    ) -> tuple[int, SessionInfo, Landing]:
        info = await pages.known_session(store, session_id, branch=self.pane.branch)
        if message_id is None and hits is None and text:
            # Land on the first hit as soon as it is found; the rest are counted after.
            first = await first_found(store, session_id, text, branch=self.pane.branch)
            if first is not None:
                message_id, anchor = first.message_id, first.anchor
        elif message_id is None and hits:
            message_id, anchor = hits[0].message_id, hits[0].anchor
        elif message_id is not None and anchor is None and hits:
            anchor = next((h.anchor for h in hits if h.message_id == message_id), None)
        around = None
        if message_id is not None:
            around = await page_around(
                store, session_id, message_id, anchor=anchor, limit=self.pane.page_size,
                branch=self.pane.branch,
            )
        if around is None:
            messages = await pages.latest_messages(store, session_id, branch=self.pane.branch, limit=self.pane.page_size)
            landing = Landing(messages, None, len(messages) < self.pane.page_size, True, hits)
        else:
            landing = Landing(around.messages, around.index, around.at_start, around.at_end, hits)
        await self.pane.paging.prepare(generation, landing.messages)
        return generation, info, landing

    def on_landed(self, result: tuple[int, SessionInfo, Landing]) -> None:
        generation, info, landing = result
        if generation != self.pane._generation:
            return
        self.pane._settling = True
        try:
            self._show_landing(info, landing)
        finally:
            self.pane._settling = False
        self.pane.paging.set_loading(None)
        found = self.found
        store, sid = self.pane._store, self.pane._session_id
        if found.text and found.hits is None and store is not None and sid is not None:
            # Landed: count every hit now (for "n of m" and F3), without moving.
            found.searching, found.pending = True, None
            self.pane._bridge.start(
                self.key,
                self._find_all(self.pane._generation, store, sid, found.text),
                self._on_found,
                self._on_find_failed,
            )
        self.pane._update_status()
        self.update_find_bar()
        assert self.pane._session_id is not None
        self.pane.loaded.emit(self.pane._session_id)
        self.pane.paging.maybe_load_earlier()
        self.maybe_load_later()
        if self.pane._catch_queued:
            self.pane.live.catch_up()

    def _show_landing(self, info: SessionInfo, landing: Landing) -> None:
        self.pane._window += 1
        self.pane._info = info
        messages = landing.messages
        self.pane._at_start, self.pane._at_end = landing.at_start, landing.at_end
        known = info.count_exact
        if self.pane._at_start:
            self.pane._before = 0
        elif self.pane._at_end and known:
            self.pane._before = max(info.messages - len(messages), 0)
        else:
            self.pane._before = None
        found = self.found
        if landing.hits is not None:
            found.searching = False
            found.set_hits(landing.hits)
        self.pane.pairs.clear()
        self.pane.pairs.add(messages)
        self.pane.model.set_messages(messages)
        if not messages:
            self.pane._set_current(None)
            self.pane._show_placeholder("This session has no messages.")
            return
        self.pane.view.set_placeholder("")
        self.pane.view.doItemsLayout()
        row = landing.row if landing.row is not None else len(messages) - 1
        target = messages[row]
        if landing.row is not None and target.id in found.ids:
            found.index = found.ids[target.id]
        self._mark(target.id if landing.row is not None else None)
        self._select_row(row, center=landing.row is not None)

    def _select_row(self, row: int, *, center: bool) -> None:
        index = self.pane.model.index(row, 0)
        selection = self.pane.view.selectionModel()
        flag = selection.SelectionFlag
        if center:
            selection.setCurrentIndex(index, flag.ClearAndSelect)
            self.pane.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        else:
            self.pane.view.scrollToBottom()
            selection.setCurrentIndex(index, flag.NoUpdate)

    def _mark(self, message_id: int | None) -> None:
        self.pane.delegate.find_current = message_id
        self.pane.view.viewport().update()

    # -- paging down -----------------------------------------------------------------

    @property
    def at_end(self) -> bool:
        """The last loaded message is the session's newest (live messages append)."""
        return self.pane._at_end

    def load_later(self) -> bool:
        """Load the page after the last loaded message (when the newest is not loaded);
        ``False`` when there is none to load or a load is running."""
        store, sid = self.pane._store, self.pane._session_id
        if store is None or sid is None or self.pane._at_end or self.pane._loading is not None:
            return False
        last = self.pane.model.message(self.pane.model.rowCount() - 1)
        if last is None:
            return False
        self.pane.paging.start("later", self._load_later(self.pane._generation, store, sid, last.sort_key))
        self.pane._update_status()
        return True

    async def _load_later(
        self, generation: int, store: Store, session_id: str, anchor: tuple[Any, ...]
    ) -> tuple[str, int, None, list[Message]]:
        messages = await pages.messages_next_to(
            store, session_id, anchor, "forward", branch=self.pane.branch, limit=self.pane.page_size
        )
        await self.pane.paging.prepare(generation, messages)
        return "later", generation, None, messages

    def show_later(self, messages: list[Message]) -> None:
        self.pane._at_end = len(messages) < self.pane.page_size
        self.pane.pairs.add(messages)
        anchor = self.pane.view.anchor()
        anchor.at_bottom = False  # rows come below: what the reader sees stays
        self.pane.model.append(messages)
        self.pane.view.relayout(keep=anchor)
        self.pane.view.viewport().update()

    def maybe_load_later(self, *_args: Any) -> None:
        if (
            self.pane._loading is not None
            or self.pane._settling
            or self.pane._at_end
            or self.pane._session_id is None
            or not self.pane.model.rowCount()
        ):
            return
        bar = self.pane.view.verticalScrollBar()
        if bar.maximum() - bar.value() <= max(self.pane.view.viewport().height(), 300):
            self.load_later()

    def go_to_end(self) -> None:
        """Ctrl+End: the newest message, loading the latest page when it is not loaded."""
        if self.pane._store is None or self.pane._session_id is None:
            return
        if not self.pane._at_end:
            text = self.found.text
            hits = self.found.hits
            self.pane.show_session(self.pane._store, self.pane._session_id, self.pane.branch)
            self.set_find_text(text)
            if hits is not None:
                self.found.set_hits(hits)
            return
        rows = self.pane.model.rowCount()
        if rows:
            self._select_row(rows - 1, center=False)

    # -- finding ---------------------------------------------------------------------

    @property
    def find_text(self) -> str:
        """The text looked for in the conversation ("" none)."""
        return self.found.text

    @property
    def find_hits(self) -> list[Found] | None:
        """The messages containing :attr:`find_text` (``None``: not looked for yet)."""
        return self.found.hits

    @property
    def find_index(self) -> int | None:
        """The current hit among :attr:`find_hits`."""
        return self.found.index

    def open_find_bar(self) -> None:
        """Ctrl+F in the conversation: the find bar, with the text looked for."""
        self.pane.find_bar.open(self.found.text or None)

    def find(self, text: str, *, backward: bool = False) -> None:
        """Go to the next (``backward``: previous) message containing ``text``; a new
        text first finds every message containing it and goes to the one nearest the
        current message (the latest one before it when looking back from the end)."""
        store, sid = self.pane._store, self.pane._session_id
        if store is None or sid is None or not text:
            return
        found = self.found
        if text == found.text and found.searching:
            found.pending = -1 if backward else 1  # once the hits are known
            return
        if text != found.text or found.hits is None:
            self.set_find_text(text)
            found = self.found
            found.searching = True
            found.pending = -1 if backward else 0
            self.update_find_bar()
            self.pane._bridge.start(
                self.key,
                self._find_all(self.pane._generation, store, sid, text),
                self._on_found,
                self._on_find_failed,
            )
            return
        self._step(-1 if backward else 1)

    def next_hit(self) -> None:
        """F3 / Enter: the next message containing the text looked for."""
        if self.found.text:
            self.find(self.found.text)

    def previous_hit(self) -> None:
        """Shift+F3 / Shift+Enter: the previous one."""
        if self.found.text:
            self.find(self.found.text, backward=True)

    def stop_finding(self) -> None:
        """No text looked for any more: no highlights (the find bar closed)."""
        self.pane._bridge.cancel(self.key)
        self.set_find_text("")
        self.update_find_bar()

    async def _find_all(
        self, generation: int, store: Store, session_id: str, text: str
    ) -> tuple[int, str, list[Found]]:
        return generation, text, await find_in_session(store, session_id, text, branch=self.pane.branch)

    def _on_found(self, result: tuple[int, str, list[Found]]) -> None:
        generation, text, hits = result
        found = self.found
        if generation != self.pane._generation or text != found.text:
            return
        found.searching = False
        found.set_hits(hits)
        pending, found.pending = found.pending, 0
        if not hits:
            self.update_find_bar()
            return
        landed = self.pane.delegate.find_current
        if landed is not None and landed in found.ids and found.index is None:
            found.index = found.ids[landed]
        if pending is None:  # counted after landing: stay where the reader is
            self.update_find_bar()
            return
        if pending == 0 or found.index is None:
            found.index = self._nearest(hits, backward=pending < 0)
            self._go_to(found.index)
        else:
            self._step(pending)

    def _on_find_failed(self, error: Exception) -> None:
        self.found.searching = False
        self.found.hits = None
        self.pane.find_bar.set_result("finding failed")
        self.pane.failed.emit(error)

    def _nearest(self, hits: list[Found], *, backward: bool) -> int:
        """The hit at or after the current message (looking back: at or before it); the
        last one when none comes after."""
        current = self.pane.current_message()
        if current is None:
            return len(hits) - 1 if backward else 0
        if current.id in self.found.ids:
            return self.found.ids[current.id]
        key = tuple(current.sort_key)
        try:
            if backward:
                before = [i for i, h in enumerate(hits) if h.anchor <= key]
                return before[-1] if before else len(hits) - 1
            after = [i for i, h in enumerate(hits) if h.anchor >= key]
            return after[0] if after else len(hits) - 1
        except TypeError:  # keys that do not compare (a time missing): from the start
            return 0

    def _step(self, delta: int) -> None:
        hits = self.found.hits
        if not hits:
            self.update_find_bar()
            return
        index = self.found.index
        index = (0 if delta > 0 else len(hits) - 1) if index is None else (index + delta) % len(hits)
        self.found.index = index
        self._go_to(index)

    def _go_to(self, index: int) -> None:
        """Show hit ``index``: select it when loaded, else load the page around it."""
        found = self.found
        hit = found.hits[index] if found.hits else None
        if hit is None or self.pane._store is None or self.pane._session_id is None:
            return
        row = self.pane.model.row_of(hit.message_id)
        if row is not None:
            self._mark(hit.message_id)
            self._select_row(row, center=True)
            self.update_find_bar()
            return
        text, hits = found.text, found.hits
        self.pane._begin(self.pane._store, self.pane._session_id, self.pane.branch)
        self.set_find_text(text)
        found = self.found
        found.set_hits(hits or [])
        found.index = index
        self.update_find_bar()
        self.pane.paging.start(
            "around",
            self._load_around(
                self.pane._generation, self.pane._store, self.pane._session_id, hit.message_id, hit.anchor,
                text, hits,
            ),
        )

    def set_find_text(self, text: str) -> None:
        self.found = FindState(text)
        self.pane.delegate.find_text = text
        self.pane.delegate.find_current = None
        self.pane.view.viewport().update()

    def update_find_bar(self) -> None:
        self.pane.find_bar.set_result(_result_text(self.found) if self.found.text else "")
        if self.pane._session_id is not None and self.pane._loading is None:
            self.pane._update_status()
