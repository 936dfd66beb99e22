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

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtWidgets import QAbstractItemView

from fluxgui.core.model import Message, SessionInfo
from fluxgui.services import pages
from fluxgui.services.find import Found, find_in_session, first_found, page_around
from fluxgui.core.roles import Store

from .state import PaneState


@dataclass
class FindState:
    """The text looked for in the open session and what was found (``hits`` ``None``:
    not looked for yet); ``index`` is the current hit."""

    text: str = ""
    hits: list[Found] | None = None
    index: int | None = None
    searching: bool = False
    #: where to go once the hits are known: 1 the next, -1 the previous, 0 the nearest;
    #: ``None``: nowhere (landed already: the hits are only counted)
    pending: int | None = 0
    ids: dict[int, int] = field(default_factory=dict)  # message id → hit index

    def set_hits(self, hits: list[Found]) -> None:
        self.hits = hits
        self.ids = {h.message_id: i for i, h in enumerate(hits)}


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


class PaneFinding(PaneState):
    """The conversation pane's landing and finding (a part of the pane)."""

    _found: FindState
    _find_key: str

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
        self._begin(store, session_id, branch)
        self._set_find_text(find_text or "")
        self._found.searching = bool(find_text)
        self._update_find_bar()
        self._start(
            "around",
            self._load_around(self._generation, store, session_id, message_id, None, find_text or ""),
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
        info = await pages.known_session(store, session_id, branch=self.branch)
        if message_id is None and hits is None and text:
            # Land on the first hit as soon as it is found; the rest are counted after.
            first = await first_found(store, session_id, text, branch=self.branch)
            if first is not None:
                message_id, anchor = first.message_id, first.anchor
        elif message_id is None and hits:
            message_id, anchor = hits[0].message_id, hits[0].anchor
        elif message_id is not None and anchor is None and hits:
            anchor = next((h.anchor for h in hits if h.message_id == message_id), None)
        around = None
        if message_id is not None:
            around = await page_around(
                store, session_id, message_id, anchor=anchor, limit=self.page_size,
                branch=self.branch,
            )
        if around is None:
            messages = await pages.latest_messages(store, session_id, branch=self.branch, limit=self.page_size)
            landing = Landing(messages, None, len(messages) < self.page_size, True, hits)
        else:
            landing = Landing(around.messages, around.index, around.at_start, around.at_end, hits)
        await self._prepare(generation, landing.messages)
        return generation, info, landing

    def _on_landed(self, result: tuple[int, SessionInfo, Landing]) -> None:
        generation, info, landing = result
        if generation != self._generation:
            return
        self._settling = True
        try:
            self._show_landing(info, landing)
        finally:
            self._settling = False
        self._set_loading(None)
        found = self._found
        if found.text and found.hits is None and self._store is not None:
            # Landed: count every hit now (for "n of m" and F3), without moving.
            found.searching, found.pending = True, None
            self._bridge.start(
                self._find_key,
                self._find_all(self._generation, self._store, self._session_id, found.text),
                self._on_found,
                self._on_find_failed,
            )
        self._update_status()
        self._update_find_bar()
        assert self._session_id is not None
        self.loaded.emit(self._session_id)
        self._maybe_load_earlier()
        self._maybe_load_later()
        if self._catch_queued:
            self.catch_up()

    def _show_landing(self, info: SessionInfo, landing: Landing) -> None:
        self._window += 1
        self._info = info
        messages = landing.messages
        self._at_start, self._at_end = landing.at_start, landing.at_end
        known = info.count_exact
        if self._at_start:
            self._before = 0
        elif self._at_end and known:
            self._before = max(info.messages - len(messages), 0)
        else:
            self._before = None
        found = self._found
        if landing.hits is not None:
            found.searching = False
            found.set_hits(landing.hits)
        self.pairs.clear()
        self.pairs.add(messages)
        self.model.set_messages(messages)
        if not messages:
            self._set_current(None)
            self._show_placeholder("This session has no messages.")
            return
        self.view.set_placeholder("")
        self.view.doItemsLayout()
        row = landing.row if landing.row is not None else len(messages) - 1
        target = messages[row]
        if landing.row is not None and target.id in found.ids:
            found.index = found.ids[target.id]
        self._mark(target.id if landing.row is not None else None)
        self._select_row(row, center=landing.row is not None)

    def _select_row(self, row: int, *, center: bool) -> None:
        index = self.model.index(row, 0)
        selection = self.view.selectionModel()
        flag = selection.SelectionFlag
        if center:
            selection.setCurrentIndex(index, flag.ClearAndSelect)
            self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        else:
            self.view.scrollToBottom()
            selection.setCurrentIndex(index, flag.NoUpdate)

    def _mark(self, message_id: int | None) -> None:
        self.delegate.find_current = message_id
        self.view.viewport().update()

    # -- paging down -----------------------------------------------------------------

    @property
    def at_end(self) -> bool:
        """The last loaded message is the session's newest (live messages append)."""
        return self._at_end

    def load_later(self) -> bool:
        """Load the page after the last loaded message (when the newest is not loaded);
        ``False`` when there is none to load or a load is running."""
        store, sid = self._store, self._session_id
        if store is None or sid is None or self._at_end or self._loading is not None:
            return False
        last = self.model.message(self.model.rowCount() - 1)
        if last is None:
            return False
        self._start("later", self._load_later(self._generation, store, sid, last.sort_key))
        self._update_status()
        return True

    async def _load_later(
        self, generation: int, store: Store, session_id: str, anchor: tuple[Any, ...]
    ) -> tuple[str, int, None, list[Message]]:
        messages = await pages.messages_next_to(
            store, session_id, anchor, "forward", branch=self.branch, limit=self.page_size
        )
        await self._prepare(generation, messages)
        return "later", generation, None, messages

    def _show_later(self, messages: list[Message]) -> None:
        self._at_end = len(messages) < self.page_size
        self.pairs.add(messages)
        anchor = self.view.anchor()
        anchor.at_bottom = False  # rows come below: what the reader sees stays
        self.model.append(messages)
        self.view.relayout(keep=anchor)
        self.view.viewport().update()

    def _maybe_load_later(self, *_args: Any) -> None:
        if (
            self._loading is not None
            or self._settling
            or self._at_end
            or self._session_id is None
            or not self.model.rowCount()
        ):
            return
        bar = self.view.verticalScrollBar()
        if bar.maximum() - bar.value() <= max(self.view.viewport().height(), 300):
            self.load_later()

    def go_to_end(self) -> None:
        """Ctrl+End: the newest message, loading the latest page when it is not loaded."""
        if self._store is None or self._session_id is None:
            return
        if not self._at_end:
            text = self._found.text
            hits = self._found.hits
            self.show_session(self._store, self._session_id, self.branch)
            self._set_find_text(text)
            if hits is not None:
                self._found.set_hits(hits)
            return
        rows = self.model.rowCount()
        if rows:
            self._select_row(rows - 1, center=False)

    # -- finding ---------------------------------------------------------------------

    @property
    def find_text(self) -> str:
        """The text looked for in the conversation ("" none)."""
        return self._found.text

    @property
    def find_hits(self) -> list[Found] | None:
        """The messages containing :attr:`find_text` (``None``: not looked for yet)."""
        return self._found.hits

    @property
    def find_index(self) -> int | None:
        """The current hit among :attr:`find_hits`."""
        return self._found.index

    def open_find_bar(self) -> None:
        """Ctrl+F in the conversation: the find bar, with the text looked for."""
        self.find_bar.open(self._found.text or None)

    def find(self, text: str, *, backward: bool = False) -> None:
        """Go to the next (``backward``: previous) message containing ``text``; a new
        text first finds every message containing it and goes to the one nearest the
        current message (the latest one before it when looking back from the end)."""
        store, sid = self._store, self._session_id
        if store is None or sid is None or not text:
            return
        found = self._found
        if text == found.text and found.searching:
            found.pending = -1 if backward else 1  # once the hits are known
            return
        if text != found.text or found.hits is None:
            self._set_find_text(text)
            found = self._found
            found.searching = True
            found.pending = -1 if backward else 0
            self._update_find_bar()
            self._bridge.start(
                self._find_key,
                self._find_all(self._generation, store, sid, text),
                self._on_found,
                self._on_find_failed,
            )
            return
        self._step(-1 if backward else 1)

    def next_hit(self) -> None:
        """F3 / Enter: the next message containing the text looked for."""
        if self._found.text:
            self.find(self._found.text)

    def previous_hit(self) -> None:
        """Shift+F3 / Shift+Enter: the previous one."""
        if self._found.text:
            self.find(self._found.text, backward=True)

    def stop_finding(self) -> None:
        """No text looked for any more: no highlights (the find bar closed)."""
        self._bridge.cancel(self._find_key)
        self._set_find_text("")
        self._update_find_bar()

    async def _find_all(
        self, generation: int, store: Store, session_id: str, text: str
    ) -> tuple[int, str, list[Found]]:
        return generation, text, await find_in_session(store, session_id, text, branch=self.branch)

    def _on_found(self, result: tuple[int, str, list[Found]]) -> None:
        generation, text, hits = result
        found = self._found
        if generation != self._generation or text != found.text:
            return
        found.searching = False
        found.set_hits(hits)
        pending, found.pending = found.pending, 0
        if not hits:
            self._update_find_bar()
            return
        landed = self.delegate.find_current
        if landed is not None and landed in found.ids and found.index is None:
            found.index = found.ids[landed]
        if pending is None:  # counted after landing: stay where the reader is
            self._update_find_bar()
            return
        if pending == 0 or found.index is None:
            found.index = self._nearest(hits, backward=pending < 0)
            self._go_to(found.index)
        else:
            self._step(pending)

    def _on_find_failed(self, error: Exception) -> None:
        self._found.searching = False
        self._found.hits = None
        self.find_bar.set_result("finding failed")
        self.failed.emit(error)

    def _nearest(self, hits: list[Found], *, backward: bool) -> int:
        """The hit at or after the current message (looking back: at or before it); the
        last one when none comes after."""
        current = self.current_message()
        if current is None:
            return len(hits) - 1 if backward else 0
        if current.id in self._found.ids:
            return self._found.ids[current.id]
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
        hits = self._found.hits
        if not hits:
            self._update_find_bar()
            return
        index = self._found.index
        index = (0 if delta > 0 else len(hits) - 1) if index is None else (index + delta) % len(hits)
        self._found.index = index
        self._go_to(index)

    def _go_to(self, index: int) -> None:
        """Show hit ``index``: select it when loaded, else load the page around it."""
        found = self._found
        hit = found.hits[index] if found.hits else None
        if hit is None or self._store is None or self._session_id is None:
            return
        row = self.model.row_of(hit.message_id)
        if row is not None:
            self._mark(hit.message_id)
            self._select_row(row, center=True)
            self._update_find_bar()
            return
        text, hits = found.text, found.hits
        self._begin(self._store, self._session_id, self.branch)
        self._set_find_text(text)
        found = self._found
        found.set_hits(hits or [])
        found.index = index
        self._update_find_bar()
        self._start(
            "around",
            self._load_around(
                self._generation, self._store, self._session_id, hit.message_id, hit.anchor,
                text, hits,
            ),
        )

    def _set_find_text(self, text: str) -> None:
        self._found = FindState(text)
        self.delegate.find_text = text
        self.delegate.find_current = None
        self.view.viewport().update()

    def _update_find_bar(self) -> None:
        self.find_bar.set_result(_result_text(self._found) if self._found.text else "")
        if self._session_id is not None and self._loading is None:
            self._update_status()
