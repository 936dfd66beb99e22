"""The ``AdvancedSQLiteSession`` store: a :class:`~fluxgui.adapters.handle.OpenStore`
holding the Agents SDK store's parts read one branch at a time (:mod:`.reading`), its
branches (:mod:`.branches`), token usage (:mod:`.usage`), and its writer and forks
(:mod:`.writing`), which share which of the library's tables exist (:mod:`.tables`)."""

from __future__ import annotations

from fluxgui.core.roles import TablePairs, Traits

from ...handle import OpenStore
from ...parts import Place
from ..agents.listing import ADVANCED_EDITS, AgentsKeys, AgentsTables
from ..agents.search import AgentsSearch, index_advice
from ..agents.writing import AgentsEditor
from ..backend import Backend
from ..sessionrows import MessageRows
from .branches import AdvancedBranches
from .reading import AdvancedReader
from .tables import AdvancedTables
from .usage import AdvancedUsage
from .writing import AdvancedForks, AdvancedWriter

#: Responses items, sessions that may lack a sessions row; no single-message edits (the
#: structure rows would go out of step)
TRAITS = Traits(items=True, rowless_sessions=True, why_not={"editor": ADVANCED_EDITS})


def advanced_store(
    backend: Backend,
    display: str,
    sessions_table: str,
    messages_table: str,
    *,
    tables: set[str] | None = None,
    pairs: TablePairs | None = None,
) -> OpenStore:
    """The store over an ``AdvancedSQLiteSession`` database (SQLite) whose tables are
    ``tables``: every read of a session's items (paging, counting, ``flux_messages``,
    ``session_info``) is of the branch it is given (``main`` by default); session lists
    count the items of ``main``; a search looks at the items of every branch. Messages
    can be appended to a branch, branches created and deleted, a branch forked into a
    new session. ``pairs``: the other table pairs the database holds."""
    place = Place(backend, display)
    where = AgentsTables(place, sessions_table, messages_table, has_branches=True)
    keys = AgentsKeys()
    library = AdvancedTables(backend, tables)
    reader = AdvancedReader(where, keys)
    search = AgentsSearch(reader)
    editor = AgentsEditor(where, keys, reader)
    branches = AdvancedBranches(reader, library, editor)
    return OpenStore(
        format="agents",
        target=display,
        backend=backend,
        traits=TRAITS,
        reader=reader,
        writer=AdvancedWriter(editor, branches),
        forks=AdvancedForks(editor),
        branches=branches,
        usage=AdvancedUsage(backend, library),
        feed=search,
        text_filter=search,
        rows=MessageRows(reader),
        keys=keys,
        key_parts=where.key_parts(),
        tables=pairs or TablePairs(),
        advice=lambda: index_advice(backend, messages_table),
    )
