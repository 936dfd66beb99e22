"""Message bodies as QTextDocuments: Qt's Markdown, pygments colours, nothing loaded.

Message content is data. Markdown goes through ``QTextDocument.setMarkdown`` with the
GitHub dialect and ``MarkdownNoHTML``, so ``<img …>`` or ``<script>`` in a message is
shown as those characters. A Markdown image becomes its alt text before the document is
ever laid out (layout is what asks for images), and every document is a
:class:`SafeDocument`, whose :meth:`~SafeDocument.loadResource` refuses every URL: no
network, no files, no ``qrc:`` — and records the refusal.

Everything that is not a chat message (tool calls, outputs, unknown items) is built
with a :class:`QTextCursor` from plain strings, never from Markup, so there is nothing
to escape. Colours come from a :class:`DocTheme` derived from the widget's palette.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontDatabase,
    QImage,
    QPainter,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFrame,
    QTextFrameFormat,
    QTextOption,
    QTextTable,
)

from fluxgui.core.model import Message

#: a body larger than this (UTF-8 bytes) is collapsed until the user asks for all of it
COLLAPSE_BYTES = 20_000
#: what a collapsed body shows: at most this many characters …
PREVIEW_CHARS = 2_000
#: … and this many lines
PREVIEW_LINES = 30
#: a code block longer than this (characters) is shown uncoloured: colouring costs about
#: 1 ms per 1,000 characters on the UI thread (after lexing in a worker), and one
#: message's document is built in one go, so this keeps it near one frame (~13 ms)
HIGHLIGHT_LIMIT = 12_000

_MD_FEATURES = QTextDocument.MarkdownFeature(
    QTextDocument.MarkdownFeature.MarkdownDialectGitHub.value
    | QTextDocument.MarkdownFeature.MarkdownNoHTML.value
)
_CODE_LANGUAGE = QTextFormat.Property.BlockCodeLanguage
_CODE_FENCE = QTextFormat.Property.BlockCodeFence
_ALT_TEXT = QTextFormat.Property.ImageAltText
_QUOTE_LEVEL = QTextFormat.Property.BlockQuoteLevel

#: the latest URLs any SafeDocument refused (newest last), for tests and diagnostics
REFUSED: deque[str] = deque(maxlen=200)


class SafeDocument(QTextDocument):
    """A QTextDocument that never loads a resource: every URL is refused and recorded."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.refused: list[str] = []
        self.setUndoRedoEnabled(False)

    def loadResource(self, type: int, name: QUrl) -> Any:  # noqa: A002 - Qt's signature
        url = name.toString()
        self.refused.append(url)
        REFUSED.append(url)
        return None


# --------------------------------------------------------------------------- theme


