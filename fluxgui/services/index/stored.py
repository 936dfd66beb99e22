"""How the index file holds text that UTF-8 cannot hold — a lone surrogate, which a JSON
string can carry (the Agents SDK's ``json.dumps`` writes ``"\\udc80"``), or a session id
read from bytes that are not UTF-8: as its ``surrogatepass`` bytes (a BLOB), read back as
the same ``str``. Text UTF-8 can hold is stored as it is (the common case pays a check of
the string's ASCII flag, or one encoding)."""

from __future__ import annotations

import sqlite3

from fluxgui.core.undecodable import utf8


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
