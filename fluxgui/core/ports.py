"""The ports: what a session store offers, declared once.

Every store implements :class:`SessionStore`: listing, paging, counting, searching and the
flux ``Session`` protocol. What a store can do beyond reading is *declared* in its
:class:`Capabilities` value; callers ask it (``store.capabilities.branches``) and then
call the methods that capability names. They never probe a store with ``getattr`` or
``isinstance`` on a concrete class: the methods of a capability a store lacks exist and
raise :class:`~fluxgui.core.errors.Unsupported` with the reason.

How a store is opened is a typed :class:`OpenOptions` value; each store kind declares the
options it takes as :class:`OptionSpec` values (see :mod:`fluxgui.adapters.registry`),
from which the command line builds its flags and the window its Open dialog fields.

Reads that depend on a branch (Agents SDK ``AdvancedSQLiteSession`` stores) take the
branch as a parameter (``branch=None``: ``main``): no caller switches a shared store's
state to read another branch.

This module is pure Python: the layers above (services, qt, cli) depend on it, the
adapters implement it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from typing import TYPE_CHECKING

from .model import Message, SessionInfo

if TYPE_CHECKING:  # annotations only: a command that lists sessions never loads them
    from .branches import BranchChange, BranchInfo, TurnInfo, TurnUsage, UsageTotals
    from .changes import Change
    from .jsonrecords import RowPage
    from .structure import StructureReport

Direction = Literal["backward", "forward"]
#: How :meth:`SessionStore.list_sessions` orders sessions: by last activity, by session
#: id, or by message count (ties broken by session id).
SessionOrder = Literal["activity", "id", "messages"]
ORDERS: tuple[str, ...] = ("activity", "id", "messages")
#: The branch every session has, and the one a fresh reader is on.
MAIN = "main"
#: A store's kind, for the options it takes: a SQL database (file or server), a Redis
#: server, a folder of JSON session files, the OpenAI Conversations API.
StoreKind = Literal["sql", "redis", "folder", "conversations"]


@dataclass
class SessionPage:
    """A page of the session list; ``cursor`` fetches the next page (``None``: the end)."""

    sessions: list[SessionInfo]
    cursor: tuple[Any, ...] | None


@dataclass(frozen=True)
class Capabilities:
    """What a store can do beyond reading (what it supports at all; whether it may now —
    opened writable, key given — is its ``can_write``/``check_*`` answer)."""

    #: takes appended messages (test-chat) and new sessions (import, copy)
    append: bool = False
    #: single-message edits with undo: update, insert, delete, pop
    edit: bool = False
    #: clears and deletes whole sessions (with undo)
    clear: bool = False
    #: forks a session at a message
    fork: bool = False
    #: Agents SDK branches: ``list_branches``, reads with ``branch=``, branch edits
    branches: bool = False
    #: token usage recorded per turn (``turn_usage``, ``branch_usage``, …)
    usage: bool = False
    #: may hold ``EncryptedSession`` envelopes (decrypted with a key)
    encryption: bool = False
    #: reports what it could not read (files of a folder) in ``problems``
    problems: bool = False
    #: a cleared session stays listed (an emptied file, a sessions row)
    keeps_cleared_sessions: bool = False
    #: its sessions are the ids the user names (the OpenAI Conversations API cannot list
    #: conversations): the window offers "Add conversation…" and remembers them
    lists_named_sessions: bool = False
    #: the store names new sessions itself (an import or a copy never keeps the source's
    #: id, so no id can be taken)
    names_new_sessions: bool = False
    #: message ids increase across the whole store and are never reused (the SQL
    #: formats): ``messages_after``, ``session_marks`` and ``message_total`` answer, so a search index
    #: follows new rows by id and finds changed sessions by their counts and last ids
    watermark: bool = False
    #: ``page_messages(whole_up_to=N)`` reads an item stored in more than N bytes as its
    #: start only (:attr:`~fluxgui.core.model.Message.partial`; the SQL formats)
    partial_reads: bool = False
    #: the database narrows a text search (``LIKE``/``ILIKE``: the SQL formats):
    #: ``search_messages`` and ``ids_holding`` answer, their candidates checked by the caller
    text_filter: bool = False
    #: a database server that may hold a trigram index on the text column (Postgres; it
    #: has ``text_filter`` too): ``server_text_index`` answers, ``text_index_advice`` says
    #: what a DBA could create
    server_search: bool = False


@dataclass(frozen=True)
class OpenOptions:
    """How to open a target (see :func:`fluxgui.adapters.registry.open_store`).

    ``create`` ("flux", "agents" or "json") makes that store when the target holds none
    yet (it implies ``writable``); ``format`` chooses when a database holds both formats.
    ``key``/``ttl`` decrypt ``EncryptedSession`` items (the key is never shown:
    ``repr`` leaves it out; several keys, a tuple, make a key ring: see :attr:`keys`); ``key_prefix`` names a Redis store's key prefix.
    ``base_url``, ``api_key`` (never shown either), ``conversations``, ``ids_file`` and
    ``api_timeout`` open the OpenAI Conversations API: the server, its key, the
    conversation ids to list (given, and one per line of the file), the seconds to wait
    for a request.
    """

    writable: bool = False
    create: str | None = None
    format: str | None = None
    sessions_table: str | None = None
    messages_table: str | None = None
    key: str | tuple[str, ...] | None = field(default=None, repr=False)
    ttl: int = 600
    key_prefix: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    conversations: tuple[str, ...] = ()
    ids_file: str | None = None
    api_timeout: int = 30

    def with_(self, **changes: Any) -> OpenOptions:
        """A copy with ``changes``."""
        return replace(self, **changes)

    @property
    def keys(self) -> tuple[str, ...]:
        """The encryption keys given (``key`` may be one or several: a key ring; each
        session is read with whichever opens it), each once, in the order given."""
        given = (self.key,) if isinstance(self.key, str) else tuple(self.key or ())
        return tuple(dict.fromkeys(k for k in given if k))


@dataclass(frozen=True)
class OptionSpec:
    """One option a store kind takes, declared once: the command line's flag and the
    Open dialog's field are built from it."""

    #: the :class:`OpenOptions` field it sets
    name: str
    #: the command-line flag (``--key-prefix``)
    flag: str
    metavar: str
    help: str
    #: the Open dialog's field label
    label: str
    #: the store kinds that take it
    kinds: tuple[StoreKind, ...]
    #: ``int`` or ``str``
    type: type = str
    default: Any = None
    #: never shown, logged or written to settings
    secret: bool = False
    #: the environment variable it falls back to
    env: str | None = None
    #: given more than once, each adds a value (a tuple of them)
    repeat: bool = False
    #: a command-line flag exists (``False``: the environment or the keyring only, as
    #: for an API key, which must not sit in a shell's history)
    cli: bool = True


