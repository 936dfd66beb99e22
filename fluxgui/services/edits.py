"""The edit commands as use cases: which store call each runs, whether it may run now,
and what the window shows once it has been written.

Each command is a coroutine that writes one transaction and returns the store's
:class:`~fluxgui.core.changes.Change` (a branch edit: a
:class:`~fluxgui.core.branches.BranchChange`); applying ``change.inverse()`` undoes it
(:func:`undo`), applying the change again redoes it (:func:`redo`). Nothing here asks the
user or touches a widget: the window asks (confirmations, names, message dialogs), runs
the command through its undo stack and follows :func:`after_edit`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from fluxgui.core.roles import Store, missing, refuse
from fluxgui.core.branches import BranchChange
from fluxgui.core.changes import Change, Where
from fluxgui.core.errors import FluxguiError, ReadOnlyError, show_id
from fluxgui.core.model import Message
from fluxgui.core.turns import starts_turn


@runtime_checkable
class OwnStoreChange(Protocol):
    """A change of a store other than the window's (a consolidation's destination): it
    writes itself there (:meth:`write` returns what was written)."""

    @property
    def label(self) -> str: ...
    @property
    def session_id(self) -> str: ...
    def inverse(self) -> OwnStoreChange: ...
    async def write(self) -> OwnStoreChange: ...


#: An edit of any kind (a branch edit, or a change of its own store, has the same
#: interface: label, inverse, session).
AnyChange = Change | BranchChange | OwnStoreChange

#: why nothing is written to a store opened read-only, and how to change that
READ_ONLY = "the store is open read-only: turn on editing (Ctrl+Shift+E) first"
NO_STORE = "no store is open"


# --------------------------------------------------------------------------- may it run


def edit_reason(store: Store | None) -> str | None:
    """Why the messages of ``store`` cannot be edited now (``None``: they can): no
    store, a store without an editor (an AdvancedSQLiteSession store, a JSON session
    folder, Redis: the sentence it declares), or its editor's own reason (opened
    read-only, no key)."""
    if store is None:
        return NO_STORE
    if store.editor is None:
        return (
            f"{store.target} is open read-only; open it writable to change it"
            if not store.can_write else missing(store, "editor")
        )
    return _reason(store.editor.check_editable)


#: what an edit needs of a store: single messages edited in place (``edit``), whole
#: sessions cleared or deleted (``clear``), a session forked (``fork``)
Need = Literal["edit", "clear", "fork"]


def blocked_reason(store: Store | None, *, need: Need = "edit") -> str | None:
    """Why an edit that needs ``need`` cannot be written to ``store`` now (``None``: it
    can). Whole-session edits and forks go by the store's declared capabilities (a JSON
    folder or Redis clears and forks though it cannot edit single messages). A
    read-only store always gets the one sentence that says how to turn editing on."""
    if store is None:
        return NO_STORE
    if not store.can_write:
        return READ_ONLY
    if need == "edit":
        return edit_reason(store)
    if need == "fork":
        return None if store.forks is not None else missing(store, "forks")
    return _reason(store.writer.check_importable) if store.writer is not None else missing(store, "writer")


def _reason(check: Callable[[], None]) -> str | None:
    """What ``check`` raises, as one sentence (``None``: nothing)."""
    try:
        check()
    except FluxguiError as exc:
        return str(exc)
    return None


def check_writable(store: Store | None, *, need: Need = "edit") -> Store:
    """``store`` when an edit that needs ``need`` may be written to it now; else
    :class:`ReadOnlyError` with :func:`blocked_reason`."""
    reason = blocked_reason(store, need=need)
    if reason is not None or store is None:
        raise ReadOnlyError(reason or NO_STORE)
    return store


def is_branchable(store: Store | None) -> bool:
    """Whether ``store`` keeps branches (AdvancedSQLiteSession stores)."""
    return store is not None and store.branches is not None


def branch_problem(store: Store | None, session_id: str | None) -> FluxguiError | None:
    """Why no branch can be made in ``session_id`` of ``store`` now (``None``: it can):
    a store without branches (or no session shown), or one open read-only."""
    if store is None or session_id is None or not is_branchable(store):
        return FluxguiError("branches are kept by AdvancedSQLiteSession stores only")
    if not store.can_write:
        return ReadOnlyError(READ_ONLY)
    return None


def no_turn_error(message: Message | None) -> FluxguiError:
    """Why Branch from This Turn cannot start at ``message`` when it has no turn number:
    not a user message, or the turns are still being counted."""
    return FluxguiError(
        "select a user message: a branch starts at a user turn"
        if message is None or not starts_turn(message)
        else "the turn numbers are still being counted: try again in a moment"
    )


def new_name(text: str | None) -> str | None:
    """A name the user typed for a new session or branch (empty: the store chooses)."""
    return (text or "").strip() or None


# --------------------------------------------------------------------------- the commands


async def clear_session(store: Store, session_id: str) -> Change:
    """Remove every message of a session (the session stays where the format keeps it)."""
    return await (store.writer or refuse(store, "writer")).clear_messages(session_id)


async def delete_session(store: Store, session_id: str) -> Change:
    """Delete a session and its messages."""
    return await (store.writer or refuse(store, "writer")).delete_session(session_id)


async def delete_messages(store: Store, session_id: str, message_ids: Sequence[int]) -> Change:
    """Delete some messages of a session (at least one)."""
    if not message_ids:
        raise FluxguiError("no message is selected")
    return await (store.editor or refuse(store, "editor")).delete_messages(session_id, [int(i) for i in message_ids])


async def pop_message(store: Store, session_id: str) -> Change:
    """Remove the session's last message (as the Agents SDK's ``pop_item``)."""
    return await (store.editor or refuse(store, "editor")).pop_message(session_id)


def spec_check(store: Store, original: Message | None = None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The check of what a message dialog gives (``spec``), as the store would write it
    in place of ``original`` (``None``: a new message): the stored values, or
    :class:`~fluxgui.core.errors.FluxguiError` with one line when it cannot be stored."""

    def check(spec: dict[str, Any]) -> dict[str, Any]:
        return (store.editor or refuse(store, "editor")).edit_values(spec, original=original)

    return check


