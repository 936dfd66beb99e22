"""JSON as a person reads and edits it: indented text whose hidden characters show as
escapes, strict parsing with one-line errors, and ids quoted for a sentence.

Pure Python. The message editor (:mod:`fluxgui.qt.dialogs.message_edit`) and the
confirmations (:mod:`fluxgui.qt.dialogs.confirm`) use it.

Hidden characters here become JSON escapes (``\\u202e``), not the markers of
:func:`fluxgui.core.visible.visible` (``⟨U+202E⟩``): the editor's text must parse back to
the same value, and an escape is how JSON writes any character. The set is wider too —
every control, format character (but the zero-width joiner of emoji), line and
paragraph separator and lone surrogate — because the editor must not lay out what it
hides.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from .items import json_type, kept_as_stored
from .model import Message

#: longest session id (after escaping) a confirmation shows whole
ID_LIMIT = 50
_ZWJ = "\u200d"

# --------------------------------------------------------------------------- showing data


def escape_char(ch: str) -> str:
    """``ch`` as JSON writes it escaped (``\\n``, ``\\u202e``, a surrogate pair)."""
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    code = ord(ch)
    if code > 0xFFFF:  # as JSON writes it: a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def is_hidden(ch: str) -> bool:
    """Whether ``ch`` is invisible or changes how the text around it is laid out:
    controls, format characters (bidi overrides, zero-width spaces; not the zero-width
    joiner of emoji sequences), line and paragraph separators, lone surrogates."""
    if ch == _ZWJ:
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")


def escape_hidden(text: str, keep: str = "") -> str:
    """``text`` with its invisible and layout-changing characters (other than those in
    ``keep``) written as escapes."""
    if all(ch in keep or not is_hidden(ch) for ch in text):
        return text
    return "".join(
        escape_char(ch) if ch not in keep and is_hidden(ch) else ch for ch in text
    )


def display_id(session_id: str, limit: int = ID_LIMIT) -> str:
    """A session id for a sentence: in quotes, hidden characters escaped, long ids
    elided in the middle (both ends tell ids apart)."""
    tokens = [escape_char(ch) if is_hidden(ch) else ch for ch in str(session_id)]
    if sum(map(len, tokens)) <= limit:
        return f"“{''.join(tokens)}”"
    # Cut between characters, never inside an escape.
    budget = (limit - 1) // 2
    head: list[str] = []
    for token in tokens:
        if sum(map(len, head)) + len(token) > budget:
            break
        head.append(token)
    budget = limit - 1 - sum(map(len, head))
    tail: list[str] = []
    for token in reversed(tokens[len(head):]):
        if sum(map(len, tail)) + len(token) > budget:
            break
        tail.append(token)
    return f"“{''.join(head)}…{''.join(reversed(tail))}”"


def json_text(value: Any) -> str:
    """``value`` as indented JSON for an editor. Non-ASCII text stays readable; hidden
    characters inside strings are written as ``\\uXXXX`` (the same JSON value)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    # json.dumps escapes the controls inside strings itself: a newline is indentation.
    return escape_hidden(text, keep="\n")


def one_line(text: str) -> str:
    """A message for a status line: one line, capitalised."""
    text = " ".join(str(text).split("\n"))
    return text[:1].upper() + text[1:]


def metadata_text(message: Message | None) -> str:
    """The editor text of a flux message's metadata: indented JSON, or the stored text
    as it is when it is not a JSON object; ``""`` for none."""
    if message is None:
        return ""
    if message.metadata is not None:
        return json_text(message.metadata)
    if isinstance(message.raw, str):  # metadata that is not a JSON object, as stored
        return message.raw
    return ""


def item_text(message: Message) -> str:
    """The editor text of a stored item: indented JSON, or the stored text as it is when
    it was not JSON."""
    if isinstance(message.raw, str):
        return message.raw
    return json_text(message.raw)


# --------------------------------------------------------------------------- parsing


class JsonProblem(Exception):
    """Text that is not the JSON wanted; ``line`` is the 1-based line to mark, if known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class FieldProblem(JsonProblem):
    """A problem in one field of a form (``field``: ``"metadata"``, ``"item"``)."""

    def __init__(self, message: str, field: str, line: int | None = None) -> None:
        super().__init__(message, line)
        self.field = field


def _no_constant(name: str) -> Any:
    raise JsonProblem(f"JSON error: {name} is not allowed (use null or a number)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonProblem(
                f"JSON error: the key {json.dumps(key, ensure_ascii=False)} appears twice "
                "in one object"
            )
        out[key] = value
    return out


def parse_json(text: str) -> Any:
    """Parse strict JSON (no NaN/Infinity, no repeated keys); raise :class:`JsonProblem`
    with one line naming the line and column of the first error."""
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise JsonProblem(
            f"JSON error at line {exc.lineno}, column {exc.colno}: {exc.msg}", exc.lineno
        ) from None
    except RecursionError:
        raise JsonProblem("JSON error: nested too deeply") from None


def flux_spec(role: str, text: str, metadata_source: str, stored: Any = None) -> dict[str, Any]:
    """A flux message from an editor's fields; raises :class:`FieldProblem` (field
    ``"metadata"``) when the metadata is not empty and not a JSON object — unless it is
    the message's ``stored`` metadata unchanged (flux reads any JSON value: a row whose
    metadata is a list stays editable without turning it into an object)."""
    metadata: Any = None
    if metadata_source.strip():
        try:
            metadata = parse_json(metadata_source)
        except JsonProblem as exc:
            raise FieldProblem(f"Metadata: {exc}", "metadata", exc.line) from None
        if not (metadata is None or isinstance(metadata, dict) or kept_as_stored(metadata, stored)):
            raise FieldProblem(
                f"Metadata must be a JSON object ({{…}}), not {json_type(metadata)}", "metadata"
            )
    return {"role": role, "content": text, "metadata": metadata}


def item_spec(source: str) -> dict[str, Any]:
    """An item from an editor's JSON; raises :class:`FieldProblem` (field ``"item"``)
    when it is empty, not JSON or not an object."""
    if not source.strip():
        raise FieldProblem("Enter the item as a JSON object", "item")
    try:
        item = parse_json(source)
    except JsonProblem as exc:
        raise FieldProblem(str(exc), "item", exc.line) from None
    if not isinstance(item, dict):
        raise FieldProblem(
            f"An item must be a JSON object ({{…}}), not {json_type(item)}", "item"
        )
    return item
