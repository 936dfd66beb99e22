"""How the window shows session ids: as they are, or, while View › Redact is on, through
the window's redactor (the one the conversation's messages go through, so that
``alice@example.com`` is the same ``[EMAIL_1]`` in the session list, the conversation's
title, a Compare window and the message text).

Only what is shown (and copied: Copy Session Id) changes; the real id is kept for
everything that reads or writes the store. An id without a finding is shown as it is.
:class:`ShownIds` is the conversation pane's (``pane.ids``): the parts showing ids
follow its ``changed`` signal, so turning Redact off shows raw ids again at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from fluxgui.core.changes import label_id
from fluxgui.core.roles import PageTransform
from fluxgui.core.text import session_label
from fluxgui.core.visible import visible

#: a path's parts and separators
_PARTS = re.compile(r"([/\\])")

#: what is shown instead of an id (or a message) a redaction detector failed on
NOT_SHOWN = "[not shown: a redaction detector failed]"

Redact = Callable[[str], str]


def one_line(session_id: str) -> str:
    """A session id as a list, a title or a header shows it: on one line, each hidden
    character (bidi control, zero-width, control, lone surrogate) a marker, as in the
    conversation's text (``invoice⟨U+202E⟩gnp.exe``, never "invoiceexe.png")."""
    return " ".join(visible(session_id, keep_layout=False, pictures=False).split()) or session_label(session_id)


def _closed(redact: Redact, text: str) -> str:
    """``redact(text)``, failing closed (a detector that breaks shows no raw text)."""
    try:
        return redact(text)
    except Exception:  # noqa: BLE001 - fail closed: never the text as stored
        return NOT_SHOWN


class ShownIds(QObject):
    """Session ids (and messages naming them) as the window shows them now."""

    #: the way ids are shown changed (View › Redact turned on or off): show them again
    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._redact: Redact | None = None
        self._texts: dict[str, str] = {}  # id → as shown (the redactor's numbering is kept)

    @property
    def redacting(self) -> bool:
        return self._redact is not None

    def set_redact(self, redact: Redact | None) -> None:
        """Show ids through ``redact`` (a redactor's ``session_id``), or as they are."""
        self._redact = redact
        self._texts = {}
        self.changed.emit()

    def text(self, session_id: str) -> str:
        """``session_id`` as shown and copied now."""
        redact = self._redact
        if redact is None:
            return session_id
        shown = self._texts.get(session_id)
        if shown is None:
            if len(self._texts) > 20_000:
                self._texts.clear()
            shown = self._texts[session_id] = _closed(redact, session_id)
        return shown

    def line(self, session_id: str) -> str:
        """``session_id`` as shown now, on one line with its hidden characters marked
        (:func:`one_line`; what is copied is :meth:`text`)."""
        return one_line(self.text(session_id))

    def place(self, name: str) -> str:
        """A store's label or path as shown now, on one line: while redacting, each part
        between ``/`` or ``\\`` through the redactor (a folder named after a customer's
        address is one, where a path would read as a URL's)."""
        if self._redact is None:
            return one_line(name)
        return one_line("".join(self.text(part) if part not in ("/", "\\") else part
                                for part in _PARTS.split(name)))

    def say(self, text: str) -> str:
        """A message for the status bar, a menu or the error bar (it may name sessions,
        cut short): while redacting, redacted as the ids and the messages are."""
        redact = self._redact
        if redact is None or not text:
            return text
        for raw, shown in list(self._texts.items()):  # an id cut short (an edit's label)
            if shown != raw:
                text = text.replace(label_id(raw), label_id(shown)).replace(raw, shown)
        return _closed(redact, text)

    def fixed(self) -> Redact | None:
        """How ids are shown now, kept by a window that shows them so until told
        otherwise (a Compare window, compared again on :attr:`changed`); ``None``: as
        they are."""
        redact = self._redact
        if redact is None:
            return None
        return lambda session_id: _closed(redact, session_id)


@dataclass(frozen=True)
class FollowedRedaction:
    """What another view follows of View › Redact (a Compare window, the test chat): the window's shown ids (their
    ``changed`` fires when Redact is turned on or off) and the conversation pane's
    ``shown_anew`` as it is now (``None`` while Redact is off)."""

    ids: ShownIds
    anew: Callable[[], Callable[[], PageTransform] | None]

    def transform(self) -> PageTransform | None:
        """A redaction through the window's redactor while Redact is on, else ``None``."""
        anew = self.anew()
        return anew() if anew is not None else None


__all__ = ["NOT_SHOWN", "FollowedRedaction", "ShownIds"]
