"""The OpenAI Agents SDK schema: ``agent_sessions`` + ``agent_messages`` (names configurable),
optionally holding ``EncryptedSession`` envelopes.

The store (:mod:`.store`) is composed of parts, one module each: :mod:`.listing` (where
the tables are, the keys, the session list), :mod:`.reading` (items, envelopes opened,
search, turn counts), :mod:`.search` (the search index's feed, the database's text
filter) and :mod:`.writing` (appends, clears, edits, imports and forks).
``AdvancedSQLiteSession`` stores build on these parts (:mod:`..advanced`).
"""

from __future__ import annotations

from ..detect import AGENTS_MESSAGES as DEFAULT_MESSAGES
from ..detect import AGENTS_SESSIONS as DEFAULT_SESSIONS
from ..detect import MESSAGE_COLUMNS, SESSION_COLUMNS
from .store import agents_ddl, agents_store, open_agents

__all__ = [
    "DEFAULT_MESSAGES",
    "DEFAULT_SESSIONS",
    "MESSAGE_COLUMNS",
    "SESSION_COLUMNS",
    "agents_ddl",
    "agents_store",
    "open_agents",
]
