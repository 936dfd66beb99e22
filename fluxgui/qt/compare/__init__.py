"""Compare view: two sessions (or branches) side by side, aligned turn by turn.

:mod:`.model` (one row per aligned turn), :mod:`.delegate` (how a row is painted),
:mod:`.list_view` (opened turns, keys), :mod:`.view` (:class:`CompareView`: loading,
headers, next/previous difference), :mod:`.dialog` (the Compare window). The words of a
row (labels, usage, each message's first lines) come from :mod:`fluxgui.core.compare_rows`.
"""

from fluxgui.core.compare_rows import (
    MARKERS,
    Block,
    summary_text,
    text_lines,
    turn_label,
    usage_text,
)

from .delegate import CompareDelegate
from ..shown_ids import FollowedRedaction
from .dialog import CompareDialog, open_compare
from .list_view import CompareList
from .model import (
    HIGHLIGHT_ROLE,
    MARKER_ROLE,
    STATUS_ROLE,
    TURN_ROLE,
    USAGE_ROLE,
    CompareModel,
)
from .view import CompareView

__all__ = [
    "HIGHLIGHT_ROLE",
    "MARKERS",
    "MARKER_ROLE",
    "STATUS_ROLE",
    "TURN_ROLE",
    "USAGE_ROLE",
    "Block",
    "CompareDelegate",
    "CompareDialog",
    "CompareList",
    "CompareModel",
    "CompareView",
    "FollowedRedaction",
    "open_compare",
    "summary_text",
    "text_lines",
    "turn_label",
    "usage_text",
]
