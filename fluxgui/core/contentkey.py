"""What a message holds, ids and times aside, as one comparable value: two items are
the same content when their keys are equal (the doctor's repeated runs, a copy of a turn
in another store of a workspace, a consolidated session read back).

An Agents SDK item (a raw item, or one a flux row keeps in ``metadata.agents_item``) is
compared without its own ``id``; a plain message by role, kind, text and metadata.
"""

from __future__ import annotations

import json
from typing import Any

from .jsonsafe import Counter, is_big, iter_json
from .model import Message


def item_of(m: Message) -> dict[str, Any] | None:
    """The Agents SDK item a message holds (its raw item, or one a flux row keeps in
    ``metadata.agents_item``); ``None`` for plain messages."""
    if isinstance(m.raw, dict) and ("type" in m.raw or "role" in m.raw):
        return m.raw
    meta = m.metadata if isinstance(m.metadata, dict) else {}
    kept = meta.get("agents_item")
    return kept if isinstance(kept, dict) else None


def content_key(m: Message) -> str | bytes:
    """What a message holds, as one string, its own ``id`` and time aside — for one
    holding more than :data:`~fluxgui.core.jsonsafe.BIG` characters, that string's
    SHA-256, made a slice at a time (:func:`_digest`)."""
    item = item_of(m)
    if item is not None and isinstance(m.raw, dict):
        body: Any = {k: v for k, v in item.items() if k != "id"}
    else:
        body = [m.role, m.kind, m.raw if m.raw is not None else m.text, m.metadata]
    if is_big(body):
        return _digest(body)
    return json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)


def _digest(body: Any) -> bytes:
    """The SHA-256 of ``json.dumps(body, sort_keys=True, ensure_ascii=False,
    default=str)``, the text made in pieces (``iter_json`` of a copy with sorted keys: a
    long string a slice at a time). One dump of a 50 MB item holds the interpreter's
    lock for 190 ms: the window's event loop would wait that long beside the check's
    worker thread. A value ``iter_json`` writes otherwise (a non-finite number, which it
    quotes; one that is not JSON) is dumped whole, as before."""
    import hashlib  # (only a big item is digested)

    counter = Counter()
    digest = hashlib.sha256()
    try:
        for piece in iter_json(_sorted(body), counter):
            digest.update(piece.encode("utf-8", "surrogatepass"))
    except TypeError:
        counter.replaced += 1
    if counter.replaced:
        text = json.dumps(body, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return digest.digest()


def _sorted(value: Any) -> Any:
    """``value`` with each object's keys in sorted order (containers copied, not strings)."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [_sorted(v) for v in value]
    return value
