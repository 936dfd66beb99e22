"""Stored times as people and programs read them: ISO 8601 text (:func:`iso_time`) and
Unix seconds (:func:`unix_time`), from whatever a store keeps (SQLite's
``CURRENT_TIMESTAMP`` text, a driver's ``datetime``, epoch numbers)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any


def iso_time(value: Any, *, utc: bool) -> str | None:
    """Return ``value`` as ISO 8601, or ``None`` when it is missing or unreadable.

    ``utc`` says the store keeps naive times in UTC (SQLite ``CURRENT_TIMESTAMP``, a
    Postgres ``timestamp`` column on a UTC server): such times get ``+00:00``. A naive
    time whose zone is unknown stays without one.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=timezone.utc).isoformat()
        except (OverflowError, OSError, ValueError):
            return None
    else:
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        return _iso_text(str(value), utc)
    if dt.tzinfo is None and utc:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.isoformat()


def unix_time(value: Any) -> float | None:
    """``value`` (as :func:`iso_time` reads it; a naive time is UTC) as Unix seconds, or
    ``None`` when it is missing or unreadable."""
    if isinstance(value, str):  # (most often one that iso_time made: read it at once)
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            return (dt if dt.tzinfo is not None else dt.replace(tzinfo=timezone.utc)).timestamp()
    text = iso_time(value, utc=True)
    return None if text is None else datetime.fromisoformat(text).timestamp()


#: SQLite's ``CURRENT_TIMESTAMP`` (and ISO 8601 without a zone or a fraction)
_PLAIN_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}")


@lru_cache(maxsize=1024)
def _iso_text(value: str, utc: bool) -> str | None:
    # Cached: neighbouring rows share their one-second timestamps.
    text = value.strip()
    if not text:
        return None
    if _PLAIN_TIME.fullmatch(text):  # (most rows: the string is the answer, once it is a date)
        try:
            datetime.fromisoformat(text)
        except ValueError:
            return None
        return f"{text[:10]}T{text[11:]}{'+00:00' if utc else ''}"
    try:
        dt = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return None
    if dt.tzinfo is None and utc:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.isoformat()
