"""How the index file holds text that UTF-8 cannot hold — a lone surrogate, which a JSON
string can carry (the Agents SDK's ``json.dumps`` writes ``"\\udc80"``), or a session id
read from bytes that are not UTF-8: as its ``surrogatepass`` bytes (a BLOB), read back as
the same ``str``. Text UTF-8 can hold is stored as it is (the common case pays a check of
the string's ASCII flag, or one encoding).

A text longer than :data:`PIECE` characters (a huge tool output) is stored as its bytes
too, written a piece at a time (:func:`write_long`), and given to the FTS table in
overlapping slices (:func:`fts_parts`): neither is ever copied whole. Also here: what the
FTS table is given of a text (:func:`fts_text`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from fluxgui.core.hits import fold
from fluxgui.core.undecodable import storable, utf8


def stored(value: object) -> object:
    """A value as the index file holds it: a text with a lone surrogate as its
    ``surrogatepass`` bytes (see the module text), anything else as it is."""
    if isinstance(value, str):
        return value if utf8(value) else value.encode("utf-8", "surrogatepass")
    return value


def read(value: object) -> object:
    """A value read from the index file (the inverse of :func:`stored`)."""
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


def read_row(row: tuple[object, ...]) -> tuple[object, ...]:
    """A row read from the index file, each value through :func:`read`."""
    return tuple(read(v) for v in row)


def as_stored(row: tuple[object, ...]) -> tuple[tuple[object, ...], bool]:
    """``row`` as the file holds it (:func:`stored`), and whether a value became bytes."""
    out = tuple(stored(v) for v in row)
    return out, bytes in map(type, out)


def many(db: sqlite3.Connection, insert: str, rows: list[tuple[object, ...]]) -> bool:
    """``executemany`` of the rows as the file holds them; whether a value became bytes."""
    converted = [as_stored(r) for r in rows]
    db.executemany(insert, [r for r, _odd in converted])
    return any(odd for _r, odd in converted)


#: a text longer than this (characters) is written in pieces of this size: as bytes
#: (:func:`write_long`) and given to the FTS table in overlapping slices
PIECE = 1 << 20


def long_text(value: object) -> bool:
    """Whether ``value`` is a text written in pieces (longer than :data:`PIECE`)."""
    return isinstance(value, str) and len(value) > PIECE


def _pieces(text: str) -> Iterator[bytes]:
    for i in range(0, len(text), PIECE):
        yield text[i : i + PIECE].encode("utf-8", "surrogatepass")


def utf8_size(text: str) -> int:
    """The length of ``text``'s ``surrogatepass`` UTF-8 bytes, encoded a piece at a time."""
    return len(text) if text.isascii() else sum(map(len, _pieces(text)))


def write_long(db: sqlite3.Connection, table: str, column: str, rowid: int, text: str) -> None:
    """Write ``text`` as its ``surrogatepass`` bytes into the ``zeroblob(utf8_size(text))``
    the row holds, a piece at a time (SQLite's incremental BLOB I/O): a text bound whole
    is copied by SQLite, then again into the record, before a page is written — a
    50 MB text cost 150 MB more. Read back as the same ``str`` (:func:`read`)."""
    with db.blobopen(table, column, rowid) as blob:
        for piece in _pieces(text):
            blob.write(piece)


def fts_text(text: str) -> str:
    """What the FTS table is given of a text: folded, each NUL character (where FTS5's
    tokenizer would end the text) and each lone surrogate (which UTF-8 cannot hold) as
    U+FFFD. Queries leave out trigrams holding either, so nothing is missed; a candidate
    is checked on its real text."""
    return _fts_form(fold(text))


def _fts_form(folded: str) -> str:
    if "\x00" in folded:
        folded = folded.replace("\x00", "\ufffd")
    return storable(folded)


def fts_parts(text: str) -> Iterator[str]:
    """:func:`fts_text` of ``text``, in slices of ``PIECE`` characters that overlap by two
    when it is longer (each a row of the FTS table under the message's rowid): every
    trigram lies within a slice, and no copy of the whole text is made — except where it
    holds a "Σ", whose folding depends on the letters around it (the whole text is folded
    first, then sliced)."""
    if len(text) <= PIECE:
        yield fts_text(text)
        return
    whole = "\u03a3" in text
    source = fold(text) if whole else text
    for i in range(0, len(source) - 2, PIECE):
        piece = source[i : i + PIECE + 2]
        yield _fts_form(piece if whole else fold(piece))
