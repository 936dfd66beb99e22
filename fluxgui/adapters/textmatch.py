"""The one rule every store's search uses to decide that text matches."""

from __future__ import annotations


def contains(haystack: str, needle: str) -> bool:
    """Whether ``needle`` is in ``haystack``, ignoring case.

    ``lower()``, not ``casefold()``: the SQL pre-filter keeps lengths ("ß" is not "ss"),
    and the check must not accept what the pre-filter could never have let through.
    """
    return needle.lower() in haystack.lower()
