"""Branches of an ``AdvancedSQLiteSession`` session in the window.

* :mod:`.bar` — :class:`BranchBar`, above the conversation while a session of a store
  with branches (``capabilities.branches``) is shown: the session's branches as the
  library lists them (the current one bold), the current branch's token usage, and
  "Delete Branch…".
* :mod:`.actions` — the window's part: installing the bar, Edit › Branch from This
  Turn…, and following a branch edit or its undo/redo.

What is read and how it is worded (Qt-free) is :mod:`fluxgui.services.branches`; the
branch edits themselves are :mod:`fluxgui.services.edits` commands.
"""

from fluxgui.services.branches import (
    BranchState,
    branch_text,
    short_tokens,
    turn_tokens,
    usage_text,
)
from fluxgui.services.edits import is_branchable

from .actions import (
    branch_from_turn,
    branch_turn,
    can_branch_here,
    install_branch_bar,
    on_branch_change_applied,
)
from .bar import BRANCH_ROLE, BranchBar, confirm_delete_branch

__all__ = [
    "BRANCH_ROLE",
    "BranchBar",
    "BranchState",
    "branch_from_turn",
    "branch_text",
    "branch_turn",
    "can_branch_here",
    "confirm_delete_branch",
    "install_branch_bar",
    "is_branchable",
    "on_branch_change_applied",
    "short_tokens",
    "turn_tokens",
    "usage_text",
]
