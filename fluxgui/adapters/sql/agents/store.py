"""The Agents SDK store: a :class:`~fluxgui.adapters.handle.OpenStore` holding its reader
(:mod:`.reading`, on the session list of :mod:`.listing`), its search support
(:mod:`.search`) and its editor, writer and forks (:mod:`.writing`), which share where
the store is (:class:`~.listing.AgentsTables`) and its keys
(:class:`~.listing.AgentsKeys`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from fluxgui.core.roles import TablePairs, Traits

from ...handle import OpenStore
from ...parts import Place
from ..backend import Backend
from ..detect import AGENTS_MESSAGES as DEFAULT_MESSAGES
from ..detect import AGENTS_SESSIONS as DEFAULT_SESSIONS
from ..sessionrows import SqlRows
from .listing import ADVANCED_EDITS, AgentsKeys, AgentsTables
from .reading import AgentsReader
from .search import AgentsSearch, index_advice
from .writing import AgentsEditor, AgentsForks, AgentsWriter

if TYPE_CHECKING:
    from ...encryption import ItemCipher

#: Responses items; a session may hold items without a sessions row; items may be
#: ``EncryptedSession`` envelopes; an item stored in several megabytes is read as its start
TRAITS = Traits(items=True, rowless_sessions=True, encryption=True, partial_reads=True)


def agents_store(
    backend: Backend,
    display: str,
    sessions_table: str = DEFAULT_SESSIONS,
    messages_table: str = DEFAULT_MESSAGES,
    *,
    has_branches: bool = False,
    cipher: ItemCipher | None = None,
    tables: TablePairs | None = None,
) -> OpenStore:
    """The store over the Agents SDK tables ``sessions_table``/``messages_table``.

    It reads, edits, writes and forks (items sealed with ``cipher`` when given), except
    where ``message_structure`` rows are present (``has_branches``: branches the plain
    schema cannot keep in step; an AdvancedSQLiteSession store opened as a plain one),
    lists items by id and narrows a search in the database (on Postgres, with the
    server's trigram index). ``tables``: the other table pairs the database holds."""
    place = Place(backend, display)
    where = AgentsTables(place, sessions_table, messages_table, has_branches=has_branches)
    keys = AgentsKeys(cipher)
    reader = AgentsReader(where, keys)
    search = AgentsSearch(reader)
    editor = AgentsEditor(where, keys, reader)
    plain = not has_branches
    return OpenStore(
        format="agents",
        target=display,
        backend=backend,
        traits=TRAITS if plain else replace(TRAITS, why_not={"editor": ADVANCED_EDITS}),
        reader=reader,
        editor=editor if plain else None,
        writer=AgentsWriter(editor) if plain else None,
        forks=AgentsForks(editor) if plain else None,
        feed=search,
        text_filter=search,
        server_index=search if backend.dialect == "postgresql" else None,
        rows=SqlRows(backend, reader),
        keys=keys,
        key_parts=where.key_parts(),
        tables=tables or TablePairs(),
        advice=lambda: index_advice(backend, messages_table),
    )


async def open_agents(
    backend: Backend,
    display: str,
    sessions_table: str,
    messages_table: str,
    *,
    has_branches: bool = False,
    cipher: ItemCipher | None = None,
    tables: TablePairs | None = None,
) -> OpenStore:
    """:func:`agents_store` over tables that exist, after looking for
    ``EncryptedSession`` envelopes in them (and checking the key against them:
    :meth:`~.reading.AgentsReader.detect_encryption`)."""
    store = agents_store(
        backend, display, sessions_table, messages_table,
        has_branches=has_branches, cipher=cipher, tables=tables,
    )
    reader = store.reader
    assert isinstance(reader, AgentsReader)
    await reader.detect_encryption()
    return store


def agents_ddl(backend: Backend, sessions_table: str, messages_table: str) -> list[str]:
    """The statements that make the two tables (``create``), as the library does."""
    return AgentsTables(Place(backend, ""), sessions_table, messages_table).ddl()
