"""Finding text inside one session, and the page of messages around a message, without Qt.

A search over a store answers sessions; a reader wants the message. :func:`find_in_session`
reads a session a page at a time and gives every message whose text (what a person reads,
:attr:`~fluxgui.core.model.Message.text`) contains the text, ignoring case the way
fluxgui's searches do (Unicode case folding, :func:`fluxgui.core.hits.find_folded`), as
:class:`Found` values: the shared :class:`~fluxgui.core.hits.Hit` plus the message's
keyset anchor, so a view can page straight to it.

:func:`page_around` is the page a view shows to land on a message: some messages before
it, the message, some after, and whether that reaches the session's start or end. It
works on every store through ``page_messages(anchor=…, direction=…)`` (the message's
``sort_key`` is the anchor); given only a message id (a hit of the local index) it asks
the store for the anchor (``message_anchor``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from fluxgui.core.hits import Hit, find_folded, snippet
from fluxgui.core.model import Message
from fluxgui.core.roles import Store

from .browse import window_reads

#: messages read per page while finding
FIND_BATCH = 200  # (each page is read into Messages on the event loop: small pages, short stalls)


@dataclass(frozen=True)
class Found:
    """A message of the session that contains the text: the :class:`Hit` and the
    message's keyset anchor (its ``sort_key``)."""

    hit: Hit
    anchor: tuple[Any, ...]

    @property
    def message_id(self) -> int:
        assert self.hit.message_id is not None
        return self.hit.message_id


@dataclass(frozen=True)
class Around:
    """The messages around one message, oldest first: ``messages[index]`` is it;
    ``at_start``/``at_end``: nothing comes before/after ``messages``."""

    messages: list[Message]
    index: int
    at_start: bool
    at_end: bool


def message_hit(session_id: str, m: Message, text: str) -> Hit | None:
    """The hit for ``m`` when its text contains ``text`` (ignoring case), else ``None``."""
    where = find_folded(m.text, text)
    if where is None:
        return None
    piece, at = snippet(m.text, *where)
    return Hit(session_id, m.id, m.role, piece, at, where[1])


async def iter_found(
    store: Store, session_id: str, text: str, *, branch: str | None = None, batch: int = FIND_BATCH
) -> AsyncGenerator[list[Found], None]:
    """The messages of the session (of ``branch``) containing ``text``, in stored order,
    a page of the session at a time (pages without hits give nothing)."""
    if not text:
        return
    pages = store.reader.iter_messages(session_id, batch=batch, branch=branch)
    async with contextlib.aclosing(pages):
        async for page in pages:
            found = []
            for m in page:
                hit = message_hit(session_id, m, text)
                if hit is not None:
                    found.append(Found(hit, tuple(m.sort_key)))
            if found:
                yield found


async def find_in_session(
    store: Store, session_id: str, text: str, *, branch: str | None = None, batch: int = FIND_BATCH
) -> list[Found]:
    """Every message of the session containing ``text`` (see :func:`iter_found`)."""
    out: list[Found] = []
    async for found in iter_found(store, session_id, text, branch=branch, batch=batch):
        out.extend(found)
    return out


async def anchor_of(
    store: Store, session_id: str, message_id: int, *, branch: str | None = None
) -> tuple[Any, ...] | None:
    """The keyset anchor of message ``message_id`` (``None``: not in the session): the
    store's :meth:`~fluxgui.core.roles.Reader.message_anchor` (one row for SQL
    stores; others read forward until the id turns up)."""
    return await store.reader.message_anchor(session_id, message_id, branch=branch)


async def page_around(
    store: Store,
    session_id: str,
    message_id: int,
    *,
    anchor: tuple[Any, ...] | None = None,
    limit: int = 100,
    branch: str | None = None,
) -> Around | None:
    """About ``limit`` messages with message ``message_id`` among them (a third of them
    before it, the rest after), or ``None`` when the session has no such message.
    ``anchor`` is the message's ``sort_key`` when known (else it is looked for)."""
    if anchor is None:
        anchor = await anchor_of(store, session_id, message_id, branch=branch)
        if anchor is None:
            return None
    limit = max(limit, 3)
    before_n = max(limit // 3, 1)
    after_n = limit - before_n - 1
    reads = window_reads(store)  # (huge items as their start: a window's page)
    after = await store.reader.page_messages(
        session_id, limit=after_n, anchor=anchor, direction="forward", branch=branch, **reads
    )
    # The page before the first message after it ends with the message itself.
    upto = await store.reader.page_messages(
        session_id,
        limit=before_n + 1,
        anchor=tuple(after[0].sort_key) if after else None,
        direction="backward",
        branch=branch,
        **reads,
    )
    if not upto or upto[-1].id != message_id:
        return None
    at_start, at_end = len(upto) < before_n + 1, len(after) < after_n
    if at_start and not at_end:  # near the start: fill the page with later messages
        more = await store.reader.page_messages(
            session_id, limit=before_n + 1 - len(upto), anchor=tuple(after[-1].sort_key),
            direction="forward", branch=branch, **reads,
        )
        at_end = len(more) < before_n + 1 - len(upto)
        after += more
    return Around(upto + after, len(upto) - 1, at_start, at_end)


async def first_found(
    store: Store, session_id: str, text: str, *, branch: str | None = None,
    batch: int = FIND_BATCH,
) -> Found | None:
    """The first message of the session containing ``text`` (reading only as far as it)."""
    pages = iter_found(store, session_id, text, branch=branch, batch=batch)
    async with contextlib.aclosing(pages):  # stopping early closes the store's reads
        async for found in pages:
            return found[0]
    return None
