"""Agents SDK ``EncryptedSession`` envelopes: detect, decrypt and seal items.

``EncryptedSession`` stores each item as ``{"__enc__": 1, "v": 1, "kid": "hkdf-v1",
"payload": <Fernet token>}`` in the store it wraps. Each session has its own Fernet key:
HKDF-SHA256 (32 bytes, salt = the session id in UTF-8, info
``agents.session-store.hkdf.v1``) over the master key, which is its urlsafe-base64
decoding when that is 32 bytes and its UTF-8 bytes otherwise. The library drops items older
than its TTL on read; fluxgui shows them, marked expired, so nothing vanishes silently.

The key lives only in memory: nothing here writes it anywhere.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from fluxgui.core.errors import KeyNeeded, UnreadableItems, WrongKey, show_id
from fluxgui.core.model import Message, meta_dict, from_item
from fluxgui.core.times import iso_time, unix_time
from fluxgui.core.undecodable import Undecodable, from_agents_value

DEFAULT_TTL = 600
KID = "hkdf-v1"
VERSION = 1
HKDF_INFO = b"agents.session-store.hkdf.v1"

#: What became of an encrypted item: decrypted, decrypted but older than the TTL (the
#: library would skip it), or not decryptable with this key.
State = Literal["ok", "expired", "unreadable"]


def is_envelope(item: Any) -> bool:
    """Whether a parsed item is an ``EncryptedSession`` envelope (the library's test)."""
    return (
        isinstance(item, dict)
        and item.get("__enc__") == 1
        and "payload" in item
        and "kid" in item
        and "v" in item
    )


def looks_encrypted(data: Any) -> bool:
    """Whether stored JSON text is an envelope (cheap check before parsing all of it)."""
    if not isinstance(data, (str, bytes)):
        return False
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if '"__enc__"' not in text[:64]:
        return False
    try:
        return is_envelope(json.loads(text))
    except (ValueError, RecursionError):
        return False


def master_key_bytes(key: str) -> bytes:
    """The HKDF input for a master key, as the library reads it."""
    if not key:
        raise WrongKey("the encryption key is empty")
    try:
        raw = base64.urlsafe_b64decode(key)
        if len(raw) == 32:
            return raw
    except (binascii.Error, ValueError):
        pass
    return key.encode("utf-8")


@dataclass
class Opened:
    """An envelope opened: the item (``None`` when unreadable), its state and when it
    was encrypted (from the token; ``None`` when unreadable)."""

    item: Any
    state: State
    encrypted_at: datetime | None


class ItemCipher:
    """Decrypts and seals items with a key ring — one master key or several — deriving
    each session's key as ``EncryptedSession`` does. A session is read with whichever
    key opens its items (the one that opened it last is tried first); a session no key
    has opened yet is sealed with the first key, a copy of another (a fork) with the key
    of its source. ``ttl`` (seconds) decides which items
    count as expired."""

    def __init__(self, key: str | Sequence[str], ttl: int = DEFAULT_TTL) -> None:
        keys = [key] if isinstance(key, str) else list(key)
        if not keys:
            raise WrongKey("no encryption key given")
        self._masters = [master_key_bytes(k) for k in dict.fromkeys(keys)]
        self.ttl = int(ttl)
        self._fernets: dict[tuple[int, str], Any] = {}
        self._chosen: dict[str, int] = {}  # session id -> index of the key that opens it

    @property
    def key_count(self) -> int:
        """How many keys the ring holds."""
        return len(self._masters)

    def _fernet(self, which: int, session_id: str) -> Any:
        from cryptography.fernet import Fernet
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        f = self._fernets.get((which, session_id))
        if f is None:
            if len(self._fernets) > 4096:  # a long search over many sessions
                self._fernets.clear()
            if len(self._chosen) > 65536:
                self._chosen.clear()
            derived = HKDF(
                algorithm=hashes.SHA256(),
                length=32,
                salt=session_id.encode("utf-8"),
                info=HKDF_INFO,
            ).derive(self._masters[which])
            f = self._fernets[(which, session_id)] = Fernet(base64.urlsafe_b64encode(derived))
        return f

    def fernet(self, session_id: str) -> Any:
        """The Fernet of the session's key: the one that opened its items, else the first."""
        return self._fernet(self._chosen.get(session_id, 0), session_id)

    def key_of(self, session_id: str) -> int | None:
        """Which key of the ring (its index) opened the session's items (``None``: none yet)."""
        return self._chosen.get(session_id)

    def open(self, session_id: str, envelope: dict[str, Any], *, now: float | None = None) -> Opened:
        """Decrypt one envelope of ``session_id`` with whichever key opens it; never
        raises on bad data."""
        from cryptography.fernet import InvalidToken

        payload = envelope.get("payload")
        if not isinstance(payload, str):
            return Opened(None, "unreadable", None)
        first = self._chosen.get(session_id, 0)
        order = [first] + [i for i in range(len(self._masters)) if i != first]
        token = payload.encode("utf-8")
        for which in order:
            f = self._fernet(which, session_id)
            try:
                plain = f.decrypt(token)
                stamp = f.extract_timestamp(token)
                item = json.loads(plain.decode("utf-8"))
            except InvalidToken:
                continue  # another key may open it
            except (ValueError, TypeError, RecursionError, UnicodeError):
                return Opened(None, "unreadable", None)  # it opened: the content is bad
            self._chosen[session_id] = which
            now = time.time() if now is None else now
            when = datetime.fromtimestamp(stamp, timezone.utc)
            state: State = "expired" if stamp + self.ttl < now else "ok"
            return Opened(item, state, when)
        return Opened(None, "unreadable", None)

    def seal(self, session_id: str, item: Any, *, at: float | None = None) -> dict[str, Any]:
        """The envelope ``EncryptedSession`` writes for ``item`` in ``session_id``.

        ``at`` (Unix seconds) backdates the token: an item copied from an encrypted
        store keeps the time it was first encrypted, so the TTL that made it expire
        there still does (a copy must not bring skipped history back to the agent).
        """
        data = json.dumps(item, ensure_ascii=False, separators=(",", ":"), default=str)
        f = self.fernet(session_id)
        plain = data.encode("utf-8")
        token = f.encrypt(plain) if at is None else f.encrypt_at_time(plain, int(at))
        return {"__enc__": 1, "v": VERSION, "kid": KID, "payload": token.decode("utf-8")}

    def reseal(
        self, from_session: str, to_session: str, envelope: dict[str, Any]
    ) -> dict[str, Any] | None:
        """``envelope`` of ``from_session`` sealed for ``to_session`` (the session id is
        the key's salt, so an envelope copied as it is would not open there), keeping
        its encryption time and its key — the one that opened it, so that whoever reads
        the source reads the copy (a fork of a session sealed with the ring's second key
        opens with that key alone) — unless ``to_session`` has a key of its own already;
        ``None`` when it does not open with this key."""
        opened = self.open(from_session, envelope)
        if opened.item is None or opened.encrypted_at is None:
            return None
        self._chosen.setdefault(to_session, self._chosen[from_session])
        return self.seal(to_session, opened.item, at=opened.encrypted_at.timestamp())

    def check(self, session_id: str, envelope: dict[str, Any], where: str) -> None:
        """Raise :class:`WrongKey` when no key of the ring opens a sample envelope."""
        if self.open(session_id, envelope).state == "unreadable":
            which = "the key does" if len(self._masters) == 1 else "none of the keys do"
            raise WrongKey(
                f"{which} not decrypt the encrypted items of {where} "
                f"(tried session {show_id(session_id)}): wrong key?"
            )


T = TypeVar("T")


def unreadable_items(
    session_id: str, *, lost: int, opened: int, keys: int | None, action: str
) -> UnreadableItems:
    """The refusal of ``action`` (``"a fork"``, ``"a copy under a new id"``…), which would
    write ``lost`` encrypted items of ``session_id`` that no key opens under a new id.
    ``keys``: how many keys were given (``None``: not known here)."""
    sid = show_id(session_id)
    if opened == 0:
        if keys == 0:
            why = f"session {sid} holds encrypted items and no key was given"
        elif keys == 1:
            why = f"the key does not open the items of session {sid}"
        elif keys is None:
            why = f"no key given opens the items of session {sid}"
        else:
            why = f"none of the keys opens the items of session {sid}"
        text = f"{why}; {action} needs the key that sealed them (nothing was written)"
    else:
        verb = "does" if lost == 1 else "do"
        given = "the key given" if keys == 1 else "any key given"
        text = (
            f"{lost} of the {lost + opened} encrypted items of session {sid} {verb} not "
            f"open with {given} and would be lost in {action}, which needs the key that "
            "sealed them (nothing was written)"
        )
    return UnreadableItems(text, session_id, lost=lost, opened=opened)


def resealed(
    cipher: ItemCipher | None,
    origin: str,
    target: str,
    rows: Sequence[T],
    stored: Callable[[T], Any],
    *,
    drop: bool = False,
    where: str = "",
) -> list[tuple[T, dict[str, Any] | None]]:
    """The rows of ``origin`` to copy into ``target`` (a fork), each beside its envelope
    sealed again for ``target`` by :meth:`ItemCipher.reseal` (``None``: not an envelope,
    copied as it is); ``stored(row)`` is the row's stored text.

    An envelope that no key opens would never open under ``target`` either: it raises
    :class:`UnreadableItems` before anything is written — unless ``drop`` and others
    open, then it is left out. Without a key an envelope raises :class:`KeyNeeded`
    (``where``: the store's name)."""
    out: list[tuple[T, dict[str, Any] | None]] = []
    lost = opened = 0
    for row in rows:
        value = stored(row)
        if not looks_encrypted(value):
            out.append((row, None))
            continue
        if cipher is None:
            raise KeyNeeded(
                f"session {show_id(origin)} in {where} holds encrypted items "
                "(EncryptedSession): give its key to fork it"
            )
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        again = cipher.reseal(origin, target, json.loads(text))
        if again is None:
            lost += 1
            continue
        opened += 1
        out.append((row, again))
    if lost and not (drop and opened):
        raise unreadable_items(
            origin, lost=lost, opened=opened, keys=cipher.key_count if cipher else 0,
            action="a fork",
        )
    return out


LOCKED_TEXT = "Encrypted item: open the store with its key to read it."
UNREADABLE_TEXT = "Encrypted item that does not decrypt with the key given."


def stored_message(
    row_id: int,
    data: Any,
    created_at: Any,
    *,
    session_id: str,
    cipher: ItemCipher | None,
    utc: bool = True,
    sort_key: tuple[Any, ...] = (),
) -> Message:
    """One stored Agents SDK item as a :class:`Message`, decrypting an envelope.

    A plain item is read as :func:`from_agents_row` reads it; stored text that is not
    UTF-8 (an envelope's too) as :func:`~fluxgui.core.undecodable.from_agents_value`
    reads it: a flagged ``other``. An envelope becomes the item
    inside it, with ``metadata["encryption"]`` saying ``state`` (``ok``/``expired``) and
    ``encrypted_at``; without a key, or when it does not decrypt, it becomes
    ``kind="other"`` with the envelope as ``raw`` and the state ``locked``/``unreadable``.
    """
    if isinstance(data, Undecodable) or not looks_encrypted(data):
        return from_agents_value(row_id, data, created_at, utc=utc, sort_key=sort_key)
    envelope = json.loads(data if isinstance(data, str) else data.decode("utf-8", "replace"))
    created = iso_time(created_at, utc=utc)
    key = sort_key or (int(row_id),)
    opened = cipher.open(session_id, envelope) if cipher is not None else None
    if opened is None or opened.item is None:
        state = "locked" if opened is None else "unreadable"
        return Message(
            id=int(row_id),
            role="unknown",
            kind="other",
            text=LOCKED_TEXT if state == "locked" else UNREADABLE_TEXT,
            metadata={"encryption": {"state": state}},
            created_at=created,
            raw=envelope,
            sort_key=key,
        )
    m = from_item(row_id, opened.item, created, sort_key=key)
    assert opened.encrypted_at is not None
    m.metadata = {
        "encryption": {
            "state": opened.state,
            "encrypted_at": opened.encrypted_at.isoformat(timespec="seconds"),
        }
    }
    return m


PLAINTEXT = "plaintext"


def mark_plaintext(messages: list[Message]) -> None:
    """Mark the items stored in clear among those of an encrypted store
    (``metadata["encryption"] = {"state": "plaintext"}``): ``EncryptedSession`` skips
    them on read, so a reviewer must see that the agent never got them back."""
    for m in messages:
        meta = m.metadata
        if isinstance(meta, dict) and "encryption" in meta:
            continue
        if meta is None:
            m.metadata = {"encryption": {"state": PLAINTEXT}}
        elif isinstance(meta, dict):
            m.metadata = {**meta, "encryption": {"state": PLAINTEXT}}


def sealed(m: Message) -> bool:
    """Whether ``m`` was stored as an envelope (opened or not; not a plaintext item)."""
    enc = (m.metadata or {}).get("encryption") if isinstance(m.metadata, dict) else None
    return isinstance(enc, dict) and enc.get("state") != PLAINTEXT


def encrypted_at(m: Message) -> float | None:
    """When a decrypted message was first encrypted (Unix seconds), from its
    ``metadata["encryption"]``; ``None`` for a plain one or an unknown time."""
    enc = meta_dict(m).get("encryption")
    when = enc.get("encrypted_at") if isinstance(enc, dict) else None
    return unix_time(when) if isinstance(when, str) else None


def readable(m: Message) -> bool:
    """Whether the library's ``EncryptedSession.get_items`` would return this item: a
    decrypted, unexpired one. (Plain items in an encrypted store are skipped too: they
    are marked ``plaintext``, see :func:`mark_plaintext`.)"""
    enc = meta_dict(m).get("encryption")
    return isinstance(enc, dict) and enc.get("state") == "ok"
