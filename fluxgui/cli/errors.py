"""Exit codes and the error a command raises to be reported as one line.

A known error (:class:`~fluxgui.core.errors.FluxguiError`, :class:`Known` among them)
prints ``fluxgui: error: …`` on stderr and exits :data:`EXIT_KNOWN_ERROR`; see
:func:`fluxgui.cli.dispatch.main`, the sink that catches them.
"""

from __future__ import annotations

from fluxgui.core.errors import FluxguiError, UnreadableItems

#: a known error (one line on stderr)
EXIT_KNOWN_ERROR = 3
#: a usage error: argparse's own code, also for ``clear``/``rm`` without ``--yes`` and no
#: terminal to ask on
EXIT_USAGE = 2
#: the user answered no (``clear``/``rm``), or ``diff`` found a difference
EXIT_DECLINED = 1


class Known(FluxguiError):
    """A known error reworded for the command line."""


def drop_hint(exc: UnreadableItems, verb: str) -> FluxguiError:
    """``exc`` with, when leaving the unreadable items out still leaves some that open,
    the flag that does it."""
    if not exc.droppable:
        return exc
    return Known(f"{exc}; pass --drop-unreadable to {verb} without them")
