"""The roles a store plays, each a small protocol, and the traits it declares.

A caller needs a role, not a store: reading (every store reads), editing single
messages, writing whole sessions, forking, Agents SDK branches, token usage, the search
index's feed, a database server's own search, the export's row pages. A store offers
each role it plays as an object (``store.editor``, ``store.branches``, …) and ``None``
for one it does not play, so "can this store edit?" is ``store.editor is not None`` —
answered by the type, never by probing. Why a role is missing is one sentence:
:func:`missing`. Whether a role may act *now* (the store is open read-only, its key is
missing) is the role's own ``check_editable()``/``check_importable()``.

How the formats differ where callers must know it (item conventions, what a raw item is,
how a request is built from a session, how sessions are named) is declared once per
format in :class:`Traits`, never decided from ``store.format``.

This module is pure Python: the layers above depend on it, the adapters implement it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn, Protocol, TypeAlias

if TYPE_CHECKING:  # annotations only: a command that lists sessions never loads them
    from .branches import BranchChange, BranchInfo, TurnInfo, TurnUsage, UsageTotals
    from .changes import Change, Where
    from .jsonrecords import RowPage
    from .model import Message, SessionInfo
    from .ports import Direction, SessionOrder, SessionPage
    from .structure import StructureReport

#: The roles by their attribute on a store, with what each is for (the sentence of a
#: missing role names it).
ROLES: dict[str, str] = {
    "editor": "edit single messages",
    "writer": "write sessions",
    "forks": "fork sessions",
    "branches": "keep branches (only AdvancedSQLiteSession stores do)",
    "usage": "keep token usage (only AdvancedSQLiteSession stores do)",
    "feed": "list messages by id",
    "text_filter": "narrow a text search in the database",
    "server_index": "search through a server's text index",
    "rows": "read rows for an export",
}

#: pages of messages to write, as they are read (from a store, or from a file)
Pages: TypeAlias = "AsyncIterator[list[Message]] | Iterator[list[Message]]"
#: what a page of messages goes through before it is shown or written (redaction)
PageTransform: TypeAlias = "Callable[[list[Message]], list[Message]]"
#: what a session's id goes through where a redacted output writes it (its header, each
#: record's ``session_id``, the id a copy writes it under): the same redaction as its pages
IdTransform: TypeAlias = "Callable[[str], str]"

Role = Literal[
    "editor", "writer", "forks", "branches", "usage", "feed", "text_filter", "server_index", "rows"
]


@dataclass(frozen=True)
class Traits:
    """How a format differs where a caller must know it, declared by the format."""

    #: the messages are OpenAI Responses items (the Agents SDK, the Conversations API);
    #: ``False``: chat messages (flux rows, JSON session files) with ``tool_calls`` metadata
    items: bool = False
    #: the stored form of a message is its table's columns (``role``, ``content``,
    #: ``metadata``: flux), not a stored JSON value
    columns: bool = False
    #: the owning library parses every row's metadata as JSON when it reads a session
    #: (flux): a row whose metadata is not JSON stops a run before anything is sent
    strict_metadata: bool = False
    #: a session can hold items without a sessions row (the Agents SDK's tables): such
    #: a session is found only by asking for it, not in a listing of ids
    rowless_sessions: bool = False
    #: may hold ``EncryptedSession`` envelopes (read with a key)
    encryption: bool = False
    #: a cleared session stays listed (an emptied file, a sessions row)
    keeps_cleared_sessions: bool = False
    #: its sessions are the ids the user names: it cannot list them (the window offers
    #: "Add conversation…" and remembers them)
    named_sessions: bool = False
    #: the store names new sessions itself: an import or a copy never keeps an id
    names_new_sessions: bool = False
    #: reading it is slow and costs requests (a remote API): no local search index is
    #: built for it in the background
    remote: bool = False
    #: an item stored in several megabytes can be read as its start and its size
    #: (``page_messages(whole_up_to=…)``), the rest on demand
    partial_reads: bool = False
    #: what a user calls one of its sessions
    noun: str = "session"
    #: what reports what could not be read (``store.problems``): files of a folder,
    #: conversations a server lost
    reports_problems: bool = False
    #: why the format does not play a role, where it has more to say than that it does
    #: not (role → the sentence after the store's name: ``": single items … in place"``)
    why_not: Mapping[str, str] = field(default_factory=dict)


class Reader(Protocol):
    """Reading, every store's role (``store.reader``): list, page, count, search."""

    async def list_sessions(
        self, *, limit: int = 50, cursor: tuple[Any, ...] | None = None,
        order: SessionOrder = "activity", descending: bool = True, since: float | None = None,
    ) -> SessionPage: ...
    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None: ...
    async def require_session(self, session_id: str) -> SessionInfo: ...
    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]: ...
    def search_session_ids(self, text: str) -> AsyncGenerator[str, None]: ...
    async def search_sessions(self, text: str, *, limit: int | None = None) -> list[SessionInfo]: ...
    async def page_messages(
        self, session_id: str, *, limit: int = 100, anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward", branch: str | None = None,
        whole_up_to: int | None = None,
    ) -> list[Message]: ...
    async def message_anchor(
        self, session_id: str, message_id: int, *, branch: str | None = None
    ) -> tuple[Any, ...] | None: ...
    def iter_messages(
        self, session_id: str, *, batch: int = 500, branch: str | None = None
    ) -> AsyncGenerator[list[Message], None]: ...
    async def latest_messages(
        self, session_id: str, limit: int | None, *, branch: str | None = None
    ) -> list[Message]: ...
    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int: ...
    async def count_turns_before(
        self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None
    ) -> int: ...


