"""The Agents SDK schema, second layer: reading items, and ``EncryptedSession`` envelopes.

``EncryptedSession`` around any of these stores envelopes instead of items; every row is
read through :func:`fluxgui.adapters.encryption.stored_message`, which opens an envelope
with the store's key (or shows it locked). SQL cannot look inside an envelope: searches
and turn counts let envelope rows through to be decrypted, in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Callable
from functools import partial
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from fluxgui.core.model import Message, meta_dict, is_compaction
from fluxgui.core.turns import turns_before
from fluxgui.core.undecodable import id_text

from ...encryption import ItemCipher, looks_encrypted, mark_plaintext, readable, sealed, stored_message
from ...textmatch import contains
from ..backend import Params
from ..heads import agents_columns, agents_page, holds_huge
from ..search import ids_named, search_ids, text_condition
from .listing import AgentsListing
from ...reading import Page

if TYPE_CHECKING:  # the export's pages: loaded when an export reads
    from fluxgui.core.jsonrecords import RowPage


#: How many of the latest rows (besides the first) :meth:`AgentsReader.detect_encryption`
#: looks at: a primary-key range, never a scan of the table.
DETECT_SAMPLE = 50
#: How much of a sampled item's head :meth:`AgentsReader.detect_encryption` reads to
#: tell an envelope (``{"__enc__": 1, …``) from an item.
HEAD_BYTES = 200
#: What an envelope's head holds (:func:`looks_encrypted` looks in its first 64 chars).
ENVELOPE_MARK = '"__enc__"'
#: In a store with a key, a page of more rows than this is read (decrypted) in a worker
#: thread: one Fernet decryption is cheap, a thousand on the event loop are not.
INLINE_ROWS = 32
#: A LIKE pattern (``\`` escapes) that every stored envelope matches: SQL cannot see
#: inside one, so searches and turn counts let these rows through to be decrypted.
ENVELOPE_LIKE = '%"\\_\\_enc\\_\\_"%'


def _count_user_items(
    rows: list[tuple[Any, ...]], session_id: str, cipher: ItemCipher | None, start: int = 0
) -> int:
    """The turn count after ``rows`` (in stored order), ``start`` before them."""
    return turns_before(
        (stored_message(r[0], r[1], None, session_id=session_id, cipher=cipher) for r in rows),
        start,
    )


_sealed = sealed  # whether a message was stored as an envelope (opened or not)


def _plain_rows(rows: list[tuple[Any, ...]]) -> bool:
    """Whether no row ``(id, message_data, created_at, …)`` may be an envelope: every
    item is text, and none holds the envelope's mark (:func:`looks_encrypted` looks for
    it in an item's head)."""
    try:
        items = "\0".join(map(itemgetter(1), rows))  # (the mark holds no NUL)
    except TypeError:  # bytes, NULL: read here
        return False
    return ENVELOPE_MARK not in items


def _read_plain(row: tuple[Any, ...], *, session_id: str, utc: bool) -> Message:
    """A row of :func:`_plain_rows` as :meth:`AgentsReader._message` reads it."""
    return stored_message(
        row[0], row[1], row[2], session_id=session_id, cipher=None, utc=utc, sort_key=(int(row[0]),)
    )


