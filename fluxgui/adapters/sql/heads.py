"""Huge values read as their start: the window's pages of a session read an item stored in
more than ``whole_up_to`` bytes as its first :data:`~fluxgui.core.bodies.HEAD_CHARS`
characters and its size (``capabilities.partial_reads``), so that a 50 MB tool output is
never brought whole into the window to show its first screen. The database cuts it
(``substr``) where the value lies: SQLite in aiosqlite's thread, which reads its pages
without holding the interpreter's lock; Postgres on the server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .backend import Backend, Params

if TYPE_CHECKING:  # (the stores import this module: what it needs loads when used)
    from fluxgui.core.model import Message

#: a value longer than this is parsed a slice at a time (``jsonhead.GENTLE_CHARS``)
GENTLE_CHARS = 1_000_000

#: what starts an ``EncryptedSession`` envelope's JSON (only the key opens it: read whole)
ENVELOPE_MARK = '"__enc__"'


def size_sql(backend: Backend, column: str) -> str:
    """The SQL of ``column``'s stored size in bytes."""
    if backend.dialect == "sqlite":
        return f"length(CAST({column} AS BLOB))"
    return f"octet_length({column})"


def head_columns(backend: Backend, column: str, params: Params, whole_up_to: int) -> tuple[str, str]:
    """The SQL of ``column`` when stored in at most ``whole_up_to`` bytes, else of its
    first :data:`HEAD_CHARS` characters; and of its size in bytes."""
    from fluxgui.core.bodies import HEAD_CHARS

    params["whole_up_to"] = int(whole_up_to)
    params["head_chars"] = HEAD_CHARS
    size = size_sql(backend, column)
    return f"CASE WHEN {size} > :whole_up_to THEN substr({column}, 1, :head_chars) ELSE {column} END", size


def holds_huge(rows: list[tuple[Any, ...]], column: int) -> bool:
    """Whether a row holds a value long enough to be parsed a slice at a time (in a worker
    thread, then, the event loop runs between slices: :mod:`fluxgui.core.jsonhead`)."""
    return any(isinstance(r[column], str) and len(r[column]) > GENTLE_CHARS for r in rows)


def is_cut(size: Any, whole_up_to: int) -> bool:
    """Whether a value of ``size`` bytes was read as its start (see :func:`head_columns`)."""
    return size is not None and int(size) > whole_up_to


def closed_json(head: Any) -> str | None:
    """The start of a JSON value made whole (:func:`fluxgui.core.jsonhead.close_prefix`);
    ``None`` when it holds nothing whole."""
    from fluxgui.core.jsonhead import close_prefix

    return close_prefix(head) if isinstance(head, str) else None


async def flux_page(
    backend: Backend, message: Callable[[tuple[Any, ...]], Message], session_id: str, limit: int, anchor: tuple[Any, ...] | None,
    backward: bool, whole_up_to: int,
) -> list[Message]:
    """A flux page (``page_messages``) whose content and metadata stored in more than
    ``whole_up_to`` bytes are read as their start (``Message.partial``: the row's size);
    ``message`` reads a row ``(id, role, content, metadata, created_at)``."""
    params: Params = {"s": session_id, "n": limit}
    if anchor is not None:
        params["b"] = int(anchor[0])
    bound = "" if anchor is None else (" AND id < :b" if backward else " AND id > :b")
    content = ", ".join(head_columns(backend, "content", params, whole_up_to))
    metadata = ", ".join(head_columns(backend, "metadata", params, whole_up_to))
    rows = await backend.fetchall(
        f"""SELECT id, role, {content}, {metadata}, created_at FROM messages
            WHERE session_id = :s{bound} ORDER BY id {"DESC" if backward else "ASC"}
            LIMIT :n""",
        params,
    )
    if backward:
        rows.reverse()
    out = []
    for r in rows:
        cut_text, cut_meta = is_cut(r[3], whole_up_to), is_cut(r[5], whole_up_to)
        m = message((r[0], r[1], r[2], closed_json(r[4]) if cut_meta else r[4], r[6]))
        if cut_text or cut_meta:
            m.partial = int(r[3] or 0) + int(r[5] or 0)
        out.append(m)
    return out


def agents_columns(backend: Backend, params: Params, whole_up_to: int | None) -> str:
    """The columns of an Agents SDK page: ``message_data, created_at``; with
    ``whole_up_to``, the data of an item stored in more bytes is its start, and its size
    comes third."""
    if whole_up_to is None:
        return "message_data, created_at"
    value, size = head_columns(backend, "message_data", params, whole_up_to)
    return f"{value}, created_at, {size}"


async def agents_page(
    backend: Backend, table: str,
    messages: Callable[[list[tuple[Any, ...]], str], Awaitable[list[Message]]],
    rows: list[tuple[Any, ...]], session_id: str, whole_up_to: int,
) -> list[Message]:
    """Rows ``(id, message_data or its start, created_at, size)`` of an Agents SDK page as
    Messages: an item read as its start is that start made whole JSON
    (``Message.partial``: its size); an envelope so read is read again whole (from
    ``table``, quoted). ``messages`` reads rows ``(id, message_data, created_at)``."""
    cut: dict[int, int] = {}  # row id -> stored size, of the items read as their start
    read: list[tuple[Any, ...]] = []
    for r in rows:
        data = r[1]
        if is_cut(r[3], whole_up_to):
            if ENVELOPE_MARK in str(data)[:64]:
                got = await backend.fetchone(
                    f"SELECT message_data FROM {table} WHERE id = :i", {"i": r[0]})
                data = got[0] if got else data
            else:
                cut[int(r[0])] = int(r[3])
                data = closed_json(data) or data
        read.append((r[0], data, r[2]))
    out = await messages(read, session_id)
    for m in out:
        m.partial = cut.get(int(m.id))
    return out
