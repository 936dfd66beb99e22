"""Which SQL store format a database holds, told from its tables and columns alone.

The table layouts each format is recognised by live here (and nowhere else), so that
telling the format costs no import of the formats' code: the registry opens a flux file
without loading the Agents SDK store, its encryption or its ``AdvancedSQLiteSession``
reader.
"""

from __future__ import annotations

from typing import Literal

#: flux's one table (``flux.sessions.SQLiteSession``) and the columns it must have
FLUX_TABLE = "messages"
FLUX_COLUMNS = {"id", "session_id", "role", "content", "metadata", "created_at"}
#: the Agents SDK's default table names (both configurable) and their columns
AGENTS_SESSIONS = "agent_sessions"
AGENTS_MESSAGES = "agent_messages"
SESSION_COLUMNS = {"session_id", "created_at", "updated_at"}
MESSAGE_COLUMNS = {"id", "session_id", "message_data", "created_at"}
#: ``AdvancedSQLiteSession``'s branch structure, and the columns a store must have to be
#: read as one
STRUCTURE = "message_structure"
STRUCTURE_COLUMNS = (
    "id",
    "session_id",
    "message_id",
    "branch_id",
    "message_type",
    "sequence_number",
    "user_turn_number",
    "branch_turn_number",
)

Found = tuple[Literal["flux", "agents"], "str | None", "str | None"]


def detect(
    tables: dict[str, list[str]], sessions_table: str | None, messages_table: str | None
) -> Found | None:
    """The format of a database from its schema (``tables``: name → columns):
    ``("flux", None, None)`` or ``("agents", sessions table, messages table)``; ``None``
    when nothing matches. Named tables must exist (with any columns)."""
    if sessions_table or messages_table:
        s = sessions_table or AGENTS_SESSIONS
        m = messages_table or AGENTS_MESSAGES
        if s in tables and m in tables:
            return ("agents", s, m)
        return None
    s, m = AGENTS_SESSIONS, AGENTS_MESSAGES
    if (
        s in tables
        and m in tables
        and SESSION_COLUMNS <= set(tables[s])
        and MESSAGE_COLUMNS <= set(tables[m])
    ):
        return ("agents", s, m)
    if FLUX_TABLE in tables and FLUX_COLUMNS <= set(tables[FLUX_TABLE]):
        return ("flux", None, None)
    # Renamed Agents SDK tables: exactly one pair of tables with the right columns.
    msg_tables = [t for t, cols in tables.items() if MESSAGE_COLUMNS <= set(cols)]
    ses_tables = [
        t for t, cols in tables.items()
        if SESSION_COLUMNS <= set(cols) and t not in msg_tables
    ]
    if len(msg_tables) == 1 and len(ses_tables) == 1:
        return ("agents", ses_tables[0], msg_tables[0])
    return None


def table_pairs(tables: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Every Agents SDK table pair the database holds, as (sessions table, messages
    table), sorted. The library pairs them by name only (each name is an option), so a
    messages table goes with the sessions table named like it ("support_messages" with
    "support_sessions"); a messages table no name pairs goes with each sessions table
    no name pairs."""
    msgs = sorted(t for t, cols in tables.items() if MESSAGE_COLUMNS <= set(cols))
    sess = sorted(
        t for t, cols in tables.items() if SESSION_COLUMNS <= set(cols) and t not in msgs
    )
    pairs: list[tuple[str, str]] = []
    for m in msgs:
        for s in sess:
            if s in (m.replace("messages", "sessions"), m.replace("message", "session")) and s != m:
                pairs.append((s, m))
    paired_s = {s for s, _ in pairs}
    paired_m = {m for _, m in pairs}
    for m in msgs:
        if m not in paired_m:
            pairs += [(s, m) for s in sess if s not in paired_s]
    return sorted(pairs)


def is_advanced(tables: dict[str, list[str]], dialect: str) -> bool:
    """Whether an Agents SDK database is an ``AdvancedSQLiteSession`` store (SQLite only)."""
    return dialect == "sqlite" and set(STRUCTURE_COLUMNS) <= set(tables.get(STRUCTURE, ()))


def describe(tables: dict[str, list[str]]) -> str:
    """What a database that is no session store holds, for the error saying so."""
    if not tables:
        return "it has no tables"
    names = sorted(tables)
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f"found tables: {shown}"
