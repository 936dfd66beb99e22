"""The Agents SDK's ``AdvancedSQLiteSession`` stores: branches, turns and token usage.

On top of the plain Agents SDK tables (see :mod:`..agents`) the library keeps its own
tables (:mod:`.schema`). The store (:mod:`.store`) is composed of parts, one module each:
:mod:`.reading` (one branch at a time), :mod:`.usage` (token usage), :mod:`.branches`
(branches and turns listed; creating, deleting, undoing branch changes; the library's
bookkeeping inside them is :mod:`.bookkeeping`) and :mod:`.writing` (appends, forks).
"""

from __future__ import annotations

from fluxgui.core.branches import BranchChange, BranchInfo, TurnInfo, TurnUsage, UsageTotals
from fluxgui.core.errors import BranchError, BranchNotFound

from .schema import GENERATIONS, RESERVATIONS, STRUCTURE, STRUCTURE_COLUMNS, USAGE
from .store import advanced_store

__all__ = [
    "advanced_store",
    "GENERATIONS",
    "RESERVATIONS",
    "STRUCTURE",
    "STRUCTURE_COLUMNS",
    "USAGE",
    "BranchChange",
    "BranchError",
    "BranchInfo",
    "BranchNotFound",
    "TurnInfo",
    "TurnUsage",
    "UsageTotals",
]
