"""The Agents SDK schema, last layer: writing items, and the store itself.

Writes follow the library: ``add_items`` (a sessions row, the items, ``updated_at``),
``clear_session`` (the items and the row). With a key, everything written is sealed for
the session it goes into, as ``EncryptedSession.add_items`` does; without one, a store
holding envelopes refuses every write (nothing could be sealed, and deleting what cannot
be read is deleting blind). Single-message edits go through the table editor
(:class:`~..edits.SqlEditor`), sealing the new values. The parts: :class:`AgentsEditor`,
:class:`AgentsWriter`, :class:`AgentsForks`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from fluxgui.core.changes import Change, Row, SessionRow, Where, label_id
from fluxgui.core.errors import (
    Conflict,
    InvalidItem,
    KeyNeeded,
    ReadOnlyError,
    SessionNotFound,
    show_id,
)
from fluxgui.core.items import MESSAGE_ROLES, validate_item
from fluxgui.core.model import Message, meta_dict, message_to_item
from fluxgui.core.roles import Pages

from ...encryption import encrypted_at, is_envelope, looks_encrypted, resealed
from ..backend import Params, Tx
from ..editor import TableEditor
from ..edits import SqlEditor, SqlForks, SqlWriter
from ..forks import free_fork_id, record_fork
from ..sessions import stored_time, write_session
from .listing import ADVANCED_EDITS, AgentsKeys, AgentsTables
from .reading import ENVELOPE_LIKE, AgentsReader


class _SealingEditor(TableEditor):
    """The editor of a store with a key: the new values of an update or an insert are
    sealed for the session they go into. Rows it only moves or restores (undo, redo, the
    ids an insert shifts) keep their stored values, envelopes included, so replaying a
    change writes back exactly what was there."""

    def __init__(self, agents: AgentsEditor, **kwargs: Any) -> None:
        super().__init__(agents.place, **kwargs)
        self._agents = agents

    async def update_row(self, sid: str, row_id: int, values: Row, label: str) -> Change:
        await self._agents.reader.pick_key(sid)
        change = await super().update_row(sid, row_id, self._agents.sealed_row(sid, values), label)
        self._agents.keys.note_sealed()
        return change

    async def insert_row(
        self, sid: str, anchor_id: int | None, where: Where, values: Row, label: str
    ) -> Change:
        await self._agents.reader.pick_key(sid)
        sealed = self._agents.sealed_row(sid, values)
        change = await super().insert_row(sid, anchor_id, where, sealed, label)
        self._agents.keys.note_sealed()
        return change

    def sealed(self, sid: str, values: Row) -> Row:
        """New values (an insertion of a rewrite) sealed for the session they go into."""
        self._agents.keys.note_sealed()
        return self._agents.sealed_row(sid, values)


class AgentsEditor(SqlEditor):
    """Single items of an Agents SDK store edited, sealed with the store's key (the
    Editor role); what the writing parts share: how an item is stored, and whether the
    store may be written now."""

    def __init__(self, tables: AgentsTables, keys: AgentsKeys, reader: AgentsReader) -> None:
        super().__init__(tables.place)
        self.tables = tables
        self.keys = keys
        self.reader = reader

    def dump(self, item: Any) -> str:
        # SQLiteSession writes json.dumps defaults; SQLAlchemySession compact JSON.
        if self.backend.dialect == "sqlite":
            return json.dumps(item)
        return json.dumps(item, separators=(",", ":"))

    def stored(self, session_id: str, item: Any, *, at: float | None = None) -> str:
        """The ``message_data`` of ``item`` in ``session_id``: sealed when the store has a
        key (``at``: the encryption time to keep, Unix seconds). An envelope (a locked item
        copied as it is) is stored as it is: sealing it again would bury it."""
        if self.keys.cipher is not None and not is_envelope(item):
            item = self.keys.cipher.seal(session_id, item, at=at)
        return self.dump(item)

    def sealed_row(self, session_id: str, row: Row) -> Row:
        """``row`` (from :meth:`edit_values`) with its item sealed for ``session_id``."""
        data = row.get("message_data")
        if self.keys.cipher is None or not isinstance(data, str) or looks_encrypted(data):
            return row
        try:
            item = json.loads(data)
        except (ValueError, RecursionError):
            return row
        return {**row, "message_data": self.stored(session_id, item)}

    def check_writable(self) -> None:
        """Raise unless the store is writable, and (holding envelopes) has its key."""
        self.place.check_writable()
        if self.keys.encrypted and self.keys.cipher is None:
            # Without the key nothing can be sealed, and deleting what cannot be read
            # is deleting blind: every write waits for the key.
            raise self.keys.key_needed(self.place.target)

    def check_editable(self) -> None:
        self.check_writable()
        if self.tables.has_branches:
            raise ReadOnlyError(f"{self.place.target}{ADVANCED_EDITS}")

    def table_editor(self) -> TableEditor:
        t = self.tables
        shape: dict[str, Any] = dict(
            table=t.M,
            table_name=t.messages_table,
            columns=("message_data", "created_at"),
            sessions_table=t.S,
        )
        if self.keys.cipher is not None:
            return _SealingEditor(self, **shape)
        return TableEditor(self.place, **shape)

    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> Row:
        """An item as it is (a dict with a ``type``, or a message role); a flux-style
        message dict mapped to an item. Checked to be a valid item of its type.

        The values hold the plain item: the editor seals it for its session when a store
        with a key writes it. ``original`` is the message as read (its ``raw`` is the
        decrypted item); an envelope that did not open says nothing about the type.
        """
        if self.keys.encrypted and self.keys.cipher is None:
            raise self.keys.key_needed(self.place.target)
        if not isinstance(spec, dict):
            raise InvalidItem(f"an item must be a JSON object, not {type(spec).__name__}")
        if is_envelope(spec):
            raise InvalidItem(
                "that is an encrypted envelope, not an item: give the item itself "
                "(fluxgui encrypts it when the store has a key)"
            )
        item = spec if "type" in spec or spec.get("role") in MESSAGE_ROLES else message_to_item(spec)
        original_type = None
        raw = original.raw if original is not None else None
        if isinstance(raw, dict) and not is_envelope(raw):
            original_type = raw.get("type", "message")
        validate_item(item, original_type=original_type)
        return {"message_data": self.dump(item)}


class AgentsWriter(SqlWriter):
    """Whole sessions of an Agents SDK store written as the library writes them, sealed
    with the store's key (the Writer role)."""

    editor: AgentsEditor

    def __init__(self, editor: AgentsEditor) -> None:
        super().__init__(editor.place, editor)
        self.tables = editor.tables
        self.keys = editor.keys
        self.reader = editor.reader

    def import_row(self, message: Message, *, session_id: str | None = None) -> Row:
        """The stored values for ``message`` (see :meth:`SqlWriter.import_row`). A store with
        a key seals the item for ``session_id`` (required then), keeping the time an item
        read from an encrypted store was first encrypted (see :meth:`ItemCipher.seal`)."""
        if self.keys.cipher is not None and session_id is None:
            raise TypeError("import_row needs the session id to seal an item with the store's key")
        m = message
        if isinstance(m.raw, dict):
            item: Any = m.raw
        elif isinstance(m.raw, str) and m.kind == "other" and m.raw == m.text:
            return {"message_data": m.raw}  # stored text that is not JSON: kept as it is
        elif isinstance(meta_dict(m).get("agents_item"), dict):
            item = meta_dict(m)["agents_item"]
        else:
            role = m.role
            if role not in MESSAGE_ROLES and role != "tool":
                role = "system" if role == "summary" else "user"
            meta = meta_dict(m)
            item = message_to_item(
                {"role": role, "content": m.text, "tool_call_id": meta.get("tool_call_id")}
            )
        if session_id is None:
            return {"message_data": self.editor.dump(item)}
        return {"message_data": self.editor.stored(session_id, item, at=encrypted_at(m))}

    def _import_row(
        self, m: Message, dialect: str, utc: bool, session_id: str | None = None
    ) -> Row:
        return {
            **self.import_row(m, session_id=session_id),
            "created_at": stored_time(m.created_at, dialect, utc),
        }

    async def import_session(
        self, session_id: str, pages: Pages, *, created_at: str | None = None,
        updated_at: str | None = None, rename: bool = False,
    ) -> tuple[str, int]:
        """See :meth:`SqlWriter.import_session`. With a key, the items are sealed for the id
        they land under; with ``rename`` that id is known only once a free one is found,
        so each candidate is tried in its own transaction (the pages are not read until
        the id is taken, so a refused candidate costs one look-up)."""
        if self.keys.cipher is None:
            return await super().import_session(
                session_id, pages, created_at=created_at, updated_at=updated_at, rename=rename
            )
        editor = self.editor.table()
        dialect, utc = self.backend.dialect, self.backend.utc_times
        started = False

        async def rows(target: str) -> AsyncIterator[list[Row]]:
            nonlocal started
            started = True
            if isinstance(pages, AsyncIterator):
                async for page in pages:
                    yield [self._import_row(m, dialect, utc, target) for m in page]
            else:
                for page in pages:
                    yield [self._import_row(m, dialect, utc, target) for m in page]

        n = 1
        while True:
            target = session_id if n == 1 else f"{session_id}-{n}"
            try:
                written = await write_session(
                    editor,
                    target,
                    rows(target),
                    created_at=stored_time(created_at, dialect, utc),
                    updated_at=stored_time(updated_at, dialect, utc),
                )
            except Conflict:
                if not rename or started:
                    raise
                n += 1
                continue
            self.keys.note_sealed()
            return written

    async def add_messages(self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None) -> int:
        """Append messages: items (dicts with a ``type``) as they are, flux dicts mapped."""
        self.place.check_branch(branch)
        self.editor.check_writable()
        await self.reader.pick_key(session_id)
        if self.tables.has_branches:
            raise InvalidItem(
                "adding items to an AdvancedSQLiteSession store is not supported yet "
                "(its branch structure would not include them)"
            )
        items = []
        for m in messages:
            if not isinstance(m, dict):
                raise InvalidItem(f"an item must be a JSON object, not {type(m).__name__}")
            items.append(message_to_item(m))
        if not items:
            return 0
        await self.backend.write(
            [
                (
                    f"INSERT INTO {self.tables.S} (session_id) VALUES (:s) "
                    "ON CONFLICT (session_id) DO NOTHING",
                    {"s": session_id},
                ),
                (
                    f"INSERT INTO {self.tables.M} (session_id, message_data) VALUES (:s, :d)",
                    [{"s": session_id, "d": self.editor.stored(session_id, i)} for i in items],
                ),
                (
                    f"UPDATE {self.tables.S} SET updated_at = CURRENT_TIMESTAMP WHERE session_id = :s",
                    {"s": session_id},
                ),
            ]
        )
        self.keys.note_sealed()
        return len(items)

    async def clear_session(self, session_id: str) -> int:
        """Remove the session's items and its row, as ``clear_session()`` does."""
        self.editor.check_writable()
        if self.tables.has_branches:
            raise InvalidItem(
                "clearing an AdvancedSQLiteSession store is not supported yet "
                "(its message_structure and turn_usage rows must go with it)"
            )
        counts = await self.backend.write(
            [
                (f"DELETE FROM {self.tables.M} WHERE session_id = :s", {"s": session_id}),
                (f"DELETE FROM {self.tables.S} WHERE session_id = :s", {"s": session_id}),
            ]
        )
        return counts[0]


