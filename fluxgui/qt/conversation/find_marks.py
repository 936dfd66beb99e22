"""Where a found text sits in a card's document: selections to paint it highlighted.

The card's document is what the reader sees (Markdown rendered, hidden characters shown
as markers), so the text is looked for in it — ignoring case, as the searches do
(``QTextDocument.find`` folds case letter by letter: "ß" does not match "ss" here, the
card still is the one found).
"""

from __future__ import annotations

from PySide6.QtGui import QAbstractTextDocumentLayout, QColor, QTextCharFormat, QTextCursor, QTextDocument

#: highlights painted per card at most (a card full of the text stays cheap to paint)
MAX_MARKS = 200
#: the highlight of the text found, and of the text in the card of the current hit
MARK = QColor(255, 230, 90)
CURRENT_MARK = QColor(255, 160, 40)


def find_ranges(doc: QTextDocument, text: str) -> list[tuple[int, int]]:
    """(position, length) of each occurrence of ``text`` in ``doc``, ignoring case."""
    if not text:
        return []
    out: list[tuple[int, int]] = []
    cursor = QTextCursor(doc)
    while len(out) < MAX_MARKS:
        cursor = doc.find(text, cursor)
        if cursor.isNull():
            break
        start = cursor.selectionStart()
        out.append((start, cursor.selectionEnd() - start))
        if cursor.selectionEnd() <= start:  # never loop on an empty match
            break
    return out


def find_selections(
    doc: QTextDocument, text: str, *, current: bool = False
) -> list[QAbstractTextDocumentLayout.Selection]:
    """Selections that paint each occurrence of ``text`` in ``doc`` highlighted (dark text
    on yellow, orange in the card of the current hit)."""
    out = []
    fmt = QTextCharFormat()
    fmt.setBackground(CURRENT_MARK if current else MARK)
    fmt.setForeground(QColor(20, 20, 20))
    for start, length in find_ranges(doc, text):
        cursor = QTextCursor(doc)
        cursor.setPosition(start)
        cursor.setPosition(start + length, QTextCursor.MoveMode.KeepAnchor)
        sel = QAbstractTextDocumentLayout.Selection()
        sel.cursor = cursor
        sel.format = fmt
        out.append(sel)
    return out
