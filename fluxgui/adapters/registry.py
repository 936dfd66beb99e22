"""The opening registry: open a target, detect its format, hand out a store.

This is the one door the window and the command line use into the adapters (besides
the ports in :mod:`fluxgui.core.ports`): :func:`open_store` takes a target and a typed
:class:`~fluxgui.core.ports.OpenOptions`, and :data:`OPTIONS` declares, once, the options
each kind of store takes — the CLI's flags and the Open dialogs' fields are built from it.

A target is named the way its ecosystem names it: a file path, a folder of JSON session
files, a SQLAlchemy URL (``sqlite:///…``, ``postgresql+asyncpg://…``), ``redis://…`` or
``openai-conversations:`` (the OpenAI Conversations API, its base URL after the colon or
in ``base_url``).
Stores open read-only unless ``writable``; ``create`` makes the schema of the chosen format
when it is missing. The format modules are imported only when a target needs them (a
``ls`` of a SQLite file loads neither Redis nor the encryption code).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fluxgui.core.errors import (
    FluxguiError,
    ReadOnlyError,
    NotASessionStore,
    SeveralStores,
    TargetError,
    show_id,
)
from fluxgui.core.ports import OpenOptions, OptionSpec
from fluxgui.core.roles import TablePairs
from fluxgui.core.redact import redact_text, redact_url
from fluxgui.core.text import COUNT_CAP, table_pairs_text

from .conversations.target import PUBLIC_BASE_URL, is_conversations_target
from .conversations.target import SCHEME as CONVERSATIONS_SCHEME  # noqa: F401 (for the open dialog)
from .redis.url import DEFAULT_PREFIX, is_redis_url, redis_display

if TYPE_CHECKING:
    from .handle import OpenStore as Store
    from .encryption import ItemCipher
    from .sql.backend import Backend

#: ``EncryptedSession``'s default TTL (seconds): older items show as expired
DEFAULT_TTL = 600
#: where the command line looks for the ``EncryptedSession`` key when ``--key`` is not given
KEY_ENV = "FLUXGUI_KEY"

#: Every option a store kind takes, declared once (see :class:`OptionSpec`).
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "sessions_table", "--sessions-table", "NAME",
        "Agents SDK sessions table name (default agent_sessions)",
        "Sessions table", ("sql",),
    ),
    OptionSpec(
        "messages_table", "--messages-table", "NAME",
        "Agents SDK messages table name (default agent_messages)",
        "Messages table", ("sql",),
    ),
    OptionSpec(
        "key", "--key", "KEY",
        f"the EncryptedSession master key (default: the {KEY_ENV} environment variable; "
        "give it again for sessions sealed with other keys: each session is read with "
        "whichever opens it; fluxgui never writes a key anywhere)",
        "Encryption key", ("sql", "redis"), secret=True, env=KEY_ENV, repeat=True,
    ),
    OptionSpec(
        "ttl", "--ttl", "SECONDS",
        f"encrypted items older than this show as expired (default {DEFAULT_TTL}, as the SDK)",
        "Expiry (seconds)", ("sql", "redis"), type=int, default=DEFAULT_TTL,
    ),
    OptionSpec(
        "key_prefix", "--key-prefix", "PREFIX",
        f"the Redis key prefix (default {DEFAULT_PREFIX})",
        "Key prefix", ("redis",), default=None,
    ),
    OptionSpec(
        "base_url", "--base-url", "URL",
        "the OpenAI Conversations API's base URL (default: the OPENAI_BASE_URL environment "
        f"variable, else {PUBLIC_BASE_URL})",
        "Base URL", ("conversations",),
    ),
    OptionSpec(
        "api_key", "--api-key", "KEY",
        "the OpenAI API key: from the OPENAI_API_KEY environment variable, else the system "
        "keyring (never a flag, never written by fluxgui)",
        "API key", ("conversations",), secret=True, env="OPENAI_API_KEY", cli=False,
    ),
    OptionSpec(
        "conversations", "--conversation", "ID",
        "a conversation id to list (give it again for more): the Conversations API cannot "
        "list conversations",
        "Conversation ids", ("conversations",), repeat=True,
    ),
    OptionSpec(
        "ids_file", "--ids", "FILE",
        "a file of conversation ids to list, one a line ('#' starts a comment)",
        "Ids file", ("conversations",),
    ),
    OptionSpec(
        "api_timeout", "--api-timeout", "SECONDS",
        "seconds to wait for each Conversations API request (default 30; the client tries "
        "3 times)",
        "Timeout (seconds)", ("conversations",), type=int, default=30,
    ),
)


def conversations_location(target: str, base_url: str | None = None) -> str | None:
    """Where a Conversations target's server is (its store key's location: the base URL,
    no key), or ``None`` for other targets; raises ``TargetError`` for a bad base URL."""
    if not is_conversations_target(target):
        return None
    from .conversations.target import base_url_of, location

    return location(base_url_of(target, base_url))


def conversations_label(target: str, base_url: str | None = None) -> str | None:
    """How a Conversations target is named to people (``OpenAI Conversations at URL``,
    secrets hidden), or ``None`` for other targets or a bad base URL."""
    if not is_conversations_target(target):
        return None
    from .conversations.target import base_url_of, shown

    try:
        return shown(base_url_of(target, base_url))
    except TargetError:
        return None


def options_from(value: Callable[[OptionSpec], Any], **fields: Any) -> OpenOptions:
    """The declared options as ``value(spec)`` gives them (a command line's namespace),
    with ``fields`` (``writable``, ``format``, …) set too. An option not given (``None``,
    or one without a flag) falls back to its environment variable (``--key`` to
    ``$FLUXGUI_KEY``; an empty variable counts as not set); a repeated one is a tuple."""
    values: dict[str, Any] = {}
    for spec in OPTIONS:
        given = value(spec) if spec.cli else None
        if given is None and spec.env:
            given = os.environ.get(spec.env) or None
        if spec.repeat and isinstance(given, str):  # one value from the environment
            given = (given,)
        values[spec.name] = tuple(given or ()) if spec.repeat else given
    return OpenOptions(**values, **fields)


def options_for(kind: str) -> tuple[OptionSpec, ...]:
    """The options a store kind (``sql``, ``redis``, ``folder``, ``conversations``) takes."""
    return tuple(o for o in OPTIONS if kind in o.kinds)


def kind_of(target: str) -> str:
    """The store kind a target names: ``conversations``, ``redis``, ``folder`` or ``sql``."""
    if is_conversations_target(target):
        return "conversations"
    if is_redis_url(target):
        return "redis"
    if "://" not in target and Path(target).expanduser().is_dir():
        return "folder"
    return "sql"


@dataclass(frozen=True)
class Target:
    """A parsed target: a SQLite file path or an async SQLAlchemy URL."""

    path: Path | None = None
    url: str | None = None
    display: str = ""


def parse_target(target: str) -> Target:
    """Split a target into a SQLite path or a SQLAlchemy async URL (secrets hidden in
    ``display``)."""
    if "://" not in target:
        return Target(path=Path(target).expanduser(), display=target)
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    display = redact_url(target)
    try:
        url = make_url(target)
    except (ArgumentError, ValueError) as exc:
        raise TargetError(f"bad URL {show_id(display)}: {redact_text(str(exc))}") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise TargetError(f"{display} names no database file")
        return Target(path=Path(url.database).expanduser(), display=url.database)
    if backend in ("postgresql", "postgres") and "+" not in url.drivername:
        # A bare postgresql:// (or Heroku's postgres://) uses asyncpg, which fluxgui ships
        # with: SQLAlchemy's own default driver changed (psycopg2, then psycopg in 2.1).
        url = url.set(drivername="postgresql+asyncpg")
    return Target(url=url.render_as_string(hide_password=False), display=display)


def check_port(target: str) -> None:
    """A URL's port must be a number from 0 to 65535 (drivers fail on others with a
    traceback); one line otherwise. Paths pass unchanged."""
    if "://" not in target:
        return
    from urllib.parse import urlsplit

    try:
        urlsplit(target).port
    except ValueError as exc:
        raise TargetError(f"bad URL {show_id(redact_url(target))}: {exc}") from None


def check_node(path: Path) -> None:
    """A store path must be a regular file or a folder (or not exist yet): opening a FIFO
    would wait forever, a device or a socket is no store."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return  # missing (the opener says so) or unreadable (it says why)
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise TargetError(
            f"{show_id(str(path))} is not a regular file or a folder "
            "(a FIFO, a device or a socket): it cannot be a session store"
        )


