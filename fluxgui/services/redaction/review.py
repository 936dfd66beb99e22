"""Redaction for the window, Qt-free: the conversation shown redacted (View › Redact)
and the review before a redacted export (Export redacted…).

* :class:`KindsRedactor` — a :class:`~.redactor.Redactor` that leaves the kinds the user
  unticked as they are (every other kind, also one the review did not see, is redacted:
  only what is named is let through).
* :class:`ShownRedaction` — one session's loaded pages redacted for showing, with the
  findings of each message (its placeholders, their kinds and masked values) for the
  card's tooltip. A message a detector failed on is shown as a note, never as stored.
* :func:`review_findings` — every finding of some sessions by kind: how many, in how
  many messages, a few masked examples, and the items a detector failed on.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fluxgui.adapters.encryption import is_envelope
from fluxgui.core.model import Message
from fluxgui.core.roles import Store

from .detect import Detectors
from .redactor import Redactor
from .rules import Finding

#: what a card shows in place of a message a detector failed on
FAILED_TEXT = "[not shown: a redaction detector failed on this item]"
#: how many masked examples of a kind the review shows
EXAMPLES = 3


class KindsRedactor(Redactor):
    """A Redactor leaving the finding kinds in ``keep`` unredacted."""

    def __init__(self, detectors: Detectors, keep: Sequence[str] = ()) -> None:
        super().__init__(detectors)
        self.keep = frozenset(keep)

    def find(self, text: str, *, cache: bool = True) -> list[Finding]:
        found = super().find(text, cache=cache)
        return [f for f in found if f.kind not in self.keep] if self.keep else found

    def _string(self, text: str, name: str) -> str:
        # (a value named as an AWS secret by its key is redacted by name, not found)
        return super()._string(text, "" if "AWS_SECRET_KEY" in self.keep else name)


@dataclass(frozen=True)
class Shown:
    """A placeholder in a shown message: its kind and the value's masked form."""

    placeholder: str
    kind: str
    masked: str


class ShownRedaction:
    """Pages of one session redacted for showing (placeholders consistent across the
    session's pages). Thread-safe: pages are redacted in worker threads.

    Sealed items and compaction items are shown as they are (nothing readable is in
    them); a message a detector failed on is shown as :data:`FAILED_TEXT`."""

    def __init__(self, detectors: Detectors, redactor: Redactor | None = None) -> None:
        #: the placeholders' numbering (``redactor``: one shared with other views, the
        #: window's: the same value has the same placeholder in each)
        self.redactor = redactor if redactor is not None else Redactor(detectors)
        self._lock = threading.Lock()
        #: message id → the placeholders in it
        self.found: dict[int, list[Shown]] = {}

    def page(self, messages: list[Message]) -> list[Message]:
        with self._lock:
            return [self._message(m) for m in messages]

    def _message(self, m: Message) -> Message:
        r = self.redactor
        seen: list[str] = []
        r.seen = seen
        try:
            out = r.message(m)
        finally:
            r.seen = None
        if out is None and (m.kind == "compaction" or is_envelope(m.raw)):
            return m  # sealed or compaction: nothing readable in it, shown as it is
        if out is None:  # a detector failed on it (told apart from the others' failures)
            self.found.pop(m.id, None)
            return replace(m, text=FAILED_TEXT, metadata=None, raw=None, stored_chars=None, partial=None)
        shown = [Shown(name, *r.given[name]) for name in dict.fromkeys(seen)]
        if shown:
            self.found[m.id] = shown
        else:
            self.found.pop(m.id, None)
        return out

    def tip(self, message_id: int) -> str:
        """What a card's tooltip says of its redactions (empty: none)."""
        shown = self.found.get(message_id)
        if not shown:
            return ""
        lines = [f"{s.placeholder}  {kind_label(s.kind)} ({s.masked})" for s in shown[:12]]
        if len(shown) > 12:
            lines.append(f"… and {len(shown) - 12} more")
        return "Redacted here:\n" + "\n".join(lines)


def kind_label(kind: str) -> str:
    """``OPENAI_KEY`` → ``OpenAI key``-like words: the kind as a person reads it."""
    words = kind.replace("_", " ").lower()
    for short, proper in (("openai", "OpenAI"), ("aws", "AWS"), ("github", "GitHub"), ("gitlab", "GitLab"),
                          ("jwt", "JWT"), ("iban", "IBAN"), ("url", "URL"), ("api", "API")):
        words = " ".join(proper if w == short else w for w in words.split())
    return words[:1].upper() + words[1:]


@dataclass
class KindFound:
    """One kind's findings in a review."""

    kind: str
    count: int = 0  # findings (each value once per message)
    messages: set[tuple[str, str]] = field(default_factory=set)  # (session, message)
    examples: list[str] = field(default_factory=list)  # masked, distinct


@dataclass
class Review:
    """What a redacted export of some sessions would redact."""

    kinds: dict[str, KindFound] = field(default_factory=dict)
    sessions: int = 0
    failed: list[str] = field(default_factory=list)  # "session #item" a detector failed on

    def ordered(self) -> list[KindFound]:
        return sorted(self.kinds.values(), key=lambda k: (-k.count, k.kind))


async def review_findings(
    store: Store, detectors: Detectors, session_ids: Sequence[str] | None = None
) -> Review:
    """Every finding in ``session_ids`` (``None``: every session) of ``store``, by kind
    (see the module's docstring). Pages are looked at in a worker thread."""
    import asyncio

    from .scan import ScanFailed, _session_ids, _to_read, placeholders_of, scan_id

    redactor = Redactor(detectors)
    review = Review()

    def add(sid: str, label: str, seen: list[str]) -> None:
        for name in seen:
            kind, masked = redactor.given[name]
            found = review.kinds.setdefault(kind, KindFound(kind))
            found.count += 1
            found.messages.add((sid, label))
            if masked not in found.examples and len(found.examples) < EXAMPLES:
                found.examples.append(masked)

    def look_id(sid: str) -> None:  # (a session's id is redacted too: its findings count)
        try:
            add(sid, "", [f.placeholder for f in scan_id(redactor, sid).findings])
        except ScanFailed:
            review.failed.append(f"{sid} (its id)")

    def look(sid: str, page: Any) -> None:
        for m in _to_read(redactor, page):
            seen = placeholders_of(redactor, m)
            if seen is None:
                review.failed.append(f"{sid} {m.label}")
                continue
            add(sid, m.label, seen)

    rows = store.rows
    async for sid in _session_ids(store, session_ids):
        review.sessions += 1
        await asyncio.to_thread(look_id, sid)
        pages: Any = rows.iter_row_pages(sid) if rows is not None else store.reader.iter_messages(sid)
        async for page in pages:
            await asyncio.to_thread(look, sid, page)
    return review
