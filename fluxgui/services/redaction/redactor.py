""":class:`Redactor`: findings replaced by typed placeholders, consistent within one
output.

One Redactor serves one command's (or one window action's) whole output, every session
in it: the same value gets the same placeholder everywhere (``[EMAIL_1]`` for one
address, ``[EMAIL_2]`` for the next), so a conversation stays readable. A session's
id goes through it too (:meth:`Redactor.session_id`) wherever a redacted output writes
one: an id keyed by user (``alice@example.com``) is a finding like any other.

A message is redacted as a whole: its text, its metadata and its stored item (``raw``),
every string inside them in place (a JSON value stays a value of its type; a string
holding JSON, such as a call's ``arguments``, is parsed, redacted and written back as
JSON text). What a redacted output must not carry is left out and counted:

* an encrypted item no key opened (it cannot be read, so not redacted);
* compaction content (opaque to anyone but the model that made it);
* an item a detector failed on (fail closed: never written unredacted).

:meth:`Redactor.notes` says how many of each were left out.
"""

from __future__ import annotations

import json
import re
import threading
from bisect import bisect_right
from itertools import accumulate
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fluxgui.adapters.encryption import is_envelope
from fluxgui.core.model import Message

from . import secrets
from .detect import CONTEXTUAL, Detectors, _disjoint
from .rules import Finding, mask


#: an escape in JSON text (of the same length once blanked)
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)", re.S)
#: in stored text, what a row's fast path may not keep: an escape other than \" (it may
#: change what is found), an envelope's key, a compaction item's type (each looked for
#: on its own: re finds a literal fast, not the alternation's first characters)
_NOT_PLAIN = (re.compile(r'\\[^"]'), re.compile("__enc__"), re.compile("compaction"))
#: between two rows searched as one text: ends any word, any number, any address
_ROW_SEP = "\n\x00\n"


@dataclass
class Left:
    """What a redacted output left out, by why."""

    sealed: int = 0
    compaction: int = 0
    failed: list[str] = field(default_factory=list)  # the items' labels


def _pieces(rows: Sequence[Sequence[Any]], out: list[bool]) -> tuple[list[str], Sequence[int]]:
    """The text of each row to search (its columns joined) and the row it belongs to;
    a row holding something but text is marked ``False`` in ``out``. (One text column
    of strings, the Agents SDK's rows, is taken as it is: no work per row in Python.)"""
    if all(len(texts) == 1 for texts in rows):
        column = [texts[0] for texts in rows]
        if all(type(t) is str for t in column):
            return column, range(len(rows))
    pieces: list[str] = []
    which: list[int] = []
    for n, texts in enumerate(rows):
        shown = [t for t in texts if t is not None]
        if not all(isinstance(t, str) for t in shown):
            out[n] = False
            continue
        if shown:
            pieces.append(_ROW_SEP.join(shown) if len(shown) > 1 else shown[0])
            which.append(n)
    return pieces, which


