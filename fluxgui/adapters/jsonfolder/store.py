"""The JSON session folder store: a :class:`~fluxgui.adapters.handle.OpenStore` holding the
folder's reader (:mod:`.reader`), writer and forks (:mod:`.writer`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fluxgui.core.roles import Traits

from ..handle import OpenStore
from ..parts import Place
from .folder import Folder
from .reader import FolderReader
from .writer import FolderForks, FolderWriter

#: clearing empties the file's history and keeps the file, so the session stays listed;
#: deleting removes the file; a fork is a new file (all undoable); no message is edited
#: in place
TRAITS = Traits(
    keeps_cleared_sessions=True,
    reports_problems=True,
    why_not={
        "editor": ": single messages of JSON session files cannot be edited in place "
        "(clear, delete and fork whole sessions instead)",
    },
)


def folder_store(folder: Folder, display: str) -> OpenStore:
    """The store over an opened folder."""
    place = Place(folder, display)
    return OpenStore(
        format="json",
        target=display,
        backend=folder,
        traits=TRAITS,
        reader=FolderReader(place),
        writer=FolderWriter(place),
        forks=FolderForks(place),
        # one line per *.json file that is not a session file, as of the last scan
        report=lambda: list(folder.problems),
    )


async def open_folder(path: Path, display: str, *, writable: bool, create: bool) -> OpenStore:
    """Open (``create``: make) a folder of JSON session files."""
    folder = Folder(Path(path), display, writable or create)
    await asyncio.to_thread(folder.open, create)
    return folder_store(folder, display)
