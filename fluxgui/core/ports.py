"""How a store is opened, and the shapes its reads share.

What a store offers is declared by its roles (:mod:`fluxgui.core.roles`). How a store is
opened is a typed :class:`OpenOptions` value; each store kind declares the options it takes as :class:`OptionSpec` values (see :mod:`fluxgui.adapters.registry`),
from which the command line builds its flags and the window its Open dialog fields.

Reads that depend on a branch (Agents SDK ``AdvancedSQLiteSession`` stores) take the
branch as a parameter (``branch=None``: ``main``): no caller switches a shared store's
state to read another branch.

This module is pure Python: the layers above (services, qt, cli) depend on it, the
adapters implement it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .model import SessionInfo

Direction = Literal["backward", "forward"]
#: How :meth:`~fluxgui.core.roles.Reader.list_sessions` orders sessions: by last
#: activity, by session id, or by message count (ties broken by session id).
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
