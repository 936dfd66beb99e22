"""The OpenAI Agents SDK schema: ``agent_sessions`` + ``agent_messages`` (names configurable),
optionally holding ``EncryptedSession`` envelopes.

The store is built in three layers, one module each: :mod:`.listing` (the tables and the
session list), :mod:`.reading` (items, envelopes opened, search, turn counts) and
:mod:`.writing` (appends, clears, edits, imports and forks; the :class:`AgentsStore`
itself). ``AdvancedSQLiteSession`` stores build on it (:mod:`..advanced`).
"""

from __future__ import annotations

from ..detect import AGENTS_MESSAGES as DEFAULT_MESSAGES
from ..detect import AGENTS_SESSIONS as DEFAULT_SESSIONS
from ..detect import MESSAGE_COLUMNS, SESSION_COLUMNS
from .writing import AgentsStore

__all__ = [
    "DEFAULT_MESSAGES",
    "DEFAULT_SESSIONS",
    "MESSAGE_COLUMNS",
    "SESSION_COLUMNS",
    "AgentsStore",
]
