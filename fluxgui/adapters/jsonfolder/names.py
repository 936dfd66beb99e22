"""Session ids as file names, and back.

A session id becomes a file name by percent-encoding (``%XX``, upper-case hex of the
character) only what a file name cannot safely hold on any common system: ``%`` itself,
``/ \\ < > : " | ? *``, control characters, a leading ``.`` and a trailing ``.`` or space;
the empty id is the name ``%``. A stem that this rule produces is decoded back; any other
stem (a name the library wrote, such as ``50%off``) is the session id as it is. So every
id round-trips and no id names a path outside the folder. An id whose encoded name does
not fit a file name (too long, lone surrogates) is refused with InvalidItem.
"""

from __future__ import annotations

from fluxgui.core.errors import InvalidItem, show_id

_UNSAFE = frozenset('%/\\<>:"|?*\x7f') | frozenset(chr(c) for c in range(32))
_HEX = "0123456789ABCDEF"
#: the longest encoded stem (bytes) that leaves room for ``.json.<8 hex>.tmp`` in 255
MAX_STEM_BYTES = 255 - len(".json.12345678.tmp")


def file_stem(session_id: str) -> str:
    """The file name (without ``.json``) for a session id; InvalidItem when none fits."""
    if session_id == "":
        return "%"
    last = len(session_id) - 1
    out = []
    for i, ch in enumerate(session_id):
        if "\ud800" <= ch <= "\udfff":
            raise InvalidItem(f"session id {show_id(session_id)} cannot be a file name")
        if ch in _UNSAFE or (i == 0 and ch == ".") or (i == last and ch in ". "):
            out.append(f"%{ord(ch):02X}")
        else:
            out.append(ch)
    stem = "".join(out)
    if len(stem.encode("utf-8")) > MAX_STEM_BYTES:
        raise InvalidItem(
            f"session id {show_id(session_id[:40])}… is too long for a file name "
            f"(at most {MAX_STEM_BYTES} bytes once encoded)"
        )
    return stem


def session_id_of(stem: str) -> str:
    """The session id of a file stem: decoded when :func:`file_stem` makes that stem, else
    the stem itself (a name HelloAgent wrote)."""
    if stem == "%":
        return ""
    out, i = [], 0
    while i < len(stem):
        ch = stem[i]
        if ch == "%":
            code = stem[i + 1 : i + 3]
            if len(code) != 2 or code[0] not in _HEX or code[1] not in _HEX:
                return stem
            out.append(chr(int(code, 16)))
            i += 3
        else:
            out.append(ch)
            i += 1
    sid = "".join(out)
    try:
        return sid if file_stem(sid) == stem else stem
    except InvalidItem:
        return stem



def file_stem_or_none(sid: str) -> str | None:
    """:func:`file_stem`, or ``None`` when no file name fits the id."""
    try:
        return file_stem(sid)
    except InvalidItem:
        return None