class Editor(Protocol):
    """Single messages changed in a session (``store.editor``), each one undoable
    :class:`~.changes.Change`. ``in_place``: messages can be changed and put between
    others (SQL tables); ``False``: only removed and appended (the Conversations API)."""

    in_place: bool

    def check_editable(self) -> None:
        """Raise why nothing can be edited now (open read-only, no key)."""
    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> dict[str, Any]: ...
    async def update_message(
        self, session_id: str, message_id: int, spec: dict[str, Any], *, original: Message | None = None
    ) -> Change: ...
    async def insert_message(
        self, session_id: str, spec: dict[str, Any], *, anchor: int | None = None, where: Where = "after"
    ) -> Change: ...
    async def delete_messages(self, session_id: str, message_ids: list[int]) -> Change: ...
    async def pop_message(self, session_id: str) -> Change: ...
    async def rewrite_messages(
        self, session_id: str, *, delete: list[int], insert_after: list[tuple[int, dict[str, Any]]],
        label: str, move_before: list[tuple[int, int]] | None = None,
    ) -> Change: ...


class Writer(Protocol):
    """Whole sessions written (``store.writer``): appended to, cleared, deleted,
    imported, and any :class:`~.changes.Change` of this store applied again or undone."""

    def check_importable(self) -> None:
        """Raise why no session can be written now (open read-only, no key)."""
    async def add_messages(
        self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None
    ) -> int: ...
    async def clear_messages(self, session_id: str) -> Change: ...
    async def clear_session(self, session_id: str) -> int: ...
    async def delete_session(self, session_id: str) -> Change: ...
    async def import_session(
        self, session_id: str, pages: Pages, *, created_at: str | None = None,
        updated_at: str | None = None, rename: bool = False,
    ) -> tuple[str, int]: ...
    async def created_change(self, session_id: str) -> Change:
        """The session as the change that wrote it (nothing before, its rows after), read
        and nothing written: what an undo stack keeps for a session written elsewhere."""
    async def apply_change(self, change: Any) -> Any: ...


class Forks(Protocol):
    """Sessions forked at a message (``store.forks``), and where a fork came from."""

    async def fork_session(
        self, session_id: str, at_message_id: int, new_id: str | None = None, *,
        branch: str | None = None, drop_unreadable: bool = False,
    ) -> Any: ...
    async def fork_origin(self, session_id: str) -> dict[str, Any] | None: ...


class Branches(Protocol):
    """Agents SDK branches (``store.branches``: AdvancedSQLiteSession stores)."""

    async def list_branches(self, session_id: str, *, current: str | None = None) -> list[BranchInfo]: ...
    async def branch_exists(self, session_id: str, branch: str) -> bool: ...
    async def conversation_turns(self, session_id: str, *, branch: str | None = None) -> list[TurnInfo]: ...
    async def structure_report(self, session_id: str) -> StructureReport: ...
    async def create_branch_from_turn(
        self, session_id: str, turn_number: int, branch_name: str | None = None, *, branch: str | None = None
    ) -> BranchChange: ...
    async def delete_branch(
        self, session_id: str, branch_id: str, *, current: str | None = None
    ) -> BranchChange: ...


class Usage(Protocol):
    """Token usage recorded per turn (``store.usage``: AdvancedSQLiteSession stores)."""

    async def turn_usage(self, session_id: str, branch: str | None = None) -> list[TurnUsage]: ...
    async def branch_usage(self, session_id: str, branch: str | None = None) -> UsageTotals | None: ...
    async def session_usage(self, session_id: str) -> UsageTotals | None: ...


