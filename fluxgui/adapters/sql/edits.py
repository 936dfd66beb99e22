"""The writing parts every SQL format composes: single-message edits, whole-session
writes and forks, each through the format's table editor.

Each edit (clear, delete, pop, update, insert, fork) is one transaction run by the
format's :class:`~.editor.TableEditor` and returns a reversible
:class:`~fluxgui.core.changes.Change`; ``apply_change`` writes one again (redo) or its
inverse (undo). Importing a session writes it whole in one transaction
(:func:`~.sessions.write_session`). A format says how its rows look: its editor's
:meth:`SqlEditor.table_editor` and :meth:`SqlEditor.edit_values`, its writer's
:meth:`SqlWriter.import_row`, appends and clears.

Nothing of the editing machinery loads with this module: a command that only reads a
store never imports it (see :mod:`fluxgui.adapters.registry`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from fluxgui.core.model import Message
from fluxgui.core.roles import Pages

from ..parts import Place
from .backend import Backend

if TYPE_CHECKING:  # the editing machinery loads when a store first edits or forks
    from fluxgui.core.changes import Change, Row, Where

    from .editor import TableEditor
    from .rewrite import Insertion


class SqlEditor(ABC):
    """Single messages edited in a SQL store (the Editor role: see
    :class:`fluxgui.core.roles.Editor`). Whether it may edit now is
    :meth:`check_editable` (writable, and what the format adds)."""

    #: messages are changed in place and put between others
    in_place = True

    def __init__(self, place: Place[Backend]) -> None:
        self.place = place

    @property
    def backend(self) -> Backend:
        return self.place.backend

    # -- what a format says about its rows ---------------------------------------------

    @abstractmethod
    def table_editor(self) -> TableEditor:
        """The format's editor of its message table."""

    @abstractmethod
    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> Row:
        """The stored column values for a message given as a dict, validated: a flux
        message (``role``, ``content``, ``metadata``) or, for item stores, an item."""

    def check_editable(self) -> None:
        """Raise the reason this store cannot be edited now (read-only, …)."""
        self.place.check_writable()

    def table(self) -> TableEditor:
        """The table editor, once :meth:`check_editable` let the edit through."""
        self.check_editable()
        return self.table_editor()

    # -- edits: each is one transaction and returns a reversible Change -----------------

    async def delete_messages(self, session_id: str, message_ids: list[int]) -> Change:
        """Remove these messages of a session."""
        n = len(set(message_ids))
        label = f"Delete message {message_ids[0]}" if n == 1 else f"Delete {n} messages"
        return await self.table().delete_rows(session_id, message_ids, label)

    async def pop_message(self, session_id: str) -> Change:
        """Remove the session's last message (the Agents SDK's ``pop_item``)."""
        return await self.table().pop_last(session_id, "Remove the last message")

    async def update_message(
        self, session_id: str, message_id: int, spec: dict[str, Any], *, original: Message | None = None
    ) -> Change:
        """Replace one message's stored values with ``spec`` (see :meth:`edit_values`)."""
        values = self.edit_values(spec, original=original)
        return await self.table().update_row(
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
        return await self.table().insert_row(session_id, anchor, where, values, label)

    async def rewrite_messages(
        self,
        session_id: str,
        *,
        delete: list[int],
        insert_after: list[tuple[int, dict[str, Any]]],
        label: str,
        move_before: Sequence[tuple[int, int]] | None = (),
    ) -> Change:
        """Delete the messages ``delete``, put each message of ``insert_after`` (an
        anchor id and a message given as a dict, see :meth:`edit_values`) right after its
        anchor and each stored message of ``move_before`` (its id, and the id it goes
        before) right before that one with all its values, in one transaction: one
        reversible change (the session doctor's repairs)."""
        from .rewrite import rewrite

        inserts: list[Insertion] = [(int(a), self.edit_values(spec)) for a, spec in insert_after]
        return await rewrite(self.table(), session_id, delete, inserts, label, move_before or ())


class OnEditor:
    """A part that writes through the format's :class:`SqlEditor`, on its place."""

    def __init__(self, place: Place[Backend], editor: SqlEditor) -> None:
        self.place = place
        self.editor = editor

    @property
    def backend(self) -> Backend:
        return self.place.backend


class SqlWriter(OnEditor, ABC):
    """Whole sessions written to a SQL store (the Writer role: see
    :class:`fluxgui.core.roles.Writer`), through the format's :class:`SqlEditor`."""

    def check_importable(self) -> None:
        """Raise the reason new sessions cannot be written now: what stops an edit."""
        self.editor.check_editable()

    @abstractmethod
    def import_row(self, message: Message) -> Row:
        """The stored column values (no id, no time) for a Message from another store or
        an export, keeping its raw item wherever the format has room for it."""

    @abstractmethod
    async def add_messages(
        self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None
    ) -> int:
        """Append message dicts (or, for item stores, items) to ``branch``; how many."""

    @abstractmethod
    async def clear_session(self, session_id: str) -> int:
        """Remove all messages of a session (as the library does); how many."""

    async def clear_messages(self, session_id: str) -> Change:
        """Remove every message of a session; the session itself stays where it can."""
        return await self.editor.table().clear(session_id, f"Clear session {label_id(session_id)}")

    async def delete_session(self, session_id: str) -> Change:
        """Remove a session, its messages and its sessions row."""
        return await self.editor.table().delete_session(
            session_id, f"Delete session {label_id(session_id)}"
        )

    async def created_change(self, session_id: str) -> Change:
        """The session as the change that wrote it, read (for an undo stack)."""
        return await self.editor.table().as_written(session_id, f"Write session {label_id(session_id)}")

    async def apply_change(self, change: Any) -> Any:
        """Write a change again (redo) or its ``inverse()`` (undo), if it still fits."""
        return await self.editor.table().replay(change)

    async def import_session(
        self, session_id: str, pages: Pages, *, created_at: str | None = None,
        updated_at: str | None = None, rename: bool = False,
    ) -> tuple[str, int]:
        """Write a new session holding these messages (in order, with their times), in
        one transaction; returns (the id used, messages written). An id the store has
        already is refused (``Conflict``) or, with ``rename``, becomes ``<id>-2``, …"""
        from .sessions import write_session

        editor = self.editor.table()
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


class SqlForks(OnEditor):
    """Sessions of a SQL store forked at a message (the Forks role), and where a fork
    came from (fluxgui's sidecar table: :mod:`.forks`)."""

    async def fork_session(
        self, session_id: str, at_message_id: int, new_id: str | None = None, *,
        branch: str | None = None, drop_unreadable: bool = False,
    ) -> Any:
        """Fork: a new session holding the conversation (of ``branch``) up to and
        including ``at_message_id``, named ``new_id`` (default ``<id>-fork``…). The
        origin is not changed; the fork's origin is recorded in fluxgui's sidecar table.
        Undoable (the Change's inverse deletes the fork). ``drop_unreadable``: for stores
        of encrypted items (leave out those no key opens), nothing here."""
        self.place.check_branch(branch)
        label = f"Fork session {label_id(session_id)} at message {at_message_id}"
        from .forks import fork

        return await fork(self.editor.table(), session_id, int(at_message_id), new_id, label)

    async def fork_origin(self, session_id: str) -> dict[str, Any] | None:
        """Where a fork made by fluxgui came from: session id, message id, time."""
        from .forks import fork_origin

        return await fork_origin(self.place.backend, session_id)


def label_id(session_id: str) -> str:
    """:func:`fluxgui.core.changes.label_id`, loaded when first needed."""
    from fluxgui.core.changes import label_id as label

    return label(session_id)


def stored_time(value: str | None, dialect: str, utc: bool) -> object:
    """:func:`.sessions.stored_time`, loaded when first needed."""
    from .sessions import stored_time as convert

    return convert(value, dialect, utc)
