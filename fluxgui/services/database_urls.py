"""A store URL from the parts a form asks for: driver, host, port, database, user,
password, options — a SQLAlchemy URL, or a ``redis://`` URL and its key prefix.

Pure Python (no Qt): the Open URL dialog (:mod:`fluxgui.qt.dialogs.open_url`) reads its
fields into a :class:`UrlParts` and shows what this module says: the URL (the password
escaped by ``sqlalchemy.engine.URL.create``), the same with ``***``, the keyring key, and
what keeps the form from being opened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fluxgui.adapters.registry import DEFAULT_PREFIX

from .credentials import is_url

POSTGRES = "postgresql+asyncpg"
SQLITE = "sqlite+aiosqlite"
REDIS = "redis"
#: default ports by SQLAlchemy backend name (and Redis)
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306, "mssql": 1433,
                 "oracle": 1521, "redis": 6379, "rediss": 6379}
#: URL schemes of Redis servers (``unix://`` sockets are typed as a target, not here)
REDIS_SCHEMES = {"redis", "rediss"}
#: drivernames shown as "PostgreSQL (asyncpg)" (parse_target maps them to asyncpg)
POSTGRES_ALIASES = {"postgresql", "postgres", "postgresql+asyncpg", "postgresql+psycopg2"}
SQLITE_ALIASES = {"sqlite", "sqlite+aiosqlite", "sqlite+pysqlite"}
_DRIVERNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\+[A-Za-z][A-Za-z0-9_]*)?$")


def default_port(drivername: str) -> int | None:
    """The usual port of a driver's server (``None``: none known, or a file)."""
    return DEFAULT_PORTS.get(drivername.split("+", 1)[0].lower())


def valid_drivername(name: str) -> bool:
    """Whether ``name`` looks like ``backend`` or ``backend+driver``."""
    return bool(_DRIVERNAME.match(name))


def known_driver(drivername: str) -> str | None:
    """The form's own entry for a drivername (:data:`POSTGRES`, :data:`SQLITE`,
    :data:`REDIS`); ``None`` for another driver, typed by name."""
    name = drivername.lower()
    if name in POSTGRES_ALIASES:
        return POSTGRES
    if name in SQLITE_ALIASES:
        return SQLITE
    if name == REDIS:
        return REDIS
    return None


def parse_options(text: str) -> dict[str, str | list[str]] | None:
    """``key=value&…`` query options as a dict (a repeated key: a list); ``None`` when
    the text is not such pairs."""
    text = text.strip().lstrip("?")
    if not text:
        return {}
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return None
    query: dict[str, str | list[str]] = {}
    for key, value in pairs:
        old = query.get(key)
        if old is None:
            query[key] = value
        else:
            query[key] = [*([old] if isinstance(old, str) else old), value]
    return query


@dataclass(frozen=True)
class UrlParts:
    """What the form holds, as typed (``port`` and ``database`` are text)."""

    drivername: str = POSTGRES
    host: str = ""
    port: str = ""
    database: str = ""
    user: str = ""
    password: str = ""
    options: str = ""
    key_prefix: str = DEFAULT_PREFIX

    @property
    def is_sqlite(self) -> bool:
        return self.drivername.split("+", 1)[0].lower() == "sqlite"

    @property
    def is_redis(self) -> bool:
        """A Redis server (the Redis entry, or ``rediss`` typed as another driver)."""
        return self.drivername.lower() in REDIS_SCHEMES

    def port_number(self) -> int | None:
        """The port typed, when it is one (1 to 65535)."""
        text = self.port.strip()
        if not text or not text.isdigit():
            return None
        port = int(text)
        return port if 1 <= port <= 65535 else None

    def problem(self) -> str | None:
        """What keeps the form from being opened, in one sentence; ``None`` when complete."""
        name = self.drivername
        if not name:
            return "Enter the SQLAlchemy driver name, such as mysql+aiomysql."
        if not valid_drivername(name):
            return "The driver name looks like backend+driver, such as mysql+aiomysql."
        if parse_options(self.options) is None:
            return "Options are key=value pairs joined by &, such as ssl=require."
        if self.is_sqlite:
            return None if self.database.strip() else "Choose the SQLite file."
        if self.port.strip() and self.port_number() is None:
            return "The port is a number from 1 to 65535."
        if self.is_redis:
            if not self.host.strip():
                return "Enter the host name or address of the Redis server."
            db = self.database.strip()
            if db and not db.isdigit():
                return "The Redis database is a number (0 unless the server uses others)."
            if not self.key_prefix.strip():
                return f"Enter the key prefix the sessions were written under ({DEFAULT_PREFIX} by default)."
            return None
        if not self.host.strip():
            return "Enter the host name or address of the database server."
        if not self.database.strip():
            return "Enter the name of the database."
        return None

    def _url(self, *, with_password: bool = True) -> Any:  # -> sqlalchemy URL
        from sqlalchemy.engine import URL

        name = self.drivername if valid_drivername(self.drivername) else "driver"
        query = parse_options(self.options) or {}
        if self.is_sqlite:
            return URL.create(name, database=self.database.strip() or None, query=query)
        password = self.password or None
        if self.is_redis:
            db = self.database.strip()
            return URL.create(
                name,
                # Redis AUTH with a password only is redis://:password@host: an empty
                # user name, which SQLAlchemy writes only when it is "" rather than None.
                username=self.user or ("" if password else None),
                password=password if with_password else None,
                host=self.host.strip() or None,
                port=self.port_number(),
                database=db if db.isdigit() else "0",
                query=query,
            )
        return URL.create(
            name,
            username=self.user or None,
            password=password if with_password else None,
            host=self.host.strip() or None,
            port=self.port_number(),
            database=self.database.strip() or None,
            query=query,
        )

    def url(self) -> str:
        """The URL to open, with its password (give it to ``open_target``, never show it)."""
        return str(self._url().render_as_string(hide_password=False))

    def display_url(self) -> str:
        """The URL with its password shown as ``***`` (for labels and titles)."""
        return str(self._url().render_as_string(hide_password=True))

    def url_key(self) -> str:
        """The URL without its password: the keyring key and what recent stores keep."""
        return str(self._url(with_password=False).render_as_string(hide_password=False))

    def redis_prefix(self) -> str | None:
        """The Redis key prefix to open under (``None`` for a database)."""
        if not self.is_redis:
            return None
        return self.key_prefix.strip() or DEFAULT_PREFIX


def parts_from_url(url_string: str, key_prefix: str | None = None) -> UrlParts | None:
    """The form's parts for a URL (or a SQLite file path) and, for Redis, its key prefix;
    ``None`` when it does not parse. The port is the URL's own (empty when it names none)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if not is_url(url_string):  # a file path
        return UrlParts(SQLITE, database=url_string)
    try:
        url = make_url(url_string)
    except (ArgumentError, ValueError, TypeError):
        return None
    return replace(
        UrlParts(url.drivername),
        host=url.host or "",
        port=str(url.port) if url.port else "",
        database=url.database or "",
        user=url.username or "",
        password=url.password or "",
        options=urlencode(
            [(k, v) for k, vs in url.query.items() for v in ((vs,) if isinstance(vs, str) else vs)]
        ),
        key_prefix=key_prefix or DEFAULT_PREFIX,
    )
