"""What a search index and a search of the database need of an Agents SDK store (the
Feed, TextFilter and ServerIndex roles): items by id, candidates of a text. SQL cannot
look inside an ``EncryptedSession`` envelope: with a key, every envelope row is a
candidate, decrypted by the reader."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from fluxgui.core.model import Message
from fluxgui.core.undecodable import id_text

from ...encryption import sealed as _sealed
from ..backend import Backend, Params
from ..search import text_condition
from ..textsearch import (
    as_messages, candidates, marks, missing_index, rows_after, total, trigram_advice, trigram_index,
)
from .reading import ENVELOPE_LIKE, AgentsReader


class AgentsSearch:
    """The search support of an Agents SDK store, reading through its ``reader``."""

    def __init__(self, reader: AgentsReader) -> None:
        self.reader = reader
        self.keys = reader.keys
        self.backend = reader.backend
        self.messages_table = reader.tables.messages_table
        self._S = reader.tables.S
        self._M = reader.tables.M

    def _row_message(self, row: tuple[Any, ...]) -> Message:
        """A row ``(session_id, id, message_data, created_at)`` as a Message."""
        return self.reader.message(row[1:], id_text(row[0]))

    async def messages_after(
        self, watermark: int, *, limit: int = 1000, session_id: str | None = None
    ) -> list[tuple[str, Message]]:
        columns = "id, message_data, created_at"
        rows = await rows_after(self.backend, self.messages_table, columns, watermark, limit, session_id)
        out = await as_messages(rows, self._row_message)
        if not self.keys.encrypted and any(_sealed(m) for _sid, m in out):
            self.keys.encrypted = True
        return out

    async def session_marks(self) -> dict[str, tuple[int, int]]:
        return await marks(self.backend, self.messages_table)

    async def message_total(self) -> int:
        return await total(self.backend, self.messages_table)

    async def server_text_index(self) -> str | None:
        return await trigram_index(self.backend, self.messages_table, "message_data")

    async def ids_holding(self, text: str) -> list[str]:
        params: Params = {}
        cond = text_condition(self.backend, "session_id", text, params, "p")
        rows = await self.backend.fetchall(f"SELECT session_id FROM {self._S} WHERE {cond}", params)
        return [id_text(r[0]) for r in rows]

    def text_index_advice(self) -> str:
        return trigram_advice(self.messages_table, "message_data")

    def search_messages(
        self, text: str, limit: int | None = None
    ) -> AsyncGenerator[list[tuple[str, Message]], None]:
        """The rows ``LIKE``/``ILIKE`` lets through, and with a key every envelope, newest first."""
        params: Params = {}
        cond = text_condition(self.backend, "message_data", text, params, "p", json_items=True)
        if self.keys.cipher is not None:
            params["env"] = ENVELOPE_LIKE
            cond = f"({cond} OR message_data LIKE :env ESCAPE '\\')"
        cols = "session_id, id, message_data, created_at"
        return candidates(self.backend, self._M, cols, cond, params, self._row_message, limit)


async def index_advice(backend: Backend, messages_table: str) -> list[str]:
    return await missing_index(
        backend, messages_table, ("session_id",),
        "counting and paging each session's items",
    )

