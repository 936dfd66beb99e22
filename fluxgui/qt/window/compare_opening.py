"""Comparing from the window: which two sessions (or branches) View › Compare Sessions
puts side by side, and the fork origin it needs to know.

A forked session remembers where it came from (fluxgui's sidecar); once a session is
shown its origin is read, so that Compare can put a fork beside its origin and the
conversation can say "forked from …".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fluxgui.core.roles import Store
from fluxgui.services import pages
from fluxgui.core.errors import FluxguiError
from fluxgui.core.ports import MAIN

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QWidget

    from ..bridge import AsyncBridge
    from ..conversation import ConversationPane
    from ..shell import Stores

#: what Compare needs when it cannot tell what to compare
NOTHING_TO_COMPARE = (
    "select two sessions in the list (Ctrl+click) to compare them, open a "
    "fork to compare it with its origin, or a branch to compare it with main"
)


class CompareOpener:
    """Opens comparisons (View › Compare Sessions) and follows the shown session's fork
    origin. It is given what it uses: the dialogs' parent, the bridge, the conversation
    pane (its branch, its "forked from" line), the open store (``stores.store``), the
    shown session and the selected ones (callables) and where errors are shown."""

    def __init__(
        self,
        parent: QWidget,
        bridge: AsyncBridge,
        pane: ConversationPane,
        stores: Stores,
        *,
        shown: Callable[[], str | None],
        selected: Callable[[], list[str]],
        show_error: Callable[[BaseException], None],
    ) -> None:
        self._parent, self._bridge, self._pane, self._stores = parent, bridge, pane, stores
        self._shown, self._selected, self._show_error = shown, selected, show_error
        #: where the shown session was forked from (``session_id``, ``message_id``), if it was
        self.origin: dict[str, Any] | None = None
        pane.ids.changed.connect(self._say_origin)  # (View › Redact: its id redacted or not)

    def find_origin(self, session_id: str) -> None:
        """``session_id`` is shown: read where it was forked from (in the background)."""
        store = self._stores.store
        if store is not None:
            self._bridge.start("origin", self._origin_of(store, session_id), self._show_origin)

    @staticmethod
    async def _origin_of(store: Store, session_id: str) -> tuple[str, dict[str, Any] | None]:
        return session_id, await pages.fork_origin(store, session_id)

    def _show_origin(self, result: tuple[str, dict[str, Any] | None]) -> None:
        session_id, origin = result
        if session_id != self._shown():
            return
        self.origin = origin if isinstance(origin, dict) else None
        self._say_origin()

    def _say_origin(self) -> None:
        """The conversation's "forked from" line (its id as the window shows ids)."""
        if self.origin is not None and self._pane.session_id is not None:
            origin = self._pane.ids.text(str(self.origin["session_id"]))
            self._pane.set_origin(f"forked from {origin} at message {self.origin['message_id']}")
        else:
            self._pane.set_origin(None)

    def compare_sessions(self) -> object | None:
        """Compare two sessions side by side: the two selected in the list, the open
        session and the one it was forked from, or the open session's branch and main.
        Returns the (non-modal) dialog."""
        from ..compare import open_compare

        store = self._stores.store
        if store is None:
            return None
        ids = self._selected()
        shown = self._shown()
        shown_branch = self._pane.branch
        if len(ids) == 2:
            a, b = ids
        elif len(ids) == 1 and ids[0] == shown and shown_branch not in (None, MAIN):
            # An AdvancedSQLiteSession session shown on another branch: main against it.
            return open_compare(
                self._parent, self._bridge, store, ids[0], ids[0], branch_a=MAIN, branch_b=shown_branch,
                redaction=self._pane.followed_redaction(),
            )
        elif len(ids) == 1 and self.origin is not None and ids[0] == shown:
            a, b = str(self.origin["session_id"]), ids[0]
        else:
            self._show_error(FluxguiError(NOTHING_TO_COMPARE))
            return None
        return open_compare(self._parent, self._bridge, store, a, b, redaction=self._pane.followed_redaction())
