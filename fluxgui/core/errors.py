"""Known errors: each is one sentence for the user (exit code 3 on the CLI).

Anything else that escapes is a bug and is reported with its traceback.
"""

from __future__ import annotations

from .visible import visible


class FluxguiError(Exception):
    """A known, user-facing error. ``str(err)`` is one line."""

    def __str__(self) -> str:  # never let a newline in data break the one-line rule
        return " ".join(super().__str__().split("\n"))


class TargetError(FluxguiError):
    """The target cannot be opened: missing file, bad URL, corrupt or empty file."""


class NotASessionStore(FluxguiError):
    """The target opened but holds no session store we know."""


class SeveralStores(NotASessionStore):
    """The database holds more than one Agents SDK table pair and none was named:
    ``pairs`` are the (sessions table, messages table) found, to choose from; ``sessions``
    how many sessions each pair holds (a pair whose table could not be counted is left
    out)."""

    def __init__(
        self,
        message: str,
        pairs: list[tuple[str, str]],
        sessions: dict[tuple[str, str], int] | None = None,
    ) -> None:
        super().__init__(message)
        self.pairs = list(pairs)
        self.sessions = dict(sessions or {})


class StoreUnavailable(FluxguiError):
    """A server could not be reached, refused the login, or the database is missing."""


class ApiKeyRefused(StoreUnavailable):
    """The server refused the API key (401), or no key was found (``missing``): the
    window offers to enter another key and try again."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


class SessionNotFound(FluxguiError):
    """No session with that id."""


class ReadOnlyError(FluxguiError):
    """A write was asked of a store opened read-only (or one that cannot be written)."""


class InvalidItem(FluxguiError):
    """A message or item given for writing is not valid for the store's format."""


def show_id(value: str) -> str:
    """Quote a (possibly hostile) identifier for a one-line message: JSON-quoted, with
    every hidden character (controls, bidi, zero-width) shown as a marker."""
    import json  # (for error messages only: not loaded on every start)

    return visible(json.dumps(value, ensure_ascii=False), keep_layout=False)


class Conflict(FluxguiError):
    """A change (often an undo) no longer fits what the store holds: someone else changed it."""


class ProviderError(FluxguiError):
    """The test chat's model provider failed: server down, key refused, timeout, a broken
    stream. Nothing was saved (a retry does not duplicate the user's message)."""


class ProviderKeyRefused(ProviderError):
    """The test chat's provider refused the API key (401): the chat panel offers to
    enter another key and send again."""


class KeyNeeded(FluxguiError):
    """The store holds encrypted items (Agents SDK ``EncryptedSession``) and no key was
    given."""


class WrongKey(FluxguiError):
    """The key given does not decrypt the store's encrypted items."""


class BranchNotFound(SessionNotFound):
    """No branch with that id in the session."""


class BranchError(FluxguiError):
    """A branch operation the library refuses too (delete ``main``, a used id, …)."""


class Unsupported(FluxguiError):
    """The store cannot do this at all (it does not play the role: see
    :func:`fluxgui.core.roles.refuse`); the message says why."""


class UnreadableItems(FluxguiError):
    """Encrypted items that no key given opens would be written under a new session id
    (a fork, or a copy or import renamed on the way), where no key ever opens them again
    (the session id salts the key): nothing was written. ``lost`` of the session's
    encrypted items do not open, ``opened`` do; when some open (``droppable``), the user
    may ask for the rest to be left out."""

    def __init__(self, message: str, session_id: str, *, lost: int, opened: int) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.lost = lost
        self.opened = opened

    @property
    def droppable(self) -> bool:
        """Whether leaving the unreadable items out still leaves some that open."""
        return self.opened > 0
