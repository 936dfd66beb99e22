"""Stored text that is not valid UTF-8, kept readable instead of failing the whole store.

SQLite does not check that TEXT is UTF-8: a writer (or a damaged page) can leave bytes
that Python's ``sqlite3`` refuses to decode, and one such value would make every query
that touches it fail. The SQLite back-end re-runs such a query with :func:`tolerant_text`
as the connection's text factory (only then: the common case pays nothing), which gives
an :class:`Undecodable` for each value that is not UTF-8.

The store formats turn a row holding one into a ``kind="other"`` message (see
:func:`flag_message`): its text decoded with U+FFFD replacement characters, and
``metadata["undecodable"]`` saying which column and what bytes::

    {"undecodable": {"column": "message_data", "hex": "7b22726f6c65...", "bytes": 29}}

``hex`` holds the first :data:`HEX_BYTES` bytes, ``bytes`` the value's whole length. When
several columns of a row are undecodable, the first is described and ``columns`` lists
them all. The flag describes what was read: a copy of the message into another store
holds the replacement-character text and not the flag (see :func:`strip_flag`).

A session id that is not UTF-8 is read as its bytes decoded with ``surrogateescape``
(:func:`id_text`), as Python decodes file names and command lines: the id names its stored
bytes exactly, so it can be listed, opened, checked and searched (the SQLite back-end
gives such a text back as those bytes), and the bytes typed on a command line are that
id. Printed, each undecodable byte shows as its marker (``⟨U+DCFF⟩``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .model import Message, meta_dict, from_agents_row

#: how many of an undecodable value's bytes ``metadata["undecodable"]["hex"]`` shows
HEX_BYTES = 64
FLAG = "undecodable"


class Undecodable(str):
    """A text value whose stored bytes are not UTF-8: the text decoded with replacement
    characters (U+FFFD), the bytes in :attr:`raw`."""

    raw: bytes

    def __new__(cls, raw: bytes) -> Undecodable:
        self = super().__new__(cls, raw.decode("utf-8", "replace"))
        self.raw = bytes(raw)
        return self

    def flag(self, column: str) -> dict[str, Any]:
        """What ``metadata["undecodable"]`` says about this value stored in ``column``."""
        return {"column": column, "hex": self.raw[:HEX_BYTES].hex(), "bytes": len(self.raw)}


#: a lone surrogate (compiled by re when first needed: a range this wide takes
#: milliseconds)
_SURROGATE = "[\ud800-\udfff]"


def utf8(text: str) -> bool:
    """Whether UTF-8 can hold ``text``: it holds no lone surrogate (a JSON string can
    carry one; an id read by :func:`id_text` holds one per undecodable byte)."""
    if text.isascii():  # (a flag of the string: no scan)
        return True
    if len(text) > _COPY_LIMIT:  # a huge text: looked through, not copied
        import re

        return re.search(_SURROGATE, text) is None
    try:
        text.encode("utf-8")  # (three times the pattern's speed)
    except UnicodeEncodeError:
        return False
    return True


#: texts longer than this are checked by a pattern instead of an encoded copy
_COPY_LIMIT = 1 << 16


def storable(text: str) -> str:
    """Text a database can store: each lone surrogate as U+FFFD (as a card shows an
    undecodable byte)."""
    import re

    return text if utf8(text) else re.sub(_SURROGATE, "\ufffd", text)


def id_text(value: Any) -> str:
    """A session id as read: its text, or — stored bytes that are not UTF-8 (an
    :class:`Undecodable`) — those bytes decoded with ``surrogateescape`` (see the module
    text)."""
    if type(value) is str:
        return value
    if isinstance(value, Undecodable):
        return value.raw.decode("utf-8", "surrogateescape")
    return str(value)


def tolerant_text(data: bytes) -> str:
    """A ``sqlite3`` text factory that never fails: UTF-8 text as ``str``, anything else
    as an :class:`Undecodable`. (Slower than the default: used only to re-run a query
    that met bytes which are not UTF-8.)"""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return Undecodable(data)


def has_undecodable(row: tuple[Any, ...]) -> bool:
    """Whether any value of ``row`` is an :class:`Undecodable` (no Python call per value:
    this runs for every row read)."""
    return Undecodable in map(type, row)


def flag_message(m: Message, columns: dict[str, Any], *, as_text: bool = False) -> Message:
    """``m`` as an ``other`` message flagged with the undecodable values among
    ``columns`` (column name → value as read); ``m`` itself when there is none.

    ``as_text``: the stored value is the whole item (an Agents SDK ``message_data``): the
    message then holds that text as ``raw`` and role ``unknown``, as for text that is not
    JSON, so a copy stores the text as it was read (replacement characters included).
    """
    bad = [(name, v) for name, v in columns.items() if isinstance(v, Undecodable)]
    if not bad:
        return m
    flag = bad[0][1].flag(bad[0][0])
    if len(bad) > 1:
        flag["columns"] = [name for name, _ in bad]
    metadata = {**meta_dict(m), FLAG: flag}
    if as_text:
        text = str(bad[0][1])
        return replace(m, role="unknown", kind="other", text=text, raw=text, metadata=metadata)
    return replace(m, kind="other", metadata=metadata)


def from_agents_value(
    row_id: int, data: Any, created_at: Any, *, utc: bool = True, sort_key: tuple[Any, ...] = ()
) -> Message:
    """:func:`~.model.from_agents_row`, with a ``message_data`` that is not UTF-8 read as
    a flagged ``other`` message (see :func:`flag_message`)."""
    m = from_agents_row(row_id, data, created_at, utc=utc, sort_key=sort_key)
    if isinstance(data, Undecodable):
        return flag_message(m, {"message_data": data}, as_text=True)
    return m


def strip_flag(m: Message, metadata: dict[str, Any]) -> bool:
    """Remove the flag :func:`flag_message` set from ``metadata`` (a copy of ``m``'s, to
    be written elsewhere); return whether it was there."""
    flag = metadata.get(FLAG)
    if m.kind == "other" and isinstance(flag, dict) and "column" in flag and "hex" in flag:
        del metadata[FLAG]
        return True
    return False
