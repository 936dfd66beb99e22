"""The conversation ids the window remembers, per server, in ``QSettings`` — ids only.

A server is its store key's location (``openai-conversations:https://api.openai.com/v1``:
the base URL without user, password or query), so the same server opened from the recent
list, Open URL or the command line finds the same ids. Ids are kept newest first; an API
key is never written here (it goes to the system keyring when the user asks, through
:mod:`fluxgui.services.credentials`).
"""

from __future__ import annotations

import hashlib

from PySide6.QtCore import QSettings

from fluxgui.adapters.registry import conversations_location
from fluxgui.core.errors import FluxguiError
from fluxgui.core.ports import OpenOptions

_GROUP = "conversations"
#: at most this many ids are remembered per server
MAX_IDS = 500


class ConversationIds:
    """The remembered ids of each server (see the module text)."""

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings

    @staticmethod
    def _group(location: str) -> str:
        return f"{_GROUP}/{hashlib.sha1(location.encode('utf-8')).hexdigest()[:20]}"

    def ids(self, location: str) -> list[str]:
        """The ids remembered for ``location``, newest first."""
        value = self._settings.value(f"{self._group(location)}/ids", [], type=list)
        return [str(v) for v in value if str(v)] if isinstance(value, list) else []

    def _write(self, location: str, ids: list[str]) -> None:
        group = self._group(location)
        self._settings.setValue(f"{group}/server", location)
        self._settings.setValue(f"{group}/ids", list(dict.fromkeys(ids))[:MAX_IDS])
        self._settings.sync()

    def add(self, location: str, ids: list[str] | tuple[str, ...]) -> None:
        """Remember ``ids`` (first in the list, in their order)."""
        self._write(location, [*ids, *self.ids(location)])

    def forget(self, location: str, ids: list[str] | tuple[str, ...]) -> None:
        """Forget ``ids``."""
        gone = set(ids)
        self._write(location, [i for i in self.ids(location) if i not in gone])


def location_of(target: str, options: OpenOptions) -> str | None:
    """The server a Conversations target names (``None``: another kind, or a bad URL,
    which the open itself reports)."""
    try:
        return conversations_location(target, options.base_url)
    except FluxguiError:
        return None


def with_remembered(settings: QSettings, target: str, options: OpenOptions) -> OpenOptions:
    """``options`` with the ids remembered for the target's server after the ones given
    (unchanged for other targets)."""
    location = location_of(target, options)
    if location is None:
        return options
    remembered = ConversationIds(settings).ids(location)
    ids = tuple(dict.fromkeys([*options.conversations, *remembered]))
    return options.with_(conversations=ids)
