"""flux's ``messages`` table (``flux.sessions.SQLiteSession``), on SQLite or any SQL URL:
the store, composed of its reader (:mod:`.fluxreader`), the search support below, and
its editor, writer and forks.

One table, no sessions table: a session is a distinct ``session_id``. Order is ``id``.
Writes follow flux's own rules: missing role → ``user``, missing content → ``''``,
``None`` → NULL, metadata as JSON text or NULL for an empty dict.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from fluxgui.core.items import validate_flux_message
from fluxgui.core.model import Message
from fluxgui.core.roles import Traits
from fluxgui.core.undecodable import id_text, strip_flag

from ..handle import OpenStore
from ..parts import Place
from .backend import Backend, Params
from .detect import FLUX_COLUMNS as REQUIRED_COLUMNS
from .detect import FLUX_TABLE as TABLE
from .edits import SqlEditor, SqlForks, SqlWriter
from .fluxreader import COLS as _COLS
from .fluxreader import FluxReader
from .fluxvalues import plain_message as _plain_message
from .fluxvalues import storable as _storable
from .fluxvalues import text_value as _text_value
from .search import session_ids, text_condition
from .sessionrows import SqlRows

if TYPE_CHECKING:
    from fluxgui.core.changes import Row

    from .editor import TableEditor

__all__ = ["GENERIC_DDL", "REQUIRED_COLUMNS", "SQLITE_DDL", "TABLE", "TRAITS", "ddl", "flux_store"]

_MESSAGES = """CREATE TABLE IF NOT EXISTS messages (
        id {id},
        session_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT,
        metadata TEXT,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
    )"""
SQLITE_DDL = [
    _MESSAGES.format(id="INTEGER PRIMARY KEY AUTOINCREMENT"),
    "CREATE INDEX IF NOT EXISTS idx_session ON messages(session_id)",
]
GENERIC_DDL = [
    _MESSAGES.format(id="BIGSERIAL PRIMARY KEY"),
    "CREATE INDEX IF NOT EXISTS idx_session ON messages(session_id, id)",
]


#: chat messages stored as columns; flux parses every row's metadata when it reads; an
#: item stored in several megabytes is read as its start
TRAITS = Traits(columns=True, strict_metadata=True, partial_reads=True)


def ddl(backend: Backend) -> list[str]:
    """The statements that make flux's table on ``backend`` (``create``)."""
    return SQLITE_DDL if backend.dialect == "sqlite" else GENERIC_DDL


def flux_store(backend: Backend, display: str) -> OpenStore:
    """The store over a database holding flux's table: it reads, edits, writes and forks,
    lists messages by id, and narrows a search in the database (on Postgres, with the
    server's trigram index)."""
    place = Place(backend, display)
    reader = FluxReader(place)
    search = FluxSearch(reader)
    editor = FluxEditor(place)
    return OpenStore(
        format="flux",
        target=display,
        backend=backend,
        traits=TRAITS,
        reader=reader,
        editor=editor,
        writer=FluxWriter(place, editor),
        forks=SqlForks(place, editor),
        feed=search,
        text_filter=search,
        server_index=search if backend.dialect == "postgresql" else None,
        rows=SqlRows(backend, reader),
        advice=lambda: _advice(backend),
    )


