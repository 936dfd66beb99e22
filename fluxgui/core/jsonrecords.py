"""The JSON export record of a message, from a Message or straight from a stored row.

:func:`message_record` is the record the JSON and JSONL writers
(:mod:`fluxgui.core.export`) write for a Message. The fast path makes the same record
straight from the row a SQL store read: the store hands the export pages of rows
(:class:`RowPage`) instead of Messages, and the writers turn each row into its record
text here, in their worker thread, with no Message, no dict per record and no JSON
encoder built per call. The text is exactly what the Message path writes for the
Message the store would have read from that row (``message_record`` dumped by
:func:`fluxgui.core.jsonsafe.dumps`).

Only plain rows take that path: integer ids, text columns that are ``str`` (not bytes,
not :class:`~fluxgui.core.undecodable.Undecodable`), stored JSON that parses and holds
finite numbers only, nothing longer than :data:`~fluxgui.core.jsonsafe.BIG` characters.
Any other row gives ``None``: the writer reads it through :attr:`RowPage.read` (the
store's own reading) and writes that Message as usual.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from json.decoder import JSONDecoder
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any

from .jsonsafe import BIG, is_big
from .model import Message, _item_role, item_kind, item_text
from .times import iso_time

_c_make_encoder: Any
try:
    from _json import make_encoder as _c_make_encoder
except ImportError:  # pragma: no cover - CPython always has it
    _c_make_encoder = None

#: the row layouts: flux ``(id, role, content, metadata, created_at, …)``; Agents SDK
#: ``(id, message_data, created_at, …)`` (more columns after those may follow)
LAYOUTS = ("flux", "agents")

Row = tuple[Any, ...]


def message_record(m: Message, *, metadata: bool = True, columns: bool = False) -> dict[str, Any]:
    """The exported form of a message; without ``metadata`` its metadata is left out (a
    row of columns whose metadata is not a JSON object — flux — keeps that text in
    ``raw``: it goes too)."""
    out = m.to_dict()
    if not metadata:
        out["metadata"] = None
        if columns and isinstance(m.raw, str):
            out["raw"] = None
    return out


def big_message(m: Message) -> bool:
    """Whether ``m`` holds more than :data:`BIG` characters (text, raw item, metadata).
    A message read from stored text no longer than that needs no walk of its item."""
    if len(m.text) > BIG:
        return True
    if m.stored_chars is not None and m.stored_chars <= BIG:
        return False
    return is_big(m.raw) or is_big(m.metadata)


@dataclass(frozen=True)
class RowPage:
    """A page of one session's messages as the store read them: ``rows`` in
    :data:`LAYOUTS` ``layout``, and ``read``, the store's own reading of one row as a
    Message (pure: it may run in any thread). ``utc``: naive times are UTC."""

    layout: str
    rows: list[Row]
    read: Callable[[Row], Message]
    utc: bool = True

    def __len__(self) -> int:
        return len(self.rows)

    def messages(self) -> list[Message]:
        """The rows as Messages (what ``page_messages`` would have given)."""
        read = self.read
        return [read(r) for r in self.rows]

    def surely_not_user(self, row: Row) -> bool:
        """Whether :attr:`read` certainly gives no ``user`` message for ``row``, told
        without reading it: a flux row whose role column names another role; an Agents
        SDK item whose stored text spells no ``user``, not even with a ``\\u`` escape
        (its ``role`` cannot be ``user``). ``False``: it may be one."""
        if self.layout == "flux":
            role = row[1]
            return isinstance(role, str) and role != "" and role != "user"
        data = row[1]
        return isinstance(data, str) and "user" not in data and "\\u" not in data

    def texts(self) -> list[tuple[Any, ...]]:
        """Each row's columns holding its text and items (what redaction searches:
        flux's content, metadata and item; the Agents SDK's item)."""
        if self.layout == "flux":
            return list(map(itemgetter(1, 2, 3), self.rows))
        return list(zip(map(itemgetter(1), self.rows)))

    def chars(self) -> int:
        """About how much text the rows hold (their stored text columns)."""
        cols = (2, 3) if self.layout == "flux" else (1,)
        try:
            return sum(sum(map(len, filter(None, map(itemgetter(i), self.rows)))) for i in cols)
        except TypeError:  # a value without a length (a number)
            return sum(len(v) for r in self.rows for i in cols if isinstance(v := r[i], (str, bytes)))


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


if _c_make_encoder is not None:
    # json.dumps(value, ensure_ascii=False, allow_nan=False) without building an encoder
    # per call (markers None: no check for cycles, which parsed JSON cannot hold)
    _iterencode = _c_make_encoder(None, _not_json, encode_basestring, None, ": ", ", ", False, False, False)

    def _dump(value: Any) -> str:
        return "".join(_iterencode(value, 0))
else:  # pragma: no cover
    _encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False)

    def _dump(value: Any) -> str:
        return _encoder.encode(value)

#: the C scanner json's decoder builds (a value and the index after it, from an index)
_scan: Callable[[str, int], tuple[Any, int]] = JSONDecoder().scan_once  # type: ignore[attr-defined]


def _parse(text: str) -> Any:
    """``json.loads(text)`` (raises as it does), without its wrapper's two regex passes
    when the value fills the text exactly."""
    try:
        value, end = _scan(text, 0)
    except StopIteration:  # leading space, or not JSON: loads says which
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


def _first_fast(text: str) -> Any:
    global _fast
    from orjson import loads as _fast  # (40 ms to import: only when an export runs)

    return _fast(text)


_fast: Callable[[str], Any] = _first_fast


def _parse_dump(text: str) -> tuple[Any, str]:
    """``(json.loads(text), _dump(of it))`` (raises as they do), parsed by orjson, about
    twice as fast, whenever that gives the same value. orjson refuses some JSON that json
    reads (``NaN``, ``1e400``, a lone surrogate, nesting past 1,024): json reads those.
    And it reads an integer beyond 64 bits as a float: such a float is at least 2**63,
    and every float from 1e16 up dumps with ``e+``, so a dump holding ``e+`` (a float
    that large, or that text in a string) is parsed again by json."""
    try:
        value = _fast(text)
    except Exception:  # orjson.JSONDecodeError, or a str that is not UTF-8 (surrogates)
        value = _parse(text)
        return value, _dump(value)
    out = _dump(value)
    if "e+" in out:
        value = _parse(text)
        out = _dump(value)
    return value, out


def _time_json(value: Any, utc: bool, cache: dict[str, str]) -> str | None:
    """The JSON text of a stored time ``value`` (``str`` or ``None``; ``None`` for any
    other type), as the Message's ``created_at``; remembered in ``cache``."""
    if value is None:
        return "null"
    if type(value) is not str:
        return None
    text = cache.get(value)
    if text is None:
        iso = iso_time(value, utc=utc)
        text = "null" if iso is None else encode_basestring(iso)
        if len(cache) < 4096:
            cache[value] = text
    return text


