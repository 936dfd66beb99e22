"""Colours applied to code in a document: pygments' tokens (lexed ahead in a worker
by :func:`fluxgui.core.highlight.pretokenize`, else now) as char formats."""

from __future__ import annotations

from PySide6.QtGui import QTextCharFormat, QTextCursor, QTextDocument

from fluxgui.core.highlight import HIGHLIGHT_LIMIT, take_tokens

from .theme import DocTheme


def utf16_len(text: str) -> int:
    """The length of ``text`` in the positions a QTextDocument counts (UTF-16 code units:
    an emoji is two)."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def highlight(doc: QTextDocument, start: int, code: str, language: str, theme: DocTheme) -> None:
    """Colour ``code`` (which sits at ``start`` in ``doc``) with pygments' tokens."""
    if not language or len(code) > HIGHLIGHT_LIMIT:
        return
    tokens = take_tokens(code, language)
    if tokens is None:
        return
    cursor = QTextCursor(doc)
    position = start
    run_start, run_format = start, None
    for token_type, value in tokens:
        fmt = theme.token_format(token_type) if value.strip() else run_format
        if fmt is not run_format:
            if run_format is not None and position > run_start:
                apply_format(cursor, run_start, position, run_format)
            run_start, run_format = position, fmt
        position += utf16_len(value)
    if run_format is not None and position > run_start:
        apply_format(cursor, run_start, position, run_format)


def apply_format(cursor: QTextCursor, start: int, end: int, fmt: QTextCharFormat) -> None:
    """Merge ``fmt`` into the characters from ``start`` to ``end``."""
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    cursor.mergeCharFormat(fmt)