def preload_files() -> None:
    """Import what opening a SQLite store of either format needs. The window calls this
    as it starts (before its collector's freeze, see :mod:`fluxgui.qt.collector`): its
    first open then imports nothing on the UI thread, where ~20 ms of imports are a
    stall. A command never calls it: it imports only what its target needs."""
    from .sql import agents, detect, flux, search, sqlite, textsearch  # noqa: F401


async def open_store(target: str, options: OpenOptions | None = None, **changes: Any) -> Store:
    """Open ``target`` and return its store.

    ``options`` (an :class:`~fluxgui.core.ports.OpenOptions`; keyword ``changes`` override
    its fields) say how: ``create`` ("flux", "agents" or "json") makes that schema when
    the target holds no session store yet (a new SQLite file or folder is created); it
    implies ``writable``. ``format`` chooses when a database holds more than one format.
    ``key`` (and ``ttl``, in seconds) decrypt Agents SDK ``EncryptedSession`` items;
    ``key_prefix`` names the Redis key prefix (default ``agents:session``).
    """
    opts = (options or OpenOptions()).with_(**changes) if changes else (options or OpenOptions())
    create, format = opts.create, opts.format
    sessions_table, messages_table = opts.sessions_table, opts.messages_table
    keys, ttl, key_prefix = opts.keys, opts.ttl, opts.key_prefix
    writable = opts.writable or create is not None
    if not target:
        raise TargetError("no target given: name a SQLite file, a folder or a URL")
    if is_conversations_target(target):
        from .conversations.connect import open_conversations

        return await open_conversations(target, opts.with_(writable=writable, create=create))
    check_port(target)
    cipher = None
    if keys:
        from .encryption import ItemCipher

        cipher = ItemCipher(keys, ttl)
    if is_redis_url(target):
        from .redis.connect import open_redis

        return await open_redis(
            target, redis_display(target), writable=writable,
            prefix=key_prefix or DEFAULT_PREFIX, cipher=cipher,
        )
    if "://" not in target:
        path = Path(target).expanduser()
        check_node(path)
        if writable:
            from fluxgui.core.demo import is_demo_store

            if is_demo_store(path):
                raise ReadOnlyError(
                    "the demo store ships with fluxgui and is never changed: copy it first "
                    "(fluxgui copy demo my.db) and open the copy"
                )
        if path.is_dir() or create == "json":
            from .jsonfolder.store import open_folder

            return await open_folder(path, target, writable=writable, create=create == "json")
    parsed = parse_target(target)
    backend: Backend
    if parsed.path is not None:
        from .sql.sqlite import SqliteBackend

        check_node(parsed.path)
        backend = await SqliteBackend.open(
            parsed.path, writable=writable, create=create is not None
        )
    else:
        from .sql.alchemy import SqlAlchemyBackend

        assert parsed.url is not None
        backend = await SqlAlchemyBackend.open(parsed.url, parsed.display, writable=writable)
    try:
        return await _make_store(
            backend, parsed.display, create, format, sessions_table, messages_table, cipher
        )
    except BaseException:
        await backend.close()
        raise


