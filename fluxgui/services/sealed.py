"""Encrypted items a copy or an import would write under a new id: refused, or left out.

An ``EncryptedSession`` envelope opens only in the session it was sealed for: the session
id salts its key. A copy or an import writes the envelopes it could not open (read without
a key or with none that opens them, or exported so) as they are. Under their own id they
still open with the key that sealed them; under another one (a session renamed on the way
in, or a store that names new sessions itself) never again. :func:`sealed_in_copy` and
:func:`sealed_in_import` find such sessions before anything is written and refuse the
first (:class:`~fluxgui.core.errors.UnreadableItems`, naming it and why), or, asked to
drop them, give the positions of the sessions to write without them
(:func:`without_sealed`), as long as some of a session's items did open.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass

from fluxgui.adapters.encryption import is_envelope, unreadable_items
from fluxgui.core.errors import UnreadableItems, show_id
from fluxgui.core.model import Message, SessionInfo, meta_dict
from fluxgui.core.roles import Store

from .transfer_common import held, repeated

#: the states of an item that was decrypted where it was read
OPENED = ("ok", "expired")


@dataclass
class Sealed:
    """A session's encrypted items as read: ``lost``, envelopes no key opened (written as
    they are); ``opened``, items that were decrypted; ``keyless``, whether the envelopes
    were read without any key."""

    lost: int = 0
    opened: int = 0
    keyless: bool = True

    def count(self, page: list[Message]) -> None:
        for m in page:
            enc = meta_dict(m).get("encryption")
            state = enc.get("state") if isinstance(enc, dict) else None
            if is_envelope(m.raw):
                self.lost += 1
                self.keyless = self.keyless and state in ("locked", None)
            elif state in OPENED:
                self.opened += 1


async def renamed(store: Store, ids: Sequence[str], *, rename: bool) -> list[int]:
    """The positions in ``ids`` of the sessions ``store`` would write under another id."""
    if store.traits.names_new_sessions:
        return list(range(len(ids)))
    if not rename:
        return []  # a taken id is refused, not renamed
    return sorted(set(repeated(ids)) | set(await held(store, ids)))


def _drop(sealed: Sealed, drop: bool, refusal: UnreadableItems) -> bool:
    """Whether to write the session without its envelopes; raise when it may not be
    written at all."""
    if not sealed.lost:
        return False
    if drop and sealed.opened:
        return True
    raise refusal


async def sealed_in_copy(
    source: Store, dest: Store, infos: Sequence[SessionInfo], *, rename: bool, drop: bool
) -> set[int]:
    """The positions in ``infos`` of the sessions to copy without the envelopes no key
    opened (``drop``); without ``drop``, such a session that ``dest`` would write under
    another id raises :class:`UnreadableItems`. Reads the sessions to be renamed once."""
    out: set[int] = set()
    if not source.traits.encryption:
        return out
    for n in await renamed(dest, [i.id for i in infos], rename=rename):
        sid, sealed = infos[n].id, Sealed()
        async for page in source.reader.iter_messages(sid):
            sealed.count(page)
        refusal = unreadable_items(
            sid, lost=sealed.lost, opened=sealed.opened, keys=0 if sealed.keyless else None,
            action="a copy under a new id",
        )
        if _drop(sealed, drop, refusal):
            out.add(n)
    return out


async def sealed_in_import(
    dest: Store,
    sessions: Sequence[tuple[str, str, Sealed]],
    *,
    rename: bool,
    drop: bool,
) -> set[int]:
    """As :func:`sealed_in_copy` for the sessions of files to import, each given as
    (file name, session id, its encrypted items as the file holds them)."""
    out: set[int] = set()
    if not any(sealed.lost for _f, _s, sealed in sessions):
        return out
    for n in await renamed(dest, [sid for _f, sid, _s in sessions], rename=rename):
        name, sid, sealed = sessions[n]
        if sealed.opened:
            verb = "is" if sealed.lost == 1 else "are"
            text = (
                f"{sealed.lost} of the {sealed.lost + sealed.opened} encrypted items of "
                f"session {show_id(sid)} in {show_id(name)} {verb} still sealed (exported "
                "without their key) and would be lost in an import under a new id, where "
                "no key opens them (nothing was written)"
            )
        else:
            text = (
                f"the items of session {show_id(sid)} in {show_id(name)} are still sealed "
                "(exported without their key): under a new id no key would open them; "
                "import it under its own id, or export it with its key (nothing was written)"
            )
        refusal = UnreadableItems(text, sid, lost=sealed.lost, opened=sealed.opened)
        if _drop(sealed, drop, refusal):
            out.add(n)
    return out


async def without_sealed(pages: AsyncIterator[list[Message]]) -> AsyncGenerator[list[Message], None]:
    """The pages without the envelopes no key opened."""
    async for page in pages:
        yield [m for m in page if not is_envelope(m.raw)]
