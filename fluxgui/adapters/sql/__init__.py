"""SQL session stores: flux's ``messages`` table and the Agents SDK schemas (plain,
``EncryptedSession`` items, ``AdvancedSQLiteSession`` branches), on SQLite files and
SQLAlchemy async URLs.

The layers, bottom up:

* back-ends — :mod:`.backend` (the small async interface every format writes its SQL
  against), :mod:`.sqlite` (aiosqlite; :mod:`.sqlitetext` reads text that is not
  UTF-8), :mod:`.alchemy` (SQLAlchemy async: Postgres, …);
* shared SQL pieces — :mod:`.detect` (which format a database holds), :mod:`.search`
  (LIKE pre-filters and keyset helpers), :mod:`.editor` (reversible edits as
  ``Change`` records), :mod:`.sessions` (writing a whole session), :mod:`.forks`,
  :mod:`.sessionrows` (the export's row pages);
* :mod:`.edits` — the editor, writer and forks parts each format builds on (edits
  through a table editor);
* the formats, each an :class:`~fluxgui.adapters.handle.OpenStore` of parts —
  :mod:`.flux`, :mod:`.agents`, :mod:`.advanced`.

Nothing is imported here (the back-ends load on first use), so opening one format loads
only what it needs (see :mod:`fluxgui.adapters.registry`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SqlAlchemyBackend", "SqliteBackend"]


def __getattr__(name: str) -> Any:
    # The back-ends, for callers that open a bare database (lazily: SQLAlchemy and
    # aiosqlite load only when asked for).
    if name == "SqliteBackend":
        from .sqlite import SqliteBackend

        return SqliteBackend
    if name == "SqlAlchemyBackend":
        from .alchemy import SqlAlchemyBackend

        return SqlAlchemyBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