async def update_message(
    store: Store, session_id: str, message: Message, spec: dict[str, Any]
) -> Change:
    """Replace ``message`` by ``spec`` (what the edit dialog gives), as one change."""
    change = await (store.editor or refuse(store, "editor")).update_message(session_id, message.id, spec, original=message)
    await _tell_index(store, change)
    return change


async def insert_message(
    store: Store, session_id: str, spec: dict[str, Any], *, anchor: int | None,
    where: Where = "after",
) -> Change:
    """Insert a message before or after ``anchor`` (``None``: at the end)."""
    return await (store.editor or refuse(store, "editor")).insert_message(
        session_id, spec, anchor=anchor, where="before" if where == "before" else "after"
    )


async def fork_session(
    store: Store, session_id: str, at_message_id: int, name: str | None = None, *,
    branch: str | None = None, drop_unreadable: bool = False,
) -> AnyChange:
    """A new session with the conversation (of ``branch``) up to and including
    ``at_message_id``; the origin is left as it is. The change names the new session.
    Encrypted items no key opens refuse it (``UnreadableItems``), or with
    ``drop_unreadable`` are left out when others open."""
    result: AnyChange = await (store.forks or refuse(store, "forks")).fork_session(
        session_id, at_message_id, new_name(name), branch=branch,
        drop_unreadable=drop_unreadable,
    )
    return result


async def branch_from_turn(
    store: Store, session_id: str, turn: int, name: str | None = None, *,
    branch: str | None = None,
) -> BranchChange:
    """A new branch with ``branch``'s items before user turn ``turn``."""
    return await (store.branches or refuse(store, "branches")).create_branch_from_turn(session_id, turn, new_name(name), branch=branch)


async def delete_branch(store: Store, session_id: str, branch_id: str) -> BranchChange:
    """Delete a branch (not ``main``) and the items no other branch holds."""
    return await (store.branches or refuse(store, "branches")).delete_branch(session_id, branch_id)


async def undo(store: Store | None, change: AnyChange) -> AnyChange:
    """Write the inverse of ``change``; returns what was written."""
    if isinstance(change, OwnStoreChange):
        return await change.inverse().write()
    if store is None:
        raise FluxguiError(NO_STORE)
    result: AnyChange = await (store.writer or refuse(store, "writer")).apply_change(change.inverse())
    await _tell_index(store, result)
    return result


async def redo(store: Store | None, change: AnyChange) -> AnyChange:
    """Write ``change`` again; returns what was written."""
    if isinstance(change, OwnStoreChange):
        return await change.write()
    if store is None:
        raise FluxguiError(NO_STORE)
    result: AnyChange = await (store.writer or refuse(store, "writer")).apply_change(change)
    await _tell_index(store, result)
    return result


