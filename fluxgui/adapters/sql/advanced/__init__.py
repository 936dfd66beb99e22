"""The Agents SDK's ``AdvancedSQLiteSession`` stores: branches, turns and token usage.

On top of the plain Agents SDK tables (see :mod:`..agents`) the library keeps its own
tables (:mod:`.schema`). The store is built in layers, one module each: :mod:`.reading`
(one branch at a time, branches and turns listed), :mod:`.usage` (token usage),
:mod:`.branches` (creating, deleting, undoing branch changes; the library's bookkeeping
inside them is :mod:`.bookkeeping`) and :mod:`.writing` (appends, forks; the
:class:`AdvancedStore` itself).
"""

from __future__ import annotations

from fluxgui.core.branches import BranchChange, BranchInfo, TurnInfo, TurnUsage, UsageTotals
from fluxgui.core.errors import BranchError, BranchNotFound

from .schema import GENERATIONS, RESERVATIONS, STRUCTURE, STRUCTURE_COLUMNS, USAGE
from .writing import AdvancedStore

__all__ = [
    "GENERATIONS",
    "RESERVATIONS",
    "STRUCTURE",
    "STRUCTURE_COLUMNS",
    "USAGE",
    "AdvancedStore",
    "BranchChange",
    "BranchError",
    "BranchInfo",
    "BranchNotFound",
    "TurnInfo",
    "TurnUsage",
    "UsageTotals",
]