class Redactor:
    """Placeholders for the findings of ``detectors`` (see the module's docstring).
    Thread-safe: an export redacts in its writer's thread."""

    def __init__(self, detectors: Detectors) -> None:
        self.detectors = detectors
        self._names: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self.left = Left()
        #: every placeholder given, with the kind and masked value it stands for
        self.given: dict[str, tuple[str, str]] = {}
        self._local = threading.local()  # what a thread is told (``seen``)
        self._known: dict[str, str] = {}  # value → kind, of the CONTEXTUAL kinds
        self._known_re: re.Pattern[str] | None = None
        self._cache: dict[str, list[Finding]] = {}  # text → the detectors' findings

    @property
    def seen(self) -> list[str] | None:
        """When a list: every placeholder this thread gives from now on is added to it (a
        scan, a shown message's tooltip; another thread redacting meanwhile, a window's
        session ids, adds nothing to it)."""
        seen: list[str] | None = getattr(self._local, "seen", None)
        return seen

    @seen.setter
    def seen(self, seen: list[str] | None) -> None:
        self._local.seen = seen

    # ------------------------------------------------------------------ text

    def placeholder(self, kind: str, value: str) -> str:
        """The placeholder of ``value`` (of ``kind``) in this output."""
        key = (kind, value)
        name = self._names.get(key)
        if name is None:
            with self._lock:
                name = self._names.get(key)
                if name is None:
                    n = self._counts.get(kind, 0) + 1
                    self._counts[kind] = n
                    name = f"[{kind}_{n}]"
                    self._names[key] = name
                    self.given[name] = (kind, mask(kind, value))
        seen = self.seen
        if seen is not None:
            seen.append(name)
        return name

    def find(self, text: str, *, cache: bool = True) -> list[Finding]:
        """The detectors' findings in ``text``, and the values found by their context
        elsewhere in this output (a Bearer token, a URL's password) wherever they are."""
        if cache and len(text) < 2000:  # (short strings repeat: item types, roles, keys)
            cached = self._cache.get(text)
            if cached is None:
                if len(self._cache) > 50_000:
                    self._cache.clear()
                cached = self._cache[text] = self._search(text)
            found = cached
        else:
            found = self._search(text)
        known = self._known_re
        if known is not None:
            more = [Finding(m.start(), m.end(), self._known[m.group()]) for m in known.finditer(text)]
            if more:
                found = _disjoint(found + more)
        return found

    def _search(self, text: str) -> list[Finding]:
        """The detectors' findings in ``text``; in a text holding escapes (JSON text
        inside a message's text: a call's arguments), what is found in the text with
        each escape blanked first (``\\nsk-…`` is a key after a line break, not inside a
        word), then what is found in the text itself and overlaps none of those."""
        found = self.detectors.find(text)
        if "\\" in text:  # what is found with the escapes blanked comes first
            blanked = self.detectors.find(_ESCAPE.sub(lambda m: " " * len(m.group()), text))
            if blanked:
                found = blanked + [f for f in found if not any(
                    f.start < b.end and b.start < f.end for b in blanked)]
                found.sort()
        return found

    def _learn(self, kind: str, value: str) -> None:
        if kind in CONTEXTUAL and len(value) >= 8 and value not in self._known:
            with self._lock:
                self._known[value] = kind
                alternation = "|".join(re.escape(v) for v in sorted(self._known, key=len, reverse=True))
                self._known_re = re.compile(alternation)

    def text(self, text: str, found: list[Finding] | None = None) -> str:
        """``text`` with each finding replaced by its placeholder."""
        if found is None:
            found = self.find(text)
        if not found:
            return text
        parts: list[str] = []
        at = 0
        for f in found:
            parts.append(text[at:f.start])
            value = text[f.start:f.end]
            self._learn(f.kind, value)
            parts.append(self.placeholder(f.kind, value))
            at = f.end
        parts.append(text[at:])
        return "".join(parts)

    def session_id(self, session_id: str) -> str:
        """A session's id as a redacted output writes it: redacted as text is (a store
        keyed by user, ``alice@example.com``, gets the same ``[EMAIL_1]`` as that address
        in a message); an id with no finding is returned as it is."""
        return self.text(session_id)

    def value(self, value: Any, name: str = "") -> Any:
        """A JSON value with every string in it redacted (keys of objects too); a string
        holding a JSON object or array is redacted inside and stays JSON text."""
        if isinstance(value, str):
            return self._string(value, name)
        if isinstance(value, dict):
            return {self._key(k): self.value(v, k if isinstance(k, str) else "") for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def _key(self, key: Any) -> Any:
        return self.text(key) if isinstance(key, str) and len(key) > 5 else key

    def _string(self, text: str, name: str) -> str:
        if (
            name and secrets.looks_like_aws_secret(text)
            and secrets.AWS_SECRET_NAME.search(name) is not None
        ):
            return self.placeholder("AWS_SECRET_KEY", text)
        found = self.find(text)
        stripped = text.lstrip()
        if not found and not (stripped[:1] in ("{", "[") and "\\" in text):
            return text
        if stripped[:1] in ("{", "[") and len(stripped) > 1:
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, (dict, list)):
                return json.dumps(self.value(parsed), ensure_ascii=False)
        return self.text(text, found)

    # ------------------------------------------------------------------ messages

    def message(self, m: Message) -> Message | None:
        """``m`` redacted; ``None`` when a redacted output leaves it out (counted)."""
        if is_envelope(m.raw):
            with self._lock:
                self.left.sealed += 1
            return None
        if m.kind == "compaction":
            with self._lock:
                self.left.compaction += 1
            return None
        try:
            learnt = len(self._known)
            text, metadata, raw = self._parts(m)
            if len(self._known) > learnt:  # a value found by its context: everywhere
                text, metadata, raw = self._parts(m)
        except Exception:  # noqa: BLE001 - fail closed: the item is left out, and said
            with self._lock:
                self.left.failed.append(m.label)
            return None
        if text is m.text and metadata == m.metadata and raw == m.raw:
            return m
        return replace(m, text=text, metadata=metadata, raw=raw, stored_chars=None)

    def _parts(self, m: Message) -> tuple[str, Any, Any]:
        return self.text(m.text), self.value(m.metadata), self.value(m.raw)

    def unchanged(self, texts: Sequence[Any]) -> bool:
        """Whether a stored row whose text columns are ``texts`` comes out of
        :meth:`message` as it is (see :meth:`unchanged_rows`)."""
        return self.unchanged_rows([texts])[0]

    def unchanged_rows(self, rows: Sequence[Sequence[Any]]) -> list[bool]:
        """For each stored row (its text columns), whether it comes out of
        :meth:`message` as it is: every column a ``str`` without escapes but ``\\"`` (a
        string in JSON text is then that text's own substring, quotes aside, and what is
        found is found alike: a quote stands before and after a value either way), no
        finding in any, no envelope and no compaction item. Conservative: ``False`` sends
        the row through :meth:`message`. The rows are searched as one text (a separator
        no finding crosses but a private key's block or a custom pattern, and such a
        finding marks every row it touches), which saves the cost of a search per row."""
        out = [True] * len(rows)
        pieces, which = _pieces(rows, out)
        starts = list(accumulate([len(p) + len(_ROW_SEP) for p in pieces], initial=0))
        if not pieces:
            return out
        whole = _ROW_SEP.join(pieces)
        # what sends a row to the Message path whatever is found: an escape but \", an
        # envelope, a compaction item (each looked for once in the whole text)
        spans = [m.span() for pattern in _NOT_PLAIN for m in pattern.finditer(whole)]
        try:
            found = self.detectors.find(whole, disjoint=False)
            known = self._known_re
            if known is not None:
                found += [Finding(m.start(), m.end(), "") for m in known.finditer(whole)]
        except Exception:  # noqa: BLE001 - the Message path leaves the item out and says so
            for n in which:
                out[n] = False
            return out
        found += [Finding(a, b, "") for a, b in spans]
        for f in found:
            first = bisect_right(starts, f.start) - 1
            last = bisect_right(starts, max(f.start, f.end - 1)) - 1
            for k in range(first, last + 1):
                out[which[k]] = False
        return out

    def page(self, page: list[Message]) -> list[Message]:
        """A page of messages redacted, the ones left out dropped."""
        out = []
        for m in page:
            r = self.message(m)
            if r is not None:
                out.append(r)
        return out

    def notes(self) -> list[str]:
        """What was left out, one sentence each (empty: nothing)."""
        from fluxgui.core.text import plural

        left, out = self.left, []
        if left.sealed:
            out.append(
                f"redaction left out {plural(left.sealed, 'encrypted item')} no key opened "
                "(pass the key to redact them instead)"
            )
        if left.compaction:
            out.append(f"redaction left out {plural(left.compaction, 'compaction item')} (opaque content)")
        if left.failed:
            shown = ", ".join(left.failed[:5]) + (", …" if len(left.failed) > 5 else "")
            out.append(
                f"redaction left out {plural(len(left.failed), 'item')} a detector failed on "
                f"({shown}); nothing of them was written"
            )
        return out
