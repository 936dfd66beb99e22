"""The review database's tables, their version, and the migrations between versions.

The review database is fluxgui's own (never the agent's store): a SQLite file in
:func:`fluxgui.core.paths.data_dir` by default, or any SQLAlchemy URL a team shares
(PostgreSQL). ``fluxgui_review_meta`` holds ``schema_version``; :func:`migrate` brings an
older database up to :data:`SCHEMA_VERSION` step by step, each step one transaction, and
refuses a newer one in one line (a newer fluxgui wrote it).

Version 1: reviews (state, reviewer, time), tags, scores, notes, history, rubric.
Version 2: claims (``claimed_by``, ``claimed_until``) and the row ``version`` that keeps
a change from overwriting another one silently.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    Column,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)

from .model import ReviewError

SCHEMA_VERSION = 2

metadata = MetaData()

meta = Table(
    "fluxgui_review_meta", metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)
reviews = Table(
    "fluxgui_reviews", metadata,
    Column("store_key", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("reviewer", Text),
    Column("updated_at", Text, nullable=False),
    Column("claimed_by", Text),
    Column("claimed_until", Text),
    Column("version", Integer, nullable=False, server_default="1"),
    PrimaryKeyConstraint("store_key", "session_id"),
    Index("fluxgui_reviews_state", "store_key", "state", "updated_at"),
)
tags = Table(
    "fluxgui_review_tags", metadata,
    Column("store_key", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("tag", Text, nullable=False),
    PrimaryKeyConstraint("store_key", "session_id", "tag"),
    Index("fluxgui_review_tags_tag", "store_key", "tag"),
)
scores = Table(
    "fluxgui_review_scores", metadata,
    Column("store_key", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("criterion", Text, nullable=False),
    Column("value", Text, nullable=False),  # JSON
    PrimaryKeyConstraint("store_key", "session_id", "criterion"),
)
notes = Table(
    "fluxgui_review_notes", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("store_key", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("message_id", Text),
    Column("text", Text, nullable=False),
    Column("reviewer", Text, nullable=False),
    Column("at", Text, nullable=False),
    Index("fluxgui_review_notes_session", "store_key", "session_id"),
)
history = Table(
    "fluxgui_review_history", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("store_key", Text, nullable=False),
    Column("session_id", Text, nullable=False),
    Column("field", Text, nullable=False),
    Column("old", Text),  # JSON
    Column("new", Text),  # JSON
    Column("reviewer", Text, nullable=False),
    Column("at", Text, nullable=False),
    Index("fluxgui_review_history_session", "store_key", "session_id"),
)
rubrics = Table(
    "fluxgui_review_rubrics", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("definition", Text, nullable=False),  # JSON
    Column("reviewer", Text, nullable=False),
    Column("at", Text, nullable=False),
)

#: the columns version 2 added (version 1 had the rest)
_V2_COLUMNS = ("claimed_by", "claimed_until", "version")


def _create_v1(sync_conn: Any) -> None:
    """Version 1's tables: everything, the reviews table without the claim columns."""
    v1 = MetaData()
    Table(
        reviews.name, v1,
        Column("store_key", Text, nullable=False),
        Column("session_id", Text, nullable=False),
        Column("state", Text, nullable=False),
        Column("reviewer", Text),
        Column("updated_at", Text, nullable=False),
        PrimaryKeyConstraint("store_key", "session_id"),
        Index("fluxgui_reviews_state", "store_key", "state", "updated_at"),
    )
    v1.create_all(sync_conn)
    metadata.create_all(sync_conn, tables=[t for t in metadata.sorted_tables if t is not reviews])


def _v1_to_v2(sync_conn: Any) -> None:
    sync_conn.execute(text("ALTER TABLE fluxgui_reviews ADD COLUMN claimed_by TEXT"))
    sync_conn.execute(text("ALTER TABLE fluxgui_reviews ADD COLUMN claimed_until TEXT"))
    sync_conn.execute(text("ALTER TABLE fluxgui_reviews ADD COLUMN version INTEGER NOT NULL DEFAULT 1"))


#: version → the step that makes it from the one before
MIGRATIONS: dict[int, Callable[[Any], None]] = {1: _create_v1, 2: _v1_to_v2}
assert max(MIGRATIONS) == SCHEMA_VERSION


def read_version(sync_conn: Any) -> int:
    """The database's schema version (0: no review tables yet)."""
    from sqlalchemy import inspect

    if not inspect(sync_conn).has_table(meta.name):
        return 0
    row = sync_conn.execute(meta.select().where(meta.c.key == "schema_version")).first()
    return int(row.value) if row else 0


def _set_version(sync_conn: Any, version: int) -> None:
    sync_conn.execute(meta.delete().where(meta.c.key == "schema_version"))
    sync_conn.execute(meta.insert().values(key="schema_version", value=str(version)))


def check_version(version: int, where: str) -> None:
    if version > SCHEMA_VERSION:
        raise ReviewError(
            f"the review database {where} has schema version {version}, newer than this "
            f"fluxgui's {SCHEMA_VERSION}: upgrade fluxgui to use it"
        )


#: the PostgreSQL advisory lock that makes fluxgui processes opening one review
#: database at once create or upgrade its schema one after another
UPGRADE_LOCK = 0x666C7578_17  # "flux", issue 17


def upgrade(sync_conn: Any, where: str, *, to: int = SCHEMA_VERSION) -> int:
    """Bring the database from its version up to ``to`` (one step per version); returns
    the version it had. Many processes may open a new database at once: on PostgreSQL
    they take turns (a transaction-level advisory lock), on SQLite the writer's
    ``BEGIN IMMEDIATE`` already makes them; each reads the version once it is its turn."""
    if sync_conn.dialect.name == "postgresql":
        sync_conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": UPGRADE_LOCK})
    found = read_version(sync_conn)
    check_version(found, where)
    for version in range(found + 1, to + 1):
        MIGRATIONS[version](sync_conn)
        _set_version(sync_conn, version)
    return found
