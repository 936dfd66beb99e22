"""Small text helpers shared by every layer (counts in words)."""

from __future__ import annotations

from collections.abc import Callable


def plural(n: int, word: str, plural_word: str | None = None) -> str:
    """``1 message``, ``2 messages``, ``1,204 branches`` (thousands separated)."""
    many = plural_word or (word + "es" if word.endswith(("s", "sh", "ch", "x")) else word + "s")
    return f"{n:,} {word if n == 1 else many}"


#: a table's rows are counted up to this many to choose it by (a count of millions on a
#: server costs seconds): :func:`bounded_plural` shows a count above it as "more than"
COUNT_CAP = 100_000


def bounded_plural(n: int, word: str) -> str:
    """:func:`plural`, or ``more than 100,000 sessions`` for a count stopped above
    :data:`COUNT_CAP`."""
    return f"more than {plural(COUNT_CAP, word)}" if n > COUNT_CAP else plural(n, word)


def table_pairs_text(
    pairs: list[tuple[str, str]], sessions: dict[tuple[str, str], int],
    show: Callable[[str], str] = str,
) -> str:
    """``a_sessions + a_messages: 12 sessions; b_sessions + b_messages`` (a pair's count
    when known, each name through ``show``)."""
    return "; ".join(
        f"{show(s)} + {show(m)}"
        + (f": {bounded_plural(sessions[s, m], 'session')}" if (s, m) in sessions else "")
        for s, m in pairs
    )


#: how a session whose id is the empty string is named on screen (a blank row otherwise)
EMPTY_ID = "(empty id)"


def session_label(session_id: str) -> str:
    """A session id as a list row or a title shows it: :data:`EMPTY_ID` for ``""``."""
    return session_id if session_id else EMPTY_ID