class AgentsForks(SqlForks):
    """Sessions of an Agents SDK store forked, envelopes sealed again for the fork."""

    editor: AgentsEditor

    def __init__(self, editor: AgentsEditor) -> None:
        super().__init__(editor.place, editor)
        self.tables = editor.tables
        self.keys = editor.keys

    async def fork_session(
        self, session_id: str, at_message_id: int, new_id: str | None = None, *,
        branch: str | None = None, drop_unreadable: bool = False,
    ) -> Any:
        """See :meth:`SqlForks.fork_session`. An envelope is bound to its session (the id is
        the key's salt), so with a key the fork's items are sealed again for the fork,
        each keeping its encryption time (what had expired stays expired). Envelopes no
        key opens would never open in the fork: the fork is refused
        (:class:`~fluxgui.core.errors.UnreadableItems`), or with ``drop_unreadable`` made
        without them when others open. Without a key, a session holding envelopes is not
        forked (:class:`~fluxgui.core.errors.KeyNeeded`)."""
        self.place.check_branch(branch)
        if self.keys.cipher is None:
            self.editor.check_writable()
            if await self._holds_envelopes(session_id):
                raise KeyNeeded(
                    f"session {show_id(session_id)} in {self.place.target} holds encrypted items "
                    "(EncryptedSession): give its key to fork it"
                )
            return await super().fork_session(session_id, at_message_id, new_id)
        editor = self.editor.table()
        at_id = int(at_message_id)
        label = f"Fork session {label_id(session_id)} at message {at_id}"

        async def body(tx: Tx) -> Change:
            found = await editor.rows_by_id(tx, session_id, [at_id])
            if at_id not in found:
                raise SessionNotFound(f"message {at_id} is not in session {show_id(session_id)}")
            target = await free_fork_id(editor, tx, session_id, new_id)
            rows = await editor.rows(tx, session_id)
            end = next(i for i, r in enumerate(rows) if int(r["id"]) == at_id)
            # sealed again (or refused) before anything is written
            copied = await asyncio.to_thread(
                self._resealed, rows[: end + 1], session_id, target, drop_unreadable
            )
            origin = await editor.session_row(tx, session_id)
            now = await editor.now(tx)
            after = SessionRow(origin.created_at if origin else now, now)
            await tx.execute(
                f"INSERT INTO {self.tables.S} (session_id, created_at, updated_at) VALUES (:s, :c, :u)",
                {"s": target, "c": after.created_at, "u": after.updated_at},
            )
            if copied:
                await tx.executemany(
                    f"INSERT INTO {self.tables.M} (session_id, message_data, created_at) "
                    "VALUES (:s, :d, :c)",
                    copied,
                )
            await record_fork(tx, target, session_id, at_id)
            added = await editor.rows(tx, target)
            return Change(target, label, (), tuple(added), None, after)

        change = await self.backend.transaction(body)
        self.keys.note_sealed()
        return change

    async def _holds_envelopes(self, session_id: str) -> bool:
        """Whether any stored item of the session is an ``EncryptedSession`` envelope."""
        rows = await self.backend.fetchall(
            f"SELECT message_data FROM {self.tables.M} WHERE session_id = :s "
            "AND message_data LIKE :env ESCAPE '\\' LIMIT 8",
            {"s": session_id, "env": ENVELOPE_LIKE},
        )
        return any(looks_encrypted(data) for (data,) in rows)

    def _resealed(self, rows: list[Row], origin: str, target: str, drop: bool) -> list[Params]:
        """Insert parameters copying ``rows`` of ``origin`` into ``target``, envelopes
        sealed for ``target`` (see :func:`~fluxgui.adapters.encryption.resealed`: one no
        key opens refuses the fork, or with ``drop`` is left out); plain rows as they
        are."""
        return [
            {"s": target, "d": r["message_data"] if again is None else self.editor.dump(again),
             "c": r["created_at"]}
            for r, again in resealed(
                self.keys.cipher, origin, target, rows, lambda r: r["message_data"],
                drop=drop, where=self.place.target,
            )
        ]
