"""``broken_structure``: an ``AdvancedSQLiteSession`` session's bookkeeping out of step
with its items (rows pointing at missing items, branches holding nothing, turn numbers
out of order). Pure: judges a :class:`~fluxgui.core.structure.StructureReport`."""

from __future__ import annotations

from itertools import groupby

from fluxgui.core.branches import MAIN
from fluxgui.core.structure import StructureReport

from .checks import quoted
from .problems import Problem


def structure_problems(session_id: str, report: StructureReport) -> list[Problem]:
    """The ``broken_structure`` problems of one session's structure."""
    found: list[Problem] = []
    for row in report.rows:
        if row.message_session is None:
            found.append(Problem(
                "broken_structure", (row.message_id,),
                f"message_structure row {row.id} (branch {quoted(row.branch_id)}) points at "
                f"message {row.message_id}, which does not exist: the library skips it",
            ))
        elif row.message_session != session_id:
            found.append(Problem(
                "broken_structure", (row.message_id,),
                f"message_structure row {row.id} (branch {quoted(row.branch_id)}) points at "
                f"message {row.message_id} of another session: the library never reads it "
                "for this one",
            ))
    branches = set()
    for branch, rows in groupby(report.rows, key=lambda r: r.branch_id):
        branches.add(branch)
        last = None
        for row in rows:
            turn = row.branch_turn_number
            if turn is None:
                continue
            if last is not None and turn < last[1]:
                found.append(Problem(
                    "broken_structure", (last[0], row.message_id),
                    f"branch {quoted(branch)}: message {row.message_id} is in turn {turn} "
                    f"but comes after message {last[0]} of turn {last[1]} (turn numbers "
                    "out of order): turns and branches from them are cut wrongly",
                ))
            last = (row.message_id, turn)
    for branch in report.usage_branches:
        if branch not in branches:
            found.append(Problem(
                "broken_structure", (),
                f"turn_usage has usage of branch {quoted(branch)}, which has no "
                "message_structure rows: the branch holds nothing",
            ))
    if report.unreferenced_ids:
        ids = report.unreferenced_ids
        where = "no branch holds them" if report.rows else f"branch {MAIN!r} has no rows"
        found.append(Problem(
            "broken_structure", tuple(ids),
            f"{len(ids)} stored item{'s' if len(ids) != 1 else ''} of the session "
            f"{'are' if len(ids) != 1 else 'is'} in no message_structure row ({where}): "
            "the library never reads them",
        ))
    return found
