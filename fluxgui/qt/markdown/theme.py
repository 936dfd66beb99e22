"""The fonts and colours of message documents, from the widget's palette."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtGui import QColor, QFont, QFontDatabase, QPalette, QTextCharFormat

from fluxgui.core.highlight import pygments_style

from ..widgets import mix


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
        style = pygments_style(self.dark).style_for_token(token_type)
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