class Feed(Protocol):
    """Messages by store-wide increasing ids (``store.feed``: the SQL formats), which a
    search index follows."""

    async def messages_after(
        self, watermark: int, *, limit: int = 1000, session_id: str | None = None
    ) -> list[tuple[str, Message]]: ...
    async def session_marks(self) -> dict[str, tuple[int, int]]: ...
    async def message_total(self) -> int: ...


class TextFilter(Protocol):
    """A text search the database narrows (``store.text_filter``: the SQL formats, with
    ``LIKE``/``ILIKE``): candidates, each checked by the caller."""

    async def ids_holding(self, text: str) -> list[str]: ...
    def search_messages(
        self, text: str, limit: int | None = None
    ) -> AsyncGenerator[list[tuple[str, Message]], None]: ...


class ServerIndex(Protocol):
    """A database server's trigram index on the text column (``store.server_index``:
    Postgres), which answers the text filter's ``ILIKE``."""

    async def server_text_index(self) -> str | None: ...
    def text_index_advice(self) -> str: ...


class Rows(Protocol):
    """Pages of plain stored rows for a writer in another thread (``store.rows``: the
    SQL formats): an export writes them as JSON without building Messages here."""

    def iter_row_pages(
        self, session_id: str, *, batch: int = 500
    ) -> AsyncGenerator[list[Message] | RowPage, None]: ...
    async def row_pages_of(
        self, session_ids: list[str], *, limit: int
    ) -> dict[str, list[Message] | RowPage]: ...


class Identity(Protocol):
    """What a store is and where (``store.format``, ``store.target``, …)."""

    @property
    def format(self) -> str:
        """The format shown to users: "flux", "agents", "json"."""
    @property
    def target(self) -> str:
        """The store as it may be shown (secrets hidden)."""
    @property
    def traits(self) -> Traits:
        """The format's declared differences."""
    @property
    def tables(self) -> TablePairs:
        """The other Agents SDK table pairs the database holds besides the one opened,
        each with how many sessions it holds when it could be counted."""

    @property
    def store_key(self) -> str: ...
    @property
    def can_write(self) -> bool: ...
    @property
    def needs_key(self) -> bool: ...
    @property
    def has_key(self) -> bool: ...
    @property
    def problems(self) -> list[str]: ...
    def local_paths(self) -> list[Path]: ...
    async def change_token(self) -> Any: ...
    async def close(self) -> None: ...


class Store(Identity, Protocol):
    """An open store: what it is (:class:`Identity`) and the roles it plays."""

    @property
    def reader(self) -> Reader: ...
    @property
    def editor(self) -> Editor | None: ...
    @property
    def writer(self) -> Writer | None: ...
    @property
    def forks(self) -> Forks | None: ...
    @property
    def branches(self) -> Branches | None: ...
    @property
    def usage(self) -> Usage | None: ...
    @property
    def feed(self) -> Feed | None: ...
    @property
    def text_filter(self) -> TextFilter | None: ...
    @property
    def server_index(self) -> ServerIndex | None: ...
    @property
    def rows(self) -> Rows | None: ...

    def session(self, session_id: str, *, branch: str | None = None) -> Any:
        """A flux ``Session`` over one session (one branch of it)."""
    async def index_advice(self) -> list[str]:
        """Indexes the database lacks that make listing slow, each with its statement."""


@dataclass
class TablePairs:
    """The Agents SDK table pairs a database holds besides the one opened."""

    #: (sessions table, messages table) of each other pair
    others: list[tuple[str, str]] = field(default_factory=list)
    #: how many sessions each pair holds (the one opened too), where counted
    sessions: dict[tuple[str, str], int] = field(default_factory=dict)


def missing(store: Identity, role: Role) -> str:
    """The one sentence for a role ``store`` does not play."""
    why = store.traits.why_not.get(role)
    if why is not None:
        return f"{store.target}{why}"
    return f"{store.target} cannot {ROLES[role]} ({store.format} format)"


#: the roles that write: a store open read-only says that first
WRITING_ROLES = ("editor", "writer", "forks")


def refuse(store: Identity, role: Role) -> NoReturn:
    """Raise why ``store`` does not play ``role``: a writing role of a store open read-only
    says how to change that first (:class:`~.errors.ReadOnlyError`), as an edit would; a
    missing role its sentence (:func:`missing`; :class:`~.errors.Unsupported` for the
    others). Callers write ``store.editor or refuse(store, "editor")``."""
    from .errors import ReadOnlyError, Unsupported

    if role in WRITING_ROLES:
        if not store.can_write:
            raise ReadOnlyError(f"{store.target} is open read-only; open it writable to change it")
        raise ReadOnlyError(missing(store, role))
    raise Unsupported(missing(store, role))