class FluxSearch:
    """What a search index and a search of the database need of flux's table (the
    Feed, TextFilter and ServerIndex roles): rows by id, candidates of a text."""

    def __init__(self, reader: FluxReader) -> None:
        self.reader = reader

    async def messages_after(
        self, watermark: int, *, limit: int = 1000, session_id: str | None = None
    ) -> list[tuple[str, Message]]:
        from .textsearch import as_messages, rows_after  # (search support, loaded for it)

        rows = await rows_after(self.reader.backend, TABLE, _COLS, watermark, limit, session_id)
        return await as_messages(rows, lambda r: self.reader.message(r[1:]))

    async def session_marks(self) -> dict[str, tuple[int, int]]:
        from .textsearch import marks

        return await marks(self.reader.backend, TABLE)

    async def message_total(self) -> int:
        from .textsearch import total

        return await total(self.reader.backend, TABLE)

    async def server_text_index(self) -> str | None:
        from .textsearch import trigram_index

        return await trigram_index(self.reader.backend, TABLE, "content")

    async def ids_holding(self, text: str) -> list[str]:
        params: Params = {}
        cond = text_condition(self.reader.backend, "sid", text, params, "p")
        rows = await self.reader.backend.fetchall(f"{session_ids(TABLE)} WHERE sid IS NOT NULL AND {cond}", params)
        return [id_text(r[0]) for r in rows]

    def text_index_advice(self) -> str:
        from .textsearch import trigram_advice

        return trigram_advice(TABLE, "content")

    def search_messages(
        self, text: str, limit: int | None = None
    ) -> AsyncGenerator[list[tuple[str, Message]], None]:
        from .textsearch import candidates

        params: Params = {}
        cond = text_condition(self.reader.backend, "content", text, params, "p")
        return candidates(
            self.reader.backend, TABLE, f"session_id, {_COLS}", cond, params,
            lambda r: self.reader.message(r[1:]), limit,
        )


async def _advice(backend: Backend) -> list[str]:
    from .textsearch import missing_index

    return await missing_index(
        backend, TABLE, ("session_id", "id"), "listing sessions by activity"
    )


class FluxEditor(SqlEditor):
    """Single rows of flux's table edited (see :class:`~.edits.SqlEditor`)."""

    def table_editor(self) -> TableEditor:
        from .editor import TableEditor

        return TableEditor(
            self.place,
            table=TABLE,
            table_name=TABLE,
            columns=("role", "content", "metadata", "created_at"),
        )

    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> Row:
        import json

        m = validate_flux_message(spec, stored_metadata=original.metadata if original else None)
        return {
            "role": m.get("role") or "user",
            "content": _text_value(m.get("content", "")),
            "metadata": json.dumps(m["metadata"]) if m.get("metadata") else None,
        }


class FluxWriter(SqlWriter):
    """Whole sessions of flux's table written, as flux writes them."""

    async def add_messages(self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None) -> int:
        import json

        self.place.check_branch(branch)
        self.place.check_writable()
        rows = [
            {
                "s": session_id,
                "r": str(m.get("role") or "user"),
                "c": _text_value(m.get("content", "")),
                "m": json.dumps(m["metadata"]) if m.get("metadata") else None,
            }
            for m in messages
        ]
        if not rows:
            return 0
        await self.backend.write(
            [
                (
                    "INSERT INTO messages (session_id, role, content, metadata) "
                    "VALUES (:s, :r, :c, :m)",
                    rows,
                )
            ]
        )
        return len(rows)

    def import_row(self, message: Message) -> Row:
        import json

        m = message
        raw = m.raw
        if m.kind == "other" and isinstance(raw, str) and raw != m.text:
            # A flux row whose metadata is not an object: keep that text as it is.
            return {"role": _storable(m.role), "content": _storable(m.text), "metadata": _storable(raw)}
        if m.metadata is not None and not isinstance(m.metadata, dict):
            # Metadata that is a list, a string…: written back as the same JSON value.
            return {"role": _storable(m.role or "user"), "content": _storable(m.text),
                    "metadata": json.dumps(m.metadata)}
        meta = dict(m.metadata) if m.metadata else {}
        # A row read with bytes that were not UTF-8 is copied with its replacement
        # characters, without the reader's flag (fluxgui.core.undecodable).
        flagged = strip_flag(m, meta)
        content = _storable(m.text)
        if isinstance(raw, dict) and (not _plain_message(raw) or content != m.text):
            # An Agents SDK item flux has no columns for (or whose text a database
            # cannot hold as it is) rides along in the metadata.
            meta["agents_item"] = raw
        # json.dumps defaults, as flux writes it (ASCII: a lone surrogate stays storable);
        # an empty object read from a row is written back as it was, not as NULL.
        keep = meta or (m.metadata is not None and not flagged)
        return {
            "role": _storable(m.role or "user"),
            "content": content,
            "metadata": json.dumps(meta) if keep else None,
        }

    async def clear_session(self, session_id: str) -> int:
        self.place.check_writable()
        (count,) = await self.backend.write(
            [("DELETE FROM messages WHERE session_id = :s", {"s": session_id})]
        )
        return count