async def _tell_index(store: Store, change: object) -> None:
    """An edit in place keeps a message's id and its session's count: the search index
    (which follows ids and counts) is told to read the session again."""
    if not isinstance(change, Change):
        return
    removed = {row.get("id") for row in change.removed}
    if any(row.get("id") in removed for row in change.added):
        from .index import note_changed

        await note_changed(store, [change.session_id])


# --------------------------------------------------------------------------- afterwards


@dataclass(frozen=True)
class AfterEdit:
    """What the window shows once a change (or its undo/redo) has been written."""

    #: sessions whose rows in the list must be read again
    refresh: tuple[str, ...]
    #: show this session (again, from the start): a fork, or an edit while none was shown
    open: str | None = None
    #: read the shown session again, keeping the scroll position
    reload: bool = False
    #: select this message once the session has been read again
    select: int | None = None
    #: the shown session may be gone now (messages removed, none added): no error then
    maybe_gone: bool = False
    #: a branch edit: the branch bar lists again and shows where it left the session
    branches: bool = False


def after_edit(
    change: AnyChange,
    shown: str | None,
    *,
    open_result: bool = False,
    select: int | None = None,
) -> AfterEdit:
    """What to show after ``change`` was written while ``shown`` was the shown session.

    ``open_result``: the edit made a session to show (a fork); ``select``: a message the
    edit asked to select afterwards (an edited message keeps its place)."""
    sid = change.session_id
    if isinstance(change, OwnStoreChange):
        return AfterEdit(())  # another store's sessions: nothing shown here changed
    if open_result:
        return AfterEdit((sid,), open=sid, select=select)
    if isinstance(change, BranchChange):
        return AfterEdit((sid,), select=select, branches=True)
    if change.added and select is None:
        select = int(change.added[0]["id"])  # an inserted (or restored) message
    if sid == shown:
        gone = bool(change.removed and not change.added)
        return AfterEdit((sid,), reload=True, select=select, maybe_gone=gone)
    if shown is None:
        return AfterEdit((sid,), open=sid, select=select)
    return AfterEdit((sid,), select=select)


@dataclass(frozen=True)
class EditState:
    """What the edit actions depend on."""

    #: a store open for writing and no edit being written
    writable: bool
    #: ``writable`` and its messages can be edited in place
    editable: bool
    has_session: bool
    has_message: bool
    can_undo: bool
    can_redo: bool
    #: Branch from This Turn can run (a user message of a writable Advanced store)
    can_branch: bool = False
    #: ``writable`` and the store clears and deletes whole sessions
    can_clear: bool = False
    #: ``writable`` and the store forks sessions
    can_fork: bool = False
    #: what Undo / Redo would write is a change of a store of its own (a consolidation's
    #: destination): enabled whether or not the window's store is writable
    own_undo: bool = False
    own_redo: bool = False


def enabled_actions(state: EditState) -> dict[str, bool]:
    """Each edit action's name → whether it is enabled in ``state``."""
    writable, editable = state.writable, state.editable
    return {
        "undo": (writable and state.can_undo) or state.own_undo,
        "redo": (writable and state.can_redo) or state.own_redo,
        "edit_message": editable and state.has_message,
        "insert_before": editable and state.has_message,
        "insert_after": editable and state.has_session,
        "delete_messages": editable and state.has_message,
        "fork": writable and state.can_fork and state.has_message,
        "pop_message": editable and state.has_session,
        "clear_session": writable and state.can_clear and state.has_session,
        "delete_session": writable and state.can_clear and state.has_session,
        "branch_from_turn": state.can_branch,
    }


def mode_description(writable: bool, reason: str | None) -> tuple[str, str]:
    """``(the mode button's text, its tip)`` for a store open ``writable`` (``reason``:
    why its messages cannot be edited in place, ``None`` when they can)."""
    if writable and reason is None:
        return "✎ editing", "Edits are written to the store (click for read-only)"
    if writable:
        # Say so instead of pretending: chat and imports still write.
        return "✎ writable, no message edits", (
            "Writable: chat messages, imported sessions and what the store does with "
            "whole sessions (clear, delete, fork, where it can) are written, but single "
            f"messages cannot be edited here: {reason} (click for read-only)"
        )
    return "read-only", "Nothing is written to the store (click to allow editing)"
