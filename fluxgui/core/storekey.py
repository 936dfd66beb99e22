"""Store keys: a store named the same way on every machine.

fluxgui's own data about a store (reviews, the search index) is keyed by its store key.
For a server it is made of what locates the store — driver, host, port, database (or
Redis db), and the store's own parts (table names, key prefix) — and never of a user
name or a password, so two reviewers reaching one Postgres database as different users
share its reviews. For a file or folder it is the absolute path (symlinks resolved). A
label the user gives (``--store-label``) replaces it, so a team can name a copied file
alike everywhere.

Keys read like URLs: ``postgresql://db.example:5432/support?messages=agent_messages&
sessions=agent_sessions``, ``sqlite:/home/ann/agent.db``, ``redis://127.0.0.1:6379/0?
prefix=agents%3Asession``, ``folder:/srv/sessions``, ``label:team-archive``.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

#: the ports a driver uses when a URL names none (so ``host`` and ``host:5432`` agree)
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306, "redis": 6379, "rediss": 6379}
#: what a label key starts with
LABEL = "label:"


def _host(host: str | None) -> str:
    host = (host or "localhost").lower()
    return "localhost" if host in ("127.0.0.1", "::1", "localhost") else host


def server_location(scheme: str, host: str | None, port: int | None, database: str) -> str:
    """``scheme://host:port/database``: the driver's family (``postgresql``, not
    ``postgresql+asyncpg``), the host lower-cased (loopback spelled ``localhost``), the
    default port filled in."""
    family = scheme.split("+", 1)[0].lower()
    if family == "postgres":
        family = "postgresql"
    port = port or DEFAULT_PORTS.get(family)
    where = _host(host) + (f":{port}" if port else "")
    return f"{family}://{where}/{quote(database, safe='')}"


def url_location(url: str) -> str:
    """The location part of a server URL (user and password dropped)."""
    parts = urlsplit(url)
    return server_location(parts.scheme, parts.hostname, parts.port, parts.path.lstrip("/"))


def path_location(kind: str, path: Path) -> str:
    """``kind:/absolute/path`` (symlinks resolved)."""
    return f"{kind}:{Path(os.path.abspath(path.expanduser())).resolve()}"


def compose(location: str, parts: dict[str, str | None] | None = None) -> str:
    """``location`` with the store's own ``parts`` (sorted, empty ones left out) as a
    query string."""
    kept = sorted((k, v) for k, v in (parts or {}).items() if v)
    return f"{location}?{urlencode(kept)}" if kept else location


def label_key(label: str) -> str:
    """The key of a store the user named ``label``."""
    label = " ".join(label.split())
    if not label:
        raise ValueError("a store label cannot be empty")
    return LABEL + label


def choose(store_key: str, label: str | None) -> str:
    """The key to use: the user's label when given, else the store's own key."""
    return label_key(label) if label and label.strip() else store_key
