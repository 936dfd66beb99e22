"""The flux ``Session`` adapter every store hands out (``store.session(id)``)."""

from __future__ import annotations

from typing import Any, Protocol

from fluxgui.core.roles import Reader, Store, refuse


class FluxReads(Reader, Protocol):
    """A reader that also answers flux's ``Session.get_messages``."""

    async def flux_messages(
        self, session_id: str, limit: int | None, *, branch: str | None = None
    ) -> list[dict[str, Any]]:
        """The most recent ``limit`` message dicts (``role``, ``content``, ``metadata``
        when set), oldest first: what flux's ``get_messages(limit)`` returns."""
        ...


class StoreSession:
    """One session (one branch of it) of a store, satisfying flux's ``Session`` protocol.

    ``get_messages(limit)`` returns the most recent ``limit`` messages, oldest first, as
    flux documents it; ``add_messages`` appends to the same branch.
    """

    def __init__(self, store: Any, session_id: str, branch: str | None = None) -> None:
        self._store = store
        self._session_id = session_id
        self._branch = branch

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._session_id

    @property
    def store(self) -> Store:
        """The store the session is in."""
        return self._store

    @property
    def branch(self) -> str | None:
        """The branch read and written (``None``: ``main``)."""
        return self._branch

    async def get_messages(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The most recent ``limit`` messages (all when ``None``), oldest first."""
        reader: FluxReads = self._store.reader
        return await reader.flux_messages(self._session_id, limit, branch=self._branch)

    async def add_messages(self, messages: list[dict[str, Any]]) -> None:
        """Append flux message dicts."""
        writer = self._store.writer or refuse(self._store, "writer")
        await writer.add_messages(self._session_id, messages, branch=self._branch)

    async def clear(self) -> None:
        """Remove every message of the session."""
        writer = self._store.writer or refuse(self._store, "writer")
        await writer.clear_session(self._session_id)
