"""A workspace: several open stores, each with a short label.

The stores are opened the way one is opened today (:func:`fluxgui.adapters.registry.
open_store`, any kind); the workspace only holds them, names them and says which of
them hold a session. Nothing in a store knows about the others.
"""

from __future__ import annotations

import asyncio

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fluxgui.adapters.registry import open_store
from fluxgui.core.model import SessionInfo
from fluxgui.core.ports import OpenOptions
from fluxgui.core.roles import Store

from .file import KEPT_OPTIONS, Entry, save_workspace
from .labels import default_labels


@dataclass
class Member:
    """One store of a workspace: its label, the target it was opened from (which may
    hold a password: never written anywhere, see :mod:`.file`) and the open store."""

    label: str
    target: str
    store: Store
    options: dict[str, Any] = field(default_factory=dict)
    #: the target as it was opened, its password from the keyring put in (memory only:
    #: the window reopens the store from it); ``None`` when it is ``target``
    opened_target: str | None = field(default=None, repr=False, compare=False)

    def entry(self) -> Entry:
        return Entry(self.target, self.label, dict(self.options))


async def _with_keyring_password(target: str) -> str:
    """A URL without a password gets the one the keyring holds for it (as the window
    files it); anything else comes back as it is."""
    if "://" not in target:
        return target
    from fluxgui.services.credentials import get_password_async, split_password, url_key, with_password

    try:
        if split_password(target)[1] is not None:
            return target
        password = await get_password_async(url_key(target))
        return with_password(target, password) if password else target
    except ValueError:  # a URL that does not parse: the opener says why
        return target


class Workspace:
    """Open stores with labels, in the order they were given."""

    def __init__(self, members: Sequence[Member]) -> None:
        self.members = list(members)

    @classmethod
    async def open(
        cls, entries: Sequence[Entry], options: OpenOptions | None = None,
        *, keyring: bool = True,
    ) -> Workspace:
        """Open every entry's store with ``options`` (the command's: keys, writable)
        and the entry's own options over them; a label not given is made
        (:func:`.labels.default_labels`). The stores open side by side; when one fails
        to open, the others are closed (or not opened) and its error is raised."""
        base = options or OpenOptions()
        labels = default_labels([e.target for e in entries], [e.label for e in entries])

        async def one(entry: Entry, label: str) -> Member:
            kept = {k: v for k, v in entry.options.items() if k in KEPT_OPTIONS}
            target = await _with_keyring_password(entry.target) if keyring else entry.target
            store = await open_store(target, base.with_(**kept))
            return Member(label, entry.target, store, kept, target if target != entry.target else None)

        tasks = [asyncio.ensure_future(one(entry, label)) for entry, label in zip(entries, labels)]
        try:
            # every open ends (one cancelled half-way could leave its connection open)
            done = await asyncio.gather(*tasks, return_exceptions=True)
        except BaseException:  # (this task cancelled)
            for task in tasks:
                task.cancel()
            done = await asyncio.gather(*tasks, return_exceptions=True)
        failed = [d for d in done if isinstance(d, BaseException)]
        members = [d for d in done if isinstance(d, Member)]
        if failed:
            for m in members:
                await m.store.close()
            raise failed[0]
        return cls(members)

    @property
    def labels(self) -> list[str]:
        return [m.label for m in self.members]

    def member(self, label: str) -> Member:
        for m in self.members:
            if m.label == label:
                return m
        raise KeyError(label)

    def entries(self) -> list[Entry]:
        return [m.entry() for m in self.members]

    def save(self, path: Path) -> None:
        """Write the workspace file (no secret in it, see :mod:`.file`)."""
        save_workspace(path, self.entries())

    async def holders(self, session_id: str) -> list[tuple[Member, SessionInfo]]:
        """The stores holding ``session_id``, in workspace order, each with its row."""
        found = []
        for m in self.members:
            infos = await m.store.reader.sessions_by_ids([session_id])
            for info in infos:
                if info.id == session_id:
                    found.append((m, info))
                    break
        return found

    async def close(self) -> None:
        for m in self.members:
            await m.store.close()

    async def __aenter__(self) -> Workspace:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