class SessionStore(Protocol):
    """An open session store (every format implements this; see the module text)."""

    #: the format shown to users: "flux", "agents", "json"
    format: str
    #: the store as it may be shown (secrets hidden)
    target: str

    @property
    def capabilities(self) -> Capabilities: ...
    @property
    def can_write(self) -> bool: ...
    @property
    def needs_key(self) -> bool:
        """The store holds encrypted items (a key is needed to read and write them)."""
    @property
    def has_key(self) -> bool:
        """A key was given."""
    @property
    def problems(self) -> list[str]:
        """What could not be read (one line each; empty for most stores)."""
    #: the other Agents SDK table pairs (sessions table, messages table) the database
    #: holds besides the one opened (empty for most stores)
    other_tables: list[tuple[str, str]]
    #: when the database holds several pairs: how many sessions each holds (the one
    #: opened too; a table that could not be counted is left out)
    table_sessions: dict[tuple[str, str], int]

    @property
    def store_key(self) -> str:
        """The store named the same way on every machine, without secrets (see
        :mod:`fluxgui.core.storekey`); fluxgui's own data about it is keyed by it."""

    def local_paths(self) -> list[Path]: ...

    # -- reading ---------------------------------------------------------------------
    async def list_sessions(
        self, *, limit: int = 50, cursor: tuple[Any, ...] | None = None,
        order: SessionOrder = "activity", descending: bool = True,
    ) -> SessionPage: ...
    async def session_info(self, session_id: str, *, branch: str | None = None) -> SessionInfo | None: ...
    async def require_session(self, session_id: str) -> SessionInfo: ...
    async def sessions_by_ids(self, ids: list[str]) -> list[SessionInfo]: ...
    def search_session_ids(self, text: str) -> AsyncIterator[str]: ...
    async def search_sessions(self, text: str, *, limit: int | None = None) -> list[SessionInfo]: ...
    async def page_messages(
        self, session_id: str, *, limit: int = 100, anchor: tuple[Any, ...] | None = None,
        direction: Direction = "backward", branch: str | None = None,
    ) -> list[Message]: ...
    async def message_anchor(
        self, session_id: str, message_id: int, *, branch: str | None = None
    ) -> tuple[Any, ...] | None: ...
    def iter_messages(
        self, session_id: str, *, batch: int = 500, branch: str | None = None
    ) -> AsyncIterator[list[Message]]: ...
    def iter_row_pages(
        self, session_id: str, *, batch: int = 500
    ) -> AsyncIterator[list[Message] | RowPage]:
        """:meth:`iter_messages` for a reader that writes pages out in another thread:
        pages of plain stored rows come as a :class:`~.jsonrecords.RowPage`, read there."""
    async def latest_messages(self, session_id: str, limit: int | None, *, branch: str | None = None) -> list[Message]: ...
    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int: ...
    async def count_turns_before(self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None) -> int: ...
    async def flux_messages(self, session_id: str, limit: int | None, *, branch: str | None = None) -> list[dict[str, Any]]: ...
    async def change_token(self) -> Any: ...
    def session(self, session_id: str, *, branch: str | None = None) -> Any: ...
    async def fork_origin(self, session_id: str) -> dict[str, Any] | None: ...
    async def close(self) -> None: ...

    # -- search support (capabilities: watermark, text_filter, server_search) -----------
    async def messages_after(
        self, watermark: int, *, limit: int = 1000, session_id: str | None = None
    ) -> list[tuple[str, Message]]:
        """Up to ``limit`` messages whose id is above ``watermark``, by id, each with its
        session id (only ``session_id``'s when given; every branch's rows)."""
    async def session_marks(self) -> dict[str, tuple[int, int]]:
        """Each session's (message count, largest message id), in one query."""
    async def message_total(self) -> int:
        """How many messages the store holds (every branch's rows), one ``COUNT``."""
    async def server_text_index(self) -> str | None:
        """The name of the server's trigram index on the text column, ``None`` if none."""
    async def ids_holding(self, text: str) -> list[str]:
        """The session ids that may hold ``text`` (the database's ``LIKE``/``ILIKE`` on the
        id column: each is checked by the caller), without reading any message text."""
    def text_index_advice(self) -> str:
        """The statements a DBA could run to create that index (fluxgui never runs them)."""
    def search_messages(
        self, text: str, limit: int | None = None
    ) -> AsyncIterator[list[tuple[str, Message]]]:
        """Messages (with their session ids) the database's pre-filter lets through for
        ``text`` — every message whose text holds it, and others — newest first (by id),
        in batches; the caller checks each. ``limit``: the hits the caller wants (it stops
        reading once it has them), which lets the server plan for the first rows."""
    async def index_advice(self) -> list[str]:
        """Sentences naming an index the database lacks that makes listing slow, each
        with the exact ``CREATE INDEX`` a DBA could run (fluxgui never runs it)."""

    # -- writing (capabilities: append, edit, clear, fork) ------------------------------
    def check_editable(self) -> None: ...
    def check_importable(self) -> None: ...
    def edit_reason(self) -> str | None: ...
    async def add_messages(self, session_id: str, messages: list[dict[str, Any]], *, branch: str | None = None) -> int: ...
    async def clear_messages(self, session_id: str) -> Change: ...
    async def delete_session(self, session_id: str) -> Change: ...
    async def delete_messages(self, session_id: str, message_ids: list[int]) -> Change: ...
    async def pop_message(self, session_id: str) -> Change: ...
    async def update_message(self, session_id: str, message_id: int, spec: dict[str, Any], *, original: Message | None = None) -> Change: ...
    async def insert_message(self, session_id: str, spec: dict[str, Any], *, anchor: int | None = None, where: Literal["before", "after"] = "after") -> Change: ...
    async def rewrite_messages(
        self, session_id: str, *, delete: list[int], insert_after: list[tuple[int, dict[str, Any]]], label: str,
        move_before: Sequence[tuple[int, int]] = (),
    ) -> Change: ...
    async def fork_session(
        self, session_id: str, at_message_id: int, new_id: str | None = None, *,
        branch: str | None = None, drop_unreadable: bool = False,
    ) -> Any: ...
    async def apply_change(self, change: Any) -> Any: ...
    def edit_values(self, spec: dict[str, Any], *, original: Message | None = None) -> dict[str, Any]: ...
    async def import_session(
        self, session_id: str, pages: AsyncIterator[list[Message]] | Iterator[list[Message]], *,
        created_at: str | None = None, updated_at: str | None = None, rename: bool = False,
    ) -> tuple[str, int]: ...

    # -- branches and usage (capabilities: branches, usage) -----------------------------
    async def list_branches(self, session_id: str, *, current: str | None = None) -> list[BranchInfo]: ...
    async def branch_exists(self, session_id: str, branch: str) -> bool: ...
    async def conversation_turns(self, session_id: str, *, branch: str | None = None) -> list[TurnInfo]: ...
    async def structure_report(self, session_id: str) -> StructureReport: ...
    async def turn_usage(self, session_id: str, branch: str | None = None) -> list[TurnUsage]: ...
    async def branch_usage(self, session_id: str, branch: str | None = None) -> UsageTotals | None: ...
    async def session_usage(self, session_id: str) -> UsageTotals | None: ...
    async def create_branch_from_turn(self, session_id: str, turn_number: int, branch_name: str | None = None, *, branch: str | None = None) -> BranchChange: ...
    async def delete_branch(self, session_id: str, branch_id: str, *, current: str | None = None) -> BranchChange: ...
