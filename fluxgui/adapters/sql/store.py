"""The base of the SQL store formats: single-message edits through a table editor.

A :class:`SqlStore` is a :class:`~fluxgui.adapters.base.Store` on a SQL
:class:`~.backend.Backend`. Each edit (clear, delete, pop, update, insert, fork) is one
transaction run by the format's :class:`~.editor.TableEditor` and returns a reversible
:class:`~fluxgui.core.changes.Change`; ``apply_change`` writes one again (redo) or its
inverse (undo). Importing a session writes it whole in one transaction
(:func:`~.sessions.write_session`). A format says how its rows look: :meth:`editor`,
:meth:`edit_values` and :meth:`import_row`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from fluxgui.core.errors import show_id
from fluxgui.core.model import Message

from ..base import Store, check_branch
from ..parts import Place
from .backend import Backend
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the editing machinery loads when a store first edits or forks
    from fluxgui.core.changes import Change, Row, Where
    from .editor import TableEditor
    from .rewrite import Insertion


class SqlStore(Store[Backend]):
    """A store kept in SQL tables: editable through its :meth:`editor` (see the module
    text). Whether it may be edited now is :meth:`check_editable` (writable, and what the
    format adds)."""

    @property
    def place(self) -> Place[Backend]:
        """The store its parts work on (its back-end, its name as shown)."""
        return Place(self.backend, self.target)

    # -- what a format says about its rows ---------------------------------------------

    @abstractmethod
    def table_editor(self) -> TableEditor:
        """The format's editor of its message table."""

    @abstractmethod
    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> Row:
        """The stored column values for a message given as a dict, validated: a flux
        message (``role``, ``content``, ``metadata``) or, for item stores, an item."""

    @abstractmethod
    def import_row(self, message: Message) -> Row:
        """The stored column values (no id, no time) for a Message from another store or
        an export, keeping its raw item wherever the format has room for it."""

    # -- editing: each edit is one transaction and returns a reversible Change ------

    def check_editable(self) -> None:
        """Raise the reason this store cannot be edited now (read-only, …)."""
        self._check_writable()

    def _editor(self) -> TableEditor:
        self.check_editable()
        return self.table_editor()

    async def clear_messages(self, session_id: str) -> Change:
        """Remove every message of a session; the session itself stays where it can."""
        return await self._editor().clear(session_id, f"Clear session {label_id(session_id)}")

    async def delete_session(self, session_id: str) -> Change:
        """Remove a session, its messages and its sessions row."""
        return await self._editor().delete_session(
            session_id, f"Delete session {label_id(session_id)}"
        )

    async def delete_messages(self, session_id: str, message_ids: list[int]) -> Change:
        """Remove these messages of a session."""
        n = len(set(message_ids))
        label = f"Delete message {message_ids[0]}" if n == 1 else f"Delete {n} messages"
        return await self._editor().delete_rows(session_id, message_ids, label)

    async def pop_message(self, session_id: str) -> Change:
        """Remove the session's last message (the Agents SDK's ``pop_item``)."""
        return await self._editor().pop_last(session_id, "Remove the last message")

    async def update_message(
        self, session_id: str, message_id: int, spec: dict[str, Any], *, original: Message | None = None
    ) -> Change:
        """Replace one message's stored values with ``spec`` (see :meth:`edit_values`)."""
        values = self.edit_values(spec, original=original)
        return await self._editor().update_row(
            session_id, int(message_id), values, f"Edit message {message_id}"
        )

    async def insert_message(
        self,
        session_id: str,
        spec: dict[str, Any],
        *,
        anchor: int | None = None,
        where: Where = "after",
    ) -> Change:
        """Insert a message before or after the message ``anchor`` (``None``: at the end)."""
        values = self.edit_values(spec)
        label = "Add a message" if anchor is None else f"Insert a message {where} {anchor}"
        return await self._editor().insert_row(session_id, anchor, where, values, label)

    async def rewrite_messages(
        self,
        session_id: str,
        *,
        delete: list[int],
        insert_after: list[tuple[int, dict[str, Any]]],
        label: str,
        move_before: Sequence[tuple[int, int]] = (),
    ) -> Change:
        """Delete the messages ``delete``, put each message of ``insert_after`` (an
        anchor id and a message given as a dict, see :meth:`edit_values`) right after its
        anchor and each stored message of ``move_before`` (its id, and the id it goes
        before) right before that one with all its values, in one transaction: one
        reversible change (the session doctor's repairs)."""
        from .rewrite import rewrite

        inserts: list[Insertion] = [(int(a), self.edit_values(spec)) for a, spec in insert_after]
        return await rewrite(self._editor(), session_id, delete, inserts, label, move_before)

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
        including ``at_message_id``, named ``new_id`` (default ``<id>-fork``…). The
        origin is not changed; the fork's origin is recorded in fluxgui's sidecar table.
        Undoable (the Change's inverse deletes the fork). ``drop_unreadable``: for stores
        of encrypted items (leave out those no key opens), nothing here."""
        check_branch(self, branch)
        label = f"Fork session {label_id(session_id)} at message {at_message_id}"
        from .forks import fork

        return await fork(self._editor(), session_id, int(at_message_id), new_id, label)

    async def fork_origin(self, session_id: str) -> dict[str, Any] | None:
        """Where a fork made by fluxgui came from: session id, message id, time."""
        from .forks import fork_origin

        return await fork_origin(self.backend, session_id)

    async def apply_change(self, change: Any) -> Any:
        """Write a change again (redo) or its ``inverse()`` (undo), if it still fits."""
        return await self._editor().replay(change)

    # -- whole sessions --------------------------------------------------------------

    async def import_session(
        self,
        session_id: str,
        pages: AsyncIterator[list[Message]] | Iterator[list[Message]],
        *,
        created_at: str | None = None,
        updated_at: str | None = None,
        rename: bool = False,
    ) -> tuple[str, int]:
        """Write a new session holding these messages (in order, with their times), in
        one transaction; returns (the id used, messages written). An id the store has
        already is refused (``Conflict``) or, with ``rename``, becomes ``<id>-2``, …"""
        from .sessions import write_session

        editor = self._editor()
        dialect, utc = self.backend.dialect, self.backend.utc_times

        async def rows() -> AsyncIterator[list[Row]]:
            if isinstance(pages, AsyncIterator):
                async for page in pages:
                    yield [self._import_row(m, dialect, utc) for m in page]
            else:
                for page in pages:
                    yield [self._import_row(m, dialect, utc) for m in page]

        return await write_session(
            editor,
            session_id,
            rows(),
            created_at=stored_time(created_at, dialect, utc),
            updated_at=stored_time(updated_at, dialect, utc),
            rename=rename,
        )

    def _import_row(self, m: Message, dialect: str, utc: bool) -> Row:
        return {**self.import_row(m), "created_at": stored_time(m.created_at, dialect, utc)}


def label_id(session_id: str) -> str:
    """:func:`fluxgui.core.changes.label_id`, loaded when first needed."""
    from fluxgui.core.changes import label_id as label

    return label(session_id)


def stored_time(value: str | None, dialect: str, utc: bool) -> object:
    """:func:`.sessions.stored_time`, loaded when first needed."""
    from .sessions import stored_time as convert

    return convert(value, dialect, utc)
