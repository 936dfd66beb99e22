"""Search hits: a matching message, named so a view can open its session at it.

A search over a store answers sessions; a person wants the message. :class:`Hit` is the
one shape every search path gives (a scan of the store, the local index, a server's
trigram index): the session, the message's id, its role and a short snippet with where
the match sits in it. :func:`snippet` cuts that snippet the same way for all of them, and
:func:`fold` is the one case rule they all match by.
"""

from __future__ import annotations

from dataclasses import dataclass

#: characters kept either side of a match in a snippet
SNIPPET_CONTEXT = 40


@dataclass(frozen=True)
class Hit:
    """One matching message. ``message_id`` is the store's id of the message
    (:attr:`fluxgui.core.model.Message.id`), ``None`` when only the session id matched;
    ``start``/``length`` locate the match inside ``snippet``."""

    session_id: str
    message_id: int | None
    role: str
    snippet: str
    start: int
    length: int

    def to_dict(self) -> dict[str, object]:
        """The ``--json`` form."""
        return {
            "session_id": self.session_id,
            "message_id": self.message_id,
            "role": self.role,
            "snippet": self.snippet,
            "match": [self.start, self.length],
        }


def fold(text: str) -> str:
    """Text as every search of fluxgui compares it: ``str.lower()``, the rule of the
    store scans (``adapters/textmatch.py``), whose SQL pre-filter keeps lengths ("ß" is
    not "ss"). The index and the find bar fold the same way, so all paths agree."""
    return text.lower()


def find_folded(haystack: str, needle: str) -> tuple[int, int] | None:
    """Where ``needle`` occurs in ``haystack`` ignoring case (:func:`fold`), as
    (start, length) in ``haystack``; ``None`` when not."""
    if not needle:
        return None
    folded_needle = fold(needle)
    whole = fold(haystack)
    if len(whole) == len(haystack):
        # No character folded to more than one (none folds to none): positions map 1:1.
        at = whole.find(folded_needle)
        return None if at < 0 else (at, len(folded_needle))
    if folded_needle not in whole:
        return None
    # Folding can change lengths ("İ" lowers to two characters): fold per character
    # and map back.
    folded: list[str] = []
    owner: list[int] = []
    for i, ch in enumerate(haystack):
        f = fold(ch)
        folded.append(f)
        owner.extend([i] * len(f))
    joined = "".join(folded)
    at = joined.find(folded_needle)
    if at < 0:
        return None
    first = owner[at]
    last = owner[at + len(folded_needle) - 1]
    return first, last - first + 1


def snippet(text: str, start: int, length: int, *, context: int = SNIPPET_CONTEXT) -> tuple[str, int]:
    """A one-line piece of ``text`` around the match at ``start`` (``length`` long): up
    to ``context`` characters either side, line breaks as spaces, ``…`` where cut.
    Returns the snippet and where the match starts in it."""
    lo = max(0, start - context)
    hi = min(len(text), start + length + context)
    piece = text[lo:hi].replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    at = start - lo
    if lo > 0:
        piece = "…" + piece
        at += 1
    if hi < len(text):
        piece += "…"
    return piece, at
