"""An open store: what it is, and the parts that play its roles.

Every format opens as an :class:`OpenStore` (it implements :class:`fluxgui.core.roles.Store`):
it holds the back-end, the format's declared :class:`~fluxgui.core.roles.Traits` and one
object per role the format plays (``None`` for the others). It inherits nothing: what a
format does lives in its parts, each a class of its own package.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxgui.core.roles import (
    Branches,
    Editor,
    Feed,
    Forks,
    Reader,
    Rows,
    ServerIndex,
    TablePairs,
    TextFilter,
    Traits,
    Usage,
    Writer,
)

from .parts import Keys, NoKeys, StoreBackend

if TYPE_CHECKING:
    from .session import FluxReads, StoreSession


async def _no_advice() -> list[str]:
    return []


@dataclass(eq=False)
class OpenStore:
    """An open store of one format (see the module text)."""

    #: the format shown to users: "flux", "agents", "json"
    format: str
    #: the store as it may be shown (secrets hidden)
    target: str
    backend: StoreBackend
    traits: Traits
    #: reading (every store reads); it also answers flux's ``get_messages``
    reader: FluxReads
    editor: Editor | None = None
    writer: Writer | None = None
    forks: Forks | None = None
    branches: Branches | None = None
    usage: Usage | None = None
    feed: Feed | None = None
    text_filter: TextFilter | None = None
    server_index: ServerIndex | None = None
    rows: Rows | None = None
    #: the store's encryption keys (whether it needs one, whether one was given)
    keys: Keys = field(default_factory=NoKeys)
    #: what names the store inside its location besides its format (table names, a key
    #: prefix): part of its store key
    key_parts: dict[str, str | None] = field(default_factory=dict)
    #: the other Agents SDK table pairs the database holds
    tables: TablePairs = field(default_factory=TablePairs)
    #: what could not be read, one line each (files of a folder, lost conversations)
    report: Callable[[], list[str]] = list
    #: indexes the database lacks that make listing slow, with their statements
    advice: Callable[[], Awaitable[list[str]]] = _no_advice

    @property
    def store_key(self) -> str:
        """The store named the same way on every machine (its back-end's location and
        this format's own parts; never a password): what fluxgui's own data about it —
        reviews, the search index — is keyed by (see :mod:`fluxgui.core.storekey`)."""
        from fluxgui.core.storekey import compose

        return compose(self.backend.location(), {"format": self.format, **self.key_parts})

    @property
    def can_write(self) -> bool:
        """Whether the store was opened writable."""
        return self.backend.writable

    @property
    def needs_key(self) -> bool:
        """The store holds ``EncryptedSession`` envelopes (a key reads and writes them)."""
        return self.keys.needs_key

    @property
    def has_key(self) -> bool:
        """A key for ``EncryptedSession`` items was given."""
        return self.keys.has_key

    @property
    def problems(self) -> list[str]:
        """What could not be read, one line each (empty for most stores)."""
        return self.report()

    def local_paths(self) -> list[Path]:
        """The files or folders on this machine that hold the store (a SQLite file, a
        JSON session folder); empty for a server. Writers check their outputs against
        them so that nothing is ever written over the store being read."""
        return self.backend.local_paths()

    async def change_token(self) -> Any:
        """A cheap value that changes when another process writes to the store."""
        return await self.backend.change_token()

    async def index_advice(self) -> list[str]:
        """Indexes the database lacks that make listing slow, each with its statement."""
        return await self.advice()

    def session(self, session_id: str, *, branch: str | None = None) -> StoreSession:
        """A flux ``Session`` over one session (one ``branch`` of it) of this store."""
        from .session import StoreSession

        return StoreSession(self, session_id, branch)

    async def close(self) -> None:
        """Close the back-end (the store cannot be used afterwards)."""
        await self.backend.close()

    async def __aenter__(self) -> OpenStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