async def _make_store(
    backend: Backend,
    display: str,
    create: str | None,
    format: str | None,
    sessions_table: str | None,
    messages_table: str | None,
    cipher: ItemCipher | None = None,
) -> Store:
    # Only the format found is imported: a flux file loads neither the Agents SDK store
    # (nor its encryption) nor the AdvancedSQLiteSession reader.
    from .sql import detect

    tables = await backend.tables()
    found = detect.detect(tables, sessions_table, messages_table)
    if format == "flux" and detect.FLUX_TABLE in tables:
        found = ("flux", None, None)
    if found is None and create is not None:
        return await _new_store(
            create, backend, display, sessions_table, messages_table, cipher
        )
    if found is None and not (sessions_table or messages_table):
        pairs = detect.table_pairs(tables)
        if len(pairs) > 1:
            counts = await _sessions_per_pair(backend, pairs)
            shown = table_pairs_text(pairs, counts, show_id)
            raise SeveralStores(
                f"{display} holds {len(pairs)} Agents SDK stores (tables {shown}): "
                "choose one with --sessions-table and --messages-table",
                pairs,
                counts,
            )
    if found is None:
        raise NotASessionStore(
            f"{display} is not a session store: {detect.describe(tables)} "
            "(expected flux's 'messages' table or the Agents SDK's "
            f"'{sessions_table or detect.AGENTS_SESSIONS}' and "
            f"'{messages_table or detect.AGENTS_MESSAGES}' tables)"
        )
    kind, s, m = found
    if kind == "flux":
        from .sql.flux import flux_store

        return flux_store(backend, display)
    assert s is not None and m is not None
    others = [pair for pair in detect.table_pairs(tables) if pair != (s, m)]
    counts = await _sessions_per_pair(backend, [(s, m), *others]) if others else {}
    if detect.is_advanced(tables, backend.dialect):
        # AdvancedSQLiteSession (SQLite only): read one branch at a time. Its tables name
        # no pair: the library keeps one sessions/messages pair per file.
        from .sql.advanced import advanced_store

        return advanced_store(backend, display, s, m, tables=set(tables), pairs=TablePairs(others, counts))
    from .sql.agents import open_agents

    return await open_agents(
        backend, display, s, m, has_branches=detect.STRUCTURE in tables, cipher=cipher,
        tables=TablePairs(others, counts),
    )


