"""The geometry of a message card (pixels), shared by its painters.

The card sits inside the row with an outer margin; a colour bar on its left; a header
line (icon, role, kind, pairing, time, id); the body document; for a long message a
footer link.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRect

OUTER_X, OUTER_Y = 8, 3
BAR, PAD_L, PAD_R, PAD_T, PAD_B = 4, 10, 12, 7, 9
ICON = 18
GAP = 5
RADIUS = 6.0
BADGE_PAD, BADGE_GAP = 7, 8  # an encryption badge's inner padding and its gap before it


@dataclass
class CardRows:
    """Where the parts of one card are, within its row."""

    card: QRect
    header: QRect
    body: QRect
    footer: QRect | None
