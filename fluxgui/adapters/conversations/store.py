"""The OpenAI Conversations store: a :class:`~fluxgui.adapters.handle.OpenStore` holding
the reader (:mod:`.reader`), the editor (:mod:`.editor`) and the writer (:mod:`.writer`),
which share what is known of the conversations (:mod:`.known`)."""

from __future__ import annotations

from fluxgui.core.roles import Traits

from ..handle import OpenStore
from ..parts import Place
from .client import ConversationsBackend
from .editor import ConversationsEditor
from .known import Known
from .reader import ConversationsReader
from .writer import ConversationsWriter
from .writes import ItemWrites

#: the sessions are the conversation ids given (the API cannot list them); the server
#: names every new conversation; reading costs requests; its items are Responses items
TRAITS = Traits(
    items=True,
    named_sessions=True,
    names_new_sessions=True,
    remote=True,
    noun="conversation",
    reports_problems=True,
)


def conversations_store(backend: ConversationsBackend, display: str, ids: list[str]) -> OpenStore:
    """The store over a client that lists the conversations ``ids``."""
    known = Known(ids)
    reader = ConversationsReader(Place(backend, display), known)
    writes = ItemWrites(reader)
    return OpenStore(
        format="agents",  # its items are the Agents SDK's
        target=display,
        backend=backend,
        traits=TRAITS,
        reader=reader,
        editor=ConversationsEditor(writes),
        writer=ConversationsWriter(writes),
        # the listed ids the server does not know
        report=known.problems,
    )