async def _sessions_per_pair(
    backend: Backend, pairs: list[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """How many sessions each pair's sessions table holds, to choose a store by (counted
    up to :data:`~fluxgui.core.text.COUNT_CAP` and one: a bigger table is "more than");
    a table that cannot be counted (no privilege, a broken view) is left out."""
    from .sql.backend import quote_ident

    counts: dict[tuple[str, str], int] = {}
    for pair in pairs:
        try:
            row = await backend.fetchone(
                f"SELECT COUNT(*) FROM (SELECT 1 FROM {quote_ident(pair[0])} LIMIT :cap) c",
                {"cap": COUNT_CAP + 1},
            )
        except FluxguiError:
            continue
        if row is not None:
            counts[pair] = int(row[0])
    return counts


async def _new_store(
    kind: str,
    backend: Backend,
    display: str,
    s: str | None,
    m: str | None,
    cipher: ItemCipher | None = None,
) -> Store:
    """A new store of ``kind`` (``create``) in a database that holds none: its schema
    made, in one transaction."""
    from .sql import detect

    ddl: list[str]
    new: Store
    if kind == "flux":
        from .sql import flux

        new, ddl = flux.flux_store(backend, display), flux.ddl(backend)
    elif kind == "agents":
        from .sql.agents import agents_ddl, agents_store

        s, m = s or detect.AGENTS_SESSIONS, m or detect.AGENTS_MESSAGES
        new, ddl = agents_store(backend, display, s, m, cipher=cipher), agents_ddl(backend, s, m)
    else:
        raise TargetError(
            f"unknown store format {show_id(kind)} (use 'flux', 'agents' or 'json')"
        )
    await backend.write([(sql, {}) for sql in ddl])
    return new