@dataclass
class DocTheme:
    """Fonts and colours for message documents, from a palette (light or dark)."""

    font: QFont
    mono: QFont
    text: QColor
    muted: QColor
    link: QColor
    code_bg: QColor
    border: QColor
    dark: bool
    _token_formats: dict[Any, QTextCharFormat | None] = field(default_factory=dict, repr=False)

    @classmethod
    def from_palette(cls, palette: QPalette, font: QFont) -> DocTheme:
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        dark = base.lightnessF() < 0.5
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setPointSizeF(max(font.pointSizeF() * 0.95, 6.0) if font.pointSizeF() > 0 else 9.0)
        return cls(
            font=QFont(font),
            mono=mono,
            text=text,
            muted=mix(text, base, 0.45),
            link=palette.color(QPalette.ColorRole.Link),
            code_bg=mix(text, base, 0.93 if dark else 0.955),
            border=mix(text, base, 0.75),
            dark=dark,
        )

    def token_format(self, token_type: Any) -> QTextCharFormat | None:
        """The char format pygments' style gives a token type (``None``: leave as is)."""
        try:
            return self._token_formats[token_type]
        except KeyError:
            pass
        style = _pygments_style(self.dark).style_for_token(token_type)
        fmt: QTextCharFormat | None = QTextCharFormat()
        assert fmt is not None
        styled = False
        if style.get("color"):
            fmt.setForeground(QColor("#" + style["color"]))
            styled = True
        if style.get("bold"):
            fmt.setFontWeight(QFont.Weight.Bold)
            styled = True
        if style.get("italic"):
            fmt.setFontItalic(True)
            styled = True
        if not styled:
            fmt = None
        self._token_formats[token_type] = fmt
        return fmt


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved towards ``b`` by ``t`` (0: a, 1: b)."""
    return QColor.fromRgbF(
        a.redF() + (b.redF() - a.redF()) * t,
        a.greenF() + (b.greenF() - a.greenF()) * t,
        a.blueF() + (b.blueF() - a.blueF()) * t,
        1.0,
    )


@lru_cache(maxsize=2)
def _pygments_style(dark: bool) -> Any:
    from pygments.styles import get_style_by_name

    return get_style_by_name("github-dark" if dark else "default")


@lru_cache(maxsize=64)
def _lexer(language: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    name = language.strip().split()[0].lower() if language.strip() else ""
    if not name:
        return None
    try:
        # Keep the text exactly as given: positions must match the document's.
        return get_lexer_by_name(name, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        return None


_warm_languages: set[str] = set()
_styles_warm = False


def warm_up_pygments(languages: Iterable[str] = ("json", "python")) -> None:
    """Import pygments' styles and these languages' lexers and compile their rules (a
    lexer costs ~10 ms the first time). Pure Python: safe in a worker thread."""
    global _styles_warm
    if not _styles_warm:
        from pygments.token import Keyword

        for dark in (False, True):
            _pygments_style(dark).style_for_token(Keyword)
        _styles_warm = True
    for name in languages:
        lexer = _lexer(name)
        if lexer is not None:
            list(lexer.get_tokens("x = {'a': [1, \"b\"]}  # c\n"))
        _warm_languages.add(name)


def warm_up_qt(theme: DocTheme) -> None:
    """Lay out one small document of every sort once: Qt's first Markdown parse, text
    shaping and table layout cost ~15 ms, better paid when the pane is built."""
    image = QImage(64, 64, QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(image)
    try:
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


# --------------------------------------------------------------------------- sizes & text


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def is_long(text: str) -> bool:
    """Whether a body of this text is collapsed by default (over :data:`COLLAPSE_BYTES`)."""
    # Cheap check first: a str of n code points has at least n UTF-8 bytes, at most 4n.
    if len(text) * 4 <= COLLAPSE_BYTES:
        return False
    return len(text) > COLLAPSE_BYTES or utf8_size(text) > COLLAPSE_BYTES


def preview(text: str) -> str:
    """The start of a long text: whole lines, at most PREVIEW_LINES / PREVIEW_CHARS."""
    head = text[:PREVIEW_CHARS]
    lines = head.split("\n")
    if len(lines) > PREVIEW_LINES:
        head = "\n".join(lines[:PREVIEW_LINES])
    elif len(text) > PREVIEW_CHARS and "\n" in head:
        head = head[: head.rfind("\n")]
    return head


def pretty_json(text: str) -> str | None:
    """``text`` re-indented when it is a JSON object or array, else ``None``."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None


def _utf16_len(text: str) -> int:
    # QTextDocument positions count UTF-16 code units; an emoji is two of them.
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


# --------------------------------------------------------------------------- documents


def new_document(theme: DocTheme) -> SafeDocument:
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
    doc.setMarkdown(text, _MD_FEATURES)
    _drop_images(doc, theme)
    _style_markdown(doc, theme)
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
    cursor.setBlockFormat(_code_block_format(theme, language))
    cursor.insertText(code, fmt)
    _highlight(doc, start, code, language, theme)
    return doc


def _code_block_format(theme: DocTheme, language: str = "") -> QTextBlockFormat:
    block = QTextBlockFormat()
    block.setBackground(theme.code_bg)
    block.setNonBreakableLines(False)
    block.setLeftMargin(0)
    block.setProperty(_CODE_LANGUAGE, language)
    return block


def _drop_images(doc: QTextDocument, theme: DocTheme) -> None:
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