_EMPTY = '""'


def flux_records(page: RowPage, head: str, tail: str, metadata: bool) -> list[str | None]:
    """The record of each flux row ``(id, role, content, metadata, created_at, …)``,
    from ``head`` (``{``, or ``{"session_id": …, ``) to ``tail`` (``}``, and what
    follows it); ``None`` for a row to read as a Message. ``metadata``: the writer keeps
    metadata."""
    utc, times = page.utc, dict[str, str]()
    roles: dict[str, str] = {}  # role -> its "role" and "kind" fields
    out: list[str | None] = []
    add = out.append
    es, parse, parse_dump = encode_basestring, _parse, _parse_dump
    for row in page.rows:
        try:
            rid, role, content, meta = row[0], row[1], row[2], row[3]
            if (
                type(rid) is not int or type(role) is not str
                or (content is not None and (type(content) is not str or len(content) > BIG))
                or (meta is not None and (type(meta) is not str or len(meta) > BIG))
                or (at := times.get(row[4]) if type(row[4]) is str else None) is None
                and (at := _time_json(row[4], utc, times)) is None
            ):
                add(None)
                continue
            who = roles.get(role)
            if who is None:
                kind = "tool_output" if role == "tool" else "message"
                who = roles[role] = f'"role": {es(role or "user")}, "kind": "{kind}"'
            if meta:
                # (metadata that does not parse makes the row "other": the Message path)
                if metadata:
                    meta = parse_dump(meta)[1]
                else:
                    parse(meta)
                    meta = "null"
            else:
                meta = "null"
            text = es(content) if content else _EMPTY
            add(
                f'{head}"id": {rid}, {who}, "text": {text}, '
                f'"metadata": {meta}, "created_at": {at}, "raw": null{tail}'
            )
        except Exception:  # invalid JSON, a non-finite number, …: read as a Message
            add(None)
    return out


#: item type -> (kind, role when the item names none), as model.item_kind and _item_role
#: give them for the commonest items; _EASY: an item without a type but with a role
_PLAIN_KINDS = {
    "message": ("message", "unknown"),
    "function_call": ("tool_call", "assistant"),
    "function_call_output": ("tool_output", "tool"),
}
_EASY = _PLAIN_KINDS["message"]


def agents_records(page: RowPage, head: str, tail: str, drop_text_raw: bool) -> list[str | None]:
    """The record of each Agents SDK row ``(id, message_data, created_at, …)``, from
    ``head`` to ``tail``; ``None`` for a row to read as a Message. ``drop_text_raw``: a
    ``raw`` that is a string is left out (a flux export without metadata)."""
    utc, times = page.utc, dict[str, str]()
    out: list[str | None] = []
    add = out.append
    es, parse_dump = encode_basestring, _parse_dump
    for row in page.rows:
        try:
            rid, data = row[0], row[1]
            if (
                type(rid) is not int or type(data) is not str or len(data) > BIG
                or (at := times.get(row[2]) if type(row[2]) is str else None) is None
                and (at := _time_json(row[2], utc, times)) is None
            ):
                add(None)
                continue
            item, raw = parse_dump(data)
            if drop_text_raw and type(item) is str:
                add(None)
                continue
            # the common items' kind and role at a glance; any other as from_item reads it
            plain = None
            if type(item) is dict:
                t = item.get("type")
                if t is None:
                    plain = _EASY if "role" in item else None
                elif type(t) is str:
                    plain = _PLAIN_KINDS.get(t)
            if plain is not None:
                kind, role = plain[0], item.get("role")
                if type(role) is not str:
                    role = plain[1]
            else:
                kind = item_kind(item)
                role = _item_role(item, kind)
            text = item_text(item, kind)
            if len(text) > BIG:
                add(None)
                continue
            add(
                f'{head}"id": {rid}, "role": {es(role)}, "kind": "{kind}", '
                f'"text": {es(text)}, "metadata": null, "created_at": {at}, "raw": {raw}{tail}'
            )
        except Exception:  # not JSON, a non-finite number, …: read as a Message
            add(None)
    return out


def row_records(
    page: RowPage, head: str, tail: str, *, metadata: bool, columns: bool
) -> list[str | None]:
    """The JSON record of each row of ``page`` (see the module text), from ``head`` to
    ``tail``; ``None`` for a row to read as a Message. ``metadata`` and ``columns`` are
    the writer's (as for :func:`message_record`)."""
    if page.layout == "flux":
        return flux_records(page, head, tail, metadata)
    if page.layout == "agents":
        return agents_records(page, head, tail, not metadata and columns)
    return [None] * len(page.rows)
