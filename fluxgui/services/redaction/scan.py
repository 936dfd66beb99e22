"""``scan``: the findings in a store's sessions, per session, never with their values.

Each finding is reported once per message: its kind, the message, the placeholder a
redacted output of this scan would give it, and its masked form (``sk-…a1f3``,
``j…@example.com``). A session's id is looked at too (a store keyed by user:
``alice@example.com``): what is found in it is reported first, with no message
(``message_id`` ``None``), and the session is named by its redacted id, never the whole
value. A detector failing on an item raises
:class:`~fluxgui.core.errors.FluxguiError` naming it (a scan that cannot look at
everything must not say "nothing found").
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from fluxgui.core.errors import FluxguiError
from fluxgui.core.jsonrecords import RowPage
from fluxgui.core.model import Message
from fluxgui.core.roles import Store

from .redactor import Redactor


@dataclass
class ScanFinding:
    kind: str
    message_id: str | None  # None: found in the session's id
    placeholder: str
    masked: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message_id": self.message_id, "placeholder": self.placeholder, "masked": self.masked}


@dataclass
class SessionFindings:
    session_id: str  # redacted
    findings: list[ScanFinding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "findings": [f.to_dict() for f in self.findings]}


class ScanFailed(FluxguiError):
    """A detector failed on an item: the scan is not complete."""


async def _session_ids(store: Store, session_ids: Sequence[str] | None) -> AsyncIterator[str]:
    if session_ids:
        for sid in session_ids:
            await store.reader.require_session(sid)
            yield sid
        return
    from fluxgui.services.transfer_common import session_infos

    async for info in session_infos(store, None):
        yield info.id


def placeholders_of(redactor: Redactor, m: Message) -> list[str] | None:
    """The placeholders ``m``'s findings get, each once, in order (``None``: a detector
    failed on it)."""
    failed = len(redactor.left.failed)
    seen: list[str] = []
    redactor.seen = seen
    try:
        redactor.message(m)
    finally:
        redactor.seen = None
    return None if len(redactor.left.failed) > failed else list(dict.fromkeys(seen))


def scan_id(redactor: Redactor, session_id: str) -> SessionFindings:
    """A session's findings so far: the ones in its id, under its redacted id."""
    seen: list[str] = []
    redactor.seen = seen
    try:
        shown = redactor.session_id(session_id)
    except Exception:  # noqa: BLE001 - said without the id (it may be what is sought)
        raise ScanFailed("a detector failed on a session's id") from None
    finally:
        redactor.seen = None
    found = SessionFindings(shown)
    for name in dict.fromkeys(seen):
        kind, masked = redactor.given[name]
        found.findings.append(ScanFinding(kind, None, name, masked))
    return found


def scan_page(redactor: Redactor, session: SessionFindings, page: list[Message]) -> None:
    """Add the findings of a page of messages to ``session`` (blocking: pure Python)."""
    for m in page:
        seen = placeholders_of(redactor, m)
        if seen is None:
            raise ScanFailed(f"a detector failed on item {m.label} of session {session.session_id}")
        for name in seen:
            kind, masked = redactor.given[name]
            session.findings.append(ScanFinding(kind, m.label, name, masked))


async def scan_store(
    store: Store, redactor: Redactor, session_ids: Sequence[str] | None = None
) -> AsyncIterator[SessionFindings]:
    """Each session's findings (all sessions, or the ones named), in the store's
    order (the least recently active first, as an export writes them), its id's first."""
    rows = store.rows
    async for sid in _session_ids(store, session_ids):
        found = scan_id(redactor, sid)
        if rows is not None:  # rows with nothing to find are not read as Messages
            async for row_page in rows.iter_row_pages(sid):
                scan_page(redactor, found, _to_read(redactor, row_page))
        else:
            async for page in store.reader.iter_messages(sid):
                scan_page(redactor, found, page)
        yield found


def _to_read(redactor: Redactor, page: list[Message] | RowPage) -> list[Message]:
    """The rows of ``page`` that may hold a finding, as Messages (a page the store read
    as Messages: all of it)."""
    if not isinstance(page, RowPage):
        return page
    same = redactor.unchanged_rows(page.texts())
    return [page.read(row) for row, keep in zip(page.rows, same) if not keep]
