"""Message bodies as QTextDocuments that never load anything.

Markdown goes through ``QTextDocument.setMarkdown`` with the GitHub dialect and
``MarkdownNoHTML``, so ``<img …>`` or ``<script>`` in a message is shown as those
characters; images become their alt text (:func:`~.styling.drop_images`). Every document
is a :class:`SafeDocument`, whose :meth:`~SafeDocument.loadResource` refuses every URL —
no network, no files, no ``qrc:`` — and records the refusal. Tool calls, outputs and
unknown items are built with a :class:`QTextCursor` from plain strings, never from
markup, so there is nothing to escape.
"""

from __future__ import annotations

import string
from collections import deque
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import (
    QFont,
    QGuiApplication,
    QImage,
    QPainter,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
)

from fluxgui.core.bodies import BodyPlan, body_plan
from fluxgui.core.pairing import MessageCall
from fluxgui.core.model import Message

from .dialect import fence_lines, github_emphasis
from .highlight import highlight
from .styling import code_block_format, drop_images, style_markdown
from .theme import DocTheme

_MD_FEATURES = QTextDocument.MarkdownFeature(
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
    | QTextDocument.MarkdownFeature.MarkdownNoHTML.value
)

#: the latest URLs any SafeDocument refused (newest last), for tests and diagnostics
REFUSED: deque[str] = deque(maxlen=200)


class SafeDocument(QTextDocument):
    """A QTextDocument that never loads a resource: every URL is refused and recorded."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.refused: list[str] = []
        self.setUndoRedoEnabled(False)

    def loadResource(self, type: int, name: QUrl | str) -> Any:  # noqa: A002 - Qt's signature
        url = name.toString() if isinstance(name, QUrl) else name
        self.refused.append(url)
        REFUSED.append(url)
        return None


def new_document(theme: DocTheme) -> SafeDocument:
    """An empty document in the theme's font, wrapping anywhere when it must."""
    doc = SafeDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(theme.font)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    return doc


def markdown_document(text: str, theme: DocTheme) -> SafeDocument:
    """``text`` as Markdown (GitHub dialect, raw HTML shown as text, images as alt text),
    code blocks coloured by pygments."""
    doc = new_document(theme)
    # read as GitHub reads it: _x_ is emphasis, separate code blocks stay separate
    doc.setMarkdown(github_emphasis(text), _MD_FEATURES)
    drop_images(doc, theme)
    style_markdown(doc, theme, fence_lines(text))
    return doc


def plain_document(
    text: str, theme: DocTheme, *, mono: bool = False, muted: bool = False
) -> SafeDocument:
    """``text`` exactly as written (no Markdown), optionally monospace or muted italic."""
    doc = new_document(theme)
    cursor = QTextCursor(doc)
    fmt = QTextCharFormat()
    if mono:
        fmt.setFont(theme.mono)
    fmt.setForeground(theme.muted if muted else theme.text)
    fmt.setFontItalic(muted)
    cursor.insertText(text, fmt)
    return doc


def code_document(
    code: str, language: str, theme: DocTheme, *, title: str = "", subtitle: str = ""
) -> SafeDocument:
    """An optional bold ``title`` (and muted ``subtitle``) line above a coloured code block."""
    doc = new_document(theme)
    cursor = QTextCursor(doc)
    if title or subtitle:
        head = QTextCharFormat()
        head.setFont(theme.mono)
        head.setFontWeight(QFont.Weight.Bold)
        head.setForeground(theme.text)
        cursor.insertText(title, head)
        if subtitle:
            sub = QTextCharFormat()
            sub.setFont(theme.font)
            sub.setForeground(theme.muted)
            cursor.insertText(("   " if title else "") + subtitle, sub)
        block = QTextBlockFormat()
        block.setBottomMargin(4)
        cursor.setBlockFormat(block)
        cursor.insertBlock(QTextBlockFormat())
    # One trailing newline is how a program's output ends, not an empty last line.
    code = code[:-1] if code.endswith("\n") else code
    start = cursor.position()
    fmt = QTextCharFormat()
    fmt.setFont(theme.mono)
    fmt.setForeground(theme.text)
    cursor.setBlockFormat(code_block_format(theme, language))
    cursor.insertText(code, fmt)
    highlight(doc, start, code, language, theme)
    return doc


def note_document(title: str, subtitle: str, text: str, theme: DocTheme) -> SafeDocument:
    """A bold ``title`` line, a muted ``subtitle`` line under it and ``text`` in muted
    italics (plain strings, no markup)."""
    doc = new_document(theme)
    cursor = QTextCursor(doc)
    head = QTextCharFormat()
    head.setFont(theme.font)
    head.setFontWeight(QFont.Weight.Bold)
    head.setForeground(theme.text)
    cursor.insertText(title, head)
    for line, italic in ((subtitle, False), (text, True)):
        if not line:
            continue
        cursor.insertBlock(QTextBlockFormat())
        fmt = QTextCharFormat()
        fmt.setFont(theme.font)
        fmt.setForeground(theme.muted)
        fmt.setFontItalic(italic)
        cursor.insertText(line, fmt)
    return doc


