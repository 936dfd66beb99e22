"""The Agents SDK's ``Session`` protocol over items fluxgui read from a store.

:func:`fluxgui.services.doctor.preflight.preflight` hands this to the SDK's own
``prepare_input_with_session`` — the function ``Runner.run(…, session=…)`` builds the
next request with — so that the SDK's limit, orphan handling, normalisation and
de-duplication are the SDK's, not a copy. ``get_items`` answers as the owning library's
session reads the same rows: rows that are not JSON are skipped (``SQLiteSession``,
``SQLAlchemySession``, ``RedisSession``, ``AdvancedSQLiteSession`` alike), ``limit`` counts
the items read (the latest ``limit`` of them), and an ``EncryptedSession`` returns only
the items that decrypt and have not expired (fluxgui's store decrypts them with the same
key derivation; :func:`stored_items`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from fluxgui.core.display import encryption_state
from fluxgui.core.errors import KeyNeeded, ReadOnlyError
from fluxgui.core.model import Message


def _read_by_library(m: Message) -> bool:
    """Whether the owning library's ``get_items`` returns this row at all (it is JSON,
    and valid UTF-8)."""
    meta = m.metadata if isinstance(m.metadata, dict) else {}
    if "undecodable" in meta:
        return False
    return not (m.kind == "other" and isinstance(m.raw, str))


def stored_items(messages: Sequence[Message], *, encrypted: bool) -> list[tuple[int, Any]]:
    """``(message id, item)`` of each item the library's session returns, in order.

    ``encrypted``: the store is read through ``EncryptedSession``, which returns only
    decrypted, unexpired items (plain and expired ones are skipped); an item that did
    not open with the key is skipped too, but with no key at all nothing can be said."""
    out: list[tuple[int, Any]] = []
    for m in messages:
        if not _read_by_library(m):
            continue
        state = encryption_state(m)
        if encrypted:
            if state == "locked":
                raise KeyNeeded(
                    "this session is encrypted: give the key (--key or FLUXGUI_KEY) to see "
                    "what the Agents SDK would send"
                )
            if state != "ok":
                continue
        out.append((m.id, copy.deepcopy(m.raw)))
    return out


class StoredItemsSession:
    """A read-only SDK ``Session`` holding items already read (see the module text)."""

    session_settings = None

    def __init__(self, session_id: str, items: Sequence[Any]) -> None:
        self.session_id = session_id
        self._items = list(items)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The latest ``limit`` items (all when ``None``; a negative limit, as SQLite's
        ``LIMIT``, is no limit; 0 gives none), copies, oldest first."""
        items = self._items
        if limit is not None and limit >= 0:
            items = items[-limit:] if limit else []
        return copy.deepcopy(items)

    async def add_items(self, items: list[Any]) -> None:
        raise ReadOnlyError("a preflight never writes to the session")

    async def pop_item(self) -> Any:
        raise ReadOnlyError("a preflight never writes to the session")

    async def clear_session(self) -> None:
        raise ReadOnlyError("a preflight never writes to the session")