class AgentsReader(AgentsListing):
    """Reading a session's items, envelopes opened (the Reader role of an Agents SDK
    store, on its session list: :class:`~.listing.AgentsListing`)."""

    async def detect_encryption(self) -> None:
        """Look for ``EncryptedSession`` envelopes (set the keys' ``encrypted``)
        and check the key against them.

        Cheap on any size of store: the latest :data:`DETECT_SAMPLE` rows and the first
        one, by primary key, and of each only its head (:data:`HEAD_BYTES`, read without
        loading the item: one item may be hundreds of MB). Only rows whose head names
        ``__enc__`` are read whole, one at a time, smallest first, until one is an
        envelope (with a key: one that opens). With a key, :class:`WrongKey` is raised
        when no sampled envelope opens with it (one envelope that does is enough: a
        corrupt one must not lock the user out of the rest). An envelope outside the
        sample is still read as one, and flags the store when it is met (see
        :meth:`_messages`).
        """
        M = self._M
        # one query: the latest rows and the first (primary-key ranges)
        ids = await self.backend.fetchall(
            f"SELECT id FROM (SELECT id FROM {M} ORDER BY id DESC LIMIT :n) AS latest "
            f"UNION SELECT id FROM (SELECT id FROM {M} ORDER BY id LIMIT 1) AS first",
            {"n": DETECT_SAMPLE},
        )
        heads = await self.backend.text_heads(
            self.messages_table, "message_data", sorted({int(r[0]) for r in ids}), HEAD_BYTES
        )
        maybe = sorted((size, i) for i, (head, size) in heads.items() if ENVELOPE_MARK in head[:64])
        first: tuple[str, Any] | None = None  # the first envelope read, to name a wrong key
        for _size, row_id in maybe:
            row = await self.backend.fetchone(
                f"SELECT session_id, message_data FROM {M} WHERE id = :i", {"i": row_id}
            )
            if row is None or not looks_encrypted(row[1]):
                continue
            self.keys.encrypted = True
            if self.keys.cipher is None:
                return
            sid, envelope = id_text(row[0]), json.loads(row[1])
            if self.keys.cipher.open(sid, envelope).state != "unreadable":
                return
            first = first or (sid, envelope)
        if first is not None and self.keys.cipher is not None:
            self.keys.cipher.check(*first, self.target)

    async def message_anchor(
        self, session_id: str, message_id: int, *, branch: str | None = None
    ) -> tuple[Any, ...] | None:
        self.place.check_branch(branch)
        row = await self.backend.fetchone(
            f"SELECT id, created_at FROM {self._M} WHERE session_id = :s AND id = :i",
            {"s": session_id, "i": int(message_id)},
        )
        if row is None:
            return None
        return (int(row[0]),)

    async def pick_key(self, session_id: str) -> None:
        """Before sealing for ``session_id`` with a key ring: find which key opens its
        items (a few of its latest envelopes are tried), so what is written there opens
        with the same key as the rest. A session no key opens is sealed with the first."""
        cipher = self.keys.cipher
        if cipher is None or cipher.key_count < 2 or cipher.key_of(session_id) is not None:
            return
        rows = await self.backend.fetchall(
            f"SELECT message_data FROM {self._M} WHERE session_id = :s "
            "AND message_data LIKE :env ESCAPE '\\' ORDER BY id DESC LIMIT 8",
            {"s": session_id, "env": ENVELOPE_LIKE},
        )
        for (data,) in rows:
            if looks_encrypted(data) and cipher.open(session_id, json.loads(data)).item is not None:
                return

    def message(self, row: tuple[Any, ...], session_id: str) -> Message:
        row_id, data, created = row[0], row[1], row[2]
        return stored_message(
            row_id, data, created, session_id=session_id, cipher=self.keys.cipher, utc=self._utc,
            sort_key=(int(row_id),),
        )

    async def messages(self, rows: list[tuple[Any, ...]], session_id: str) -> list[Message]:
        """Rows ``(id, message_data, created_at)`` of one session as Messages, envelopes
        opened (in a worker thread when there are many to decrypt, or a huge item)."""
        if (self.keys.cipher is not None and len(rows) > INLINE_ROWS) or holds_huge(rows, 1):
            out = await asyncio.to_thread(lambda: [self.message(r, session_id) for r in rows])
        else:
            out = [self.message(r, session_id) for r in rows]
        if not self.keys.encrypted and any(_sealed(m) for m in out):
            # An envelope the sample at open did not see: writes need the key from now on.
            self.keys.encrypted = True
        if self.keys.encrypted:
            mark_plaintext(out)  # items in clear: EncryptedSession skips them
        return out

    def search_session_ids(self, text: str) -> AsyncGenerator[str, None]:
        """Sessions whose id or item text contains ``text``. SQL LIKE cannot see inside
        envelopes: with a key, every envelope row is let through and decrypted (in a worker
        thread); without one, an encrypted row matches by its session id only."""
        def id_sql(params: Params) -> str:
            cond = text_condition(self.backend, "session_id", text, params, "p")
            return f"SELECT session_id FROM {self._S} WHERE {cond}"

        def row_sql(params: Params) -> str:
            cond = text_condition(self.backend, "message_data", text, params, "p", json_items=True)
            if self.keys.cipher is not None:
                params["env"] = ENVELOPE_LIKE
                cond = f"({cond} OR message_data LIKE :env ESCAPE '\\')"
            return (
                f"SELECT session_id, id, message_data, created_at FROM {self._M} "
                f"WHERE {cond} ORDER BY id DESC"
            )

        if self.keys.cipher is None:
            return search_ids(self.backend, text, id_sql, row_sql, self._search_text)
        return self._search_decrypting(text, id_sql, row_sql)

    def _search_text(self, row: tuple[Any, ...]) -> str:
        """The text a person reads for a row ``(session_id, id, message_data, …)``; nothing
        for an envelope that does not open (its placeholder is not the item's text)."""
        m = stored_message(row[1], row[2], None, session_id=id_text(row[0]), cipher=self.keys.cipher)
        state = meta_dict(m).get("encryption", {}).get("state")
        return "" if state in ("locked", "unreadable") else m.text

    def _matching(self, rows: list[tuple[Any, ...]], text: str) -> list[str]:
        """The session ids, each once, of the rows whose id or text contains ``text``
        (run in a worker thread: it decrypts)."""
        found: dict[str, None] = {}
        for row in rows:
            sid = id_text(row[0])
            if sid not in found and (contains(sid, text) or contains(self._search_text(row), text)):
                found[sid] = None
        return list(found)

    async def _search_decrypting(
        self,
        text: str,
        id_sql: Callable[[Params], str],
        row_sql: Callable[[Params], str],
    ) -> AsyncGenerator[str, None]:
        # search_ids with the row check moved off the event loop, and the rows of a
        # session already found left undecrypted.
        seen: set[str] = set()
        async for sid in ids_named(self.backend, id_sql, text, seen):
            yield sid
        params: Params = {}
        async for batch in self.backend.stream(row_sql(params), params):
            todo = [r for r in batch if id_text(r[0]) not in seen]
            if not todo:
                continue
            for sid in await asyncio.to_thread(self._matching, todo, text):
                if sid not in seen:
                    seen.add(sid)
                    yield sid

    # -- messages ------------------------------------------------------------------

    async def read_page(self, session_id: str, page: Page) -> list[Message]:
        limit, anchor, direction = page.limit, page.anchor, page.direction
        branch, whole_up_to = page.branch, page.whole_up_to
        self.place.check_branch(branch)
        backward = direction == "backward"
        rows = await self.page_rows(session_id, limit, anchor, backward, whole_up_to)
        if whole_up_to is None:
            return await self.messages(rows, session_id)
        return await agents_page(self.backend, self._M, self.messages, rows, session_id, whole_up_to)

    async def page_rows(
        self, session_id: str, limit: int, anchor: tuple[Any, ...] | None, backward: bool,
        whole_up_to: int | None = None,
    ) -> list[tuple[Any, ...]]:
        """Up to ``limit`` rows ``(id, message_data, created_at)`` next to ``anchor``,
        oldest first (see :meth:`page_messages`; with ``whole_up_to``: :func:`agents_columns`)."""
        params: Params = {"s": session_id, "n": limit}
        order = "DESC" if backward else "ASC"
        op = "<" if backward else ">"
        order_by = f"id {order}"
        bound = ""
        if anchor is not None:
            params["i"] = anchor[0]
            bound = f" AND id {op} :i"
        data = agents_columns(self.backend, params, whole_up_to)
        rows = await self.backend.fetchall(
            f"""SELECT id, {data} FROM {self._M}
                WHERE session_id = :s{bound} ORDER BY {order_by} LIMIT :n""",
            params,
        )
        if backward:
            rows.reverse()
        return rows

    # (the export's reads: SqlRows)
    row_columns = "id, message_data, created_at"

    @property
    def row_table(self) -> str:
        return self._M

    row_order = "id"

    def row_anchor(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        return (int(row[0]),)

    async def row_page(self, rows: list[tuple[Any, ...]], session_id: str) -> list[Message] | RowPage:
        """Rows ``(id, message_data, created_at, …)`` of a session as a page to export:
        plain items as rows; read here as Messages when one may be an envelope, or with
        a key (reading one may change what the store knows: see :meth:`_messages`)."""
        from fluxgui.core.jsonrecords import RowPage

        if self.keys.cipher is None and not self.keys.encrypted and _plain_rows(rows):
            read = partial(_read_plain, session_id=session_id, utc=self._utc)
            return RowPage("agents", rows, read, self._utc)
        return await self.messages(rows, session_id)

    async def count_messages(self, session_id: str, *, branch: str | None = None) -> int:
        self.place.check_branch(branch)
        row = await self.backend.fetchone(
            f"SELECT COUNT(*) FROM {self._M} WHERE session_id = :s", {"s": session_id}
        )
        return int(row[0]) if row else 0

    async def count_turns_before(self, session_id: str, anchor: tuple[Any, ...], *, branch: str | None = None) -> int:
        """User messages before ``anchor`` since the last compaction item before it (the
        rule of :func:`fluxgui.core.turns.turns_before`; a user message is an item with
        role ``user`` and no type or type ``message``). On SQLite the database counts,
        from the last compaction on; else the rows that mention "user" or "compaction"
        are read in order and parsed in a worker thread. The database cannot look inside
        envelopes: in an encrypted store they are decrypted (in the worker thread) and
        counted too."""
        self.place.check_branch(branch)
        params: Params = {"s": session_id, "i": anchor[0]}
        before, order = "id < :i", "id"
        if self.backend.dialect == "sqlite" and not self.keys.reads_encrypted:
            since = await self._last_compaction(session_id, params, before, order)
            if since is not None:
                params["ci"] = since
                before += " AND id > :ci"
            row = await self.backend.fetchone(
                f"""SELECT COUNT(*) FROM {self._M} WHERE session_id = :s AND {before}
                    AND json_valid(message_data)
                    AND json_type(message_data) = 'object'
                    AND json_type(message_data, '$.role') = 'text'
                    AND json_extract(message_data, '$.role') = 'user'
                    AND COALESCE(json_extract(message_data, '$.type'), 'message') = 'message'""",
                params,
            )
            return int(row[0]) if row else 0
        mentions = "(message_data LIKE '%user%' OR message_data LIKE '%compaction%')"
        if self.keys.reads_encrypted:
            params["env"] = ENVELOPE_LIKE
            mentions = f"({mentions} OR message_data LIKE :env ESCAPE '\\')"
        count = 0
        async for rows in self.backend.stream(
            f"SELECT id, message_data FROM {self._M} WHERE session_id = :s AND {before} "
            f"AND {mentions} ORDER BY {order}",
            params,
            batch=2000,
        ):
            count = await asyncio.to_thread(_count_user_items, rows, session_id, self.keys.cipher, count)
        return count

    async def _last_compaction(
        self, session_id: str, params: Params, before: str, order: str
    ) -> int | None:
        """The row id of the last compaction item before the bound (SQLite: the rows that
        mention "compaction", newest first, parsed until one is such an item)."""
        desc = ", ".join(f"{col.strip()} DESC" for col in order.split(","))
        newest_first = self.backend.stream(
            f"SELECT id, message_data FROM {self._M} WHERE session_id = :s AND {before} "
            f"AND message_data LIKE '%compaction%' ORDER BY {desc}",
            dict(params),
            batch=200,
        )
        async with contextlib.aclosing(newest_first) as batches:
            async for rows in batches:
                for row in rows:
                    m = stored_message(row[0], row[1], None, session_id=session_id, cipher=None)
                    if is_compaction(m):
                        return int(row[0])
        return None

    async def flux_messages(self, session_id: str, limit: int | None, *, branch: str | None = None) -> list[dict[str, Any]]:
        """The flux view. In an encrypted store (see :attr:`reads_encrypted`) it holds what
        ``EncryptedSession.get_items(limit)`` returns: the most recent ``limit`` readable
        items, skipping expired, unreadable and plain ones as the library does."""
        limit = limit or None  # 0: all, as flux
        if not self.keys.reads_encrypted:
            picked = await self.latest_messages(session_id, limit, branch=branch)
        elif limit is None:
            picked = [
                m
                async for page in self.iter_messages(session_id, branch=branch)
                for m in page
                if readable(m)
            ]
        else:
            picked = await self._latest_readable(session_id, limit, branch=branch)
        return [{"role": m.role, "content": m.text} for m in picked]

    async def _latest_readable(
        self, session_id: str, limit: int, *, branch: str | None = None
    ) -> list[Message]:
        """The most recent ``limit`` readable messages, oldest first: pages back from the
        end until there are enough (skipped items make the page count unknowable)."""
        if limit <= 0:
            return []
        picked: list[Message] = []
        batch = max(limit, 50)
        anchor: tuple[Any, ...] | None = None
        while len(picked) < limit:
            page = await self.page_messages(session_id, limit=batch, anchor=anchor, branch=branch)
            picked[:0] = [m for m in page if readable(m)]
            if len(page) < batch:
                break
            anchor = page[0].sort_key
        return picked[-limit:]

