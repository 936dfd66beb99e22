"""Reading a folder of JSON session files: the sessions are the ``*.json`` files (an empty
history still is a session), ids are file names (:mod:`.names`), a message's id is its
position in the history (the file has no other stable key). All file work runs in
worker threads (:class:`~.folder.Folder` blocks)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from fluxgui.core.hits import fold
from fluxgui.core.imports import hello_message
from fluxgui.core.model import Message, SessionInfo

from ..reading import ListingReader, Page
from .folder import Folder
from .index import Entry


class FolderReader(ListingReader[Folder]):
    """The sessions and messages of a folder (see the module text)."""

    @staticmethod
    def _info(e: Entry) -> SessionInfo:
        return SessionInfo(e.sid, e.count, e.created, e.saved, sort_key=e.key)

    def _row_info(self, row: tuple[Any, ...]) -> SessionInfo:
        return self._info(row[0])

    async def _rows(self, order: str, limit: int, cursor: Any, descending: bool) -> list[tuple[Any, ...]]:
        found = await asyncio.to_thread(self.backend.page, order, limit, cursor, descending)
        return [(e,) for e in found]

    async def _page_by_activity(self, limit: int, cursor: Any, descending: bool) -> list[tuple[Any, ...]]:
        return await self._rows("activity", limit, cursor, descending)

    async def _page_by_id(self, limit: int, cursor: Any, descending: bool) -> list[tuple[Any, ...]]:
        return await self._rows("id", limit, cursor, descending)

    async def _page_by_count(self, limit: int, cursor: Any, descending: bool) -> list[tuple[Any, ...]]:
        return await self._rows("messages", limit, cursor, descending)

    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None:
        self.place.check_branch(branch)
        e = await asyncio.to_thread(self.backend.locate, session_id)
        return self._info(e) if e is not None else None

    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]:
        return [self._info(e) for e in await asyncio.to_thread(self.backend.by_ids, ids)]

    async def search_session_ids(self, text: str) -> AsyncGenerator[str, None]:
        needle = fold(text)
        pending = []
        for e in await asyncio.to_thread(self.backend.entries):
            if needle in fold(e.sid):
                yield e.sid
            else:
                pending.append(e)
        # A few files per hand-off: hits show up as they are found, the loop stays free.
        for start in range(0, len(pending), 16):
            for sid in await asyncio.to_thread(self.backend.grep, pending[start : start + 16], needle):
                yield sid

    async def read_page(self, session_id: str, page: Page) -> list[Message]:
        limit, anchor, direction, branch = page.limit, page.anchor, page.direction, page.branch
        self.place.check_branch(branch)

        def read() -> list[Message]:
            history = self.backend.history(session_id)
            if direction == "backward":
                end = min(len(history), int(anchor[0]) - 1) if anchor else len(history)
                start = max(0, end - limit)
            else:
                start = max(0, int(anchor[0])) if anchor else 0
                end = min(len(history), start + limit)
            # Positions are ids (1-based): the file has no other stable key.
            return [
                hello_message(n + 1, history[n], strict_content=True)
                for n in range(start, max(start, end))
            ]

        return await asyncio.to_thread(read) if limit > 0 else []

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        self.place.check_branch(branch)
        e = await asyncio.to_thread(self.backend.locate, session_id)
        return e.count if e is not None else 0

    async def flux_messages(self, session_id: str, limit: int | None, *, branch: str | None = None) -> list[dict[str, Any]]:
        self.place.check_branch(branch)

        def read() -> list[dict[str, Any]]:
            history = self.backend.history(session_id)
            first = len(history) - limit if limit and limit > 0 else 0  # 0: all, as flux
            out = []
            for n in range(max(0, first), len(history)):
                m = hello_message(n + 1, history[n], strict_content=True)
                d: dict[str, Any] = {"role": m.role, "content": m.text}
                if m.metadata:
                    d["metadata"] = m.metadata
                out.append(d)
            return out

        return await asyncio.to_thread(read)
