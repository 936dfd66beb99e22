"""Live refresh without Qt: following a store another process (an agent) writes to.

Two use cases, shared by whatever shows a store live (the window's conversation pane and
its change watcher):

* :func:`catch_up` reads what changed in one session since some of its messages were
  loaded, and says what to do: append the new messages (with how many come before the
  loaded ones), reload, or show that the session is gone. It never trusts a change it
  cannot prove: the last loaded message must still be in place, unchanged, and the
  session's count must add up, else the answer is "reload".
* :class:`ChangeTracker` is the state of polling a store's ``change_token``: the baseline,
  whether a new token means "changed", and how long to wait after a failed poll (backing
  off up to a limit). The timer that runs the polls is the caller's.

Everything here is plain asyncio over :class:`~fluxgui.core.roles.Store`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fluxgui.core.model import Message, SessionInfo
from fluxgui.core.roles import Store

from .browse import window_reads

#: messages per page (each forward page a catch-up reads)
PAGE_SIZE = 100
#: a catch-up that finds more new messages than this reloads the latest ones instead
CATCH_UP_MAX = 2000
#: a reload that keeps the reader's place loads at most this many messages (and a
#: catch-up checks at most this many loaded messages against the store)
RELOAD_MAX = 2000

#: seconds between two polls of a store's change token
POLL_INTERVAL = 0.4
#: polls that fail (server down) wait longer and longer, up to this many seconds
MAX_BACKOFF = 10.0

CatchUpKind = Literal["gone", "reload", "append"]


# --------------------------------------------------------------------------- catch-up


@dataclass(frozen=True)
class CatchUp:
    """What :func:`catch_up` found.

    ``kind``:

    * ``"gone"``: the session no longer exists (``info`` is ``None``);
    * ``"reload"``: the loaded messages cannot be kept (edited, deleted, moved, too many
      new ones, or the session came back after it was gone): read the session again;
    * ``"append"``: ``new`` (possibly empty) follow the loaded messages; ``before`` is the
      number of messages before the loaded ones (``None``: unknown — the writer was busy
      and a quieter catch-up will tell).
    """

    kind: CatchUpKind
    info: SessionInfo | None = None
    new: list[Message] = field(default_factory=list)
    before: int | None = None


async def catch_up(
    store: Store,
    session_id: str,
    loaded: Sequence[Message],
    *,
    branch: str | None = None,
    before: int | None,
    at_start: bool,
    gone: bool = False,
    page_size: int = PAGE_SIZE,
    max_new: int = CATCH_UP_MAX,
    max_check: int = RELOAD_MAX,
) -> CatchUp:
    """What changed in ``session_id`` (on ``branch``) since ``loaded`` was read.

    ``loaded`` are the messages shown, oldest first (the latest ones of the session, or an
    empty session); ``before`` how many messages come before them (``None``: unknown);
    ``at_start`` whether the first loaded message is the session's first; ``gone``
    whether the session was last seen deleted. New messages are read a page
    (``page_size``) at a time after the last loaded one; past ``max_new`` of them the
    answer is "reload". When the count does not add up, up to ``max_check`` loaded
    messages are compared with the store before the difference is put down to the
    messages before them.
    """
    info = await store.reader.session_info(session_id, branch=branch)
    if info is None:
        return CatchUp("gone")
    if gone:
        return CatchUp("reload", info)
    size = page_size
    last = loaded[-1] if loaded else None
    # Read from the message before the last loaded one: the first row must be that
    # last message, unchanged (else it was edited or deleted, or ids were moved).
    if last is None:
        anchor, expect = None, None
    elif len(loaded) >= 2:
        anchor, expect = loaded[-2].sort_key, last
    elif at_start:
        anchor, expect = None, last
    else:
        return CatchUp("reload", info)
    reads = window_reads(store)  # (huge items as their start, as the window loaded them)
    page = await store.reader.page_messages(
        session_id,
        branch=branch,
        limit=size + (expect is not None),
        anchor=anchor,
        direction="forward",
        **reads,
    )
    full = len(page) == size + (expect is not None)
    if expect is not None:
        if not page or page[0] != expect:
            return CatchUp("reload", info)
        page = page[1:]
    new = list(page)
    while full and new:
        if len(new) >= max_new:
            return CatchUp("reload", info)
        page = await store.reader.page_messages(
            session_id, branch=branch, limit=size, anchor=new[-1].sort_key, direction="forward",
            **reads,
        )
        new.extend(page)
        full = len(page) == size
    n_loaded = len(loaded)
    if before is None or info.messages != before + n_loaded + len(new):
        # The count does not add up: messages changed before or among the loaded ones,
        # or the writer added more between our queries. Count again: if the count
        # moved, the writer is busy and we cannot tell; append what is surely new (the
        # last loaded message is still in place) and check at a quieter catch-up.
        again = await store.reader.session_info(session_id, branch=branch)
        if again is None:
            return CatchUp("gone")
        if again.messages == info.messages:
            # A real difference: check the loaded messages against the store; if they
            # are intact, only the count before them was off.
            if n_loaded > max(max_check, size):
                return CatchUp("reload", info)
            if n_loaded:
                if new:
                    check = await store.reader.page_messages(
                        session_id,
                        branch=branch,
                        limit=n_loaded,
                        anchor=new[0].sort_key,
                        direction="backward",
                        **reads,
                    )
                else:
                    check = await store.reader.page_messages(
                        session_id, branch=branch, limit=n_loaded, **reads)
                if check != list(loaded):
                    return CatchUp("reload", info)
            before = info.messages - n_loaded - len(new)
            if before < 0:
                return CatchUp("reload", info)
        info = again
    return CatchUp("append", info, new, before)


# --------------------------------------------------------------------------- polling

_UNSET: Any = object()


@dataclass(frozen=True)
class Poll:
    """What one poll of a store's change token means for the poller.

    ``delay``: seconds until the next poll. ``changed``: the token moved since the
    baseline. ``recovered``: this poll worked after failed ones. ``error``: why it failed
    (``first_failure``: the first of a run of failures, to be reported once).
    """

    delay: float
    changed: bool = False
    recovered: bool = False
    error: BaseException | None = None
    first_failure: bool = False


class ChangeTracker:
    """The state of polling a store's change token (no timer: the caller schedules).

    Feed it each poll's outcome — :meth:`seen` with the token (or :meth:`answered` then
    :meth:`take`, for a caller that reacts in between), or :meth:`failed` with the
    error — and it answers with a :class:`Poll`. The first token only sets the baseline;
    after :meth:`rebase` the next one does too (what was written meanwhile, such as our
    own writes, is not a change). Failures back off: double the wait each time (at least
    twice the interval), up to ``max_backoff``.
    """

    def __init__(self, interval: float = POLL_INTERVAL, max_backoff: float = MAX_BACKOFF) -> None:
        self.interval = interval
        self.max_backoff = max(max_backoff, interval)
        self._token: Any = _UNSET
        self._rebase = False
        self._error: BaseException | None = None
        self._backoff = 0.0  # the wait after the last failed poll

    @property
    def token(self) -> Any:
        """The last token seen (``None`` before the first poll, or when the store has none)."""
        return None if self._token is _UNSET else self._token

    @property
    def error(self) -> BaseException | None:
        """Why the last poll failed (``None`` while polls work)."""
        return self._error

    def reset(self) -> None:
        """Forget the baseline, the errors and the back-off (another store, or none)."""
        self._token = _UNSET
        self._error = None
        self._backoff = 0.0
        self._rebase = False

    def rebase(self) -> None:
        """Take the next token as the new baseline, not as a change."""
        self._rebase = True

    def failed(self, error: BaseException) -> Poll:
        """A poll failed with ``error``: back off."""
        first = self._error is None
        self._error = error
        # Back off: a server that is down is not asked 2.5 times a second.
        self._backoff = min(max(self._backoff * 2, self.interval * 2), self.max_backoff)
        return Poll(self._backoff, error=error, first_failure=first)

    def answered(self) -> Poll:
        """A poll returned a token: the back-off and the error end (``recovered`` says
        whether there was one). Then :meth:`take` the token, unless the poll started
        before the caller paused."""
        self._backoff = 0.0
        recovered = self._error is not None
        self._error = None
        return Poll(self.interval, recovered=recovered)

    def take(self, token: Any) -> bool:
        """Take ``token`` as the latest; whether it means a change (not the first token,
        not the one after :meth:`rebase`, and not the one before)."""
        previous, self._token = self._token, token
        if self._rebase:
            self._rebase = False
            return False
        return previous is not _UNSET and token != previous

    def seen(self, token: Any, *, paused: bool = False) -> Poll:
        """:meth:`answered` and :meth:`take` in one: a poll returned ``token``. While
        ``paused`` (a poll that started before the caller paused) the token is not taken:
        neither a change nor the baseline."""
        poll = self.answered()
        if paused or not self.take(token):
            return poll
        return Poll(poll.delay, changed=True, recovered=poll.recovered)
