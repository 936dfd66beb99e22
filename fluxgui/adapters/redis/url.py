"""Recognise ``redis://`` targets and show them without their password (no driver
imported here, so parsing a target stays cheap)."""

from __future__ import annotations

from fluxgui.core.redact import redact_url

#: The Agents SDK ``RedisSession`` key prefix.
DEFAULT_PREFIX = "agents:session"
SCHEMES = ("redis", "rediss", "unix")


def is_redis_url(target: str) -> bool:
    """Whether ``target`` names a Redis server (``redis://``, ``rediss://``, ``unix://``)."""
    scheme, sep, _ = target.partition("://")
    return bool(sep) and scheme.lower() in SCHEMES


def redis_display(target: str) -> str:
    """``target`` with its password and secret query values replaced by ``***``."""
    return redact_url(target)
