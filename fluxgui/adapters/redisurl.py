"""Recognise ``redis://`` targets and show them without their password (no driver
imported here, so parsing a target stays cheap)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

#: The Agents SDK ``RedisSession`` key prefix.
DEFAULT_PREFIX = "agents:session"
SCHEMES = ("redis", "rediss", "unix")


def is_redis_url(target: str) -> bool:
    """Whether ``target`` names a Redis server (``redis://``, ``rediss://``, ``unix://``)."""
    scheme, sep, _ = target.partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def redis_display(target: str) -> str:
    """``target`` with any password replaced by ``***``."""
    try:
        parts = urlsplit(target)
    except ValueError:
        return target.split("://", 1)[0] + "://…"
    if parts.password is None:
        return target
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))