def _style_markdown(doc: QTextDocument, theme: DocTheme) -> None:
    """Palette colours for code, links and tables; pygments colours for fenced code."""
    cursor = QTextCursor(doc)
    code_runs: list[tuple[int, str, list[str]]] = []  # (start, language, lines)
    run_end = -1  # where the last code run ends (the position after its last block)
    inline_code: list[tuple[int, int]] = []
    links: list[tuple[int, int]] = []
    quotes: list[tuple[int, int]] = []
    block = doc.begin()
    code_format = _code_block_format(theme)
    while block.isValid():
        fmt = block.blockFormat()
        if fmt.hasProperty(_CODE_LANGUAGE) or fmt.hasProperty(_CODE_FENCE):
            language = fmt.stringProperty(_CODE_LANGUAGE)
            cursor.setPosition(block.position())
            merged = QTextBlockFormat(code_format)
            merged.setProperty(_CODE_LANGUAGE, language)
            cursor.setBlockFormat(merged)
            if code_runs and code_runs[-1][1] == language and run_end == block.position():
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
        cursor.setPosition(start)
        cursor.setPosition(start + _utf16_len(code), QTextCursor.MoveMode.KeepAnchor)
        cursor.mergeCharFormat(mono)
        _highlight(doc, start, code, language, theme)
    inline = QTextCharFormat()
    inline.setFont(theme.mono)
    inline.setBackground(theme.code_bg)
    quoted = QTextCharFormat()
    quoted.setForeground(theme.muted)
    link = QTextCharFormat()
    link.setForeground(theme.link)
    for spans, fmt in ((inline_code, inline), (quotes, quoted), (links, link)):
        for start, length in spans:
            cursor.setPosition(start)
            cursor.setPosition(start + length, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(fmt)
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


def _highlight(doc: QTextDocument, start: int, code: str, language: str, theme: DocTheme) -> None:
    """Colour ``code`` (which sits at ``start`` in ``doc``) with pygments' tokens (lexed
    ahead by :func:`pretokenize` when the pane could, else now)."""
    if not language or len(code) > HIGHLIGHT_LIMIT:
        return
    tokens = _TOKENS.pop((_lang_key(language), code), None)
    if tokens is None:
        tokens = _tokens(code, language)
    if tokens is None:
        return
    cursor = QTextCursor(doc)
    position = start
    run_start, run_format = start, None
    for token_type, value in tokens:
        fmt = theme.token_format(token_type) if value.strip() else run_format
        if fmt is not run_format:
            if run_format is not None and position > run_start:
                _apply(cursor, run_start, position, run_format)
            run_start, run_format = position, fmt
        position += _utf16_len(value)
    if run_format is not None and position > run_start:
        _apply(cursor, run_start, position, run_format)


def _apply(cursor: QTextCursor, start: int, end: int, fmt: QTextCharFormat) -> None:
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    cursor.mergeCharFormat(fmt)


# --------------------------------------------------------------------------- per message


def _sealed(message: Message) -> bool:
    """An encrypted item that did not open (no key, or not this key)."""
    enc = (message.metadata or {}).get("encryption")
    return isinstance(enc, dict) and enc.get("state") in ("locked", "unreadable")


def body_source(message: Message) -> str:
    """The text a message's body is built from (what "show all" reveals in full)."""
    if _sealed(message):
        return message.text  # what the lock means, not the envelope's ciphertext
    if message.kind == "tool_call":
        args = call_arguments(message)
        return args if args is not None else message.text
    if message.kind == "other" and isinstance(message.raw, (dict, list)):
        try:
            return json.dumps(message.raw, indent=2, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return message.text
    return message.text


def call_arguments(message: Message) -> str | None:
    """A tool call's arguments as text (``None`` when the item has none)."""
    item = message.raw
    if not isinstance(item, dict):
        return None
    for key in ("arguments", "input", "action", "queries", "code"):
        if key in item:
            value = item[key]
            if isinstance(value, str):
                return value
            try:
                return json.dumps(value, ensure_ascii=False)
            except (TypeError, ValueError, RecursionError):
                return str(value)
    return None


@dataclass(frozen=True)
class BodyPlan:
    """How a message's body is built: Markdown ``text``, or a code block (``mode="code"``,
    with ``language``, an optional ``title``/``subtitle`` line), or ``"empty"``."""

    mode: str
    text: str
    language: str = ""
    title: str = ""
    subtitle: str = ""


def body_plan(message: Message, *, full: bool) -> BodyPlan:
    """What :func:`message_document` builds for ``message`` (pure Python, any thread)."""
    from fluxgui.core.pairing import call_key, tool_name

    source = body_source(message)
    cut = not full and is_long(source)
    text = preview(source) if cut else source
    kind = message.kind
    if not source.strip() and kind != "tool_call":
        return BodyPlan("empty", "(empty)")
    if _sealed(message):  # a sentence about the lock, muted; never the ciphertext
        return BodyPlan("empty", source)
    if kind == "tool_call":
        name = tool_name(message) or "tool call"
        call_id = call_key(message) or ""
        if call_arguments(message) is None:
            return BodyPlan("code", message.text, "", name, call_id)
        pretty = None if cut else pretty_json(text)
        return BodyPlan("code", pretty or text, "json", name, call_id)
    if kind == "tool_output" or kind == "other":
        pretty = None if cut else pretty_json(text)
        if pretty is not None:
            return BodyPlan("code", pretty, "json")
        if kind == "other" and isinstance(message.raw, (dict, list)):
            return BodyPlan("code", text, "json")
        return BodyPlan("code", text)
    return BodyPlan("markdown", text)


def message_document(message: Message, theme: DocTheme, *, full: bool) -> SafeDocument:
    """The body of one message; a long body shows only its :func:`preview` unless ``full``."""
    plan = body_plan(message, full=full)
    if plan.mode == "empty":
        return plain_document(plan.text, theme, muted=True)
    if plan.mode == "code":
        return code_document(
            plan.text, plan.language, theme, title=plan.title, subtitle=plan.subtitle
        )
    return markdown_document(plan.text, theme)


# --------------------------------------------------------------------------- tokens off the UI thread

#: (language, code) -> pygments tokens, lexed ahead of time in a worker thread; an entry
#: is taken out when its document is built (so the table stays small)
_TOKENS: dict[tuple[str, str], list[tuple[Any, str]]] = {}
_TOKENS_MAX = 2_000


def _lang_key(language: str) -> str:
    stripped = language.strip()
    return stripped.split()[0].lower() if stripped else ""


def _tokens(code: str, language: str) -> list[tuple[Any, str]] | None:
    """pygments' tokens for ``code``, or ``None`` (no lexer, too long, text changed)."""
    if not language or len(code) > HIGHLIGHT_LIMIT:
        return None
    lexer = _lexer(language)
    if lexer is None:
        return None
    try:
        tokens = list(lexer.get_tokens(code))
    except Exception:  # noqa: BLE001 - a lexer bug must not break rendering
        return None
    if sum(len(value) for _t, value in tokens) != len(code):
        return None  # the lexer changed the text (tabs, newlines): positions would be wrong
    return tokens


def highlight_jobs(messages: Iterable[Message], *, full: Iterable[int] = ()) -> list[
    tuple[str, str]
]:
    """The ``(language, code)`` pairs that building these messages' bodies will colour
    (``full``: ids of messages shown whole). Pure Python."""
    from fluxgui.qt.render import split_fences

    whole = set(full)
    jobs: list[tuple[str, str]] = []
    for m in messages:
        plan = body_plan(m, full=m.id in whole)
        if plan.mode == "code" and plan.language:
            code = plan.text[:-1] if plan.text.endswith("\n") else plan.text
            jobs.append((plan.language, code))
        elif plan.mode == "markdown" and ("```" in plan.text):
            jobs.extend(
                (lang, chunk) for is_code, chunk, lang in split_fences(plan.text) if is_code and lang
            )
    return [(lang, code) for lang, code in jobs if len(code) <= HIGHLIGHT_LIMIT]


def pretokenize(jobs: Iterable[tuple[str, str]]) -> int:
    """Lex these code blocks now, so that building their documents on the UI thread only
    applies colours. Meant for a worker thread (pygments is pure Python); returns how many
    were lexed."""
    warm_up_pygments(())
    done = 0
    for language, code in jobs:
        key = (_lang_key(language), code)
        if key in _TOKENS:
            continue
        tokens = _tokens(code, language)
        _warm_languages.add(_lang_key(language))
        if tokens is None:
            continue
        if len(_TOKENS) >= _TOKENS_MAX:
            _TOKENS.clear()  # documents not built after all (a cancelled page): start over
        _TOKENS[key] = tokens
        done += 1
    return done
