"""The flux ``Session`` adapter every store hands out (``store.session(id)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Store


class StoreSession:
    """One session (one branch of it) of a store, satisfying flux's ``Session`` protocol.

    ``get_messages(limit)`` returns the most recent ``limit`` messages, oldest first, as
    flux documents it; ``add_messages`` appends to the same branch.
    """

    def __init__(self, store: Store[Any], session_id: str, branch: str | None = None) -> None:
        self._store = store
        self._session_id = session_id
        self._branch = branch

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._session_id

    @property
    def store(self) -> Store[Any]:
        """The store the session is in."""
        return self._store

    @property
    def branch(self) -> str | None:
        """The branch read and written (``None``: ``main``)."""
        return self._branch

    async def get_messages(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The most recent ``limit`` messages (all when ``None``), oldest first."""
        return await self._store.flux_messages(self._session_id, limit, branch=self._branch)

    async def add_messages(self, messages: list[dict[str, Any]]) -> None:
        """Append flux message dicts."""
        await self._store.add_messages(self._session_id, messages, branch=self._branch)

    async def clear(self) -> None:
        """Remove every message of the session."""
        await self._store.clear_session(self._session_id)
