"""What a store answers for a capability it lacks: each method refuses, with the reason.

A store declares what it can do in its :attr:`~fluxgui.adapters.base.Store.capabilities`;
callers ask that first. The methods of a capability a format lacks still exist (the
:class:`~fluxgui.core.ports.SessionStore` protocol has them all) and raise: edits
:class:`~fluxgui.core.errors.ReadOnlyError` (read-only first, else why this kind of store
cannot), branches and token usage :class:`~fluxgui.core.errors.Unsupported`. A format that
has a capability overrides its methods (the SQL formats' edits:
:class:`fluxgui.adapters.sql.store.SqlStore`; branches and usage:
:class:`fluxgui.adapters.sql.advanced.AdvancedStore`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from fluxgui.core.errors import FluxguiError, ReadOnlyError, Unsupported, show_id
from fluxgui.core.model import Message
from fluxgui.core.ports import MAIN

if TYPE_CHECKING:  # annotations only
    from fluxgui.core.branches import BranchChange, BranchInfo, TurnInfo, TurnUsage, UsageTotals
    from fluxgui.core.changes import Change, Where
    from fluxgui.core.structure import StructureReport


def check_branch(store: Refusals, branch: str | None) -> None:
    """Refuse a branch other than ``main`` for a store without branches."""
    if branch is not None and branch != MAIN:
        raise Unsupported(
            f"{store.target} has no branches (only AdvancedSQLiteSession stores do): "
            f"there is no branch {show_id(branch)}"
        )


class Refusals(ABC):
    """The refusing defaults :class:`~fluxgui.adapters.base.Store` inherits (see the
    module text)."""

    #: the store as it may be shown (secrets hidden)
    target: str
    #: format name shown to users
    format: str

    @abstractmethod
    def _check_writable(self) -> None:
        """Raise :class:`ReadOnlyError` unless the store was opened writable."""

    # -- single-message edits (capabilities ``edit``, ``clear``, ``fork``) -----------
    # A format without them refuses each edit: read-only first, else the reason it
    # cannot (see :meth:`_not_editable`). The SQL formats edit (``SqlStore``).

    def _not_editable(self) -> FluxguiError:
        """The error for an edit this kind of store cannot make."""
        return ReadOnlyError(f"{self.target}: this kind of store cannot be edited")

    def check_editable(self) -> None:
        """Raise the reason this store cannot be edited now (read-only, unsupported)."""
        self._check_writable()
        raise self._not_editable()

    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> dict[str, Any]:
        """The stored column values for a message given as a dict, validated: a flux
        message (``role``, ``content``, ``metadata``) or, for item stores, an item."""
        raise self._not_editable()

    def _refuse_edit(self) -> FluxguiError:
        # read-only says so first (check_editable raises); else why it cannot
        self.check_editable()
        return self._not_editable()

    async def clear_messages(self, session_id: str) -> Change:
        """Remove every message of a session; the session itself stays where it can."""
        raise self._refuse_edit()

    async def delete_session(self, session_id: str) -> Change:
        """Remove a session and its messages."""
        raise self._refuse_edit()

    async def delete_messages(self, session_id: str, message_ids: list[int]) -> Change:
        """Remove these messages of a session."""
        raise self._refuse_edit()

    async def pop_message(self, session_id: str) -> Change:
        """Remove the session's last message (the Agents SDK's ``pop_item``)."""
        raise self._refuse_edit()

    async def update_message(
        self, session_id: str, message_id: int, spec: dict[str, Any], *, original: Message | None = None
    ) -> Change:
        """Replace one message with ``spec`` (see :meth:`edit_values`)."""
        self.edit_values(spec, original=original)
        raise self._refuse_edit()

    async def insert_message(
        self,
        session_id: str,
        spec: dict[str, Any],
        *,
        anchor: int | None = None,
        where: Where = "after",
    ) -> Change:
        """Insert a message before or after the message ``anchor`` (``None``: at the end)."""
        self.edit_values(spec)
        raise self._refuse_edit()

    async def rewrite_messages(
        self,
        session_id: str,
        *,
        delete: list[int],
        insert_after: list[tuple[int, dict[str, Any]]],
        label: str,
        move_before: Sequence[tuple[int, int]] = (),
    ) -> Change:
        """Delete some messages, insert others right after given ones and move some right
        before others, as one change."""
        for _anchor, spec in insert_after:
            self.edit_values(spec)
        raise self._refuse_edit()

    async def fork_session(
        self,
        session_id: str,
        at_message_id: int,
        new_id: str | None = None,
        *,
        branch: str | None = None,
        drop_unreadable: bool = False,
    ) -> Any:
        """Fork: a new session holding the conversation (of ``branch``) up to and
        including ``at_message_id``, named ``new_id`` (default ``<id>-fork``…);
        ``drop_unreadable``: leave out encrypted items no key opens (when others open)."""
        check_branch(self, branch)
        raise self._refuse_edit()

    async def apply_change(self, change: Any) -> Any:
        """Write a change again (redo) or its ``inverse()`` (undo), if it still fits."""
        raise self._refuse_edit()

    # -- branches and usage: declared by :attr:`capabilities` (``branches``, ``usage``) --

    def _unsupported(self, what: str) -> Unsupported:
        return Unsupported(
            f"{self.target} has no {what}: only AdvancedSQLiteSession stores keep them "
            f"({self.format} format)"
        )

    async def list_branches(self, session_id: str, *, current: str | None = None) -> list[BranchInfo]:
        """The session's branches (``current`` marked; default ``main``)."""
        raise self._unsupported("branches")

    async def branch_exists(self, session_id: str, branch: str) -> bool:
        """Whether the session has ``branch`` (every store has ``main``)."""
        return branch == MAIN

    async def conversation_turns(self, session_id: str, *, branch: str | None = None) -> list[TurnInfo]:
        """The user turns of a branch: the numbers to branch from."""
        raise self._unsupported("branches")

    async def create_branch_from_turn(
        self, session_id: str, turn_number: int, branch_name: str | None = None,
        *, branch: str | None = None,
    ) -> BranchChange:
        """Make a branch holding the items of ``branch`` before user turn ``turn_number``."""
        raise self._unsupported("branches")

    async def delete_branch(
        self, session_id: str, branch_id: str, *, current: str | None = None
    ) -> BranchChange:
        """Delete a branch (not ``main``, not ``current``)."""
        raise self._unsupported("branches")

    async def structure_report(self, session_id: str) -> StructureReport:
        """The session's ``message_structure`` rows as the doctor checks them."""
        raise self._unsupported("branch structure")

    async def turn_usage(self, session_id: str, branch: str | None = None) -> list[TurnUsage]:
        """Token usage of each user turn of a branch."""
        raise self._unsupported("token usage")

    async def branch_usage(self, session_id: str, branch: str | None = None) -> UsageTotals | None:
        """Usage summed over a branch's turns."""
        raise self._unsupported("token usage")

    async def session_usage(self, session_id: str) -> UsageTotals | None:
        """Usage summed over every branch."""
        raise self._unsupported("token usage")

    # -- search support: declared by :attr:`capabilities` (``watermark``, ``server_search``)

    def _no_search_support(self, what: str) -> Unsupported:
        return Unsupported(f"{self.target} cannot {what} ({self.format} format)")

    async def messages_after(
        self, watermark: int, *, limit: int = 1000, session_id: str | None = None
    ) -> list[tuple[str, Message]]:
        """Messages above an id watermark (stores whose ids increase store-wide)."""
        raise self._no_search_support("list messages by id")

    async def session_marks(self) -> dict[str, tuple[int, int]]:
        """Each session's (count, largest id)."""
        raise self._no_search_support("list messages by id")

    async def message_total(self) -> int:
        """How many messages the store holds."""
        raise self._no_search_support("list messages by id")

    async def server_text_index(self) -> str | None:
        """The server's trigram index on the text column (database servers only)."""
        return None

    async def ids_holding(self, text: str) -> list[str]:
        """Session ids that may hold ``text`` (SQL databases only)."""
        raise self._no_search_support("search session ids in the database")

    def text_index_advice(self) -> str:
        """What a DBA could create for server-side search."""
        raise self._no_search_support("search on the server")

    def search_messages(
        self, text: str, limit: int | None = None
    ) -> AsyncIterator[list[tuple[str, Message]]]:
        """Candidate messages from the database's search."""
        raise self._no_search_support("search in the database")

    async def index_advice(self) -> list[str]:
        """Indexes a database lacks that make listing slow (none for most stores)."""
        return []
