"""The one rule every store's search uses to decide that text matches."""

from __future__ import annotations

from fluxgui.core.hits import fold


def contains(haystack: str, needle: str) -> bool:
    """Whether ``needle`` is in ``haystack``, ignoring case.

    :func:`fluxgui.core.hits.fold` (``lower()``, not ``casefold()``): the SQL pre-filter
    keeps lengths ("ß" is not "ss"), and the check must not accept what the pre-filter
    could never have let through; the index and the find bar match by the same rule.
    """
    return fold(needle) in fold(haystack)
