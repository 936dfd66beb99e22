"""What the parts of a store share: where the store is, and the two checks every writing
part makes (opened writable; no branch but ``main`` where a format keeps none).

A format is a small object that *holds* its parts (a reader, a writer, an editor, …:
see :mod:`fluxgui.core.roles` and :class:`~.handle.OpenStore`). Each part is given the
:class:`Place` it works on, and the other parts it needs, when the store is opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from fluxgui.core.errors import ReadOnlyError, Unsupported, show_id
from fluxgui.core.ports import MAIN


class StoreBackend(Protocol):
    """What every store needs of its back-end, whatever the storage (a SQL connection, a
    Redis client, a folder, an API client)."""

    #: opened for writing (stores open read-only unless asked)
    writable: bool

    async def change_token(self) -> Any:
        """A cheap value that changes when another process writes (``None``: unknown)."""
        ...

    def local_paths(self) -> list[Path]:
        """The files or folders on this machine that hold the store (none for a server)."""
        ...

    def location(self) -> str:
        """Where the store is, the same on every machine and without secrets (see
        :mod:`fluxgui.core.storekey`): ``sqlite:/abs/path``, ``postgresql://host:5432/db``…"""
        ...

    async def close(self) -> None: ...


B = TypeVar("B", bound=StoreBackend)


@dataclass(frozen=True)
class Place(Generic[B]):
    """The store a part works on: its back-end and its name as it may be shown."""

    backend: B
    #: the store as it may be shown (secrets hidden)
    target: str

    @property
    def writable(self) -> bool:
        return self.backend.writable

    def check_writable(self) -> None:
        """Raise :class:`ReadOnlyError` unless the store was opened writable."""
        if not self.backend.writable:
            raise ReadOnlyError(f"{self.target} is open read-only; open it writable to change it")

    def check_branch(self, branch: str | None) -> None:
        """Refuse a branch other than ``main`` (a format that keeps no branches)."""
        if branch is not None and branch != MAIN:
            raise Unsupported(
                f"{self.target} has no branches (only AdvancedSQLiteSession stores do): "
                f"there is no branch {show_id(branch)}"
            )


class Keys(Protocol):
    """A store's encryption keys, as far as a caller may know them."""

    @property
    def needs_key(self) -> bool:
        """The store holds ``EncryptedSession`` envelopes."""
        ...

    @property
    def has_key(self) -> bool:
        """A key was given."""
        ...


class NoKeys:
    """The keys of a format that holds no encrypted items."""

    needs_key = False
    has_key = False
