"""A Markdown document restyled after Qt parsed it: palette colours for code, links,
quotes and tables, pygments colours for fenced code, and images replaced by their alt
text before anything lays them out (layout is what would ask for an image)."""

from __future__ import annotations

from PySide6.QtGui import (
    QBrush,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFrame,
    QTextFrameFormat,
    QTextTable,
)

from .highlight import apply_format, highlight, utf16_len
from .theme import DocTheme

_CODE_LANGUAGE = QTextFormat.Property.BlockCodeLanguage
_CODE_FENCE = QTextFormat.Property.BlockCodeFence
_ALT_TEXT = QTextFormat.Property.ImageAltText
_QUOTE_LEVEL = QTextFormat.Property.BlockQuoteLevel


def code_block_format(theme: DocTheme, language: str = "") -> QTextBlockFormat:
    """The block format of a code block (its background, its language)."""
    block = QTextBlockFormat()
    block.setBackground(theme.code_bg)
    block.setNonBreakableLines(False)
    block.setLeftMargin(0)
    block.setProperty(_CODE_LANGUAGE, language)
    return block


def drop_images(doc: QTextDocument, theme: DocTheme) -> None:
    """Replace every image with its alt text (muted, italic) before anything lays it out."""
    found: list[tuple[int, int, str]] = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fmt.isImageFormat():
                alt = fmt.stringProperty(_ALT_TEXT)
                found.append((fragment.position(), fragment.length(), alt))
            it += 1
        block = block.next()
    if not found:
        return
    cursor = QTextCursor(doc)
    alt_format = QTextCharFormat()
    alt_format.setFontItalic(True)
    alt_format.setForeground(theme.muted)
    for position, length, alt in reversed(found):
        cursor.setPosition(position)
        cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(f"[{alt}]" if alt else "", alt_format)


def style_markdown(doc: QTextDocument, theme: DocTheme, fences: list[int] | None = None) -> None:
    """Palette colours for code, links and tables; pygments colours for fenced code.
    ``fences``: the line counts of the source's fenced code blocks
    (:func:`~.dialect.fence_lines`) — each is its own box, even next to another of the
    same language (Qt's reader leaves no boundary between them)."""
    fences = list(fences or [])
    left = 0  # lines of the current fenced block still to come
    cursor = QTextCursor(doc)
    code_runs: list[tuple[int, str, list[str]]] = []  # (start, language, lines)
    run_end = -1  # where the last code run ends (the position after its last block)
    inline_code: list[tuple[int, int]] = []
    links: list[tuple[int, int]] = []
    quotes: list[tuple[int, int]] = []
    block = doc.begin()
    code_format = code_block_format(theme)
    while block.isValid():
        fmt = block.blockFormat()
        if fmt.hasProperty(_CODE_LANGUAGE) or fmt.hasProperty(_CODE_FENCE):
            language = fmt.stringProperty(_CODE_LANGUAGE)
            cursor.setPosition(block.position())
            merged = QTextBlockFormat(code_format)
            merged.setProperty(_CODE_LANGUAGE, language)
            new_fence = False
            if fmt.hasProperty(_CODE_FENCE) and fences:
                if left <= 0:
                    left, new_fence = fences.pop(0), True
                left -= 1
            if new_fence and run_end == block.position():
                merged.setTopMargin(8)  # a box of its own, apart from the one above
            cursor.setBlockFormat(merged)
            if code_runs and code_runs[-1][1] == language and run_end == block.position() and not new_fence:
                code_runs[-1][2].append(block.text())
            else:
                code_runs.append((block.position(), language, [block.text()]))
            run_end = block.position() + block.length()
        else:
            if fmt.hasProperty(_QUOTE_LEVEL):
                quotes.append((block.position(), block.length() - 1))
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                cf = fragment.charFormat()
                if cf.isAnchor():
                    links.append((fragment.position(), fragment.length()))
                elif cf.fontFixedPitch() or "monospace" in (cf.fontFamilies() or []):
                    inline_code.append((fragment.position(), fragment.length()))
                it += 1
        block = block.next()

    mono = QTextCharFormat()
    mono.setFont(theme.mono)
    for start, language, lines in code_runs:
        code = "\n".join(lines)
        apply_format(cursor, start, start + utf16_len(code), mono)
        highlight(doc, start, code, language, theme)
    inline = QTextCharFormat()
    inline.setFont(theme.mono)
    inline.setBackground(theme.code_bg)
    quoted = QTextCharFormat()
    quoted.setForeground(theme.muted)
    link = QTextCharFormat()
    link.setForeground(theme.link)
    for spans, span_format in ((inline_code, inline), (quotes, quoted), (links, link)):
        for start, length in spans:
            apply_format(cursor, start, start + length, span_format)
    _style_tables(doc.rootFrame(), theme)


def _style_tables(frame: QTextFrame, theme: DocTheme) -> None:
    for child in frame.childFrames():
        if isinstance(child, QTextTable):
            fmt = child.format()
            fmt.setBorderBrush(QBrush(theme.border))
            fmt.setBorder(1)
            fmt.setBorderCollapse(True)
            fmt.setBorderStyle(QTextFrameFormat.BorderStyle.BorderStyle_Solid)
            fmt.setCellPadding(4)
            fmt.setCellSpacing(0)
            child.setFormat(fmt)
        _style_tables(child, theme)