def append_calls(
    doc: SafeDocument, calls: tuple[MessageCall, ...], outputs: dict[str, str], theme: DocTheme
) -> None:
    """After a message's text: each call it holds — the tool's name in bold, its call id
    and "→ output #id" (``outputs``: call id → the output's label) muted, the arguments
    as a coloured JSON block. Built from plain strings, never markup."""
    cursor = QTextCursor(doc)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    first = doc.isEmpty()
    for call in calls:
        if not first:
            cursor.insertBlock(QTextBlockFormat())
        first = False
        block = QTextBlockFormat()
        block.setTopMargin(6)
        block.setBottomMargin(4)
        cursor.setBlockFormat(block)
        head = QTextCharFormat()
        head.setFont(theme.mono)
        head.setFontWeight(QFont.Weight.Bold)
        head.setForeground(theme.text)
        cursor.insertText(call.name or "tool call", head)
        sub = QTextCharFormat()
        sub.setFont(theme.font)
        sub.setForeground(theme.muted)
        words = [w for w in (call.call_id, outputs.get(call.call_id, "")) if w]
        if words:
            cursor.insertText("   " + "  ·  ".join(words), sub)
        cursor.insertBlock(code_block_format(theme, "json"))
        start = cursor.position()
        fmt = QTextCharFormat()
        fmt.setFont(theme.mono)
        fmt.setForeground(theme.text)
        cursor.insertText(call.arguments, fmt)
        highlight(doc, start, call.arguments, "json", theme)


def message_document(
    message: Message, theme: DocTheme, *, full: bool, plain: bool = False,
    outputs: dict[str, str] | None = None,
) -> SafeDocument:
    """The body of one message (:func:`fluxgui.core.bodies.body_plan` says what); a long
    body shows only its preview unless ``full``; ``plain``: Markdown shown as typed;
    ``outputs``: call id → "→ output #id", for the calls a message holds."""
    plan = body_plan(message, full=full, plain=plain)
    doc = _plan_document(plan, theme)
    if plan.calls:
        append_calls(doc, plan.calls, outputs or {}, theme)
    return doc


def _plan_document(plan: BodyPlan, theme: DocTheme) -> SafeDocument:
    if plan.mode == "plain":
        if not plan.text:
            return new_document(theme)
        return plain_document(plan.text, theme, mono=plan.language == "json")
    if plan.mode == "empty":
        return plain_document(plan.text, theme, muted=True)
    if plan.mode == "note":
        return note_document(plan.title, plan.subtitle, plan.text, theme)
    if plan.mode == "code":
        return code_document(
            plan.text, plan.language, theme, title=plan.title, subtitle=plan.subtitle
        )
    return markdown_document(plan.text, theme)


#: what a card's first paint draws most: each glyph is rasterised the first time it is
#: drawn in a font (with the fonts' loading, ~10 ms for a conversation's first paint)
WARM_GLYPHS = string.ascii_letters + string.digits + string.punctuation + " →←▾▴⑂·…"
_warm_fonts: set[str] = set()  # (QFont.key() of the fonts drawn so far)


def warm_up_qt(theme: DocTheme, fonts: tuple[QFont, ...] = ()) -> None:
    """Lay out one small document of every sort once: Qt's first Markdown parse, text
    shaping and table layout cost ~15 ms, better paid when the pane is built. Then draw
    :data:`WARM_GLYPHS` in the documents' fonts (regular, bold, italic, code) and in
    ``fonts``, which fills Qt's glyph caches for the first conversation's paint."""
    image = QImage(64, 64, QImage.Format.Format_ARGB32_Premultiplied)
    screen = QGuiApplication.primaryScreen()
    if screen is not None:  # glyphs are cached per scale: the window's
        image.setDevicePixelRatio(screen.devicePixelRatio())
    painter = QPainter(image)
    try:
        for font in (theme.font, theme.mono, *fonts):
            if font.key() in _warm_fonts:
                continue
            _warm_fonts.add(font.key())
            for bold, italic in ((False, False), (True, False), (False, True)):
                styled = QFont(font)
                styled.setBold(bold)
                styled.setItalic(italic)
                painter.setFont(styled)
                painter.drawText(0, 32, WARM_GLYPHS)
        for doc in (
            markdown_document(
                "**a** `b` *c*\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- x\n", theme
            ),
            code_document("{}", "", theme, title="f", subtitle="c"),
            plain_document("x", theme, muted=True),
        ):
            doc.setTextWidth(300)
            doc.size()
            doc.drawContents(painter)  # fills the glyph caches of these fonts
    finally:
        painter.end()
