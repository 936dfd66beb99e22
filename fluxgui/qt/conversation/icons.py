"""Role icons: a small glyph for each role (a head, a sparkle, a gear, a prompt, "?")
painted on a disc of the role's colour, cached per colour, size and pixel ratio."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPen, QPixmap

_ICONS: dict[tuple[str, int, int, float], QPixmap] = {}


def _icon_kind(role: str) -> str:
    if role in ("user", "assistant", "tool"):
        return role
    if role in ("system", "developer"):
        return "system"
    if role == "compaction":
        return "compaction"
    return "other"


def role_icon(role: str, colour: QColor, size: int, dpr: float) -> QPixmap:
    """A small painted glyph for a role on a disc of its colour (cached)."""
    kind = _icon_kind(role)
    key = (kind, colour.rgba(), size, dpr)
    cached = _ICONS.get(key)
    if cached is not None:
        return cached
    pm = QPixmap(round(size * dpr), round(size * dpr))
    pm.setDevicePixelRatio(dpr)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(colour)
    s = float(size)
    p.drawEllipse(QRectF(0, 0, s, s))
    fg = QColor("#ffffff") if colour.lightnessF() < 0.6 else QColor("#111111")
    p.setBrush(fg)
    if kind == "user":  # head and shoulders
        p.drawEllipse(QRectF(s * 0.35, s * 0.18, s * 0.30, s * 0.30))
        path = QPainterPath()
        path.moveTo(s * 0.20, s * 0.82)
        path.cubicTo(s * 0.22, s * 0.52, s * 0.78, s * 0.52, s * 0.80, s * 0.82)
        path.closeSubpath()
        p.drawPath(path)
    elif kind == "assistant":  # a four-point sparkle
        c = s / 2
        path = QPainterPath()
        path.moveTo(c, s * 0.16)
        path.quadTo(c, c, s * 0.84, c)
        path.quadTo(c, c, c, s * 0.84)
        path.quadTo(c, c, s * 0.16, c)
        path.quadTo(c, c, c, s * 0.16)
        p.drawPath(path)
    elif kind == "system":  # a gear
        c = s / 2
        p.save()
        p.translate(c, c)
        for _ in range(8):
            p.drawRect(QRectF(-s * 0.06, -s * 0.36, s * 0.12, s * 0.16))
            p.rotate(45)
        p.restore()
        p.drawEllipse(QPointF(c, c), s * 0.25, s * 0.25)
        p.setBrush(colour)
        p.drawEllipse(QPointF(c, c), s * 0.10, s * 0.10)
    elif kind == "tool":  # a terminal prompt ">_"
        pen = QPen(fg, max(1.4, s * 0.10))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPolyline(
            [QPointF(s * 0.26, s * 0.32), QPointF(s * 0.46, s * 0.50), QPointF(s * 0.26, s * 0.68)]
        )
        p.drawLine(QPointF(s * 0.52, s * 0.70), QPointF(s * 0.74, s * 0.70))
    elif kind == "compaction":  # lines pressed together: a condensed text
        pen = QPen(fg, max(1.3, s * 0.09))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        for y, (x0, x1) in zip((0.30, 0.44, 0.58, 0.72), ((0.24, 0.76), (0.30, 0.70), (0.30, 0.70), (0.24, 0.76))):
            p.drawLine(QPointF(s * x0, s * y), QPointF(s * x1, s * y))
    else:  # a question mark
        p.setPen(fg)
        font = QFont()
        font.setBold(True)
        font.setPixelSize(max(6, int(s * 0.7)))
        p.setFont(font)
        p.drawText(QRectF(0, 0, s, s), Qt.AlignmentFlag.AlignCenter, "?")
    p.end()
    _ICONS[key] = pm
    return pm

